"""Page-level baselines computed in the same run as docray's modes (quality benchmark):
BM25 over page text, MiniLM dense max over 200-word windows per page, and their RRF."""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

import numpy as np

_TOK = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _TOK.findall(text.lower())


class BM25Pages:
    def __init__(self, pages: dict[tuple[str, int], str], k1: float = 1.5, b: float = 0.75):
        self.keys = list(pages)
        self.tf = [Counter(tokenize(pages[k])) for k in self.keys]
        self.len = np.array([sum(t.values()) for t in self.tf], np.float32)  # (n_pages,)
        self.avg = float(self.len.mean() or 1.0)
        df = Counter(w for t in self.tf for w in t)
        n = len(self.keys)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
        self.post: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, t in enumerate(self.tf):
            for w, c in t.items():
                self.post[w].append((i, c))
        self.k1, self.b = k1, b

    def rank(self, query: str, doc_id: str | None = None, k: int = 10) -> list[tuple[str, int]]:
        scores = np.zeros(len(self.keys), np.float32)  # (n_pages,)
        for w in set(tokenize(query)):
            idf = self.idf.get(w)
            if idf is None:
                continue
            for i, c in self.post[w]:
                norm = c + self.k1 * (1 - self.b + self.b * self.len[i] / self.avg)
                scores[i] += idf * c * (self.k1 + 1) / norm
        return _top(self.keys, scores, doc_id, k)


class DenseWindowPages:
    def __init__(self, pages: dict[tuple[str, int], str], encoder, words: int = 200):
        self.keys = list(pages)
        owners, texts = [], []
        for i, key in enumerate(self.keys):
            toks = pages[key].split() or [""]
            for s in range(0, len(toks), words):
                owners.append(i)
                texts.append(" ".join(toks[s:s + words]))
        self.owner = np.array(owners)  # (n_windows,)
        self.vecs = np.concatenate([encoder.encode(texts[s:s + 256])
                                    for s in range(0, len(texts), 256)])  # (n_windows, dim)
        self.encoder = encoder

    def rank(self, query: str, doc_id: str | None = None, k: int = 10) -> list[tuple[str, int]]:
        q = self.encoder.encode([query])[0]  # (dim,)
        win = self.vecs @ q  # (n_windows,)
        scores = np.full(len(self.keys), -np.inf, np.float32)  # (n_pages,)
        np.maximum.at(scores, self.owner, win)
        return _top(self.keys, scores, doc_id, k)


def _top(keys, scores: np.ndarray, doc_id: str | None, k: int) -> list[tuple[str, int]]:
    if doc_id is not None:
        mask = np.array([d == doc_id for d, _ in keys])
        scores = np.where(mask, scores, -np.inf)
    order = np.argsort(-scores, kind="stable")[:k]
    return [keys[i] for i in order if np.isfinite(scores[i])]


def rrf_pages(*rankings: list[tuple[str, int]], k: int = 10, c: int = 60) -> list:
    score: dict = defaultdict(float)
    for ranking in rankings:
        for r, key in enumerate(ranking):
            score[key] += 1.0 / (c + r + 1)
    return [key for key, _ in sorted(score.items(), key=lambda kv: -kv[1])][:k]
