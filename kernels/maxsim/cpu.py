"""Blocked CPU MaxSim over one contiguous ragged token matrix.

Documents are rows ``tokens[offsets[p]:offsets[p + 1]]`` of one (n_tok, dim) matrix (fp32,
fp16, bf16, or int8 with per-token fp32 scales). Work proceeds in blocks of whole documents
(~``block_tokens`` rows) so the working set stays in cache:

1. dequantize the block into a reused tile (skipped when the storage already is the compute
   dtype);
2. ``S = D_block @ Q.T`` for *all* query tokens of all queries at once, (n_blk_tok, n_qt);
3. int8: scale row j of ``S`` by ``scales[j]`` (``q . (s_j d_j) = s_j (q . d_j)``);
4. segment max per document: a reshape when every document in the block has the same length
   (ColPali: 1030), otherwise a gather into a padded view whose pad slot holds ``-inf``;
5. sum over each query's tokens in fp32.

``compute`` picks the matmul precision: ``"fp32"`` (default, fp32 tiles, exact up to fp32
rounding), ``"bf16"`` (bf16 tiles and queries, fp32 accumulation inside oneDNN but the
similarities are rounded to bf16; ~3x faster where the CPU has AVX512-BF16/AMX) and
``"int8"`` (int8 storage only: queries quantized per token, int8 x int8 -> int32 VNNI GEMM via
``torch._int_mm``). Threads: the blocks are dealt to ``threads`` Python worker threads (default
torch's thread count), each running single-threaded torch ops (torch releases the GIL). This
beats torch's intra-op pool here: no barrier per op, so a machine shared with other jobs
(a descheduled OpenMP thread stalls every barrier) slows it down gracefully. Torch's global
thread count is set to 1 for the call and restored after it.
Conventions (empty documents score -inf, ...) are those of :mod:`.reference`.
"""
from __future__ import annotations

import contextlib
import functools
from concurrent.futures import ThreadPoolExecutor
import logging
from typing import Iterator, Literal, Optional, Sequence, Union

import numpy as np
import torch

logger = logging.getLogger(__name__)

NEG_INF = float("-inf")
Compute = Literal["fp32", "bf16", "int8"]
Queries = Union[torch.Tensor, Sequence[torch.Tensor]]


def pack_queries(queries: Queries) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Concatenate ragged queries -> (flat (n_qt, dim) fp32, query id per token (n_qt,), n_queries).

    A 2-D tensor is one query; a 3-D tensor is a batch of equal-length queries.
    """
    if isinstance(queries, torch.Tensor) and queries.dim() == 2:
        queries = [queries]
    queries = list(queries)
    lengths = torch.tensor([q.shape[0] for q in queries], dtype=torch.long)  # (n_queries,)
    flat = torch.cat([q.float().cpu() for q in queries]) if queries else torch.empty(0, 0)  # (n_qt, dim)
    qid = torch.repeat_interleave(torch.arange(len(queries)), lengths)  # (n_qt,)
    return flat, qid, len(queries)


def doc_blocks(offsets: np.ndarray, block_tokens: int) -> list[tuple[int, int]]:
    """Split documents into runs [a, b) of at most ``block_tokens`` rows (at least one document)."""
    n_docs, blocks, a = len(offsets) - 1, [], 0
    while a < n_docs:
        b = int(np.searchsorted(offsets, offsets[a] + block_tokens, side="right")) - 1
        b = min(max(b, a + 1), n_docs)
        blocks.append((a, b))
        a = b
    return blocks


@contextlib.contextmanager
def _threads(n: Optional[int]) -> Iterator[None]:
    old = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8: x (n, dim) fp32 -> (int8 (n, dim), scale (n,))."""
    scale = x.abs().amax(dim=1).clamp_min(1e-12) / 127.0  # (n,)
    q = torch.round(x / scale[:, None]).clamp_(-127, 127).to(torch.int8)  # (n, dim)
    return q, scale


# CPU flags of an int8 dot-product instruction: without one, ``torch._int_mm`` runs ~10x
# slower than an fp32 GEMM of the same shape (AVX2 machine: 54 ms against 5 ms for 16,384
# tokens x 16 query tokens), so int8 storage is then scored on fp32 tiles.
INT8_DOT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})


