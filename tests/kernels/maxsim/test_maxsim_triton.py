"""The fused Triton kernel against the reference: on CPU under TRITON_INTERPRET=1, on a GPU if any.

triton decides interpret-or-compile when it is *imported* (``tl.max``/``tl.sum`` are themselves
``@triton.jit`` functions), so the interpreted tests cannot share a process with an ordinary
triton import: :func:`test_interpreter_run` re-runs this file in a child pytest with
``TRITON_INTERPRET=1``, where only the ``interpreted`` tests are active.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from maxsim_data import make_corpus, make_queries, quantize

from docray.kernels.maxsim.reference import maxsim_reference_batch

triton = pytest.importorskip("triton", reason="triton is not installed (pip install triton)")

LENGTHS = [0, 1, 5, 70, 17, 0, 130, 2, 64]
TOL = {torch.float32: 1e-4, torch.float16: 2e-3, torch.bfloat16: 1e-2, torch.int8: 2e-3}


INTERPRETING = os.environ.get("TRITON_INTERPRET") == "1"


@pytest.fixture
def interpreted():
    """The kernel module, in the child process that runs under TRITON_INTERPRET=1."""
    if not INTERPRETING:
        pytest.skip("runs inside test_interpreter_run's TRITON_INTERPRET=1 child")
    import docray.kernels.maxsim.triton as mod

    return mod


@pytest.mark.slow
@pytest.mark.skipif(INTERPRETING, reason="this is the parent of the interpreted run")
def test_interpreter_run():
    env = dict(os.environ, TRITON_INTERPRET="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k", "interpreted"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout.splitlines()[-1], proc.stdout[-2000:]


def _stored(tokens, dtype):
    return quantize(tokens) if dtype == torch.int8 else (tokens.to(dtype), None)


def _check(got, want, rtol):
    assert torch.equal(torch.isinf(got), torch.isinf(want))
    finite = torch.isfinite(want)
    assert (got[finite] - want[finite]).abs().max() <= rtol * want[finite].abs().max().clamp_min(1.0) * 4


@pytest.mark.slow
@pytest.mark.parametrize("dim", [128, 320])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int8, torch.float32])
def test_interpreted_kernel_matches_reference(interpreted, dim, dtype):
    tokens, offsets = make_corpus(LENGTHS, dim, seed=3)
    data, scales = _stored(tokens, dtype)
    queries = make_queries(tokens, offsets, 2, n_tok=20) + [torch.randn(3, dim), torch.zeros(0, dim)]
    got = interpreted.maxsim_triton(queries, data, offsets, scales, block_d=32)  # (4, n_docs)
    _check(got, maxsim_reference_batch(queries, data, offsets, scales), TOL[dtype])


def test_interpreted_topk_and_edge_cases(interpreted):
    q = torch.tensor([[1.0, 0.0] + [0.0] * 14])
    tokens = torch.zeros(40, 16)
    tokens[:, 0] = -torch.linspace(0.1, 2.0, 40)  # all similarities negative
    offsets = torch.tensor([0, 0, 1, 40, 40])  # empty, 1-token, 39-token, empty
    values, idx = interpreted.maxsim_topk_triton(q, tokens.half(), offsets, k=3)
    assert idx[0, :2].tolist() == [1, 2] and values[0, 2] == float("-inf")
    assert values[0, :2].tolist() == pytest.approx([-0.1, -0.1487], abs=1e-3)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int8])
def test_gpu_kernel_matches_reference(dtype):
    from docray.kernels.maxsim import backend_for, maxsim

    tokens, offsets = make_corpus(LENGTHS * 20, 128, seed=5)
    data, scales = _stored(tokens, dtype)
    queries = make_queries(tokens, offsets, 8, n_tok=32)
    want = maxsim_reference_batch(queries, data, offsets, scales)
    data = data.cuda()
    assert backend_for(data) == "triton"
    got = maxsim(queries, data, offsets, None if scales is None else scales.cuda()).cpu()
    _check(got, want, TOL[dtype])
