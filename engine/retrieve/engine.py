"""The query path in one process: analyse → generators (concurrent) → fuse → rerank →
synthesize. The Ray Serve app composes the same stage classes across deployments."""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

import numpy as np

from docray.engine.config import DocrayConfig
from docray.engine.retrieve.fusion import fuse, page_ranking
from docray.engine.retrieve.query import QueryPlan, analyze
from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.abstain import abstain
from docray.engine.synthesize.citations import to_evidence
from docray.engine.synthesize.scope import ScopeChecker, scope_reason

log = logging.getLogger(__name__)
MODES = ("hybrid", "chunk-only", "graph-only", "page-only", "no-rerank")
MAX_PAGE_REF_DOCS = 3  # a question scoped to more documents than this gets no page lookup


@dataclass
class Retrieval:
    passages: list[Passage]
    pages: list[tuple[str, int]]
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class QueryResult:
    answer: Answer
    pages: list[tuple[str, int]]
    timings: dict[str, float]


def signals_for(mode: str) -> set[str]:
    """The signals a mode fuses. chunk-only is text chunk retrieval (dense + BM25, the
    year/number cues, rerank): without the graph, the page index and the preference for the
    modality the question asks for (tables, figures, ...), the multimodal signals."""
    if mode not in MODES:
        from docray.engine.errors import BadInput

        raise BadInput("mode", f"{mode!r} is not one of {', '.join(MODES)}")
    return {"chunk-only": {"dense", "sparse"}, "graph-only": {"graph", "modality"},
            "page-only": {"page", "modality"}}.get(
        mode, {"dense", "sparse", "graph", "page", "modality"})


class Fuser:
    """Turns generator outputs into ranked passages (needs the content store)."""

    def __init__(self, cfg: DocrayConfig, content, filenames):
        self.cfg, self.content, self.filenames = cfg, content, filenames
        self.scope = ScopeChecker(content)

    def out_of_scope(self, question: str, workspace: str, doc_ids: list[str] | None,
                     passages: list[Passage]) -> Answer | None:
        """An abstention when the question names something its documents never mention
        (``synthesize.scope_check``); None when the answerer should decide."""
        if not self.cfg.synthesize.scope_check:
            return None
        missing = self.scope.unmentioned(question, workspace, doc_ids)
        return abstain(to_evidence(passages), 0.0, scope_reason(missing)) if missing else None

    def referenced(self, plan: QueryPlan, workspace: str) -> list[str]:
        """The chunks on the pages the question points at ("page 14", "the cover"), in
        page order, when it is scoped to a few documents (a page number says nothing
        across a workspace)."""
        if not plan.pages or not plan.doc_ids or len(plan.doc_ids) > MAX_PAGE_REF_DOCS:
            return []
        pages = [(d, p) for d in plan.doc_ids
                 for n in plan.pages for p in self.scope.vocabulary(workspace, d).pages(n)]
        on = self.content.chunks_on_pages(workspace, pages)
        return list(dict.fromkeys(cid for page in pages for cid in on.get(page, [])))

    def fuse(self, plan: QueryPlan, workspace: str, results: dict, mode: str = "hybrid"
             ) -> tuple[list[tuple[str, float]], dict, dict]:
        """Fuse the generators' ``results`` ({"dense": {name: hits}, "graph": hits, "page":
        hits}) with the signals of ``mode``: (ranked chunks, chunks, their pages)."""
        chunk_lists = dict(results.get("dense", {}))  # dense and BM25, then the graph walk's
        if "graph" in results:
            chunk_lists["graph"] = results["graph"]
        page_hits = results.get("page", [])
        referenced = self.referenced(plan, workspace)
        if referenced:  # "on page 14": that page's chunks are a ranking of their own
            chunk_lists["pageref"] = [(cid, 1.0) for cid in referenced]
        ids = {cid for lst in chunk_lists.values() for cid, _ in lst}
        page_chunks = self.content.chunks_on_pages(workspace, [p for p, _ in page_hits])
        for cids in page_chunks.values():
            ids.update(cids)
        chunks = self.content.chunks(workspace, ids)
        cpages = {cid: [(c.doc_id, p) for p in c.pages] for cid, c in chunks.items()}
        lists = {name: [cid for cid, _ in lst if cid in chunks]
                 for name, lst in chunk_lists.items()}
        pages = {"page": [p for p, _ in page_hits]} if page_hits else {}
        ranked = fuse(lists, pages, cpages, self.cfg.retrieve.weights,
                      {cid: c.modality for cid, c in chunks.items()},
                      plan.modalities if "modality" in signals_for(mode) else [],
                      self.cfg.retrieve.weights.get("modality", 0.0) / 60)
        return cue_boost(ranked, chunks, plan, self.cfg.retrieve.weights.get("cues", 0.0) / 60), \
            chunks, cpages

    def passages(self, workspace: str, ranked: list[tuple[str, float]], chunks: dict,
                 k: int) -> list[Passage]:
        top = [(chunks[cid], s) for cid, s in ranked[:k]]
        units = self.content.units(workspace, [u for c, _ in top for u in c.unit_ids])
        return [Passage(c, [units[u] for u in c.unit_ids if u in units], s,
                        self.filenames(workspace, c.doc_id)) for c, s in top]


def ordered_pages(ranked: list[tuple[str, float]], cpages: dict,
                  page_hits: list) -> list[tuple[str, int]]:
    """Pages in the order of their best chunk, then the page signal's pages no chunk
    reached."""
    pages = page_ranking(ranked, cpages)
    return pages + [p for p, _ in page_hits if p not in set(pages)]


