"""Fused MaxSim GPU kernel (Triton).

One program per (document, query): it walks the document in tiles of ``BLOCK_D`` tokens,
computes the (BLOCK_Q, BLOCK_D) similarity tile with ``tl.dot`` (fp16 / bf16 inputs, or int8
tokens widened to fp16 and scaled per token, always fp32 accumulation), masks tokens past
the document end with -inf, keeps the running max per query token in registers, and writes
the per-page sum. Nothing of size n_tok x n_q ever reaches memory. Batched queries are padded
to the longest query (padded query rows contribute 0); top-k per query is ``torch.topk`` over
the (n_queries, n_docs) result on the device. Grid order puts the query index fastest so the
programs sharing a document run together and hit L2.

Under ``TRITON_INTERPRET=1`` (set before this module is imported) the kernel runs on CPU
tensors, which is how the tests exercise it without a GPU. The interpreter (triton 3.9)
computes ``tl.dot`` on bf16 operands wrongly (numpy has no bf16), so when interpreting, bf16
tiles are widened to fp32 before the dot; on a GPU the dot stays bf16 x bf16 -> fp32.
"""
from __future__ import annotations

import logging
import os
from typing import Optional, Sequence, Union

import torch

logger = logging.getLogger(__name__)

try:  # optional dependency: the GPU extra
    import triton
    import triton.language as tl
except ImportError as exc:  # pragma: no cover - depends on the environment
    triton, tl, IMPORT_ERROR = None, None, exc
else:
    IMPORT_ERROR = None

Queries = Union[torch.Tensor, Sequence[torch.Tensor]]


def available() -> bool:
    """True when triton imported (a GPU, or TRITON_INTERPRET=1, is still needed to run)."""
    return triton is not None


if triton is not None:

    @triton.jit
    def _maxsim_kernel(
        q_ptr, q_len_ptr, d_ptr, scale_ptr, off_ptr, out_ptr,
        n_docs, dim, stride_qb, stride_qt, stride_dt,
        HAS_SCALE: tl.constexpr, IEEE: tl.constexpr,
        BLOCK_Q: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_K: tl.constexpr,
    ):
        qb = tl.program_id(0)
        doc = tl.program_id(1)
        start = tl.load(off_ptr + doc)
        end = tl.load(off_ptr + doc + 1)
        n_q = tl.load(q_len_ptr + qb)
        rq = tl.arange(0, BLOCK_Q)
        q_rows = q_ptr + qb * stride_qb + rq[:, None] * stride_qt
        best = tl.full((BLOCK_Q,), float("-inf"), tl.float32)
        for t0 in range(start, end, BLOCK_D):
            rd = t0 + tl.arange(0, BLOCK_D)
            dmask = rd < end
            sim = tl.zeros((BLOCK_Q, BLOCK_D), dtype=tl.float32)
            for k0 in range(0, dim, BLOCK_K):
                rk = k0 + tl.arange(0, BLOCK_K)
                kmask = rk < dim
                q = tl.load(q_rows + rk[None, :], mask=(rq[:, None] < n_q) & kmask[None, :], other=0.0)
                d = tl.load(d_ptr + rd[:, None] * stride_dt + rk[None, :], mask=dmask[:, None] & kmask[None, :], other=0)
                if IEEE:
                    sim += tl.dot(q, tl.trans(d.to(q.dtype)), input_precision="ieee")
                else:
                    sim += tl.dot(q, tl.trans(d.to(q.dtype)))
            if HAS_SCALE:
                sim = sim * tl.load(scale_ptr + rd, mask=dmask, other=0.0)[None, :]
            sim = tl.where(dmask[None, :], sim, float("-inf"))
            best = tl.maximum(best, tl.max(sim, axis=1))
        best = tl.where(rq < n_q, best, 0.0)
        total = tl.sum(best, axis=0)
        total = tl.where(end > start, total, float("-inf"))
        tl.store(out_ptr + qb * n_docs + doc, total)


def _pad_queries(queries: Queries, dtype: torch.dtype, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Ragged queries -> (padded (n_queries, max_qt, dim), lengths (n_queries,) int32)."""
    if isinstance(queries, torch.Tensor) and queries.dim() == 2:
        queries = [queries]
    queries = [q.to(device=device, dtype=dtype) for q in queries]
    lengths = torch.tensor([q.shape[0] for q in queries], dtype=torch.int32, device=device)  # (n_queries,)
    padded = torch.nn.utils.rnn.pad_sequence(queries, batch_first=True)  # (n_queries, max_qt, dim)
    return padded.contiguous(), lengths


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _compute_dtype(tokens: torch.Tensor) -> torch.dtype:
    """Query/tile dtype for ``tl.dot``; the CPU interpreter's bf16 dot is wrong, so it gets fp32."""
    if tokens.dtype == torch.bfloat16 and _interpreting():
        return torch.float32
    return torch.float16 if tokens.dtype in (torch.int8, torch.float16) else tokens.dtype


def maxsim_triton(
    queries: Queries,
    tokens: torch.Tensor,
    offsets: torch.Tensor,
    scales: Optional[torch.Tensor] = None,
    *,
    block_d: int = 64,
    block_k: int = 64,
    num_warps: int = 4,
) -> torch.Tensor:
    """Fused MaxSim -> (n_queries, n_docs) fp32 on ``tokens.device``; same conventions as the reference."""
    if triton is None:
        raise RuntimeError(f"triton is not importable: {IMPORT_ERROR}")
    dev = tokens.device
    q, q_len = _pad_queries(queries, _compute_dtype(tokens), dev)  # (n_queries, max_qt, dim)
    n_queries, n_docs = q.shape[0], offsets.numel() - 1
    out = torch.empty(n_queries, n_docs, dtype=torch.float32, device=dev)  # (n_queries, n_docs)
    if n_queries == 0 or n_docs == 0:
        return out
    if q.shape[1] == 0:  # every query empty: 0 for non-empty documents, -inf for empty ones
        empty = (offsets[1:] - offsets[:-1] == 0).to(dev)  # (n_docs,)
        return out.zero_().masked_fill_(empty[None, :], float("-inf"))
    tokens = tokens.contiguous()
    scale = scales.float().contiguous().to(dev) if scales is not None else out  # dummy pointer when unused
    block_q = max(16, triton.next_power_of_2(q.shape[1]))
    _maxsim_kernel[(n_queries, n_docs)](
        q, q_len, tokens, scale, offsets.to(device=dev, dtype=torch.int64), out,
        n_docs, tokens.shape[1], q.stride(0), q.stride(1), tokens.stride(0),
        HAS_SCALE=scales is not None, IEEE=q.dtype == torch.float32,
        BLOCK_Q=block_q, BLOCK_D=block_d, BLOCK_K=block_k, num_warps=num_warps,
    )
    return out


def maxsim_topk_triton(
    queries: Queries, tokens: torch.Tensor, offsets: torch.Tensor, k: int, scales: Optional[torch.Tensor] = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k per query -> (values, indices), each (n_queries, min(k, n_docs)), on the device."""
    scores = maxsim_triton(queries, tokens, offsets, scales)  # (n_queries, n_docs)
    return torch.topk(scores, min(k, scores.shape[1]), dim=1)
