"""Candidate generator: late-interaction page retrieval (MaxSim over the page store).

Exact over the selected pages; above ``pages.two_stage_threshold`` selected pages a pooled
prefilter (:mod:`docray.engine.index.pages.pooled`) picks the candidates scored exactly.
"""
from __future__ import annotations

import numpy as np


def page_searcher(cfg, store) -> "PageSearcher":
    from docray.engine.index.pages.pooled import PooledPrefilter

    pc = cfg.pages
    return PageSearcher(store, PooledPrefilter(store, pc.prefilter_pages, pc.two_stage_threshold,
                                               pc.centroids_per_page))


class PageSearcher:
    def __init__(self, store, prefilter=None):
        self.store, self.prefilter = store, prefilter

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
