"""faiss candidate index over the pooled page vectors (the first stage of two-stage search).

The in-memory prefilter (:mod:`.pooled`) scores a query against *every* pooled row (mean +
k-means centroids of each page): exact, but linear in the corpus. For large shards this
module puts the same rows in a faiss index — ``IndexIVFFlat`` (inner product, ``nlist``
≈ 4·√rows, ``nprobe`` lists searched) or ``IndexHNSWFlat`` (``efSearch``) — and each query
vector (its tokens and their mean) fetches its ``per_token`` nearest rows. The pages those
rows belong to are the candidate set; the prefilter then scores the pooled MaxSim of just
those pages exactly and hands its top ``n`` to exact MaxSim over full token runs. With
``nprobe = nlist`` IVFFlat is exact, so the candidates are the exact per-token neighbours.

Where faiss has GPU support (faiss-gpu: ``StandardGpuResources``) and sees a CUDA device
(``faiss.get_num_gpus() > 0``), the IVF index is moved to the GPU(s) with
``faiss.index_cpu_to_all_gpus``; HNSW has no GPU form and stays on CPU. faiss is imported
only here, lazily, so the page store works without it.

Consistency with writes: the prefilter rebuilds its pooled matrix whenever the store's
shard views change (any add, replace, delete or compaction, seen on the next query), and
calls :meth:`FaissCandidateIndex.build` again. IVF keeps its trained coarse quantizer and
only re-adds the rows (cheap) unless the row count has more than doubled or halved since
training; HNSW is rebuilt (it cannot delete).
"""
from __future__ import annotations

import logging
import math
import time
from typing import Optional

import numpy as np

from docray.engine.errors import ConfigError, Unavailable

logger = logging.getLogger(__name__)

KINDS = ("faiss-ivf", "faiss-hnsw")
DEVICES = ("auto", "cpu", "gpu")
GPU_MAX_K = 2048  # faiss GPU indexes answer at most this many neighbours per vector


def import_faiss():
    try:
        import faiss
    except ImportError as err:  # pragma: no cover - faiss-cpu is in the dev extra
        raise Unavailable("pages.candidate_index needs faiss: pip install faiss-cpu "
                          "(or faiss-gpu on a CUDA host)") from err
    return faiss


def faiss_has_gpu(faiss) -> bool:
    """faiss built with GPU support *and* at least one CUDA device visible to it."""
    if not hasattr(faiss, "StandardGpuResources") or not hasattr(faiss, "index_cpu_to_all_gpus"):
        return False
    try:
        return int(faiss.get_num_gpus()) > 0
    except (AttributeError, RuntimeError):
        return False


def choose_device(kind: str, device: str, faiss) -> str:
    """'cpu' or 'gpu' for an index of ``kind`` under the ``device`` setting (auto|cpu|gpu)."""
    if device not in DEVICES:
        raise ConfigError(f"pages.faiss_device must be one of {DEVICES}, got {device!r}")
    if device == "cpu":
        return "cpu"
    gpu = faiss_has_gpu(faiss)
    if device == "gpu":
        if not gpu:
            raise Unavailable("pages.faiss_device is 'gpu' but faiss has no GPU support or sees "
                              "no CUDA device (install faiss-gpu on a CUDA host, or use 'auto')")
        if kind == "faiss-hnsw":
            raise ConfigError("pages.faiss_device 'gpu' needs candidate_index 'faiss-ivf': "
                              "faiss has no GPU HNSW")
        return "gpu"
    return "gpu" if gpu and kind == "faiss-ivf" else "cpu"


