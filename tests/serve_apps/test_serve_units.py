"""Ray-free tests of the serving logic: services in-process, FastAPI over LocalStages."""
from __future__ import annotations

import asyncio

import pytest
from fastapi.testclient import TestClient

from docray.engine.errors import BadInput, ConfigError
from docray.engine.samples import QUESTIONS
from docray.serve_apps.documents.service import safe_name
from docray.serve_apps.errors import (Overloaded, RateLimited, StageFailed, StageTimeout,
                                      Unauthorized)
from docray.serve_apps.ingress.auth import Admission, KeyRing, RateLimiter
from docray.serve_apps.ingress.openai_compat import question_of
from docray.serve_apps.protocol import ChatRequest
from docray.serve_apps.settings import Limits, ServeSettings, load_serve_settings


# -- pure pieces ------------------------------------------------------------------------
def test_keyring_maps_keys_to_workspaces():
    ring = KeyRing({"ka": "alpha", "kb": "beta"}, "default")
    assert ring.workspace("Bearer ka", None) == "alpha"
    assert ring.workspace(None, "kb") == "beta"
    with pytest.raises(Unauthorized):
        ring.workspace(None, None)
    with pytest.raises(Unauthorized):
        ring.workspace("Bearer nope", None)
    assert KeyRing({}, "default").workspace(None, None) == "default"


def test_admission_rejects_at_limit_and_never_leaks():
    adm = Admission(1, retry_after=2)
    with pytest.raises(RuntimeError):
        with adm.slot():
            with pytest.raises(Overloaded) as err:
                adm.acquire()
            assert err.value.retry_after == 2
            raise RuntimeError("stage blew up")
    assert adm.inflight == 0


def test_rate_limiter_is_a_token_bucket_per_key():
    now = [0.0]
    lim = RateLimiter(rate=2.0, burst=3, clock=lambda: now[0])
    for _ in range(3):
        lim.check("ka")
    with pytest.raises(RateLimited) as err:
        lim.check("ka")
    assert err.value.status == 429 and err.value.retry_after == 1
    lim.check("kb")  # another key has its own bucket
    now[0] = 0.5      # one token back at 2/s
    lim.check("ka")
    with pytest.raises(RateLimited):
        lim.check("ka")
    RateLimiter(rate=0, burst=1).check("ka")  # off
    RateLimiter(rate=0, burst=1).check("ka")


def test_safe_name_strips_paths():
    assert safe_name("../../etc/passwd") == "passwd"
    assert safe_name("..\\a b.pdf") == "a_b.pdf"
    assert safe_name(".hidden") == "hidden"


def test_chat_question_is_last_user_message():
    req = ChatRequest(messages=[{"role": "user", "content": "old"},
                                {"role": "assistant", "content": "x"},
                                {"role": "user", "content": [{"type": "text", "text": "new?"}]}])
    assert question_of(req) == "new?"
    with pytest.raises(BadInput):
        question_of(ChatRequest(messages=[{"role": "system", "content": "hi"}]))


def test_serve_profiles_load_and_reject_unknown_keys(tmp_path):
    for name in ("local", "gpu", "test", "load"):
        s = load_serve_settings(f"configs/serve/{name}.yaml")
        assert s.stage("dense").deployment_options()["max_queued_requests"] >= 1
    gpu = load_serve_settings("configs/serve/gpu.yaml")
    assert gpu.stage("pages").deployment_options()["ray_actor_options"]["num_gpus"] > 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("stages: {dense: {num_cpu: 1}}\n")
    with pytest.raises(ConfigError, match="num_cpu"):
        load_serve_settings(bad)
    with pytest.raises(ValueError):
        ServeSettings(stages={"nope": {}})


