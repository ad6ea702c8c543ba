"""The query path across stages: analyse + encode → (graph ∥ dense ∥ pages) → fuse →
rerank → synthesize. Async, Ray-free: stages come in through an adapter (handles or
objects). The question is encoded once, here; the stages receive its vectors.

Every stage call is bounded by ``stage_timeout_s`` (→ 504) and a failing stage surfaces
as a 502 naming it; nothing waits without a bound.
"""
from __future__ import annotations

import asyncio
import logging
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable

from docray.engine.config import DocrayConfig
from docray.engine.retrieve.engine import Fuser, ordered_pages, signals_for
from docray.engine.retrieve.query import analyze
from docray.engine.synthesize.abstain import NOT_ANSWERABLE
from docray.engine.synthesize.citations import to_evidence
from docray.serve_apps.errors import Missing, ServeError, StageFailed, StageTimeout
from docray.serve_apps.metrics import Metrics
from docray.serve_apps.settings import Limits

log = logging.getLogger(__name__)


def evidence_json(evidence) -> list[dict[str, Any]]:
    return [e.model_dump(exclude={"chunk_id"}) for e in evidence]


def answer_json(answer, timings: dict[str, float]) -> dict[str, Any]:
    """The ``docray query --json`` contract."""
    return {"answer": answer.answer, "abstained": answer.abstained, "reason": answer.reason,
            "evidence": evidence_json(answer.evidence),
            "timings": {k: round(v, 4) for k, v in timings.items()}}


async def _once(text: str) -> AsyncIterator[str]:
    yield text


