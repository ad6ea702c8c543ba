"""The reference itself: doctest, hand-checked values and the documented edge cases."""
from __future__ import annotations

import doctest

import torch

import docray.kernels.maxsim.reference as ref


def test_doctest():
    assert doctest.testmod(ref).failed == 0


def test_matches_per_document_loop():
    torch.manual_seed(0)
    lengths = [3, 0, 1, 7, 2]
    offsets = torch.tensor([0, 3, 3, 4, 11, 13])
    tokens, q = torch.randn(13, 8), torch.randn(5, 8)
    got = ref.maxsim_reference(q, tokens, offsets, chunk_docs=2)
    for i, n in enumerate(lengths):
        doc = tokens[offsets[i]:offsets[i + 1]]
        want = (q @ doc.T).amax(dim=1).sum() if n else torch.tensor(float("-inf"))
        assert torch.allclose(got[i], want, atol=1e-5)


def test_all_negative_and_padding_never_wins():
    q = torch.tensor([[1.0, 0.0]])
    tokens = torch.tensor([[-0.5, 0.0], [-2.0, 0.0], [-3.0, 0.0], [-4.0, 0.0]])
    scores = ref.maxsim_reference(q, tokens, torch.tensor([0, 1, 4]))  # lengths 1 and 3
    assert scores.tolist() == [-0.5, -2.0]  # the 1-token doc is padded to 3 slots, pads are -inf


def test_empty_query_and_empty_doc():
    scores = ref.maxsim_reference(torch.zeros(0, 4), torch.randn(2, 4), torch.tensor([0, 0, 2]))
    assert scores.tolist() == [float("-inf"), 0.0]
