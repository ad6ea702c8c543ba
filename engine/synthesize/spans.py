"""Sentence vectors without a forward pass: pooled from the chunk token vectors stored at
ingest.

A chunk's stored tokens are the MiniLM token vectors of its index text (document label
and heading, then the chunk text), special tokens dropped, cut at the model length. The
tokenizer's character offsets map a sentence of the chunk to its word pieces, and the
sentence vector is the normalised mean of theirs: the model mean-pools too, so this is
close to encoding the sentence alone, for the price of a lookup. A sentence past the
cut has no stored tokens; it comes back as None and the caller encodes it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from docray.engine.index.index_text import doc_label, index_head
from docray.engine.index.pages.catalog import chunk_key
from docray.engine.model import Document

if TYPE_CHECKING:
    from docray.engine.synthesize import Passage

log = logging.getLogger(__name__)


@dataclass
class _Aligned:
    tokens: np.ndarray  # (n_tok, dim) stored vectors of the index text
    starts: np.ndarray  # (m,) char start of each word piece of the chunk text
    ends: np.ndarray  # (m,) char end
    head: int  # word pieces of the index text before the chunk text


class StoredSpans:
    """``vectors(passages, spans)`` → a unit vector per (passage index, text), or None."""

    def __init__(self, store, content, tokenizer, max_tokens: int):
        self.store, self.content, self.tok = store, content, tokenizer
        self.max_tokens = max_tokens  # word pieces kept per index text (model length − 2)
        self._heads: dict[tuple, int] = {}
        # an answer usually reads the chunks the previous one read: keep recent offsets
        self._offsets = lru_cache(maxsize=512)(self._word_pieces)

    @classmethod
    def open(cls, store, content, encoder) -> "StoredSpans | None":
        """None when the stored tokens cannot serve this encoder (another model, or an
        encoder without a local tokenizer)."""
        tokenizer = getattr(encoder, "tokenizer", None)
        want = f"chunk-tokens:{getattr(encoder, 'name', '')}"
        if store is None or tokenizer is None or store.manifest.encoder != want:
            if store is not None:
                log.info("stored chunk tokens are %r, not %r: answers re-encode sentences",
                         store.manifest.encoder, want)
            return None
        return cls(store, content, tokenizer, int(encoder.max_len) - 2)

    def _head_pieces(self, workspace: str, doc_id: str, filename: str, section: tuple) -> int:
        """Word pieces of the label + heading in front of a chunk's text (cached)."""
        key = (workspace, doc_id, filename, section)
        if key not in self._heads:
            title = self.content.first_title(workspace, doc_id)
            label = doc_label(Document(doc_id=doc_id, source=filename, filename=filename,
                                       units=[title] if title else []))
            self._heads[key] = len(self.tok(index_head(label, list(section)),
                                            add_special_tokens=False, verbose=False)["input_ids"])
        return self._heads[key]

    def _word_pieces(self, text: str) -> np.ndarray:
        """(m, 2) char span of each word piece of ``text``."""
        enc = self.tok(text, add_special_tokens=False, return_offsets_mapping=True,
                       verbose=False)
        return np.asarray(enc["offset_mapping"], np.int64).reshape(-1, 2)  # (m, 2)

    def _align(self, p: "Passage", tokens: np.ndarray) -> _Aligned | None:
        c = p.chunk
        offs = self._offsets(c.text)  # (m, 2)
        if len(tokens) < self.max_tokens:  # nothing was cut: the text is the tail
            head = len(tokens) - len(offs)
        else:
            head = self._head_pieces(c.workspace, c.doc_id, p.filename, tuple(c.section[-1:]))
        if head < 0:
            return None
        return _Aligned(tokens, offs[:, 0], offs[:, 1], head)

    def vectors(self, passages: list["Passage"], spans: list[tuple[int, str]]
                ) -> list[np.ndarray | None]:
        keys = {i: chunk_key(passages[i].chunk.workspace, passages[i].chunk.chunk_id)
                for i in {i for i, _ in spans}}
        stored = self.store.entry_tokens(list(keys.values()))
        aligned = {i: self._align(passages[i], stored[k]) for i, k in keys.items()
                   if k in stored}
        out: list[np.ndarray | None] = []
        for i, text in spans:
            a, start = aligned.get(i), passages[i].chunk.text.find(text)
            if a is None or start < 0 or not text:
                out.append(None)
                continue
            inside = np.nonzero((a.starts >= start) & (a.ends <= start + len(text)))[0]  # (k,)
            rows = inside + a.head
            rows = rows[rows < len(a.tokens)]
            if len(rows) < max(1, len(inside) // 2):  # mostly past the cut
                out.append(None)
                continue
            v = a.tokens[rows].mean(axis=0)  # (dim,)
            out.append(v / (np.linalg.norm(v) or 1.0))
        return out