class QueryService:
    def __init__(self, cfg: DocrayConfig, stages, limits: Limits, metrics: Metrics | None = None,
                 encoder=None):
        from docray.engine.embed import get_text_encoder
        from docray.engine.index.catalog import Catalog
        from docray.engine.index.content import ContentStore
        from docray.serve_apps.ingress.batching import QueryBatcher

        root = Path(cfg.paths.data_dir)
        self.cfg, self.stages, self.limits = cfg, stages, limits
        self.metrics = metrics or Metrics()
        self.catalog = Catalog(root / "catalog.sqlite")
        self.fuser = Fuser(cfg, ContentStore(root / "content.sqlite"), self._filename)
        # text → (vector, token vectors): cached, batched across concurrent requests
        self.encoder = QueryBatcher(encoder or get_text_encoder(cfg.embed.text))

    @lru_cache(maxsize=4096)
    def _filename(self, workspace: str, doc_id: str) -> str:
        row = self.catalog.get(workspace, doc_id)
        return row["filename"] if row else doc_id

    def resolve_doc(self, workspace: str, ref: str | None) -> list[str] | None:
        if not ref:
            return None
        row = self.catalog.find(workspace, ref)
        if row is None:
            raise Missing(f"no document {ref!r} in this workspace", field="doc")
        return [row["doc_id"]]

    async def _stage(self, name: str, call: Awaitable, timings: dict[str, float]) -> Any:
        t0 = time.perf_counter()
        with self.metrics.stage(name):
            try:
                return await asyncio.wait_for(call, self.limits.stage_timeout_s)
            except (ServeError, StopAsyncIteration):
                raise
            except (asyncio.TimeoutError, TimeoutError):
                raise StageTimeout(f"stage {name} timed out after "
                                   f"{self.limits.stage_timeout_s:g}s", field=name) from None
            except Exception as err:  # noqa: BLE001 — any stage failure becomes a clear 502
                log.warning("stage %s failed: %s", name, err)
                raise StageFailed(f"stage {name} failed: {type(err).__name__}: {err}",
                                  field=name) from None
            finally:
                timings[name] = time.perf_counter() - t0

    async def _generate(self, plan, question: str, ws: str, doc_ids, mode: str, t: dict):
        """The generators' outputs and the question's (vector, token vectors). The graph
        walk needs no vectors: it starts before the question is encoded."""
        use, k = signals_for(mode), self.cfg.retrieve.candidates
        tasks: dict[str, asyncio.Future] = {}
        if "graph" in use:
            tasks["graph"] = asyncio.ensure_future(
                self._stage("graph", self.stages.graph(plan, ws, doc_ids, k), t))
        try:
            s = time.perf_counter()
            qvec, qtok = await self.encoder.encode(question)
            t["analyze"] += time.perf_counter() - s
            if use & {"dense", "sparse"}:
                tasks["dense"] = asyncio.ensure_future(self._stage(
                    "dense", self.stages.dense(plan, qvec, ws, doc_ids, k), t))
            if "page" in use:
                tasks["page"] = asyncio.ensure_future(
                    self._stage("pages", self.stages.pages(qtok, ws, doc_ids, k, question), t))
            return dict(zip(tasks, await asyncio.gather(*tasks.values()))), qtok
        finally:
            for task in tasks.values():
                if task.done() and not task.cancelled():
                    task.exception()  # a failure that lost the race is not logged again
                task.cancel()

    async def retrieve(self, question: str, ws: str, doc: str | None = None,
                       mode: str = "hybrid", top_k: int = 5):
        """(passages, pages, timings, doc_ids): ``doc`` resolved once, for the scope check
        too."""
        t: dict[str, float] = {}
        t0 = time.perf_counter()
        doc_ids = await asyncio.to_thread(self.resolve_doc, ws, doc)
        plan = analyze(question, doc_ids)
        t["analyze"] = time.perf_counter() - t0
        results, qtok = await self._generate(plan, question, ws, doc_ids, mode, t)
        s = time.perf_counter()
        ranked, chunks, cpages = await asyncio.to_thread(
            self.fuser.fuse, plan, ws, results, mode)
        t["fuse"] = time.perf_counter() - s
        if mode != "no-rerank" and self.cfg.retrieve.reranker != "none" and ranked:
            n = max(top_k, self.cfg.retrieve.rerank_depth)
            head = ranked[:n]
            head = await self._stage("rerank", self.stages.rerank(
                question, qtok, head, {c: chunks[c] for c, _ in head}, ws), t)
            ranked = list(head) + ranked[n:]
        pages = ordered_pages(ranked, cpages, results.get("page", []))
        passages = await asyncio.to_thread(self.fuser.passages, ws, ranked, chunks, top_k)
        return passages, pages, t, doc_ids

    async def _out_of_scope(self, question: str, ws: str, doc_ids, passages):
        return await asyncio.to_thread(self.fuser.out_of_scope, question, ws, doc_ids, passages)

    async def query(self, question: str, ws: str, doc: str | None = None, mode: str = "hybrid",
                    top_k: int = 5) -> dict[str, Any]:
        t0 = time.perf_counter()
        passages, _, t, doc_ids = await self.retrieve(question, ws, doc, mode, top_k)
        answer = await self._out_of_scope(question, ws, doc_ids, passages)
        qvec = (await self.encoder.encode(question))[0]  # cached since retrieve()
        answer = answer or await self._stage("synthesis",
                                             self.stages.answer(question, passages, qvec), t)
        t["total"] = time.perf_counter() - t0
        return answer_json(answer, t)

    async def stream(self, question: str, ws: str, doc: str | None = None,
                     mode: str = "hybrid", top_k: int = 5) -> AsyncIterator[dict[str, Any]]:
        """Yields ``{"token": str}`` events, then one ``{"evidence": [...], "timings",
        "abstained", "reason"}`` (an answer that starts "Not answerable" is an abstention;
        its reason is what follows, or the scope check's)."""
        t0 = time.perf_counter()
        passages, _, t, doc_ids = await self.retrieve(question, ws, doc, mode, top_k)
        s = time.perf_counter()
        refusal = await self._out_of_scope(question, ws, doc_ids, passages)
        qvec = (await self.encoder.encode(question))[0]  # cached since retrieve()
        tokens = (_once(refusal.answer) if refusal else
                  self.stages.stream(question, passages, qvec)).__aiter__()
        text: list[str] = []
        while True:
            try:
                token = await self._stage("synthesis", tokens.__anext__(), {})
            except StopAsyncIteration:
                break
            text.append(token)
            yield {"token": token}
        t["synthesis"] = time.perf_counter() - s
        t["total"] = time.perf_counter() - t0
        said = "".join(text).strip()
        abstained = said.lower().startswith(NOT_ANSWERABLE.lower())
        reason = refusal.reason if refusal else said[len(NOT_ANSWERABLE):].strip(" .:-")
        yield {"evidence": evidence_json(to_evidence(passages)),
               "timings": {k: round(v, 4) for k, v in t.items()},
               "abstained": abstained, "reason": reason if abstained else ""}

    async def neighbourhood(self, unit_ids: list[str], ws: str, hops: int = 1,
                            max_nodes: int = 40) -> dict[str, list[dict]]:
        """The graph around units of this workspace; a unit it does not hold (another
        workspace's included) is a 404, exactly as an absent one."""
        known = await asyncio.to_thread(self.fuser.content.units, ws, unit_ids)
        for uid in unit_ids:
            if uid not in known:
                raise Missing(f"no unit {uid!r}", field="unit")
        return await self._stage("graph", self.stages.neighbourhood(
            list(unit_ids), ws, hops, max_nodes), {})
