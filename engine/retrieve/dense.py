"""Candidate generator: Milvus dense (MiniLM) and BM25 sparse search over chunks."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from docray.engine.retrieve.query import QueryPlan

_FIELDS = ("payload",)  # the logical chunk id is all a generator needs from a hit


def _get(hit: Any, key: str) -> Any:
    return hit[key] if isinstance(hit, dict) else getattr(hit, key)


def _ranked(hits) -> list[tuple[str, float]]:
    return [(_get(h, "id"), float(_get(h, "score"))) for h in hits]


class DenseSearcher:
    """Both searches go to Milvus at once: the BM25 one on a worker thread."""

    def __init__(self, store, workers: int = 4):
        self.store = store
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="bm25")

    def search(self, plan: QueryPlan, qvec: np.ndarray, workspace: str,
               doc_ids: list[str] | None, k: int, sparse: bool = True) -> dict[str, list]:
        """Ranked (chunk_id, score) per signal: ``dense`` and ``sparse`` (BM25 over the
        question without its function words)."""
        text = plan.sparse_text or plan.text
        pending = (self._pool.submit(self.store.search_sparse, text, k, workspace,
                                     doc_ids=doc_ids, fields=_FIELDS)
                   if sparse and plan.keywords else None)
        out = {"dense": _ranked(self.store.search_dense(qvec, k, workspace, doc_ids=doc_ids,
                                                        fields=_FIELDS))}
        if pending is not None:
            out["sparse"] = _ranked(pending.result())
        return out
