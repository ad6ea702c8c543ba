"""Candidate generator: late-interaction page retrieval (MaxSim over the page store).

Exact over the selected pages; above ``pages.two_stage_threshold`` selected pages a pooled
prefilter (:mod:`docray.engine.index.pages.pooled`) picks the candidates scored exactly.

The query's token vectors must come from the model that embedded the pages. With the
``text-tokens`` page encoder they are the text encoder's (computed once with the query
vector); an image page encoder (ColPali) encodes the question itself
(:meth:`PageSearcher.search_query`).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

QueryTokens = Callable[[str], np.ndarray]


def page_query_encoder(cfg) -> QueryTokens | None:
    """text → (n_q, dim) query token vectors of the page encoder, cached; None for
    ``text-tokens`` (the text encoder's token vectors are the page query)."""
    if cfg.embed.page.backend == "text-tokens":
        return None
    from docray.engine.embed import get_page_encoder

    encoder = get_page_encoder(cfg.embed.page)

    @lru_cache(maxsize=1024)
    def encode(text: str) -> np.ndarray:
        return np.asarray(encoder.encode_queries([text])[0], np.float32)  # (n_q, dim)

    return encode


def page_searcher(cfg, store, query_encoder: QueryTokens | None = None) -> "PageSearcher":
    from docray.engine.index.pages.pooled import PooledPrefilter

    pc = cfg.pages
    return PageSearcher(store, PooledPrefilter.from_config(store, pc), query_encoder)


class PageSearcher:
    def __init__(self, store, prefilter=None, query_encoder: QueryTokens | None = None):
        self.store, self.prefilter, self.query_encoder = store, prefilter, query_encoder

    def search_query(self, question: str, qtok: np.ndarray, workspace: str,
                     doc_ids: list[str] | None, k: int) -> list[tuple[tuple[str, int], float]]:
        """:meth:`search_tokens` with the page encoder's tokens for ``question`` when it has
        its own query encoder, else with ``qtok`` (the text encoder's token vectors)."""
        q = self.query_encoder(question) if self.query_encoder is not None else qtok
        return self.search_tokens(q, workspace, doc_ids, k)

    def search_tokens(self, q: np.ndarray, workspace: str, doc_ids: list[str] | None,
                      k: int) -> list[tuple[tuple[str, int], float]]:
        """Ranked ((doc_id, page), score) for query token vectors ``q`` (n_q, dim); the
        score is MaxSim divided by the number of query tokens."""
        q = np.asarray(q, dtype=np.float32)  # (n_q, dim)
        if q.size == 0:
            return []
        keys = self.prefilter.candidates(q, workspace, doc_ids) if self.prefilter else None
        hits = self.store.search_batch([q], k, workspace, doc_ids, keys=keys)[0]
        return [((h.page.doc_id, h.page.page_no), h.score / len(q)) for h in hits]