@functools.lru_cache(maxsize=None)
def cpu_flags(cpuinfo: Optional[str] = None) -> frozenset[str]:
    """The CPU's feature flags (``cpuinfo``: the text of /proc/cpuinfo, read when None;
    unreadable means none): the words of its ``flags`` (x86) or ``Features`` (ARM) lines."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as f:
                cpuinfo = f.read()
        except OSError:
            return frozenset()
    return frozenset(w for line in cpuinfo.splitlines() if line.startswith(("flags", "Features"))
                     for w in line.split(":", 1)[-1].split())


def int8_gemm_fast(cpuinfo: Optional[str] = None) -> bool:
    """Whether this CPU has an int8 dot-product instruction (``cpuinfo``: see
    :func:`cpu_flags`)."""
    return bool(cpu_flags(cpuinfo) & INT8_DOT_FLAGS)


def default_compute(storage_dtype: str) -> Compute:
    """The compute for ``maxsim_cpu`` over tokens stored as ``storage_dtype``: the int8 GEMM
    for int8 storage where the CPU has an int8 dot product, else fp32 tiles.

    >>> default_compute("fp16")
    'fp32'
    """
    return "int8" if storage_dtype == "int8" and int8_gemm_fast() else "fp32"


def _int8_available(dim: int) -> bool:
    if not hasattr(torch, "_int_mm") or dim % 8:
        return False
    try:
        torch._int_mm(torch.ones(24, dim, dtype=torch.int8), torch.ones(dim, 8, dtype=torch.int8))
        return True
    except RuntimeError:
        return False


class _BlockScorer:
    """Reusable tiles for one call: queries prepared once, tiles sized for the largest block."""

    def __init__(self, q: torch.Tensor, tokens: torch.Tensor, scales, compute: Compute, rows: int):
        self.tokens, self.scales, self.compute = tokens, scales, compute
        self.n_qt = q.shape[0]
        if compute == "int8":
            qq, self.q_scale = _quantize_rows(q)  # (n_qt, dim), (n_qt,)
            pad = (-self.n_qt) % 8
            self.q_t = torch.cat([qq, qq.new_zeros(pad, q.shape[1])]).T  # (dim, n_qt_pad)
        else:
            dtype = torch.bfloat16 if compute == "bf16" else torch.float32
            self.q_t = q.to(dtype).T.contiguous()  # (dim, n_qt)
            same = tokens.dtype == dtype
            self.tile = None if same else torch.empty(rows, tokens.shape[1], dtype=dtype)  # (rows, dim)
            self.s_low = torch.empty(rows, self.n_qt, dtype=dtype) if dtype != torch.float32 else None
        self.sim = torch.full((rows + 1, self.n_qt), NEG_INF)  # (rows + 1, n_qt); last row = pad slot

    def similarities(self, t0: int, t1: int) -> torch.Tensor:
        """Fill and return ``sim`` whose first t1 - t0 rows are D[t0:t1] @ Q.T, (rows + 1, n_qt)."""
        n, block = t1 - t0, self.tokens[t0:t1]  # (n, dim)
        out = self.sim[:n]  # (n, n_qt)
        if self.compute == "int8":
            s32 = torch._int_mm(block, self.q_t)[:, : self.n_qt]  # (n, n_qt) int32
            torch.mul(s32, self.q_scale[None, :], out=out)
        else:
            tile = block if self.tile is None else self.tile[:n].copy_(block)  # (n, dim)
            if self.s_low is None:
                torch.mm(tile, self.q_t, out=out)
            else:
                out.copy_(torch.mm(tile, self.q_t, out=self.s_low[:n]))
        if self.scales is not None:
            out.mul_(self.scales[t0:t1, None])
        self.sim[n].fill_(NEG_INF)
        return self.sim


def _segment_max(sim: torch.Tensor, n: int, starts: np.ndarray, lengths: np.ndarray) -> torch.Tensor:
    """Max over each document's rows of ``sim`` (rows n.. are -inf padding) -> (n_docs, n_qt)."""
    n_docs, n_qt = len(lengths), sim.shape[1]
    width = int(lengths.max())
    if width > 0 and (lengths == width).all():
        return sim[:n].view(n_docs, width, n_qt).amax(dim=1)  # (n_docs, n_qt)
    width = max(width, 1)
    cols = np.arange(width)  # (width,)
    idx = np.where(cols < lengths[:, None], starts[:, None] + cols, n)  # (n_docs, width); n = pad row
    rows = sim.index_select(0, torch.from_numpy(idx.reshape(-1)))  # (n_docs * width, n_qt)
    return rows.view(n_docs, width, n_qt).amax(dim=1)  # (n_docs, n_qt)


def maxsim_cpu(
    queries: Queries,
    tokens: torch.Tensor,
    offsets: Union[torch.Tensor, np.ndarray],
    scales: Optional[torch.Tensor] = None,
    *,
    compute: Compute = "fp32",
    block_tokens: int = 16384,
    threads: Optional[int] = None,
) -> torch.Tensor:
    """MaxSim of ragged queries against ragged documents on CPU -> (n_queries, n_docs) fp32."""
    offs = np.asarray(offsets.cpu() if isinstance(offsets, torch.Tensor) else offsets, dtype=np.int64)
    q, qid, n_queries = pack_queries(queries)
    lengths = np.diff(offs)  # (n_docs,)
    scores = torch.zeros(n_queries, len(lengths))  # (n_queries, n_docs)
    if compute == "int8" and (tokens.dtype != torch.int8 or not _int8_available(tokens.shape[1])):
        logger.debug("int8 GEMM unavailable for %s tokens; using fp32 tiles", tokens.dtype)
        compute = "fp32"
    if scales is not None:
        scales = scales.float()
    blocks = doc_blocks(offs, block_tokens)
    if q.shape[0] and blocks:
        rows = max(int(offs[b] - offs[a]) for a, b in blocks)
        workers = min(threads or torch.get_num_threads(), len(blocks))

        def run(mine: list[tuple[int, int]]) -> None:
            scorer = _BlockScorer(q, tokens, scales, compute, rows)
            for a, b in mine:
                sim = scorer.similarities(int(offs[a]), int(offs[b]))  # (rows + 1, n_qt)
                best = _segment_max(sim, int(offs[b] - offs[a]), offs[a:b] - offs[a], lengths[a:b])
                per_query = torch.zeros(b - a, n_queries).index_add_(1, qid, best)  # (n_blk_docs, n_queries)
                scores[:, a:b] = per_query.T  # disjoint columns per worker

        with _threads(1 if workers > 1 else threads):
            if workers > 1:
                with ThreadPoolExecutor(workers) as pool:
                    list(pool.map(run, [blocks[w::workers] for w in range(workers)]))
            else:
                run(blocks)
    scores[:, torch.from_numpy(lengths == 0)] = NEG_INF
    return scores
