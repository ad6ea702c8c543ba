"""Candidate generator: Milvus dense (MiniLM) and BM25 sparse search over chunks."""
from __future__ import annotations

from typing import Any

import numpy as np

from docray.engine.retrieve.query import QueryPlan


def _get(hit: Any, key: str) -> Any:
    return hit[key] if isinstance(hit, dict) else getattr(hit, key)


class DenseSearcher:
    def __init__(self, store):
        self.store = store

    def search(self, plan: QueryPlan, qvec: np.ndarray, workspace: str,
               doc_ids: list[str] | None, k: int, sparse: bool = True) -> dict[str, list]:
        """Ranked (chunk_id, score) per signal: ``dense`` and ``sparse`` (BM25)."""
        out = {"dense": [(_get(h, "id"), float(_get(h, "score"))) for h in
                         self.store.search_dense(qvec, k, workspace, doc_ids=doc_ids)]}
        if sparse and plan.keywords:
            out["sparse"] = [(_get(h, "id"), float(_get(h, "score"))) for h in
                             self.store.search_sparse(plan.text, k, workspace, doc_ids=doc_ids)]
        return out
