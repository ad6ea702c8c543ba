"""Encoder protocols: :class:`TextEncoder` (dense + token vectors) and :class:`PageEncoder`
(page multi-vectors for late interaction). All vectors are float32 and L2-normalised."""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from docray.engine.model import Document


@dataclass
class PageInput:
    """One page to embed: its text (OCR text for scanned pages) and/or its rendered image."""

    doc_id: str
    page: int
    text: str = ""
    image: Any = None  # PIL.Image.Image for image-based encoders


@runtime_checkable
class TextEncoder(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """(n, dim) float32, rows L2-normalised."""
        ...

    def encode_with_tokens(self, texts: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        """One forward pass: ((n, dim), [ (n_tok_i, dim) ]) without special tokens."""
        ...


@runtime_checkable
class PageEncoder(Protocol):
    name: str
    dim: int

    def encode_pages(self, pages: list[PageInput]) -> list[np.ndarray]:
        """One (n_tok, dim) float32 matrix per page, rows L2-normalised."""
        ...

    def encode_queries(self, texts: list[str]) -> list[np.ndarray]:
        """One (n_q_tok, dim) float32 matrix per query."""
        ...

    def encode_document(self, doc: "Document", artifacts=None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every page of ``doc`` → (page_nos (P,) int32, offsets (P+1,) int64,
        tokens (total, dim) float16), the layout the page store takes. ``artifacts``: the
        document's artifact store, for encoders that read page renders."""
        ...


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero).

    >>> np.allclose(l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]])), [[0.6, 0.8], [0, 0]])
    True
    """
    norms = np.linalg.norm(x, axis=-1, keepdims=True)  # (..., 1)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32)


def page_text(doc: "Document", page: int) -> str:
    """A page's text: the page text layer/OCR if any, else its units' display text."""
    for p in doc.pages:
        if p.page == page and p.text.strip():
            return p.text
    return "\n".join(u.display_text() for u in doc.units_on(page) if u.display_text())


def pack_pages(page_nos: list[int], mats: list[np.ndarray], dim: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ragged per-page matrices → (page_nos, offsets, concatenated fp16 tokens)."""
    offsets = np.zeros(len(mats) + 1, dtype=np.int64)  # (P + 1,)
    offsets[1:] = np.cumsum([len(m) for m in mats])
    tokens = (np.concatenate(mats) if mats else np.zeros((0, dim), np.float32))  # (total, dim)
    return np.asarray(page_nos, dtype=np.int32), offsets, tokens.astype(np.float16)


def document_pages(doc: "Document") -> list[PageInput]:
    nos = sorted({p.page for p in doc.pages} or {u.page for u in doc.units})
    return [PageInput(doc.doc_id, n, page_text(doc, n)) for n in nos]


class RemotePooledEncoder(ABC):
    """A :class:`TextEncoder` whose server returns one pooled vector per text (OpenAI
    embeddings, Triton): texts go in requests of ``config.batch_size`` (``_request``, the
    subclass's transport), vectors come back L2-normalised, and ``encode_with_tokens``
    gives each text one "token" (its own vector), so late interaction degrades to dense
    scoring (logged once)."""

    name: str = "remote"

    def __init__(self, config) -> None:
        self.config, self._warned = config, False

    @property
    def dim(self) -> int:
        return self.config.dim

    @abstractmethod
    def _request(self, batch: list[str]) -> np.ndarray:
        """One request's vectors, (len(batch), dim), in the order of ``batch``."""

    def _checked(self, vecs: np.ndarray, batch: list[str], source: str) -> np.ndarray:
        from docray.engine.errors import ConfigError

        if vecs.shape != (len(batch), self.dim):
            raise ConfigError(f"{source} returned shape {vecs.shape}, expected "
                              f"({len(batch)}, {self.dim}); check embed.text.dim")
        return vecs

    def encode(self, texts: list[str]) -> np.ndarray:
        bs = self.config.batch_size
        parts = [self._request(list(texts[s:s + bs])) for s in range(0, len(texts), bs)]
        if not parts:
            return np.zeros((0, self.dim), np.float32)
        return l2_normalize(np.concatenate(parts))  # (n, dim)

    def encode_with_tokens(self, texts: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        if not self._warned:
            logging.getLogger(__name__).warning(
                "%s gives no token vectors; using one vector per text", self.name)
            self._warned = True
        vecs = self.encode(texts)
        return vecs, [v[None, :] for v in vecs]  # [(1, dim)]