# -- services over a copy of the sample data --------------------------------------------
@pytest.fixture(scope="module")
def local(tmp_path_factory, sample_data):
    import shutil

    from docray.engine.config import config_from_dict
    from docray.engine.embed import get_text_encoder
    from docray.serve_apps.ingress.context import IngressContext
    from docray.serve_apps.ingress.stages import LocalStages
    from docray.serve_apps.rerank.service import RerankService
    from docray.serve_apps.retrieval.service import (DenseSearchService, GraphWalkService,
                                                     PageRetrievalService)
    from docray.serve_apps.synthesis.service import SynthesisService

    dst = tmp_path_factory.mktemp("units") / "data"
    shutil.copytree(sample_data, dst)
    cfg = config_from_dict({"paths": {"data_dir": str(dst)},
                            "serve": {"api_keys": {"ka": "default", "kb": "other"}}})
    enc = get_text_encoder(cfg.embed.text)
    dense = DenseSearchService(cfg)
    stages = LocalStages(GraphWalkService(cfg), dense, PageRetrievalService(cfg),
                         RerankService(cfg, enc), SynthesisService(cfg, enc))
    ctx = IngressContext.build(cfg, Limits(max_inflight=4, stage_timeout_s=5), stages,
                               encoder=enc)
    yield cfg, stages, ctx
    dense.close()


def _in_process(cfg, stages, ctx):
    """The in-process engine over the same stage objects the local app serves with."""
    from docray.engine.retrieve.engine import QueryEngine
    from docray.engine.retrieve.parts import Parts, make_answerer, make_query_encoder

    encoder = stages._s.answerer.encoder
    parts = Parts(make_query_encoder(encoder), stages._d.searcher, stages._g.walker,
                  stages._p.searcher, ctx.query.fuser, stages._r.reranker,
                  make_answerer(cfg, encoder))
    return QueryEngine(cfg, parts)


def test_query_service_matches_in_process_engine(local):
    from docray.engine.retrieve.engine import Fuser

    cfg, stages, ctx = local
    engine = _in_process(cfg, stages, ctx)
    for q in QUESTIONS:
        got = asyncio.run(ctx.query.query(q, "default"))
        want = asyncio.run(engine.query(q, "default"))
        assert got["answer"] == want.answer.answer
        assert [e["doc_id"] for e in got["evidence"]] == [e.doc_id for e in want.answer.evidence]
        assert {"dense", "graph", "pages", "rerank", "synthesis", "total"} <= set(got["timings"])
    assert not got["abstained"] and "Fuser" in repr(Fuser)


def test_rank_of_the_generators_outputs_is_what_a_query_retrieves(local):
    """benchmarks/tune.py re-ranks stored generator outputs through QueryEngine.rank under
    other settings: at the config it must give the pages and passages a query gets."""
    from docray.engine.retrieve.query import analyze

    cfg, stages, ctx = local
    engine = _in_process(cfg, stages, ctx)
    p, k = engine.p, cfg.retrieve.candidates
    for q in QUESTIONS:
        got = asyncio.run(engine.retrieve(q, "default"))
        plan = analyze(q)
        qvec, qtok = p.encode_query(q)
        results = {"dense": p.dense.search(plan, qvec, "default", None, k),
                   "graph": p.graph.search(plan, "default", None, k),
                   "page": p.pages.search_tokens(qtok, "default", None, k)}
        ranked, _, pages = engine.rank(q, plan, qtok, "default", results)
        assert len(pages) > 1 and pages == got.pages
        assert [c for c, _ in ranked[:5]] == [x.chunk.chunk_id for x in got.passages]
        _, _, unranked = engine.rank(q, plan, qtok, "default", results, mode="no-rerank")
        assert set(unranked) == set(pages)


def test_chunk_only_ranks_without_the_modality_preference(local):
    """chunk-only is text chunk retrieval: hybrid's fusion of the same dense/BM25 list less
    the bonus for chunks of the modality the question asks for, in process and in Serve."""
    from docray.engine.retrieve.engine import signals_for
    from docray.engine.retrieve.query import analyze

    cfg, stages, ctx = local
    engine = _in_process(cfg, stages, ctx)
    q = "Which table row gives Northwind Robotics' capital expenditures in 2023?"
    plan, (qvec, qtok) = analyze(q), engine.p.encode_query(q)
    assert plan.modalities == ["table"]
    results = {"dense": engine.p.dense.search(plan, qvec, "default", None, 50)}
    preferred = dict(engine.p.fuser.fuse(plan, "default", results, "hybrid")[0])
    plain = dict(engine.p.fuser.fuse(plan, "default", results, "chunk-only")[0])
    chunks = engine.p.fuser.content.chunks("default", list(plain))
    bonus = cfg.retrieve.weights["modality"] / 60
    tables = {c for c in plain if chunks[c].modality == "table"}
    assert tables and len(tables) < len(plain)
    for cid, score in plain.items():
        assert preferred[cid] == pytest.approx(score + bonus * (cid in tables))
    assert "modality" not in signals_for("chunk-only") and "modality" in signals_for("hybrid")
    got = asyncio.run(engine.retrieve(q, "default", mode="chunk-only"))
    served, pages, _, _ = asyncio.run(ctx.query.retrieve(q, "default", None, "chunk-only"))
    assert got.pages and pages == got.pages
    assert [(x.chunk.chunk_id, pytest.approx(x.score)) for x in served] == [
        (x.chunk.chunk_id, x.score) for x in got.passages]


