"""MinerU / RAG-Anything ``content_list.json`` import and export.

The published format is a flat list of blocks in reading order::

    {"type": "text", "text": "...", "text_level": 1, "page_idx": 0, "bbox": [x0, y0, x1, y1]}
    {"type": "table", "img_path": "images/x.jpg", "table_caption": ["Table 1 ..."],
     "table_footnote": [], "table_body": "<table>...</table>", "page_idx": 2, "bbox": [...]}
    {"type": "image", "img_path": "images/y.jpg", "image_caption": ["Figure 1 ..."],
     "image_footnote": [], "page_idx": 3, "bbox": [...]}
    {"type": "equation", "text": "$$E=mc^2 \\tag{1}$$", "text_format": "latex", ...}

MinerU 4 (Content List V1) adds ``chart`` (a figure with ``content``), ``index``, ``code``
with ``code_body``, page furniture (``page_header``, ``page_footer``, ``page_number``) and other
text blocks (``page_footnote``, ``aside_text``), imported as the nearest docray modality.
``page_idx`` is 0-based; ``bbox`` is on a 0..1000 grid (MinerU 2.x and 4). docray units use
1-based pages and 0..1 boxes; conversion happens here and nowhere else.
"""
from __future__ import annotations

import json
import re
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from docray.engine.errors import BadInput
from docray.engine.model import Cell, Document, Page, TableContent, Unit

GRID = 1000.0
# MinerU 4 page furniture block types -> docray modalities
_AUX = {"header": "header", "page_header": "header", "footer": "footer",
        "page_footer": "footer", "page_number": "page_number"}
_TAG = re.compile(r"\\tag\{([^}]*)\}")


