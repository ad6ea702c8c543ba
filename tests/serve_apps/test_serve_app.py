"""The Ray Serve app end to end on the shared 2-CPU test cluster (configs/serve/test.yaml)."""
from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from docray.engine.samples import QUESTIONS

KEYS = {"key-a": "default", "key-b": "other"}
A, B = {"Authorization": "Bearer key-a"}, {"X-API-Key": "key-b"}


@pytest.fixture(scope="module")
def app_runner(sample_data):
    from docray.engine.config import config_from_dict
    from docray.serve_apps.milvus_server import free_port
    from docray.serve_apps.runner import ServeRunner
    from docray.serve_apps.settings import load_serve_settings

    cfg = config_from_dict({"paths": {"data_dir": str(sample_data)},
                            "serve": {"port": free_port(), "api_keys": KEYS}})
    settings = load_serve_settings("configs/serve/test.yaml")
    settings.milvus_port = free_port()
    runner = ServeRunner(cfg, settings)
    runner.start()
    yield runner
    runner.stop()


@pytest.fixture(scope="module")
def app_url(app_runner):
    return app_runner.url


def test_query_round_trip_and_docs(app_url):
    r = httpx.post(f"{app_url}/v1/query", json={"question": QUESTIONS[0]}, headers=A, timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"answer", "abstained", "reason", "evidence", "timings"}
    assert "58.9" in body["answer"] and body["evidence"][0]["page"] >= 1
    assert httpx.get(f"{app_url}/healthz").json()["status"] == "ok"
    assert httpx.get(f"{app_url}/docs").status_code == 200
    paths = httpx.get(f"{app_url}/openapi.json").json()["paths"]
    assert {"/v1/query", "/v1/query/stream", "/v1/chat/completions", "/v1/documents"} <= set(paths)
    metrics = httpx.get(f"{app_url}/metrics").text
    assert 'docray_stage_latency_seconds_count{stage="dense"}' in metrics
    assert 'docray_replicas{deployment="DenseSearch"}' in metrics


def test_streaming_tokens_then_evidence(app_url):
    with httpx.stream("POST", f"{app_url}/v1/query/stream", json={"question": QUESTIONS[1]},
                      headers=A, timeout=60) as r:
        assert r.status_code == 200
        events = [line.split(": ", 1)[1] for line in r.iter_lines() if line.startswith("event:")]
    assert events[0] == "token" and events[-1] == "evidence" and events.count("token") > 1


