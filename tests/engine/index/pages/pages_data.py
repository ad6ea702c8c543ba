"""Clustered synthetic page corpora for the page-store tests (topics shared by pages)."""
from __future__ import annotations

import numpy as np


def clustered_pages(n_docs: int, pages_per_doc: int, dim: int, seed: int = 0, topics: int = 24):
    """{doc_id: [(page_no, tokens (n_tok, dim) fp32)]}: each page mixes 1-3 topics plus noise."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(topics, dim))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)  # (topics, dim)
    docs = {}
    for d in range(n_docs):
        pages = []
        for p in range(pages_per_doc):
            n_tok = int(rng.integers(20, 160))
            mix = rng.choice(topics, size=rng.integers(1, 4), replace=False)
            tok = centers[rng.choice(mix, size=n_tok)] + rng.normal(scale=0.9 / dim**0.5, size=(n_tok, dim))
            pages.append((p, (tok / np.linalg.norm(tok, axis=1, keepdims=True)).astype(np.float32)))
        docs[f"doc-{d}"] = pages
    return docs


def queries_from(docs: dict, n: int, n_tok: int = 16, seed: int = 1) -> list[np.ndarray]:
    """Queries made of noisy tokens of random pages -> list of (n_tok, dim)."""
    rng = np.random.default_rng(seed)
    pages = [t for ps in docs.values() for _, t in ps]
    out = []
    for _ in range(n):
        src = pages[rng.integers(len(pages))]
        q = src[rng.integers(len(src), size=n_tok)] + rng.normal(scale=1.2 / src.shape[1] ** 0.5, size=(n_tok, src.shape[1]))
        out.append((q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32))
    return out


def fill(store, docs: dict, workspace: str = "ws") -> None:
    for doc_id, pages in docs.items():
        store.add_pages(workspace, doc_id, pages)