def cue_boost(ranked: list[tuple[str, float]], chunks: dict, plan: QueryPlan,
              weight: float) -> list[tuple[str, float]]:
    """Lift chunks that contain the years and numbers the question names."""
    cues = [*plan.years, *plan.numbers]
    if not cues or weight <= 0:
        return ranked
    boosted = [(cid, s + weight * sum(c in chunks[cid].text for c in cues) / len(cues))
               for cid, s in ranked]
    return sorted(boosted, key=lambda kv: (-kv[1], kv[0]))


def rerank_ranked(score_fn, ranked: list[tuple[str, float]], n: int,
                  weight: float = 0.5) -> list[tuple[str, float]]:
    """Rerank the head: ``weight`` × the reranker's min-max normalised score plus
    (1 − ``weight``) × the fused score, normalised the same way. A reranker past its
    time budget leaves the fused order."""
    from docray.engine.retrieve.rerank import RerankTimeout

    head = ranked[:n]
    if not head or score_fn is None:
        return ranked
    try:
        scores = np.asarray(score_fn([c for c, _ in head]), dtype=np.float64)  # (n,)
    except RerankTimeout as err:
        log.warning("rerank skipped: %s", err)
        return ranked
    spread = float(scores.max() - scores.min()) or 1.0
    fused = np.array([s for _, s in head])
    fused_n = (fused - fused.min()) / (float(fused.max() - fused.min()) or 1.0)
    final = weight * (scores - scores.min()) / spread + (1 - weight) * fused_n
    order = np.argsort(-final, kind="stable")
    return [(head[i][0], float(final[i])) for i in order] + ranked[n:]


def rerank_scorer(reranker, question: str, qtok: np.ndarray, workspace: str, chunks: dict):
    """Scores for chunk ids: stored token vectors when the reranker has them."""
    if reranker is None:
        return None
    if hasattr(reranker, "score_chunks"):
        return lambda ids: reranker.score_chunks(qtok, workspace, ids,
                                                 [chunks[c].text for c in ids], question)
    return lambda ids: reranker.score(question, [chunks[c].text for c in ids])


class QueryEngine:
    """In-process engine for the CLI and the quality benchmark."""

    def __init__(self, cfg: DocrayConfig, parts):
        self.cfg, self.p = cfg, parts

    async def retrieve(self, question: str, workspace: str, doc_ids: list[str] | None = None,
                       mode: str = "hybrid", top_k: int = 5) -> Retrieval:
        use, t = signals_for(mode), {}
        t0 = time.perf_counter()
        plan = analyze(question, doc_ids)
        k = self.cfg.retrieve.candidates

        async def timed(name, fn, *args):
            s = time.perf_counter()
            out = await asyncio.to_thread(fn, *args)
            t[name] = time.perf_counter() - s
            return out

        jobs = {}  # the graph walk needs no vectors: it runs while the question is encoded
        if "graph" in use:
            jobs["graph"] = asyncio.ensure_future(
                timed("graph", self.p.graph.search, plan, workspace, doc_ids, k))
        try:
            qvec, qtok = await asyncio.to_thread(self.p.encode_query, question)
            t["analyze"] = time.perf_counter() - t0
            if use & {"dense", "sparse"}:
                jobs["dense"] = timed("dense", self.p.dense.search, plan, qvec, workspace,
                                      doc_ids, k)
            if "page" in use:
                jobs["page"] = timed("page", self.p.pages.search_query, question, qtok,
                                     workspace, doc_ids, k)
            results = dict(zip(jobs, await asyncio.gather(*jobs.values())))
        finally:
            if "graph" in jobs:
                jobs["graph"].cancel()
        ranked, chunks, pages = self.rank(question, plan, qtok, workspace, results, mode,
                                          top_k, t)
        return Retrieval(self.p.fuser.passages(workspace, ranked, chunks, top_k), pages, t)

    def rank(self, question: str, plan: QueryPlan, qtok: np.ndarray, workspace: str,
             results: dict, mode: str = "hybrid", top_k: int = 5,
             t: dict[str, float] | None = None) -> tuple[list[tuple[str, float]], dict, list]:
        """Fuse the generators' ``results`` ({"dense": {name: hits}, "graph": hits, "page":
        hits}), rerank the head and order the pages: (ranked chunks, chunks, pages).
        Separate from :meth:`retrieve` so benchmarks/tune.py can re-rank cached generator
        outputs under other weights through this same code."""
        t = {} if t is None else t
        s = time.perf_counter()
        ranked, chunks, cpages = self.p.fuser.fuse(plan, workspace, results, mode)
        t["fuse"] = time.perf_counter() - s
        if mode != "no-rerank" and self.cfg.retrieve.reranker != "none":
            s = time.perf_counter()
            scorer = rerank_scorer(self.p.reranker, question, qtok, workspace, chunks)
            ranked = rerank_ranked(scorer, ranked, max(top_k, self.cfg.retrieve.rerank_depth),
                                   self.cfg.retrieve.rerank_weight)
            t["rerank"] = time.perf_counter() - s
        return ranked, chunks, ordered_pages(ranked, cpages, results.get("page", []))

    async def query(self, question: str, workspace: str, doc_ids: list[str] | None = None,
                    mode: str = "hybrid", top_k: int = 5) -> QueryResult:
        t0 = time.perf_counter()
        r = await self.retrieve(question, workspace, doc_ids, mode, top_k)
        s = time.perf_counter()
        answer = await asyncio.to_thread(self.p.fuser.out_of_scope, question, workspace,
                                         doc_ids, r.passages)
        qvec = self.p.encode_query(question)[0]  # cached: encoded once, in retrieve()
        answer = answer or await self.p.answerer.answer(question, r.passages, qvec)
        r.timings["synthesize"] = time.perf_counter() - s
        r.timings["total"] = time.perf_counter() - t0
        return QueryResult(answer, r.pages, {k: round(v, 4) for k, v in r.timings.items()})
