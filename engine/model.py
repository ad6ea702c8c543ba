"""Core data model: Document, Page, Unit, Chunk, Entity, Relation, Evidence.

A :class:`Unit` is RAG-Anything's atomic content unit c_j = (t_j, x_j): one text block,
table, figure, equation, … with its page (1-based), bbox (page-relative, 0..1, origin
top-left) and reading order. MinerU / RAG-Anything ``content_list.json`` import and
export live in :mod:`docray.engine.parse.content_list`.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Modality = Literal["text", "title", "list", "table", "image", "equation", "code",
                   "header", "footer", "page_number", "caption"]
MULTIMODAL: frozenset[str] = frozenset({"table", "image", "equation"})


def content_hash(data: bytes) -> str:
    """Document id: the first 16 hex digits of the SHA-256 of the file bytes.

    >>> content_hash(b"abc")
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(data).hexdigest()[:16]


def file_doc_id(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def doc_of(item_id: str) -> str:
    """The document of a unit or chunk id: ids are made as ``{doc_id}:...``.

    >>> doc_of("3f2a:p4:u7")
    '3f2a'
    """
    return item_id.split(":", 1)[0]


def clean_text(text: str) -> str:
    """Drop lone UTF-16 surrogates (some PDF text layers yield them); they cannot be
    encoded as UTF-8, so they would break JSON, SQLite and Milvus writes.

    >>> clean_text("ok" + chr(0xD835) + " x")
    'ok x'
    """
    if not text:
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "ignore").decode("utf-8")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


BBox = tuple[float, float, float, float]


class Cell(_Model):
    text: str = ""
    is_header: bool = False
    row_span: int = Field(1, ge=1)
    col_span: int = Field(1, ge=1)

    _clean = field_validator("text")(lambda cls, v: clean_text(v))


class TableContent(_Model):
    rows: list[list[Cell]] = Field(default_factory=list)
    html: str = ""
    header_rows: int = Field(0, ge=0, description="Leading rows that are column headers.")
    header_cols: int = Field(0, ge=0, description="Leading columns that are row headers.")

    def grid(self) -> list[list[str]]:
        """Rows of cell text with spans expanded, so every row has the same width."""
        return expand_spans(self.rows)


def expand_spans(rows: list[list[Cell]]) -> list[list[str]]:
    """Expand row/col spans into a dense text grid.

    >>> c = lambda t, cs=1, rs=1: Cell(text=t, col_span=cs, row_span=rs)
    >>> expand_spans([[c("a", cs=2)], [c("b"), c("c")]])
    [['a', 'a'], ['b', 'c']]
    """
    grid: dict[tuple[int, int], str] = {}
    width = 0
    for r, row in enumerate(rows):
        col = 0
        for cell in row:
            while (r, col) in grid:
                col += 1
            for dr in range(cell.row_span):
                for dc in range(cell.col_span):
                    grid[(r + dr, col + dc)] = cell.text
            col += cell.col_span
            width = max(width, col)
    height = max((r for r, _ in grid), default=-1) + 1
    return [[grid.get((r, c), "") for c in range(width)] for r in range(height)]


class Unit(_Model):
    unit_id: str
    doc_id: str
    page: int = Field(ge=1, description="1-based page number.")
    bbox: BBox = Field(description="(x0, y0, x1, y1), page-relative 0..1, origin top-left.")
    modality: Modality
    order: int = Field(0, ge=0, description="Reading order within the document.")
    section: list[str] = Field(default_factory=list, description="Heading path.")
    text: str = Field("", description="Text, equation text/LaTeX, or OCR text of a figure.")
    level: int | None = Field(None, description="Heading level for titles (1 = top).")
    table: TableContent | None = None
    artifact_id: str | None = Field(None, description="Crop/render id in the artifact store.")
    caption: str = ""
    footnotes: list[str] = Field(default_factory=list)
    equation_number: str | None = None
    description: str = Field("", description="Retrieval proxy for non-text units.")
    ocr: bool = Field(False, description="Text came from OCR.")

    @field_validator("text", "caption", "description")
    @classmethod
    def _clean(cls, v: str) -> str:
        return clean_text(v)

    @field_validator("footnotes", "section")
    @classmethod
    def _clean_list(cls, v: list[str]) -> list[str]:
        return [clean_text(t) for t in v]

    @field_validator("bbox")
    @classmethod
    def _bbox(cls, v: BBox) -> BBox:
        x0, y0, x1, y1 = v
        if not (0 <= x0 <= x1 <= 1.0001 and 0 <= y0 <= y1 <= 1.0001):
            raise ValueError(f"bbox {v!r} must satisfy 0 <= x0 <= x1 <= 1 and 0 <= y0 <= y1 <= 1")
        return v

    def display_text(self) -> str:
        """The text a reader sees for this unit (tables linearised row by row)."""
        if self.table is not None:
            body = "\n".join(" | ".join(r) for r in self.table.grid())
            return "\n".join(t for t in (self.caption, body) if t)
        parts = [self.caption, self.text] if self.modality == "image" else [self.text]
        if self.equation_number:
            parts.append(f"({self.equation_number})")
        return "\n".join(p for p in parts if p)


class Page(_Model):
    doc_id: str
    page: int = Field(ge=1)
    width: float = Field(gt=0, description="Page width in PDF points.")
    height: float = Field(gt=0, description="Page height in PDF points.")
    ocr: bool = False
    render_id: str | None = None
    text: str = ""
    skip_reason: str | None = Field(None, description="Why the page yielded no units.")

    _clean = field_validator("text")(classmethod(lambda cls, v: clean_text(v)))


class Document(_Model):
    doc_id: str
    source: str
    filename: str
    n_pages: int = Field(0, ge=0)
    pages: list[Page] = Field(default_factory=list)
    units: list[Unit] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)

    def units_on(self, page: int) -> list[Unit]:
        return [u for u in self.units if u.page == page]


class Chunk(_Model):
    chunk_id: str
    doc_id: str
    text: str

    _clean = field_validator("text")(classmethod(lambda cls, v: clean_text(v)))
    modality: str = "text"
    pages: list[int] = Field(default_factory=list)
    unit_ids: list[str] = Field(default_factory=list)
    section: list[str] = Field(default_factory=list)
    bbox: BBox | None = None
    workspace: str = "default"


class Entity(_Model):
    entity_id: str
    name: str
    type: str = "concept"
    aliases: list[str] = Field(default_factory=list)
    description: str = ""
    unit_ids: list[str] = Field(default_factory=list)
    doc_ids: list[str] = Field(default_factory=list)


class Relation(_Model):
    src: str
    dst: str
    type: str
    weight: float = 1.0
    doc_id: str | None = None
    unit_id: str | None = None


class Evidence(_Model):
    doc: str
    doc_id: str = ""
    page: int
    bbox: BBox | None = None
    modality: str = "text"
    score: float = 0.0
    text: str = ""
    unit_id: str | None = None
    chunk_id: str | None = None
