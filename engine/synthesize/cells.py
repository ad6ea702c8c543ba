"""Find the table cell a question asks for: row label × column header.

>>> from docray.engine.model import Cell, TableContent
>>> t = TableContent(rows=[[Cell(text="(Millions)", is_header=True), Cell(text="2018", is_header=True),
...     Cell(text="2017", is_header=True)], [Cell(text="Purchases of PP&E"), Cell(text="(1,577)"),
...     Cell(text="(1,373)")]], header_rows=1)
>>> best_cell(t, ["purchases", "pp&e"], ["2018"]).text
'(1,577)'
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from docray.engine.model import TableContent

_TOK = re.compile(r"[a-z0-9&]+")


@dataclass
class CellHit:
    text: str
    row: str
    column: str
    score: float


def _toks(text: str) -> set[str]:
    return set(_TOK.findall(text.lower()))


def _overlap(query: set[str], text: str) -> float:
    return _overlap_toks(query, _toks(text))


def _overlap_toks(query: set[str], toks: set[str]) -> float:
    if not toks or not query:
        return 0.0
    hit = len(query & toks)
    return hit / (len(query) ** 0.5 * len(toks) ** 0.5)


def _has_value(text: str) -> bool:
    return bool(re.search(r"\d", text))


def best_cell(table: TableContent, keywords: list[str], years: list[str]) -> CellHit | None:
    """Best (row, column) match; rows by keyword overlap, columns by year/keyword match."""
    grid = table.grid()
    if len(grid) < 2:
        return None
    n_head = max(table.header_rows, 1)
    kw = {t for k in keywords for t in _toks(k)}
    col_labels = [" ".join(dict.fromkeys(r[c] for r in grid[:n_head] if c < len(r)))
                  for c in range(len(grid[0]))]
    best: CellHit | None = None
    for row in grid[n_head:]:
        label = next((c for c in row if c and not _has_value(c)), row[0] if row else "")
        row_score = _overlap(kw, label)
        if row_score == 0:
            continue
        for c, value in enumerate(row):
            if not value or value == label or not _has_value(value):
                continue
            col = col_labels[c] if c < len(col_labels) else ""
            col_score = 1.0 if any(y in col for y in years) else (0.3 if not years else 0.0)
            col_score += 0.5 * _overlap(kw, col)
            score = row_score * (0.5 + col_score)
            if best is None or score > best.score:
                best = CellHit(text=value, row=label, column=col, score=score)
    return best
