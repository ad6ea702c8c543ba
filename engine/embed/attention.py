"""Which attention kernel a transformers model is loaded with.

``flash_attention_2`` when the flash-attn package imports, the model runs on a CUDA device
that exists, and its weights are half precision (flash-attn has no float32 kernels);
``sdpa`` (torch's scaled-dot-product attention) everywhere else. Every encoder that loads a
transformers model (MiniLM / sentence-transformers, the cross-encoder, ColPali) passes the
answer as ``attn_implementation``; nothing here imports flash-attn.
"""
from __future__ import annotations

import importlib.util
import logging

log = logging.getLogger(__name__)
HALF = frozenset({"float16", "bfloat16"})


def flash_attn_installed() -> bool:
    """Whether the ``flash_attn`` package can be imported (looked up, not imported)."""
    try:
        return importlib.util.find_spec("flash_attn") is not None
    except (ImportError, ValueError):
        return False


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover — torch is a core dependency
        return False
    return bool(torch.cuda.is_available())


def attn_implementation(device: str, dtype: str = "bfloat16") -> str:
    """``"flash_attention_2"`` or ``"sdpa"`` for a model on ``device`` in ``dtype``.

    >>> attn_implementation("cpu")
    'sdpa'
    >>> attn_implementation("cuda", "float32")
    'sdpa'
    """
    if not str(device).startswith("cuda") or dtype not in HALF:
        return "sdpa"
    if flash_attn_installed() and cuda_available():
        return "flash_attention_2"
    log.info("flash-attn or CUDA missing: %s attention is sdpa", device)
    return "sdpa"
