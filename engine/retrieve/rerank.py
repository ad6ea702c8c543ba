"""Rerankers: late-interaction token rerank (CPU default) and a cross-encoder backend.

Both implement :class:`Reranker`: ``score(question, texts) -> list[float]``.
"""
from __future__ import annotations

import logging
from typing import Protocol, runtime_checkable

import numpy as np

from docray.engine.errors import Unavailable

log = logging.getLogger(__name__)


@runtime_checkable
class Reranker(Protocol):
    name: str

    def score(self, question: str, texts: list[str]) -> list[float]: ...


def maxsim_score(q: np.ndarray, d: np.ndarray) -> float:
    """Mean over query tokens of the best document-token similarity.

    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]]); d = np.array([[1.0, 0.0], [0.6, 0.8]])
    >>> round(maxsim_score(q, d), 3)
    0.9
    """
    if len(q) == 0 or len(d) == 0:
        return 0.0
    sim = q @ d.T  # (n_q, n_d)
    return float(sim.max(axis=1).mean())


class LateInteractionReranker:
    """MiniLM token vectors of question and passage, scored by MaxSim (ColBERT-style)."""

    name = "late-interaction"

    def __init__(self, encoder, max_chars: int = 800):
        self.encoder, self.max_chars = encoder, max_chars

    def score(self, question: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        _, toks = self.encoder.encode_with_tokens([question, *(t[: self.max_chars]
                                                                for t in texts)])
        q = np.asarray(toks[0], np.float32)  # (n_q, dim)
        return [maxsim_score(q, np.asarray(d, np.float32)) for d in toks[1:]]


class CrossEncoderReranker:
    """sentence-transformers CrossEncoder from a local path (e.g. bge-reranker-v2-m3)."""

    name = "cross-encoder"

    def __init__(self, model_path: str, device: str = "cpu", allow_download: bool = False):
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as err:  # pragma: no cover — a core dependency
            raise Unavailable(f"cross-encoder reranker needs sentence-transformers: {err}")
        try:
            self.model = CrossEncoder(model_path, device=device,
                                      local_files_only=not allow_download)
        except Exception as err:  # noqa: BLE001 — missing local weights
            raise Unavailable(f"cannot load cross-encoder {model_path!r}: {err}") from None

    def score(self, question: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        return [float(s) for s in self.model.predict([(question, t) for t in texts])]


class StoredLateInteractionReranker:
    """Late interaction against the chunk token vectors saved at ingest time (ColBERT
    style): only the query is encoded, so reranking costs a few small matrix products.
    Chunks without stored tokens (an index built before this store existed) fall back
    to re-encoding their text."""

    name = "late-interaction"

    def __init__(self, store, fallback: LateInteractionReranker):
        self.store, self.fallback = store, fallback

    def score(self, question: str, texts: list[str]) -> list[float]:
        return self.fallback.score(question, texts)

    def score_chunks(self, q: np.ndarray, workspace: str, chunk_ids: list[str],
                     texts: list[str], question: str) -> list[float]:
        from docray.engine.index.pages.catalog import chunk_key

        keys = [chunk_key(workspace, c) for c in chunk_ids]
        found = self.store.score_keys(q, keys) if len(q) else {}
        if len(found) < len(keys):
            return self.fallback.score(question, texts)
        return [found[k] / len(q) for k in keys]
