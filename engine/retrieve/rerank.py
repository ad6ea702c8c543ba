"""Rerankers: late-interaction token rerank (CPU default) and a cross-encoder backend.

Both implement :class:`Reranker`: ``score(question, texts) -> list[float]``.
"""
from __future__ import annotations

import logging
import time
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


class RerankTimeout(Unavailable, TimeoutError):
    """The reranker ran past its time budget; the caller keeps the fused order."""


class CrossEncoderReranker:
    """sentence-transformers ``CrossEncoder`` from a local path (e.g. bge-reranker-v2-m3).

    (question, passage) pairs are scored in batches of ``batch_size``, each pair cut to
    ``max_length`` tokens. ``timeout_s`` is checked between batches (a batch in flight
    finishes): past it :class:`RerankTimeout` is raised.
    """

    name = "cross-encoder"

    def __init__(self, model_path: str, device: str = "cpu", allow_download: bool = False,
                 batch_size: int = 16, max_length: int = 512, timeout_s: float = 5.0):
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as err:  # pragma: no cover — a core dependency
            raise Unavailable(f"cross-encoder reranker needs sentence-transformers: {err}")
        from docray.engine.embed.attention import attn_implementation

        self.batch_size, self.timeout_s = batch_size, timeout_s
        dtype = "bfloat16" if str(device).startswith("cuda") else "float32"
        self.attn = attn_implementation(device, dtype)
        try:
            self.model = CrossEncoder(
                model_path, device=device, local_files_only=not allow_download,
                max_length=max_length,
                model_kwargs={"attn_implementation": self.attn, "dtype": dtype})
        except Exception as err:  # noqa: BLE001 — missing local weights
            raise Unavailable(f"cannot load cross-encoder {model_path!r} (retrieve."
                              f"cross_encoder_model): {err}") from None
        self.model.eval()
        log.info("cross-encoder %s on %s: batch %d, max length %d", model_path, device,
                 batch_size, max_length)

    def score(self, question: str, texts: list[str]) -> list[float]:
        start_t = time.monotonic()
        scores: list[float] = []
        for start in range(0, len(texts), self.batch_size):
            elapsed = time.monotonic() - start_t
            if start and elapsed > self.timeout_s:
                raise RerankTimeout(f"cross-encoder scored {start} of {len(texts)} passages "
                                    f"in {elapsed:.3f}s, past retrieve.rerank_timeout_s="
                                    f"{self.timeout_s:g}")
            pairs = [(question, t) for t in texts[start:start + self.batch_size]]
            out = self.model.predict(pairs, batch_size=len(pairs), show_progress_bar=False,
                                     convert_to_numpy=True)  # (b,)
            scores.extend(float(s) for s in np.asarray(out, np.float32).reshape(-1))
        return scores


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
