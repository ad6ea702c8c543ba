"""Candidate generator: late-interaction page retrieval (exact MaxSim over the page store)."""
from __future__ import annotations

import numpy as np


class PageSearcher:
    def __init__(self, store):
        self.store = store

    def search_tokens(self, q: np.ndarray, workspace: str, doc_ids: list[str] | None,
                      k: int) -> list[tuple[tuple[str, int], float]]:
        """Ranked ((doc_id, page), score) for query token vectors ``q`` (n_q, dim); the
        score is MaxSim divided by the number of query tokens."""
        q = np.asarray(q, dtype=np.float32)  # (n_q, dim)
        if q.size == 0:
            return []
        hits = self.store.search(q, k=k, workspace=workspace, doc_ids=doc_ids)
        return [((h.page.doc_id, h.page.page_no), h.score / len(q)) for h in hits]