def test_chat_completions_through_openai_client(app_url):
    from openai import OpenAI

    client = OpenAI(base_url=f"{app_url}/v1", api_key="key-a")
    msgs = [{"role": "system", "content": "Cite."}, {"role": "user", "content": QUESTIONS[2]}]
    out = client.chat.completions.create(model="docray", messages=msgs)
    assert "servo" in out.choices[0].message.content.lower()
    assert out.model_extra["evidence"][0]["doc"].endswith(".pdf")
    chunks = list(client.chat.completions.create(model="docray", messages=msgs, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text.strip() == out.choices[0].message.content.strip()
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].model_extra["evidence"]


def test_upload_status_query_delete_in_own_workspace(app_url, tmp_path):
    note = b"The Zephyr valve line is assembled in Porto by the Halcyon team since 2019.\n"
    r = httpx.post(f"{app_url}/v1/documents", headers=B, timeout=60,
                   files=[("files", ("zephyr notes.txt", note, "text/plain"))])
    assert r.status_code == 202, r.text
    job = r.json()
    deadline = time.monotonic() + 150
    while job["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(1)
        job = httpx.get(f"{app_url}/v1/jobs/{job['job_id']}", headers=B).json()
    assert job["status"] == "done", job
    assert job["graph"]["docs"] == 1  # B's own graph: A's sample documents are not counted
    assert httpx.get(f"{app_url}/v1/jobs/{job['job_id']}", headers=A).status_code == 404
    doc_id = job["documents"][0]["doc_id"]
    assert httpx.get(f"{app_url}/v1/documents/{doc_id}", headers=B).json()["status"] == "done"
    q = {"question": "Where is the Zephyr valve line assembled?"}
    got = httpx.post(f"{app_url}/v1/query", json=q, headers=B, timeout=60).json()
    assert "Porto" in got["answer"] and got["evidence"][0]["doc_id"] == doc_id
    leak = httpx.post(f"{app_url}/v1/query", json=q, headers=A, timeout=60).json()
    assert all(e["doc_id"] != doc_id for e in leak["evidence"])
    assert httpx.get(f"{app_url}/v1/documents/{doc_id}", headers=A).status_code == 404
    assert httpx.delete(f"{app_url}/v1/documents/{doc_id}", headers=A).status_code == 404
    assert httpx.delete(f"{app_url}/v1/documents/{doc_id}", headers=B, timeout=60).json() == \
        {"doc_id": doc_id, "deleted": True}
    assert httpx.get(f"{app_url}/v1/documents/{doc_id}", headers=B).status_code == 404
    again = httpx.post(f"{app_url}/v1/query", json=q, headers=B, timeout=60).json()
    assert all(e["doc_id"] != doc_id for e in again["evidence"])


def test_auth_and_validation(app_url):
    q = {"question": QUESTIONS[0]}
    assert httpx.post(f"{app_url}/v1/query", json=q).status_code == 401
    assert httpx.post(f"{app_url}/v1/query", json=q, headers={"X-API-Key": "x"}).status_code == 401
    r = httpx.post(f"{app_url}/v1/query", json={"question": "q", "top_k": 999}, headers=A)
    assert r.status_code == 422 and r.json()["field"] == "top_k"
    r = httpx.post(f"{app_url}/v1/documents", headers=A,
                   files=[("files", ("x.exe", b"MZ", "application/octet-stream"))])
    assert r.status_code == 415 and r.json()["field"] == "files"
    r = httpx.post(f"{app_url}/v1/documents", headers=A,
                   files=[("files", ("big.txt", b"a" * (2 << 20), "text/plain"))])
    assert r.status_code == 413 and r.json()["field"] == "files"


def test_overload_returns_fast_503_with_retry_after(app_url):
    async def burst(n: int):
        async with httpx.AsyncClient(timeout=60) as c:
            async def one():
                t0 = time.perf_counter()
                r = await c.post(f"{app_url}/v1/query", headers=A,
                                 json={"question": QUESTIONS[0], "mode": "hybrid"})
                return r, time.perf_counter() - t0
            return await asyncio.gather(*[one() for _ in range(n)])
    results = asyncio.run(burst(16))
    codes = [r.status_code for r, _ in results]
    assert set(codes) <= {200, 503} and codes.count(503) >= 1 and codes.count(200) >= 1, codes
    rejected = [(r, dt) for r, dt in results if r.status_code == 503]
    assert all(r.headers.get("retry-after") == "1" for r, _ in rejected)
    assert json.loads(rejected[0][0].text)["retryable"] is True
    assert min(dt for _, dt in rejected) < 2.0


def test_served_evidence_equals_in_process_engine(app_runner):
    """Serving changes where the stages run, never the ranking: the served answer and its
    evidence (order, pages, units, texts) equal the in-process engine's over the same
    stores (the app's milvus-lite server), and so do the scores to 1e-5: their last bits
    follow the BLAS thread count of the process that scores (a replica runs one thread,
    this test's process two; with OMP_NUM_THREADS=1 here they are equal bit for bit)."""
    from docray.engine.cli.query import Session

    cfg = app_runner.cfg.model_copy(deep=True)
    cfg.milvus.uri = app_runner.milvus.uri
    session = Session(cfg=cfg)
    try:
        for q in QUESTIONS[:4]:
            body = {"question": q, "doc": "northwind_annual_report_2023.pdf", "top_k": 5}
            r = httpx.post(f"{app_runner.url}/v1/query", json=body, headers=A, timeout=60)
            assert r.status_code == 200, r.text
            mine = json.loads(json.dumps(asyncio.run(session.ask(q, "default", body["doc"]))))
            served = r.json()  # both as JSON (a bbox tuple is a list there)
            assert served["answer"] == mine["answer"]
            assert _scoreless(served["evidence"]) == _scoreless(mine["evidence"]), q
            assert len(mine["evidence"]) >= 1
            for a, b in zip(served["evidence"], mine["evidence"]):
                assert abs(a["score"] - b["score"]) <= 1e-5, (q, a["unit_id"])
    finally:
        session.close()


def _scoreless(evidence: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "score"} for e in evidence]
