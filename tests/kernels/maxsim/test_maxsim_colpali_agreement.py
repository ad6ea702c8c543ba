"""Agreement with colpali-engine's ``score_multi_vector`` on its own (list-of-tensors) inputs.

colpali-engine is imported through :mod:`docray.kernels.maxsim.colpali_compat`, which loads
``colpali_engine/utils/processing_utils.py`` without running the package ``__init__`` (that
pulls torchvision, which cannot load beside torch 2.13.0+cpu). Install it with
``pip install --no-deps colpali-engine``.
"""
from __future__ import annotations

import pytest
import torch
from maxsim_data import make_corpus, make_queries

from docray.kernels.maxsim import maxsim
from docray.kernels.maxsim.colpali_compat import load_score_multi_vector
from docray.kernels.maxsim.reference import maxsim_reference_batch

score_multi_vector = load_score_multi_vector()
pytestmark = pytest.mark.skipif(score_multi_vector is None, reason="colpali-engine not installed")


def _padded_expectation(queries, docs, batch_size):
    """What colpali computes: exact per-token maxes, floored at 0 for docs zero-padded in their batch."""
    out = torch.empty(len(queries), len(docs))
    for b in range(0, len(docs), batch_size):
        width = max(d.shape[0] for d in docs[b:b + batch_size])
        for j in range(b, min(b + batch_size, len(docs))):
            for i, q in enumerate(queries):
                best = (q @ docs[j].T).amax(dim=1)  # (n_q,)
                out[i, j] = (best.clamp_min(0) if docs[j].shape[0] < width else best).sum()
    return out


def test_same_top10_and_scores_on_ragged_clustered_pages():
    lengths = torch.randint(40, 120, (300,), generator=torch.Generator().manual_seed(0)).tolist()
    tokens, offsets = make_corpus(lengths, 128, seed=11)
    queries = make_queries(tokens, offsets, 6, n_tok=24)
    docs = [tokens[offsets[i]:offsets[i + 1]] for i in range(len(lengths))]
    theirs = score_multi_vector(queries, docs, batch_size=64, device="cpu")  # (6, 300)
    ours = maxsim(queries, tokens, offsets)  # (6, 300)
    assert torch.allclose(ours, maxsim_reference_batch(queries, tokens, offsets), atol=1e-3)
    # their scores are ours once the zero padding (a per-token max floored at 0) is applied
    assert torch.allclose(theirs, _padded_expectation(queries, docs, 64), atol=1e-3)
    for i in range(len(queries)):
        assert set(ours[i].topk(10).indices.tolist()) == set(theirs[i].topk(10).indices.tolist())


def test_zero_padding_lets_a_short_page_beat_true_negatives():
    q = torch.tensor([[1.0, 0.0]])
    docs = [torch.tensor([[-0.5, 0.0]]), torch.tensor([[-0.2, 0.0]] * 3)]  # all similarities < 0
    theirs = score_multi_vector([q], docs, device="cpu")[0]
    ours = maxsim(q, torch.cat(docs), torch.tensor([0, 1, 4]))[0]
    assert theirs.tolist() == pytest.approx([0.0, -0.2])  # padded short page scores 0 and wins
    assert ours.tolist() == pytest.approx([-0.5, -0.2])  # exact: the true best page wins
