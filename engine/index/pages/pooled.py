"""In-memory pooled prefilter: a cheap first stage before exact MaxSim on large selections.

Every live page is summarised by a few unit vectors — the mean of its tokens plus k-means
centroids (:func:`~.two_stage.pool_page`) — kept in one matrix in memory (with 32 centroids,
2,662 pages are 88K rows, 135 MB). A query is scored against them as MaxSim over the
pooled rows (per query token, the best row of each page; summed), and only the best
``n`` pages go on to exact MaxSim over their full token runs. Below ``threshold`` selected
pages (a question scoped to one document) the exact scan is cheap and the prefilter steps
aside. Pooled vectors are cached per page key, so a reload after new writes only pools the
new pages. Agreement with exact search is measured in the tests and benchmarks/maxsim.py.
"""
from __future__ import annotations

import logging
import threading
from typing import Iterable, Optional

import numpy as np
import torch

from .store import Array, PageStore, _as_numpy
from .two_stage import pool_page

logger = logging.getLogger(__name__)


class PooledPrefilter:
    def __init__(self, store: PageStore, n: int = 384, threshold: int = 1024,
                 n_centroids: int = 32):
        self.store, self.n, self.threshold, self.n_centroids = store, n, threshold, n_centroids
        self._lock = threading.Lock()
        self._cache: dict[str, torch.Tensor] = {}
        self._built_for: Optional[list] = None

    def _build(self) -> None:
        views = self.store._views
        if self._built_for is views:
            return
        rows, owner, keys, ws, docs = [], [], [], [], []
        for view in views:
            idx = np.nonzero(view.live & (view.lengths > 0))[0]
            keys += view.keys[idx].tolist()
            ws.append(view.workspaces[idx])
            docs.append(view.docs[idx])
            for i, key in zip(idx, view.keys[idx]):
                pooled = self._cache.get(key)
                if pooled is None:
                    pooled = pool_page(view.page_tokens(i), self.n_centroids)  # (1 + c, dim)
                owner.extend([len(rows)] * len(pooled))
                rows.append(pooled)
        self._cache = dict(zip(keys, rows))  # drops deleted pages
        self._matrix = torch.cat(rows) if rows else torch.zeros(0, self.store.dim)  # (n_rows, dim)
        self._owner = torch.tensor(owner, dtype=torch.long)  # (n_rows,)
        self._keys = keys
        self._ws = np.concatenate(ws) if ws else np.array([], dtype=object)  # (n_pages,)
        self._docs = np.concatenate(docs) if docs else np.array([], dtype=object)
        self._built_for = views
        logger.info("pooled prefilter: %d pages, %d rows", len(keys), len(self._matrix))

    def warm(self) -> None:
        with self._lock:
            self.store.refresh()
            self._build()

    def candidates(self, query: Array, workspace: Optional[str] = None,
                   doc_ids: Optional[Iterable[str]] = None) -> Optional[set[str]]:
        """Page keys for the exact stage, or None when the selection is small enough to
        scan exactly (≤ ``threshold`` pages)."""
        with self._lock:
            self.store.refresh()
            self._build()
            mask = np.ones(len(self._keys), dtype=bool)  # (n_pages,)
            if workspace is not None:
                mask &= self._ws == workspace
            if doc_ids is not None:
                mask &= np.isin(self._docs, list(doc_ids))
            if int(mask.sum()) <= max(self.threshold, self.n):
                return None
            q = torch.nn.functional.normalize(
                torch.as_tensor(_as_numpy(query), dtype=torch.float32), dim=1)  # (n_q, dim)
            sim = q @ self._matrix.T  # (n_q, n_rows)
            best = torch.full((q.shape[0], len(self._keys)), float("-inf"))  # (n_q, n_pages)
            best.scatter_reduce_(1, self._owner.expand(q.shape[0], -1), sim, "amax")
            score = best.sum(0)  # (n_pages,)
            score[torch.from_numpy(~mask)] = float("-inf")
            top = torch.topk(score, self.n).indices.tolist()
            return {self._keys[i] for i in top}