def auto_nlist(n_rows: int) -> int:
    """IVF lists for ``n_rows`` vectors: 4·√n, kept ≥ 39 training points per list.

    >>> auto_nlist(1_000_000), auto_nlist(50)
    (4000, 1)
    """
    return max(1, min(int(4 * math.sqrt(n_rows)), n_rows // 39))


class FaissCandidateIndex:
    """Pooled rows (n_rows, dim) → per query vector, the pages of the nearest rows."""

    def __init__(self, kind: str = "faiss-ivf", *, nprobe: int = 16, ef_search: int = 128,
                 per_token: int = 128, nlist: int = 0, hnsw_m: int = 32, device: str = "auto"):
        if kind not in KINDS:
            raise ConfigError(f"faiss candidate index must be one of {KINDS}, got {kind!r}")
        self.faiss = import_faiss()
        self.kind, self.nprobe, self.ef_search, self.per_token = kind, nprobe, ef_search, per_token
        self.nlist_setting, self.hnsw_m = nlist, hnsw_m
        self.device = choose_device(kind, device, self.faiss)
        self.index = None
        self._cpu = None  # the CPU IVF index (trained quantizer kept across rebuilds)
        self._trained_rows = 0
        self.row_page = np.zeros(0, dtype=np.int64)  # (n_rows,) page of each row
        self.build_s = 0.0

    # ----------------------------------------------------------------- build
    def build(self, rows: np.ndarray, row_page: np.ndarray) -> None:
        """Index ``rows`` (n_rows, dim) fp32 unit vectors; ``row_page`` (n_rows,) page ids."""
        t0 = time.perf_counter()
        rows = np.ascontiguousarray(rows, dtype=np.float32)  # (n_rows, dim)
        self.row_page = np.asarray(row_page, dtype=np.int64)
        if len(rows) == 0:
            self.index = None
        elif self.kind == "faiss-hnsw":
            self.index = self._hnsw(rows)
        else:
            self.index = self._ivf(rows)
        self.build_s = time.perf_counter() - t0
        logger.info("faiss %s (%s): %d rows indexed in %.2f s", self.kind, self.device,
                    len(rows), self.build_s)

    def _hnsw(self, rows: np.ndarray):
        index = self.faiss.IndexHNSWFlat(rows.shape[1], self.hnsw_m, self.faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = max(40, self.hnsw_m * 2)
        index.add(rows)
        index.hnsw.efSearch = self.ef_search
        return index

    def _ivf(self, rows: np.ndarray):
        n, dim = rows.shape
        stale = (self._cpu is None or self._cpu.d != dim
                 or not (self._trained_rows / 2 <= n <= self._trained_rows * 2))
        if stale:
            nlist = min(self.nlist_setting, n) if self.nlist_setting else auto_nlist(n)
            quantizer = self.faiss.IndexFlatIP(dim)
            cpu = self.faiss.IndexIVFFlat(quantizer, dim, nlist, self.faiss.METRIC_INNER_PRODUCT)
            self._quantizer = quantizer  # the IVF index does not own it: keep it alive
            sample = rows
            if n > nlist * 256:  # faiss would subsample to 256 per list anyway
                pick = np.random.default_rng(0).choice(n, nlist * 256, replace=False)
                sample = rows[np.sort(pick)]
            cpu.train(sample)
            self._cpu, self._trained_rows = cpu, n
        else:
            self._cpu.reset()  # keep the trained lists, drop the rows
        self._cpu.add(rows)
        self._cpu.nprobe = min(self.nprobe, self._cpu.nlist)
        if self.device == "gpu":
            gpu = self.faiss.index_cpu_to_all_gpus(self._cpu)
            gpu.nprobe = self._cpu.nprobe
            return gpu
        return self._cpu

    @property
    def nlist(self) -> Optional[int]:
        return None if self._cpu is None or self.kind != "faiss-ivf" else int(self._cpu.nlist)

    # ----------------------------------------------------------------- search
    def search(self, probes: np.ndarray, row_mask: Optional[np.ndarray] = None) -> np.ndarray:
        """Candidate page ids (unique) for ``probes`` (n_probe, dim); ``row_mask`` (n_rows,)
        keeps only rows of the selected pages (workspace / document scope)."""
        if self.index is None:
            return np.zeros(0, dtype=np.int64)
        probes = np.ascontiguousarray(probes, dtype=np.float32)  # (n_probe, dim)
        k = min(self.per_token, self.index.ntotal)
        params, keep = None, None
        if row_mask is not None and not row_mask.all():
            if self.device == "gpu":  # GPU indexes take no ID selector: fetch more, then filter
                share = max(float(row_mask.mean()), 1e-9)
                k = min(int(math.ceil(k / share)), GPU_MAX_K, self.index.ntotal)
            else:
                params, keep = self._params(row_mask)
        _, ids = self.index.search(probes, k, params=params) if params else self.index.search(probes, k)
        del keep  # the selector read these bits during the search
        ids = ids[ids >= 0]  # (n_hits,) -1 marks fewer hits than k
        if row_mask is not None:
            ids = ids[row_mask[ids]]
        return np.unique(self.row_page[ids])

    def _params(self, row_mask: np.ndarray):
        bits = np.packbits(row_mask.astype(np.uint8), bitorder="little")  # (ceil(n_rows / 8),)
        sel = self.faiss.IDSelectorBitmap(len(row_mask), self.faiss.swig_ptr(bits))
        if self.kind == "faiss-hnsw":
            params = self.faiss.SearchParametersHNSW(sel=sel, efSearch=self.ef_search)
        else:
            params = self.faiss.SearchParametersIVF(sel=sel, nprobe=self._cpu.nprobe)
        return params, (bits, sel)  # the selector reads ``bits``: keep both alive

    def set_search(self, nprobe: Optional[int] = None, ef_search: Optional[int] = None) -> None:
        """Change ``nprobe`` / ``efSearch`` without rebuilding (benchmarks tune these)."""
        if nprobe is not None:
            self.nprobe = nprobe
            if self._cpu is not None:
                self._cpu.nprobe = min(nprobe, self._cpu.nlist)
                if self.index is not self._cpu:
                    self.index.nprobe = self._cpu.nprobe
        if ef_search is not None:
            self.ef_search = ef_search
            if self.kind == "faiss-hnsw" and self.index is not None:
                self.index.hnsw.efSearch = ef_search