class _TableHTML(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[Cell]] = []
        self._cell: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self._cell = {"text": "", "is_header": tag == "th",
                          "row_span": int(a.get("rowspan") or 1),
                          "col_span": int(a.get("colspan") or 1)}

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self._cell["text"] = " ".join(self._cell["text"].split())
            self.rows[-1].append(Cell(**self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell["text"] += data


def table_from_html(html: str) -> TableContent:
    """Parse an HTML table into cells with header flags and spans.

    >>> t = table_from_html('<table><tr><th colspan="2">Year</th></tr><tr><td>a</td><td>1</td></tr></table>')
    >>> (t.header_rows, t.grid())
    (1, [['Year', 'Year'], ['a', '1']])
    """
    p = _TableHTML()
    p.feed(html)
    rows = [r for r in p.rows if r]
    header_rows = 0
    for row in rows:
        if row and all(c.is_header for c in row):
            header_rows += 1
        else:
            break
    return TableContent(rows=rows, html=html, header_rows=header_rows)


def table_to_html(rows: list[list[Cell]]) -> str:
    out = ["<table>"]
    for row in rows:
        out.append("<tr>")
        for c in row:
            tag = "th" if c.is_header else "td"
            span = (f' rowspan="{c.row_span}"' if c.row_span > 1 else "") + (
                f' colspan="{c.col_span}"' if c.col_span > 1 else "")
            out.append(f"<{tag}{span}>{escape(c.text)}</{tag}>")
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def _bbox_in(raw: Any) -> tuple[float, float, float, float]:
    if not raw or len(raw) != 4:
        return (0.0, 0.0, 1.0, 1.0)
    x0, y0, x1, y1 = (min(max(float(v) / GRID, 0.0), 1.0) for v in raw)
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


def _bbox_out(b: tuple[float, float, float, float]) -> list[int]:
    return [round(v * GRID) for v in b]


def _unit_from_block(block: dict[str, Any], doc_id: str, i: int, section: list[str]) -> Unit:
    kind = block.get("type")
    page = int(block.get("page_idx", 0)) + 1
    base = dict(unit_id=f"{doc_id}:p{page}:u{i}", doc_id=doc_id, page=page,
                bbox=_bbox_in(block.get("bbox")), order=i, section=list(section))
    if kind == "text":
        level = block.get("text_level")
        if level:
            return Unit(modality="title", level=int(level), text=block.get("text", ""), **base)
        return Unit(modality="text", text=block.get("text", ""), **base)
    if kind == "table":
        table = table_from_html(block.get("table_body") or "<table></table>")
        return Unit(modality="table", table=table, artifact_id=block.get("img_path") or None,
                    caption=" ".join(block.get("table_caption") or []),
                    footnotes=list(block.get("table_footnote") or []), **base)
    if kind in ("image", "chart"):  # MinerU 4: a chart is a figure with extracted content
        return Unit(modality="image", artifact_id=block.get("img_path") or None,
                    text=block.get("content") or "",
                    caption=" ".join(block.get(f"{kind}_caption") or []),
                    footnotes=list(block.get(f"{kind}_footnote") or []), **base)
    if kind == "equation":
        text = block.get("text", "")
        m = _TAG.search(text)
        return Unit(modality="equation", text=text, equation_number=m.group(1) if m else None,
                    artifact_id=block.get("img_path") or None, **base)
    if kind in ("code", "list", "index"):
        body = block.get("code_body") or block.get("text") or "\n".join(block.get("list_items", []))
        return Unit(modality="list" if kind == "index" else kind, text=body,
                    caption=" ".join(block.get("code_caption") or []), **base)
    if kind in _AUX:
        return Unit(modality=_AUX[kind], text=block.get("text", ""), **base)
    if isinstance(block.get("text"), str):  # other text blocks: page_footnote, aside_text, ...
        return Unit(modality="text", text=block["text"], **base)
    raise BadInput(f"content_list[{i}]", f"unknown block type {kind!r}")


def units_from_content_list(blocks: list[dict[str, Any]], doc_id: str) -> list[Unit]:
    """Import blocks; titles (``text_level``) build the section path of what follows."""
    units: list[Unit] = []
    section: list[str] = []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise BadInput(f"content_list[{i}]", "each block must be a JSON object")
        unit = _unit_from_block(block, doc_id, i, section)
        if unit.modality == "title":
            section = section[: (unit.level or 1) - 1] + [unit.text]
        units.append(unit)
    return units


def unit_to_block(unit: Unit) -> dict[str, Any]:
    base = {"page_idx": unit.page - 1, "bbox": _bbox_out(unit.bbox)}
    if unit.modality == "title":
        return {"type": "text", "text": unit.text, "text_level": unit.level or 1, **base}
    if unit.modality == "table" and unit.table is not None:
        return {"type": "table", "img_path": unit.artifact_id or "",
                "table_caption": [unit.caption] if unit.caption else [],
                "table_footnote": list(unit.footnotes),
                "table_body": unit.table.html or table_to_html(unit.table.rows), **base}
    if unit.modality == "image":
        return {"type": "image", "img_path": unit.artifact_id or "",
                "image_caption": [unit.caption] if unit.caption else [],
                "image_footnote": list(unit.footnotes), **base}
    if unit.modality == "equation":
        text = unit.text
        if unit.equation_number and not _TAG.search(text):
            text = f"{text} \\tag{{{unit.equation_number}}}"
        return {"type": "equation", "text": text, "text_format": "latex", **base}
    if unit.modality in ("code", "list"):
        return {"type": unit.modality, "text": unit.text, **base}
    return {"type": "text", "text": unit.text, **base}


def export_content_list(doc: Document) -> list[dict[str, Any]]:
    return [unit_to_block(u) for u in sorted(doc.units, key=lambda u: u.order)]


def load_content_list(path: str | Path, doc_id: str | None = None) -> Document:
    """Read a ``content_list.json`` written by MinerU, RAG-Anything or docray."""
    p = Path(path)
    try:
        blocks = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BadInput(str(p), f"not a readable content_list JSON file ({err})") from None
    if not isinstance(blocks, list):
        raise BadInput(str(p), "content_list must be a JSON list of blocks")
    from docray.engine.model import file_doc_id

    doc_id = doc_id or file_doc_id(p)
    units = units_from_content_list(blocks, doc_id)
    n_pages = max((u.page for u in units), default=0)
    pages = [Page(doc_id=doc_id, page=n, width=612, height=792) for n in range(1, n_pages + 1)]
    return Document(doc_id=doc_id, source=str(p), filename=p.name, n_pages=n_pages,
                    pages=pages, units=units)


class ContentListParser:
    """Parser backend for pre-parsed corpora (``parse.backend: content_list``)."""

    name = "content_list"

    def __init__(self, config: Any = None, artifacts: Any = None):
        self.config, self.artifacts = config, artifacts

    def parse(self, path: Path, doc_id: str | None = None) -> Document:
        return load_content_list(path, doc_id)
