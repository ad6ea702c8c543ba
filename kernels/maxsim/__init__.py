"""MaxSim scoring ``s(q, p) = sum_i max_j q_i . p_j`` over ragged documents.

Documents are one contiguous (n_tok, dim) token matrix plus ``offsets`` (n_docs + 1,); int8
tokens carry per-token fp32 ``scales``. :func:`maxsim` picks the implementation:

* CUDA tokens and triton importable -> :mod:`.triton` (fused kernel);
* CUDA tokens without triton -> :mod:`.reference` on the device (correct, slow; logged once);
* CPU tokens -> :mod:`.cpu` (blocked matmul; ``compute`` chooses fp32 / bf16 / int8 GEMM).

Every path returns (n_queries, n_docs) fp32 scores; a 0-token document scores -inf.
"""
from __future__ import annotations

import functools
import logging
from typing import Optional, Union

import numpy as np
import torch

from .cpu import Compute, Queries, maxsim_cpu
from .reference import maxsim_reference, maxsim_reference_batch

logger = logging.getLogger(__name__)

__all__ = ["maxsim", "maxsim_topk", "backend_for", "maxsim_reference", "maxsim_reference_batch"]


@functools.lru_cache(maxsize=1)
def _triton_ok() -> bool:
    try:
        from . import triton as tri
    except Exception as exc:  # pragma: no cover - environment dependent
        logger.warning("triton MaxSim kernel unavailable: %s", exc)
        return False
    return tri.available()


def backend_for(tokens: torch.Tensor) -> str:
    """Name of the implementation :func:`maxsim` uses for ``tokens``: triton, reference or cpu."""
    if tokens.is_cuda:
        return "triton" if _triton_ok() else "reference"
    return "cpu"


def maxsim(
    queries: Queries,
    tokens: torch.Tensor,
    offsets: Union[torch.Tensor, np.ndarray],
    scales: Optional[torch.Tensor] = None,
    *,
    compute: Compute = "fp32",
) -> torch.Tensor:
    """Scores of ragged ``queries`` (one (n_q, dim) tensor or a list) -> (n_queries, n_docs) fp32.

    ``compute`` applies to the CPU path only; the GPU kernel always accumulates in fp32.
    """
    backend = backend_for(tokens)
    if backend == "cpu":
        return maxsim_cpu(queries, tokens, offsets, scales, compute=compute)
    offs = torch.as_tensor(offsets, device=tokens.device)
    if backend == "triton":
        from .triton import maxsim_triton

        return maxsim_triton(queries, tokens, offs, scales)
    qs = [queries] if isinstance(queries, torch.Tensor) and queries.dim() == 2 else list(queries)
    return maxsim_reference_batch(qs, tokens, offs, scales)


def maxsim_topk(
    queries: Queries,
    tokens: torch.Tensor,
    offsets: Union[torch.Tensor, np.ndarray],
    k: int,
    scales: Optional[torch.Tensor] = None,
    *,
    compute: Compute = "fp32",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k documents per query -> (values, indices), each (n_queries, min(k, n_docs)).

    Empty documents (-inf) rank last; ties break towards the lower index only as torch.topk does.
    """
    scores = maxsim(queries, tokens, offsets, scales, compute=compute)  # (n_queries, n_docs)
    return torch.topk(scores, min(k, scores.shape[1]), dim=1)
