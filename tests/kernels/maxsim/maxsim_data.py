"""Synthetic corpora for the MaxSim tests: ragged, clustered, L2-normalised tokens."""
from __future__ import annotations

import torch


def make_corpus(lengths: list[int], dim: int, seed: int = 0, clusters: int = 16):
    """Clustered unit tokens -> (tokens (n_tok, dim) fp32, offsets (n_docs + 1,) int64)."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.nn.functional.normalize(torch.randn(clusters, dim, generator=g), dim=1)  # (clusters, dim)
    lens = torch.tensor(lengths, dtype=torch.long)  # (n_docs,)
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lens.cumsum(0)])  # (n_docs + 1,)
    n_tok = int(offsets[-1])
    doc_cluster = torch.randint(clusters, (len(lengths),), generator=g)  # (n_docs,)
    tok_cluster = torch.repeat_interleave(doc_cluster, lens)  # (n_tok,)
    tok_cluster = torch.where(torch.rand(n_tok, generator=g) < 0.3,
                              torch.randint(clusters, (n_tok,), generator=g), tok_cluster)
    noise = 0.6 * torch.randn(n_tok, dim, generator=g) / dim**0.5  # (n_tok, dim)
    tokens = torch.nn.functional.normalize(centers[tok_cluster] + noise, dim=1)  # (n_tok, dim)
    return tokens, offsets


def make_queries(tokens: torch.Tensor, offsets: torch.Tensor, n: int, n_tok: int = 32, seed: int = 1):
    """Queries built from a random non-empty document's tokens plus noise -> list of (n_tok, dim)."""
    g = torch.Generator().manual_seed(seed)
    lens = offsets[1:] - offsets[:-1]
    nonempty = torch.nonzero(lens > 0).flatten()
    out = []
    for _ in range(n):
        d = nonempty[torch.randint(len(nonempty), (1,), generator=g)].item()
        rows = offsets[d] + torch.randint(int(lens[d]), (n_tok,), generator=g)  # (n_tok,)
        q = tokens[rows] + 0.8 * torch.randn(n_tok, tokens.shape[1], generator=g) / tokens.shape[1] ** 0.5
        out.append(torch.nn.functional.normalize(q, dim=1))  # (n_tok, dim)
    return out


def quantize(tokens: torch.Tensor):
    """Per-token symmetric int8 -> (int8 (n_tok, dim), scales (n_tok,) fp32)."""
    scales = tokens.abs().amax(dim=1).clamp_min(1e-12) / 127.0  # (n_tok,)
    return torch.round(tokens / scales[:, None]).to(torch.int8), scales