def test_question_naming_what_the_document_never_mentions_abstains(local):
    from dataclasses import replace

    from docray.engine.retrieve.engine import Fuser, QueryEngine

    cfg, stages, ctx = local
    q = "Which vendors supply Boeing with servo motors?"
    doc = "northwind_annual_report_2023.pdf"
    got = asyncio.run(ctx.query.query(q, "default", doc))
    assert got["abstained"] and "'boeing'" in got["reason"] and got["evidence"]
    events = asyncio.run(_collect(ctx.query.stream(q, "default", doc)))
    assert events[0] == {"token": "Not answerable"} and events[-1]["evidence"]
    parts = _in_process(cfg, stages, ctx).p
    doc_id = ctx.query.resolve_doc("default", doc)
    want = asyncio.run(QueryEngine(cfg, parts).query(q, "default", doc_id))
    assert want.answer.abstained and want.answer.reason == got["reason"]
    # Unscoped, or with the check off, the answerer decides from the evidence.
    assert "never mentions" not in asyncio.run(ctx.query.query(q, "default"))["reason"]
    off = cfg.model_copy(update={"synthesize": cfg.synthesize.model_copy(
        update={"scope_check": False})})
    fuser = Fuser(off, ctx.query.fuser.content, ctx.query.fuser.filenames)
    engine = QueryEngine(off, replace(parts, fuser=fuser))
    answer = asyncio.run(engine.query(q, "default", doc_id)).answer
    assert "never mentions" not in answer.reason


async def _collect(agen):
    return [ev async for ev in agen]


class _Slow:
    async def search(self, *a):
        await asyncio.sleep(10)


class _Broken:
    async def search(self, *a):
        raise RuntimeError("index on fire")


def _with_stage(local, **swap):
    from docray.serve_apps.ingress.service import QueryService
    from docray.serve_apps.ingress.stages import LocalStages

    cfg, s, _ = local
    parts = dict(graph=s._g, dense=s._d, pages=s._p, rerank=s._r, synthesis=s._s) | swap
    return QueryService(cfg, LocalStages(**parts), Limits(stage_timeout_s=0.3),
                        encoder=s._s.answerer.encoder)


def test_slow_stage_times_out_and_failing_stage_is_named(local):
    with pytest.raises(StageTimeout, match="graph"):
        asyncio.run(_with_stage(local, graph=_Slow()).query(QUESTIONS[0], "default"))
    with pytest.raises(StageFailed, match="pages.*index on fire"):
        asyncio.run(_with_stage(local, pages=_Broken()).query(QUESTIONS[0], "default"))


def test_graph_walk_runs_while_the_question_is_encoded(local):
    """The walk needs no vectors: it is under way before encoding ends (the encoder here
    waits for it, and would time out if the walk only began after)."""
    import threading

    from docray.serve_apps.ingress.service import QueryService
    from docray.serve_apps.ingress.stages import LocalStages

    cfg, s, _ = local
    started, walk = threading.Event(), s._g

    class Graph:
        async def search(self, *a):
            started.set()
            return await walk.search(*a)

    encoder = s._s.answerer.encoder

    class WaitingEncoder:
        def __getattr__(self, name):
            return getattr(encoder, name)

        def encode_with_tokens(self, texts):
            assert started.wait(5), "the graph walk had not started"
            return encoder.encode_with_tokens(texts)

    svc = QueryService(cfg, LocalStages(Graph(), s._d, s._p, s._r, s._s), Limits(),
                       encoder=WaitingEncoder())
    got = asyncio.run(svc.query(QUESTIONS[0], "default"))
    assert started.is_set() and got["evidence"] and "graph" in got["timings"]


