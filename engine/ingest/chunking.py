"""Chunking (pure): units → retrieval chunks.

Input:  units of one document in reading order (descriptions already filled).
Output: :class:`~docray.engine.model.Chunk` list, ``chunk_id = f"{doc_id}:c{i}"``.

* Text units are packed into token windows of ``size_tokens`` with ``overlap_tokens`` of
  overlap; a window never crosses a section (heading path) boundary.
* A table, figure or equation is never split: it is its own chunk whose text is its
  description (retrieval proxy) followed by its display text.
* Every chunk keeps its section, pages, unit ids and a bbox (the union when all its units
  lie on one page, else the first unit's).
* Page furniture (``header``, ``footer``, ``page_number``) is not chunked.

Tokens are approximated by word pieces (``\\w+`` runs and single punctuation marks), close
to a WordPiece count for English and free to compute.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from docray.engine.config import ChunkConfig
from docray.engine.model import MULTIMODAL, BBox, Chunk, Unit

SKIP = frozenset({"header", "footer", "page_number"})
_PIECE = re.compile(r"\w+|[^\w\s]")


def word_cost(word: str) -> int:
    """Approximate tokens in one whitespace word.

    >>> word_cost("(x=1),")
    6
    """
    return max(1, len(_PIECE.findall(word)))


def count_tokens(text: str) -> int:
    return sum(word_cost(w) for w in text.split())


@dataclass
class _Word:
    text: str
    cost: int
    unit: Unit


def _bbox(units: list[Unit]) -> BBox | None:
    if not units:
        return None
    if len({u.page for u in units}) > 1:
        return units[0].bbox
    return (min(u.bbox[0] for u in units), min(u.bbox[1] for u in units),
            max(u.bbox[2] for u in units), max(u.bbox[3] for u in units))


def _make(i: int, units: list[Unit], text: str, modality: str, workspace: str) -> Chunk:
    first = units[0]
    return Chunk(chunk_id=f"{first.doc_id}:c{i}", doc_id=first.doc_id, text=text,
                 modality=modality, pages=sorted({u.page for u in units}),
                 unit_ids=list(dict.fromkeys(u.unit_id for u in units)),
                 section=list(first.section), bbox=_bbox(units), workspace=workspace)


def _join(words: list[_Word]) -> str:
    out: list[str] = []
    for k, w in enumerate(words):
        if k:
            out.append("\n" if w.unit is not words[k - 1].unit else " ")
        out.append(w.text)
    return "".join(out)


def _windows(words: list[_Word], size: int, overlap: int) -> list[list[_Word]]:
    """Greedy windows of at most ``size`` tokens; each starts ``overlap`` tokens back."""
    out, start = [], 0
    while start < len(words):
        end, cost = start, 0
        while end < len(words) and (end == start or cost + words[end].cost <= size):
            cost += words[end].cost
            end += 1
        out.append(words[start:end])
        if end >= len(words):
            break
        back, nxt = 0, end
        while nxt - 1 > start and back + words[nxt - 1].cost <= overlap:
            nxt -= 1
            back += words[nxt].cost
        start = nxt
    return out


def multimodal_text(unit: Unit) -> str:
    """Chunk text of a table/figure/equation: description, then what a reader sees."""
    return "\n".join(t for t in (unit.description.strip(), unit.display_text().strip()) if t)


def chunk_units(units: list[Unit], config: ChunkConfig, workspace: str) -> list[Chunk]:
    size = config.size_tokens
    overlap = min(config.overlap_tokens, size // 2)
    chunks: list[Chunk] = []
    buffer: list[_Word] = []

    def flush() -> None:
        for window in _windows(buffer, size, overlap):
            wunits = list({id(w.unit): w.unit for w in window}.values())
            chunks.append(_make(len(chunks), wunits, _join(window), "text", workspace))
        buffer.clear()

    section: list[str] | None = None
    heading_open = False  # a heading waits for the text of its section
    for unit in units:
        if unit.modality in SKIP:
            continue
        if unit.modality in MULTIMODAL:
            flush()
            heading_open = False
            text = multimodal_text(unit)
            if text:
                chunks.append(_make(len(chunks), [unit], text, unit.modality, workspace))
            continue
        if unit.section != section:
            if not heading_open:
                flush()
            section = list(unit.section)
        if unit.modality == "title":
            if not heading_open:
                flush()
            heading_open = True
        else:
            heading_open = False
        buffer.extend(_Word(w, word_cost(w), unit) for w in unit.text.split())
    flush()
    return chunks
