"""Cross-modal structure graphs for table, figure and equation units (pure functions).

A table becomes an anchor node ``unit:{unit_id}``, one node per row (its row header), per
column (its leaf header plus the full multi-level header path), per spanning upper-level
header and per body cell, linked by ``row-of``, ``column-of``, ``header-applies-to`` and
``unit-of`` edges. :func:`find_cell` answers "the value at row X, column Y".
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Iterable

from docray.engine.graph.align import normalize
from docray.engine.graph.records import (
    CAPTION, CELL, COLUMN, COLUMN_OF, EQUATION, EQUATION_NUMBER, FIGURE_LABEL, HEADER,
    HEADER_APPLIES_TO, IMAGE, PANEL, ROW, ROW_GROUP, ROW_OF, TABLE, UNIT_OF, Edge, Node, anchor_id)
from docray.engine.model import Cell, Unit

log = logging.getLogger(__name__)
_NUMERIC = re.compile(r"^[\s$€£¥(\-–—+]*\d[\d,.\s]*[)%]*\s*[a-zA-Z]{0,3}$")
PATH_SEP = " > "


@dataclass(frozen=True)
class _Placed:
    r: int
    c: int
    cell: Cell


def _layout(rows: list[list[Cell]]) -> list[_Placed]:
    """Origin (row, col) of every cell with spans resolved, like :func:`expand_spans`."""
    taken: set[tuple[int, int]] = set()
    placed = []
    for r, row in enumerate(rows):
        col = 0
        for cell in row:
            while (r, col) in taken:
                col += 1
            placed.append(_Placed(r, col, cell))
            taken.update((r + dr, col + dc) for dr in range(cell.row_span)
                         for dc in range(cell.col_span))
            col += cell.col_span
    return placed


def is_numeric(text: str) -> bool:
    """True for values such as ``(1,577)``, ``12.5%``, ``$3.2bn``.

    >>> [is_numeric(t) for t in ["(1,577)", "12.5%", "2018", "Net income", ""]]
    [True, True, True, False, False]
    """
    return bool(text.strip()) and bool(_NUMERIC.match(text.strip()))


def _is_value(text: str) -> bool:
    """Numeric and not a year-like column label (``2018``, ``FY2019``, ``Q3 2020``)."""
    return is_numeric(text) and not re.fullmatch(r"\s*(?:FY|Q[1-4])?\s*(?:19|20)\d{2}\s*", text)


def _header_shape(unit: Unit, grid: list[list[str]]) -> tuple[int, int]:
    """Declared header rows/cols, else inferred from ``is_header`` flags and numeric body."""
    t = unit.table
    n_hr, n_hc = t.header_rows, t.header_cols
    if n_hr == 0:
        while n_hr < len(t.rows) - 1 and t.rows[n_hr] and all(c.is_header for c in t.rows[n_hr]):
            n_hr += 1
        if n_hr == 0 and len(grid) >= 2 and not any(_is_value(x) for x in grid[0][1:]) \
                and any(is_numeric(x) for row in grid[1:] for x in row):
            n_hr = 1
    if n_hc == 0 and grid and len(grid[0]) >= 2:
        body = [row[0] for row in grid[n_hr:] if row and row[0].strip()]
        if body and sum(not is_numeric(x) for x in body) >= len(body) / 2:
            n_hc = 1
    return n_hr, n_hc


def _node(unit: Unit, nid: str, kind: str, name: str, **attrs: Any) -> Node:
    return Node(id=nid, kind=kind, name=name, doc_id=unit.doc_id, unit_id=unit.unit_id,
                page=unit.page, attrs=attrs)


def _edge(unit: Unit, src: str, dst: str, etype: str, weight: float = 1.0) -> Edge:
    return Edge(src=src, dst=dst, type=etype, weight=weight, doc_id=unit.doc_id)


def _columns(unit, placed, grid, n_hr, n_hc, anchor) -> tuple[dict[int, list[str]], list, list]:
    """Column nodes (leaf text + header path) and spanning header nodes."""
    width = len(grid[0]) if grid else 0
    paths: dict[int, list[str]] = {c: [] for c in range(n_hc, width)}
    for r in range(n_hr):
        for c in paths:
            text = grid[r][c].strip()
            if text and (not paths[c] or paths[c][-1] != text):
                paths[c].append(text)
    nodes, edges = [], []
    for c, path in paths.items():
        cid = f"{unit.unit_id}:col{c}"
        name = path[-1] if path else f"column {c + 1}"
        nodes.append(_node(unit, cid, COLUMN, name, index=c, path=path,
                           label=PATH_SEP.join(path) or name))
        edges.append(_edge(unit, cid, anchor, UNIT_OF))
    for p in placed:
        if p.r < n_hr and p.c >= n_hc and p.r + p.cell.row_span < n_hr and p.cell.text.strip():
            hid = f"{unit.unit_id}:h{p.r}c{p.c}"
            span = [c for c in range(p.c, p.c + p.cell.col_span) if c in paths]
            nodes.append(_node(unit, hid, HEADER, p.cell.text.strip(), row=p.r, columns=span))
            edges.append(_edge(unit, hid, anchor, UNIT_OF))
            edges += [_edge(unit, hid, f"{unit.unit_id}:col{c}", HEADER_APPLIES_TO) for c in span]
    return paths, nodes, edges


def _rows(unit, grid, n_hr, n_hc, anchor) -> tuple[dict[int, str], list, list]:
    """Row nodes (row-header text) and row-group nodes for label-only section rows."""
    labels, nodes, edges, group, group_label = {}, [], [], None, ""
    for r in range(n_hr, len(grid)):
        label = " ".join(dict.fromkeys(x.strip() for x in grid[r][:n_hc] if x.strip()))
        values = [x for x in grid[r][n_hc:] if x.strip()]
        if label and not values and n_hc:
            group, group_label = f"{unit.unit_id}:g{r}", label
            nodes.append(_node(unit, group, ROW_GROUP, label, index=r))
            edges.append(_edge(unit, group, anchor, UNIT_OF))
            continue
        rid = f"{unit.unit_id}:row{r}"
        labels[r] = label or f"row {r + 1}"
        nodes.append(_node(unit, rid, ROW, labels[r], index=r, label=labels[r], group=group_label))
        edges.append(_edge(unit, rid, anchor, UNIT_OF))
        if group:
            edges.append(_edge(unit, group, rid, HEADER_APPLIES_TO))
    return labels, nodes, edges


def table_graph(unit: Unit) -> tuple[list[Node], list[Edge]]:
    """Anchor, row, column, header and cell nodes of a table unit, with their edges."""
    anchor = anchor_id(unit.unit_id)
    t = unit.table
    grid = t.grid() if t is not None else []
    corner = grid[0][0].strip() if grid and grid[0] else ""
    n_hr, n_hc = _header_shape(unit, grid) if grid else (0, 0)
    nodes = [_node(unit, anchor, TABLE, unit.caption or f"table on page {unit.page}",
                   caption=unit.caption, corner=corner if n_hr and n_hc else "",
                   header_rows=n_hr, header_cols=n_hc, footnotes=list(unit.footnotes))]
    if not grid:
        return nodes, []
    paths, col_nodes, edges = _columns(unit, _layout(t.rows), grid, n_hr, n_hc, anchor)
    labels, row_nodes, row_edges = _rows(unit, grid, n_hr, n_hc, anchor)
    nodes += col_nodes + row_nodes
    edges += row_edges
    for p in _layout(t.rows):
        text = p.cell.text.strip()
        if p.r < n_hr or p.c < n_hc or not text:
            continue
        rows = [r for r in range(p.r, p.r + p.cell.row_span) if r in labels]
        cols = [c for c in range(p.c, p.c + p.cell.col_span) if c in paths]
        if not rows or not cols:
            continue
        cid = f"{unit.unit_id}:r{p.r}c{p.c}"
        col_label = PATH_SEP.join(paths[cols[0]]) or f"column {cols[0] + 1}"
        nodes.append(_node(unit, cid, CELL, text, row=p.r, col=p.c, row_label=labels[rows[0]],
                           col_label=col_label, col_leaf=(paths[cols[0]] or [""])[-1],
                           numeric=is_numeric(text)))
        edges += [_edge(unit, cid, f"{unit.unit_id}:row{r}", ROW_OF) for r in rows]
        edges += [_edge(unit, cid, f"{unit.unit_id}:col{c}", COLUMN_OF) for c in cols]
        edges.append(_edge(unit, cid, anchor, UNIT_OF))
    return nodes, edges


_PANEL = re.compile(r"\(([a-h])\)\s*([^()]*?)(?=\s*\([a-h]\)|[.;]|$)")


def figure_graph(unit: Unit) -> tuple[list[Node], list[Edge]]:
    """Anchor (kind ``image``), caption, panel and OCR-label nodes of a figure unit."""
    anchor = anchor_id(unit.unit_id)
    nodes = [_node(unit, anchor, IMAGE, unit.caption or f"figure on page {unit.page}",
                   caption=unit.caption, artifact_id=unit.artifact_id)]
    edges: list[Edge] = []

    def add(nid: str, kind: str, name: str, **attrs: Any) -> None:
        nodes.append(_node(unit, nid, kind, name, **attrs))
        edges.append(_edge(unit, nid, anchor, UNIT_OF))

    if unit.caption.strip():
        add(f"{unit.unit_id}:caption", CAPTION, unit.caption.strip())
    panels: dict[str, str] = {}
    for m in _PANEL.finditer(unit.caption):
        panels.setdefault(m.group(1), m.group(2).strip())
    for line in unit.text.splitlines():
        m = re.fullmatch(r"\s*\(?([a-h])\)\s*(.*)", line)
        if m:
            panels.setdefault(m.group(1), m.group(2).strip())
    for key, text in sorted(panels.items()):
        add(f"{unit.unit_id}:panel:{key}", PANEL, f"({key}) {text}".strip(), panel=key)
    seen: set[str] = set()
    for line in unit.text.splitlines():
        text = line.strip()
        words = text.split()
        if not text or is_numeric(text) or len(words) > 8 or normalize(text) in seen \
                or re.fullmatch(r"\(?[a-h]\).*", text):
            continue
        seen.add(normalize(text))
        role = "axis" if re.search(r"\(.+\)|%|\bper\b|\btime\b|\byear", text, re.I) else "label"
        add(f"{unit.unit_id}:label{len(seen)}", FIGURE_LABEL, text, role=role)
    return nodes, edges


def equation_graph(unit: Unit) -> tuple[list[Node], list[Edge]]:
    """Anchor (kind ``equation``) and its number node when the equation is numbered."""
    anchor = anchor_id(unit.unit_id)
    num = (unit.equation_number or "").strip("() ")
    name = f"Equation ({num})" if num else (unit.text.strip()[:80] or "equation")
    nodes = [_node(unit, anchor, EQUATION, name, number=num or None, latex=unit.text)]
    edges: list[Edge] = []
    if num:
        nid = f"{unit.unit_id}:eqnum"
        nodes.append(_node(unit, nid, EQUATION_NUMBER, f"({num})", number=num))
        edges.append(_edge(unit, nid, anchor, UNIT_OF))
    return nodes, edges


def unit_graph(unit: Unit) -> tuple[list[Node], list[Edge]]:
    """Structure graph of any multimodal unit; empty for text units."""
    if unit.modality == "table" or unit.table is not None:
        return table_graph(unit)
    if unit.modality == "image":
        return figure_graph(unit)
    if unit.modality == "equation":
        return equation_graph(unit)
    return [], []


def _match(label: str, query: str) -> int:
    """2 = equal after normalisation, 1 = query contained in label, 0 = no match."""
    a, b = normalize(label), normalize(query)
    if not b:
        return 0
    return 2 if a == b else int(f" {b} " in f" {a} ")


def find_cell(store_or_nodes: Any, row_text: str, col_text: str,
              workspace: str = "default") -> Node | None:
    """The table cell at the row whose label matches ``row_text`` and the column whose leaf
    header or header path matches ``col_text``; exact matches beat containment.

    ``store_or_nodes`` is a node list or a :class:`~docray.engine.graph.store.GraphStore`.
    """
    if hasattr(store_or_nodes, "iter_nodes"):
        cells: Iterable[Node] = store_or_nodes.iter_nodes(workspace, kind=CELL)
    else:
        cells = (n for n in store_or_nodes if n.kind == CELL)
    best, best_score = None, 0
    for n in cells:
        rs = _match(n.attrs.get("row_label", ""), row_text)
        cs = max(_match(n.attrs.get("col_leaf", ""), col_text),
                 _match(n.attrs.get("col_label", ""), col_text))
        if rs and cs and rs + cs > best_score:
            best, best_score = n, rs + cs
    return best
