"""In-memory pooled prefilter: a cheap first stage before exact MaxSim on large selections.

Every live page is summarised by a few unit vectors — the mean of its tokens plus k-means
centroids (:func:`~.two_stage.pool_page`) — kept in one ragged matrix in memory, one run of
rows per page. A query is scored against them by the MaxSim kernel (per query token, the
best row of each page; summed), and only the best ``n`` pages go on to exact MaxSim over
their full token runs. Where the store holds int8 tokens, the prefilter's rows are
quantized per row too (with 32 centroids, 2,662 pages are 88K rows: 33 MB scanned instead
of 129 MB in fp32; the fp32 pooled vectors stay cached per page for later rebuilds and the
saved file, so the prefilter holds 166 instead of 261 MB of RSS), and scored in the store's
compute: the int8 GEMM where the CPU has VNNI/AMX, fp32 tiles elsewhere. benchmarks/prefilter.py
measures both on the qa.jsonl corpus: int8 took p50 25 vs 45 ms per open question and
picked 99.75% of the same 192 candidates.

Below ``threshold`` selected pages (a question scoped to a short document) the exact scan
is cheap and the prefilter steps aside. Above it, the exact stage gets ``n`` pages, or
``share`` of the selection where that is fewer (at least 32): a 198-page filing keeps 66
of its pages, the whole corpus 192 of its 2,662. Only the selected pages' pooled rows are
scored (a 10-K's 6.5K rows, not the corpus's 88K; one slice when they are adjacent).
Pooled vectors are cached per page key, so a reload after new writes only pools the new
pages, and saved beside the store
(``pooled-c<k>.npz``), so a new process — a Serve replica the autoscaler adds — loads them
instead of pooling every page again (11 s of CPU for the full corpus). Agreement with
exact search is measured in the tests and benchmarks/prefilter.py.

For large shards the scan over every pooled row can itself become the cost; with
``pages.candidate_index`` ``faiss-ivf`` or ``faiss-hnsw`` (:mod:`.faiss_index`) a faiss index
over the same rows finds the pages near each query vector, and only those pages' pooled
rows are scored (selections under ``faiss_min_pages`` keep the exact scan). The faiss index
is rebuilt with the pooled matrix, i.e. lazily on the first query after any write.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Iterable, Optional

import numpy as np
import torch

from docray.kernels.maxsim import maxsim

from .faiss_index import FaissCandidateIndex
from .shards import quantize_int8
from .store import Array, PageStore, _as_numpy
from .two_stage import pool_page
from .view import gather, merge_runs

logger = logging.getLogger(__name__)
_MIN_KEPT = 32  # candidates kept from a selection, however small its share


class PooledPrefilter:
    def __init__(self, store: PageStore, n: int = 384, threshold: int = 1024,
                 n_centroids: int = 32, index: Optional[FaissCandidateIndex] = None,
                 faiss_min_pages: int = 20000, share: float = 1.0):
        self.store, self.n, self.threshold, self.n_centroids = store, n, threshold, n_centroids
        self.share = share
        self.index, self.faiss_min_pages = index, faiss_min_pages
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[int, torch.Tensor]] = {}  # key → (n_tok, pooled)
        self._built_for: Optional[list] = None

    @classmethod
    def from_config(cls, store: PageStore, pc) -> "PooledPrefilter":
        """The prefilter ``pages`` config (:class:`~docray.engine.config.PageIndexConfig`) names."""
        index = None
        if pc.candidate_index != "exact":
            index = FaissCandidateIndex(pc.candidate_index, nprobe=pc.faiss_nprobe,
                                        ef_search=pc.faiss_ef_search, per_token=pc.faiss_per_token,
                                        nlist=pc.faiss_nlist, hnsw_m=pc.faiss_hnsw_m,
                                        device=pc.faiss_device)
        return cls(store, pc.prefilter_pages, pc.two_stage_threshold, pc.centroids_per_page,
                   index, pc.faiss_min_pages, pc.prefilter_share)

    def kept(self, selected: int) -> int:
        """Candidates for exact MaxSim out of ``selected`` pages.

        >>> pf = PooledPrefilter(None, n=192, threshold=96, share=1 / 3)
        >>> [pf.kept(s) for s in (80, 198, 2662)]
        [80, 66, 192]
        """
        if selected <= self.threshold:
            return selected
        return min(selected, self.n, max(_MIN_KEPT, int(np.ceil(self.share * selected))))

    @property
    def cache_path(self):
        return self.store.path / f"pooled-c{self.n_centroids}.npz"

    def _load(self) -> dict[str, tuple[int, torch.Tensor]]:
        """Saved pooled vectors: page key → (its token count when pooled, (1 + c, dim))."""
        try:
            with np.load(self.cache_path, allow_pickle=False) as z:
                keys, ntok, counts, rows = z["keys"], z["ntok"], z["counts"], z["rows"]
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError) as err:  # a torn or foreign file: pool again
            logger.warning("ignoring pooled cache %s: %s", self.cache_path, err)
            return {}
        if rows.ndim != 2 or rows.shape[1] != self.store.dim:
            return {}
        mat = torch.from_numpy(rows)  # (n_rows, dim)
        ends = np.cumsum(counts)
        return {k: (int(n), mat[e - c:e]) for k, n, c, e in
                zip(keys.tolist(), ntok.tolist(), counts.tolist(), ends.tolist())}

    def _save(self, keys: list[str], ntok: list[int], rows: list[torch.Tensor]) -> None:
        tmp = self.cache_path.with_name(f".{self.cache_path.stem}.{os.getpid()}.npz")
        try:
            np.savez(tmp, keys=np.array(keys, dtype=str), ntok=np.array(ntok, np.int64),
                     counts=np.array([len(r) for r in rows], np.int64),
                     rows=torch.cat(rows).numpy() if rows else np.zeros((0, self.store.dim),
                                                                          np.float32))
            os.replace(tmp, self.cache_path)  # atomic: replicas may save at the same time
        except OSError as err:  # a read-only data dir still serves; it pools per process
            logger.warning("cannot save pooled cache %s: %s", self.cache_path, err)
            tmp.unlink(missing_ok=True)

    def _build(self) -> None:
        views = self.store._views
        if self._built_for is views:
            return
        if self._built_for is None:
            self._cache = self._load()
        rows, keys, ntoks, ws, docs, pooled_now = [], [], [], [], [], 0
        for view in views:
            idx = np.nonzero(view.live & (view.lengths > 0))[0]
            keys += view.keys[idx].tolist()
            ws.append(view.workspaces[idx])
            docs.append(view.docs[idx])
            for i, key in zip(idx, view.keys[idx]):
                n_tok = int(view.lengths[i])
                cached = self._cache.get(key)
                if cached is not None and cached[0] == n_tok:
                    pooled = cached[1]
                else:
                    pooled = pool_page(view.page_tokens(i), self.n_centroids)  # (1 + c, dim)
                    pooled_now += 1
                rows.append(pooled)
                ntoks.append(n_tok)
        dropped = len(self._cache) - (len(keys) - pooled_now)  # deleted or re-pooled pages
        self._cache = {k: (n, r) for k, n, r in zip(keys, ntoks, rows)}
        if pooled_now or dropped:
            self._save(keys, ntoks, rows)
        self._pack(rows)
        self._keys = keys
        self._ws = np.concatenate(ws) if ws else np.array([], dtype=object)  # (n_pages,)
        self._docs = np.concatenate(docs) if docs else np.array([], dtype=object)
        self._built_for = views
        self._ws_masks: dict[Optional[str], np.ndarray] = {}
        logger.info("pooled prefilter: %d pages, %d %s rows (%s compute)", len(keys),
                    len(self._matrix), str(self._matrix.dtype).replace("torch.", ""),
                    self._compute)

    def _pack(self, rows: list[torch.Tensor]) -> None:
        """One (n_rows, dim) matrix with page ``i`` at rows ``offsets[i]:offsets[i + 1]``,
        int8 with per-row scales where the store holds int8 tokens."""
        matrix = torch.cat(rows) if rows else torch.zeros(0, self.store.dim)  # (n_rows, dim)
        counts = np.array([len(r) for r in rows], dtype=np.int64)  # (n_pages,)
        self._offsets = np.zeros(len(rows) + 1, dtype=np.int64)  # (n_pages + 1,)
        self._offsets[1:] = np.cumsum(counts)
        self._row_page = np.repeat(np.arange(len(rows)), counts)  # (n_rows,)
        if self.index is not None:  # the same rows, fp32, before any quantization
            self.index.build(matrix.float().numpy(), self._row_page)
        self._compute = self.store.compute  # the int8 GEMM only where the CPU has VNNI/AMX
        self._scales = None
        if self.store.dtype == "int8":  # a quarter of fp32's memory; fp32 tiles without VNNI
            q8, scales = quantize_int8(matrix.float().numpy())  # (n_rows, dim), (n_rows,)
            matrix, self._scales = torch.from_numpy(q8), torch.from_numpy(scales)
        self._matrix = matrix

    def _workspace_mask(self, workspace: Optional[str]) -> np.ndarray:
        """Pages of ``workspace`` (all when None), cached until the next rebuild: comparing
        100K object strings per query cost more than the faiss search."""
        mask = self._ws_masks.get(workspace)
        if mask is None:
            mask = (np.ones(len(self._keys), dtype=bool) if workspace is None
                    else self._ws == workspace)  # (n_pages,)
            self._ws_masks[workspace] = mask
        return mask

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
            mask = self._workspace_mask(workspace).copy()  # (n_pages,)
            if doc_ids is not None:
                mask &= np.isin(self._docs, list(doc_ids))
            selected = int(mask.sum())
            n = self.kept(selected)
            if n >= selected:
                return None
            q = torch.nn.functional.normalize(
                torch.as_tensor(_as_numpy(query), dtype=torch.float32), dim=1)  # (n_q, dim)
            if self.index is not None and selected >= self.faiss_min_pages:
                return self._indexed(q, mask, n)
            pages = np.nonzero(mask)[0]  # (selected,) only their rows are scored
            top = torch.topk(self._score_pages(q, pages), n).indices.numpy()
            return {self._keys[i] for i in pages[top].tolist()}

    def _score_pages(self, q: torch.Tensor, pages: np.ndarray) -> torch.Tensor:
        """Pooled MaxSim of ``pages`` (sorted page ids) alone -> (len(pages),)."""
        a, b = self._offsets[pages], self._offsets[pages + 1]  # (n,) row runs
        runs = merge_runs(a, b - a)  # a document's pages: one run, one slice
        scales = gather(self._scales, runs) if self._scales is not None else None
        offsets = np.concatenate([[0], np.cumsum(b - a)])  # (n + 1,)
        return maxsim(q, gather(self._matrix, runs), offsets, scales,
                      compute=self._compute)[0]

    def _indexed(self, q: torch.Tensor, mask: np.ndarray, n: int) -> set[str]:
        """faiss finds the pages near each query vector; their pooled MaxSim picks ``n``."""
        probes = torch.cat([q, torch.nn.functional.normalize(q.mean(0, keepdim=True), dim=1)])  # (n_q + 1, dim)
        row_mask = None if mask.all() else mask[self._row_page]  # (n_rows,)
        pages = self.index.search(probes.numpy(), row_mask)  # (n_cand,) sorted page ids
        if len(pages) <= n:
            return {self._keys[i] for i in pages.tolist()}
        top = torch.topk(self._score_pages(q, pages), n).indices.numpy()
        return {self._keys[i] for i in pages[top].tolist()}
