"""Torch reference for MaxSim over ragged documents: short, obviously right, slow.

``s(q, p) = sum_i max_j q_i . p_j`` with documents packed as one token matrix plus offsets:
document ``p`` owns rows ``tokens[offsets[p]:offsets[p + 1]]``. Padding is masked with -inf
*before* the max (never 0, so a padded slot can never beat a true negative similarity), and
everything is accumulated in fp32. Conventions shared by every fast path:

* a 0-token document scores ``-inf`` (it can never win a top-k);
* a 0-token query scores 0 against every non-empty document (an empty sum);
* int8 tokens carry a per-token fp32 scale: the token is ``scales[j] * tokens[j]``.
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch

NEG_INF = float("-inf")


def dequantize(tokens: torch.Tensor, scales: Optional[torch.Tensor] = None) -> torch.Tensor:
    """fp32 copy of ``tokens`` (n_tok, dim), scaled per token when ``scales`` (n_tok,) is given."""
    dense = tokens.float()  # (n_tok, dim)
    if scales is not None:
        dense = dense * scales.float()[:, None]  # (n_tok, dim)
    return dense


def maxsim_reference(
    query: torch.Tensor,
    tokens: torch.Tensor,
    offsets: torch.Tensor,
    scales: Optional[torch.Tensor] = None,
    chunk_docs: int = 256,
) -> torch.Tensor:
    """Exact MaxSim of one query (n_q, dim) against ragged documents -> (n_docs,) fp32.

    >>> q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> toks = torch.tensor([[-1.0, -2.0], [-3.0, -1.0], [2.0, 1.0]])
    >>> maxsim_reference(q, toks, torch.tensor([0, 2, 2, 3])).tolist()  # doc 1 is empty
    [-2.0, -inf, 3.0]
    """
    q = query.float()  # (n_q, dim)
    dense = dequantize(tokens, scales)  # (n_tok, dim)
    offsets = offsets.long()
    lengths = offsets[1:] - offsets[:-1]  # (n_docs,)
    parts = []
    for a in range(0, lengths.numel(), chunk_docs):
        docs = [dense[offsets[i]:offsets[i + 1]] for i in range(a, min(a + chunk_docs, lengths.numel()))]
        lens = lengths[a:a + len(docs)]  # (chunk,)
        padded = torch.nn.utils.rnn.pad_sequence(docs, batch_first=True)  # (chunk, max_len, dim)
        sim = torch.einsum("qd,ntd->nqt", q, padded)  # (chunk, n_q, max_len)
        valid = torch.arange(padded.shape[1], device=padded.device) < lens[:, None]  # (chunk, max_len)
        sim = sim.masked_fill(~valid[:, None, :], NEG_INF)  # mask before the max
        best = sim.amax(dim=2) if sim.shape[2] else sim.sum(dim=2) + NEG_INF  # (chunk, n_q)
        score = best.sum(dim=1)  # (chunk,)
        parts.append(torch.where(lens > 0, score, torch.full_like(score, NEG_INF)))
    return torch.cat(parts) if parts else torch.empty(0)


def maxsim_reference_batch(
    queries: Sequence[torch.Tensor],
    tokens: torch.Tensor,
    offsets: torch.Tensor,
    scales: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Reference scores for several ragged queries -> (n_queries, n_docs) fp32."""
    rows = [maxsim_reference(q, tokens, offsets, scales) for q in queries]
    return torch.stack(rows) if rows else torch.empty(0, len(offsets) - 1)


def topk_reference(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k of (n_queries, n_docs) scores -> (values, indices), each (n_queries, min(k, n_docs))."""
    return torch.topk(scores, min(k, scores.shape[1]), dim=1)