def test_stream_yields_tokens_then_evidence(local):
    async def collect():
        return [ev async for ev in local[2].query.stream(QUESTIONS[1], "default")]
    events = asyncio.run(collect())
    assert "token" in events[0] and "evidence" in events[-1]
    assert "470" in "".join(e.get("token", "") for e in events)


@pytest.fixture(scope="module")
def client(local):
    from docray.serve_apps.ingress.app import create_app

    return TestClient(create_app(local[2]), raise_server_exceptions=False)


def test_http_layer_auth_validation_and_errors(client, local):
    q = {"question": QUESTIONS[0]}
    assert client.post("/v1/query", json=q).status_code == 401
    ok = client.post("/v1/query", json=q, headers={"Authorization": "Bearer ka"})
    assert ok.status_code == 200 and not ok.json()["abstained"]
    assert set(ok.json()) == {"answer", "abstained", "reason", "evidence", "timings"}
    other = client.post("/v1/query", json=q, headers={"X-API-Key": "kb"}).json()
    assert other["evidence"] == []  # a key never reads another workspace
    h = {"X-API-Key": "ka"}
    for body, field in [({"question": ""}, "question"), ({"question": "x", "top_k": 0}, "top_k"),
                        ({"question": "x", "mode": "bogus"}, "mode"), ({}, "question"),
                        ({"question": "x" * 5000}, "question")]:
        r = client.post("/v1/query", json=body, headers=h)
        assert r.status_code == 422 and r.json()["field"] == field, (body, r.text)
    r = client.post("/v1/query", json={"question": "x", "doc": "nope.pdf"}, headers=h)
    assert r.status_code == 404 and r.json()["field"] == "doc"
    docs = client.get("/v1/documents", headers=h).json()
    assert {d["status"] for d in docs} == {"done"} and len(docs) == 2
    assert client.get("/v1/documents", headers={"X-API-Key": "kb"}).json() == []
    assert client.get(f"/v1/documents/{docs[0]['doc_id']}",
                      headers={"X-API-Key": "kb"}).status_code == 404


def test_http_no_route_and_wrong_method_answer_in_the_error_body(client):
    h = {"X-API-Key": "ka"}
    for r in (client.get("/v1/artifacts/%0Ax", headers=h), client.get("/v1/nope", headers=h)):
        assert r.status_code == 404 and set(r.json()) == {"error", "field", "retryable"}
    r = client.put("/v1/query", headers=h)
    assert r.status_code == 405 and "error" in r.json() and "POST" in r.headers["allow"]


def test_http_rate_limit_answers_429_with_retry_after_per_key(local):
    from dataclasses import replace

    from docray.serve_apps.ingress.app import create_app

    keys = KeyRing({"ka": "default", "kb": "other"}, "default", RateLimiter(0.2, 2))
    limited = TestClient(create_app(replace(local[2], keys=keys)),
                         raise_server_exceptions=False)
    codes = [limited.get("/v1/documents", headers={"X-API-Key": "ka"}).status_code
             for _ in range(3)]
    assert codes == [200, 200, 429]
    r = limited.get("/v1/documents", headers={"X-API-Key": "ka"})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    assert r.json()["retryable"] and "rate limit" in r.json()["error"]
    assert limited.get("/v1/documents", headers={"X-API-Key": "kb"}).status_code == 200
    assert limited.get("/v1/documents").status_code == 401  # no key: 401, not a token spent


def test_http_artifacts_are_path_safe_and_workspace_bound(client, local):
    root = local[0].paths.data_dir / "artifacts"
    for pattern, media in (("default/*/*.png", "image/png"),  # crops
                           ("default/*/page-*.jpg", "image/jpeg")):  # page renders
        art = next(root.glob(pattern))
        aid = "/".join(art.relative_to(root).parts)
        r = client.get(f"/v1/artifacts/{aid}", headers={"X-API-Key": "ka"})
        assert r.status_code == 200 and r.headers["content-type"] == media
        assert r.content == art.read_bytes()
    assert client.get(f"/v1/artifacts/{aid}", headers={"X-API-Key": "kb"}).status_code == 404
    r = client.get("/v1/artifacts/default/..%2F..%2Fcatalog.sqlite/x.png",
                   headers={"X-API-Key": "ka"})
    assert r.status_code in (400, 404)
