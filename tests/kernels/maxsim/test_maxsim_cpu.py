"""CPU path against the reference over ragged shapes, dims, storage dtypes and compute modes."""
from __future__ import annotations

import pytest
import torch
from maxsim_data import make_corpus, make_queries, quantize

from docray.kernels.maxsim import maxsim, maxsim_topk
from docray.kernels.maxsim.cpu import default_compute, doc_blocks, int8_gemm_fast, maxsim_cpu
from docray.kernels.maxsim.reference import maxsim_reference_batch

LENGTHS = [0, 1, 5, 300, 17, 0, 1030, 2, 64, 64, 64, 1, 129]
# (storage, compute) -> relative tolerance against the reference on the same stored values
CASES = {
    ("fp32", "fp32"): 1e-5, ("fp16", "fp32"): 1e-5, ("bf16", "fp32"): 1e-5, ("int8", "fp32"): 1e-5,
    ("bf16", "bf16"): 1e-2, ("fp16", "bf16"): 1e-2, ("int8", "bf16"): 1e-2, ("int8", "int8"): 2e-2,
}


def stored(tokens: torch.Tensor, storage: str):
    if storage == "int8":
        return quantize(tokens)
    return tokens.to({"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[storage]), None


def assert_close(got: torch.Tensor, want: torch.Tensor, rtol: float):
    assert torch.equal(torch.isinf(got), torch.isinf(want))
    finite = torch.isfinite(want)
    scale = want[finite].abs().max().clamp_min(1.0)
    assert (got[finite] - want[finite]).abs().max() <= rtol * scale * 4


@pytest.mark.parametrize("dim", [128, 320, 384])
@pytest.mark.parametrize("storage,compute", sorted(CASES))
def test_cpu_matches_reference(dim, storage, compute):
    tokens, offsets = make_corpus(LENGTHS, dim, seed=dim)
    data, scales = stored(tokens, storage)
    queries = make_queries(tokens, offsets, 3, n_tok=20) + [torch.randn(1, dim), torch.zeros(0, dim)]
    want = maxsim_reference_batch(queries, data, offsets, scales)  # (5, n_docs)
    for block in (16, 700, 1 << 20):  # one doc per block, mixed blocks, one block
        got = maxsim_cpu(queries, data, offsets, scales, compute=compute, block_tokens=block)
        assert_close(got, want, CASES[(storage, compute)])


def test_edge_cases_empty_docs_never_win_and_all_negative():
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    tokens = -torch.rand(40, 2) - 0.1  # every similarity negative
    offsets = torch.tensor([0, 0, 1, 40, 40])  # empty, 1-token, 39-token, empty
    got = maxsim_cpu(q, tokens, offsets, block_tokens=64)[0]
    want = maxsim_reference_batch([q], tokens, offsets)[0]
    assert torch.allclose(got[1:3], want[1:3]) and (got[1:3] < 0).all()
    assert got[0] == float("-inf") and got[3] == float("-inf")
    values, idx = maxsim_topk(q, tokens, offsets, k=2)
    assert set(idx[0].tolist()) == {1, 2}


def test_padding_never_wins_in_a_ragged_block():
    # the 1-token doc shares a block with a long one: its padded slots must not count as 0
    q = torch.tensor([[1.0, 0.0]])
    tokens = torch.cat([torch.tensor([[-0.9, 0.0]]), torch.tensor([[-0.1, 0.0]]).repeat(9, 1)])
    got = maxsim_cpu(q, tokens, torch.tensor([0, 1, 10]))[0]
    assert got.tolist() == pytest.approx([-0.9, -0.1])


def test_doc_blocks_cover_every_document_once():
    offsets = torch.tensor([0, 0, 5, 5, 105, 106, 300]).numpy()
    blocks = doc_blocks(offsets, 50)
    assert [a for a, _ in blocks] == [0, 3, 4, 5] and blocks[-1][1] == 6
    assert all(b > a for a, b in blocks)


def test_dispatcher_uses_cpu_and_accepts_numpy_offsets():
    tokens, offsets = make_corpus([3, 4, 0, 9], 16)
    q = make_queries(tokens, offsets, 2, n_tok=4)
    got = maxsim(q, tokens, offsets.numpy())
    assert_close(got, maxsim_reference_batch(q, tokens, offsets), 1e-5)


@pytest.mark.parametrize("cpuinfo, fast", [
    ("processor\t: 0\nflags\t\t: fpu sse4_2 avx2 fma\n", False),  # AVX2 only: _int_mm ~10x slow
    ("flags\t\t: fpu avx2 avx512f avx512_vnni\n", True),
    ("flags\t\t: fpu avx2 avx_vnni\n", True),
    ("flags\t\t: avx512f amx_tile amx_int8\n", True),
    ("Features\t: fp asimd\n", False),
    ("model name\t: vnni-less avx512_vnni in a name only\n", False),  # flags lines only
])
def test_int8_gemm_is_chosen_only_on_cpus_with_an_int8_dot_product(cpuinfo, fast):
    assert int8_gemm_fast(cpuinfo) is fast


def test_default_compute_follows_the_storage_and_this_cpu():
    assert default_compute("fp16") == default_compute("fp32") == "fp32"
    assert default_compute("int8") == ("int8" if int8_gemm_fast() else "fp32")
