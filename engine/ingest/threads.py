"""Thread pools of the ingest workers: torch intra-op threads, onnxruntime threads (OCR,
layout) and the OpenMP/BLAS pools under them.

Left alone, every Ray worker sizes each pool to every core of the node, and an OpenMP pool
spins on its cores for a while after each parallel region. On a small machine several such
workers (2 parse actors and an encoder on 2 cores) then time-slice and spin against each
other: the ingest profile of issue 27 had each stage costing about 2.5x its in-process CPU.
Here each stage's worker gets the threads its config names, in its environment before
Python starts (``runtime_env``) and through the libraries' own calls once it runs.
"""
from __future__ import annotations

import logging
from typing import Any

from docray.engine.config import IngestConfig

log = logging.getLogger(__name__)

_POOLS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def worker_env(threads: int, ing: IngestConfig) -> dict[str, str]:
    """Environment of a worker that may use ``threads`` threads (0 = leave the pools to the
    libraries): OpenMP/MKL/OpenBLAS pool sizes, the OpenMP wait policy, and no Rust
    tokenizer pool (its threads would be one more pool per worker).

    >>> worker_env(1, IngestConfig())["OMP_NUM_THREADS"]
    '1'
    """
    env = {name: str(threads) for name in _POOLS} if threads else {}
    env["OMP_WAIT_POLICY"] = ing.omp_wait_policy.upper()
    env["TOKENIZERS_PARALLELISM"] = "false"
    return env


def remote_args(ing: IngestConfig, stage: str) -> dict[str, Any]:
    """Ray Data ``map`` remote args carrying a stage's thread environment:
    ``prepare``/``parse`` get ``parse_threads``, ``encode``/``pages`` ``encoder_threads``."""
    threads = ing.parse_threads if stage in ("prepare", "parse") else ing.encoder_threads
    return {"runtime_env": {"env_vars": worker_env(threads, ing)}}


def set_worker_threads(torch_threads: int = 0, onnx_threads: int = 0) -> None:
    """Size this process's pools: torch intra-op (when ``torch_threads`` > 0; parse workers
    pass 0, since importing torch would cost them ~200 MB, and their env caps it anyway) and
    the onnxruntime engines created after this call (0 = the library's default)."""
    from docray.engine.parse.native.ocr import set_threads

    set_threads(onnx_threads)
    if torch_threads > 0:
        import torch

        torch.set_num_threads(torch_threads)
        log.debug("torch intra-op threads: %d", torch.get_num_threads())
