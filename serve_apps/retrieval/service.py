"""Candidate generators over the stores of one data dir, async and Ray-free.

The ingress encodes the question once and sends the vectors: the dense search gets the
query vector, page retrieval the query token vectors; neither stage loads an encoder.

Each service opens only the store it searches, so replicas stay small. Readers pick up
writes made by the ingestion process: the page store remaps on its own (SQLite
``data_version``); the graph, held in memory, is reloaded when its manifest changes.
"""
from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

import numpy as np

from docray.engine.config import DocrayConfig
from docray.engine.retrieve.query import QueryPlan

log = logging.getLogger(__name__)


class GraphWalkService:
    """Structural navigation: entity match + k-hop walk over the dual graph."""

    def __init__(self, cfg: DocrayConfig):
        from docray.engine.index.content import ContentStore

        self.cfg = cfg
        self.root = Path(cfg.paths.data_dir)
        self.content = ContentStore(self.root / "content.sqlite")
        self._lock = threading.Lock()
        self._stamp: int | None = None
        self.walker = None
        self._maybe_reload()

    def _manifest_stamp(self) -> int | None:
        p = self.root / "graph" / "manifest.json"
        try:
            return p.stat().st_mtime_ns
        except FileNotFoundError:
            return None

    def _maybe_reload(self) -> None:
        from docray.engine.graph.store import GraphStore
        from docray.engine.retrieve.graph_walk import GraphWalker

        stamp = self._manifest_stamp()
        with self._lock:
            if stamp == self._stamp and self.walker is not None:
                return
            path = self.root / "graph"
            try:
                graph = GraphStore.open(path) if stamp is not None else GraphStore(path)
            except Exception as err:  # noqa: BLE001 — a save in progress: keep the old graph
                if self.walker is None:
                    raise
                log.warning("graph reload failed (%s); keeping the loaded graph", err)
                return
            walker = GraphWalker(graph, self.content, self.cfg.retrieve.graph_hops)
            walker.warm(self.cfg.paths.workspace)  # not on the first question after a load
            self.walker, self._stamp = walker, stamp
            log.info("graph loaded (%s)", graph.counts())

    def _search(self, plan: QueryPlan, workspace: str, doc_ids, k: int):
        self._maybe_reload()
        return self.walker.search(plan, workspace, doc_ids, k)

    async def search(self, plan: QueryPlan, workspace: str, doc_ids: list[str] | None,
                     k: int) -> list[tuple[str, float]]:
        return await asyncio.to_thread(self._search, plan, workspace, doc_ids, k)

    def _neighbourhood(self, unit_ids: list[str], workspace: str, hops: int, max_nodes: int):
        from docray.engine.graph.neighbourhood import neighbourhood

        self._maybe_reload()
        nodes, edges = neighbourhood(self.walker.graph, unit_ids, workspace, hops, max_nodes)
        return {"nodes": [{**n.to_dict(), "seed": seed} for n, seed in nodes],
                "edges": [{"src": a, "dst": b, "type": t, "weight": w} for a, b, t, w in edges]}

    async def neighbourhood(self, unit_ids: list[str], workspace: str, hops: int = 1,
                            max_nodes: int = 40) -> dict[str, list[dict]]:
        """The graph around ``unit_ids`` (see :mod:`docray.engine.graph.neighbourhood`),
        as plain dicts: ``{"nodes": [...], "edges": [...]}``."""
        return await asyncio.to_thread(self._neighbourhood, unit_ids, workspace, hops,
                                       max_nodes)


class DenseSearchService:
    """Dense + BM25 sparse search in Milvus (a server URI when several processes share it)."""

    def __init__(self, cfg: DocrayConfig):
        from docray.engine.index.dense import MilvusDenseStore
        from docray.engine.retrieve.dense import DenseSearcher

        self.store = MilvusDenseStore(cfg.milvus, Path(cfg.paths.data_dir),
                                      dim=cfg.embed.text.dim, encoder=cfg.embed.text.model)
        self.searcher = DenseSearcher(self.store)

    async def search(self, plan: QueryPlan, qvec: np.ndarray, workspace: str,
                     doc_ids: list[str] | None, k: int) -> dict[str, list]:
        """``qvec``: the query vector (dim,) the ingress computed."""
        return await asyncio.to_thread(self.searcher.search, plan, np.asarray(qvec, np.float32),
                                       workspace, doc_ids, k)

    def close(self) -> None:
        self.store.close()


class PageRetrievalService:
    """MaxSim over the page multi-vector store (pooled prefilter on large selections)."""

    def __init__(self, cfg: DocrayConfig):
        from docray.engine.index.pages import PageStore
        from docray.engine.ingest.stores import _page_encoder_name
        from docray.engine.retrieve.pages import page_query_encoder, page_searcher

        page = cfg.embed.page
        self.store = PageStore(Path(cfg.paths.data_dir) / "pages", dim=page.dim,
                               dtype={"float16": "fp16"}.get(page.dtype, page.dtype),
                               encoder=_page_encoder_name(cfg))
        # an image page encoder (ColPali) encodes the question here, on this replica
        self.searcher = page_searcher(cfg, self.store, page_query_encoder(cfg))
        self.searcher.prefilter.warm()  # pool every page now, not on the first open query

    async def search(self, qtok: np.ndarray, workspace: str, doc_ids: list[str] | None,
                     k: int, question: str = "") -> list[tuple[tuple[str, int], float]]:
        """``qtok``: the query token vectors (n_q, dim) the ingress computed; an image page
        encoder encodes ``question`` instead."""
        return await asyncio.to_thread(self.searcher.search_query, question,
                                       np.asarray(qtok, np.float32), workspace, doc_ids, k)


