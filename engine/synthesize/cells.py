"""Find the table cell a question asks for: row label × column header, over the cell graph.

A table is read as a grid (spans expanded): the leading rows without values are the column
headers, so a spanning header ("Three Months Ended") heads every column under it and a
column's label is its header path ("Three Months Ended July 29, 2023"); a row's label is
its first text cell, prefixed by the section row above it that has no values ("Current
assets" over "Cash"). The scale ("in millions", "(Millions)", "$ in thousands") comes from
the caption and the header cells; a value reads negatives in parentheses and percents.

>>> from docray.engine.model import Cell, TableContent
>>> t = TableContent(rows=[[Cell(text="(Millions)", is_header=True), Cell(text="2018", is_header=True),
...     Cell(text="2017", is_header=True)], [Cell(text="Purchases of PP&E"), Cell(text="(1,577)"),
...     Cell(text="(1,373)")]], header_rows=1)
>>> hit = best_cell(t, ["purchases", "pp&e"], ["2018"])
>>> hit.text, hit.value, hit.scale
('(1,577)', -1577.0, 'million')
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from docray.engine.model import TableContent
from docray.engine.retrieve.query import STOP

_TOK = re.compile(r"[a-z0-9&]+")
_YEAR_IN = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
_YEARISH = re.compile(r"^(?:fy\s?)?'?(?:19|20)\d{2}$|^q[1-4]$", re.I)
_VALUE = re.compile(r"^\(?\s*[-−–]?\s*[$€£¥]?\s*\(?\s*[-−–]?\d[\d,]*(?:\.\d+)?\s*\)?\s*"
                    r"(?:%|percent|pts?|x|bps)?\s*\)?\*?$", re.I)
_SCALES = (("billion", re.compile(r"\b(?:in\s+)?billions?\b|\$\s?bn\b", re.I)),
           ("million", re.compile(r"\b(?:in\s+)?millions?\b|\$\s?m\b|\bmn\b", re.I)),
           ("thousand", re.compile(r"\b(?:in\s+)?thousands?\b|\$\s?000s?\b|\$'000", re.I)))
# Words too common in table labels to say which row is meant.
_WEAK = frozenset("total net other year years ended fiscal".split())
# Words that ask for an operation over the row, or for its columns, not for a row.
_NOT_ROW = frozenset("""average mean change difference increase decrease growth both each
respectively altogether combined sum compared versus vs ratio fy higher highest lower lowest
larger largest smaller smallest greater greatest multiple""".split())


@dataclass
class CellHit:
    text: str
    row: str
    column: str
    score: float
    value: float | None = None
    scale: str = ""
    percent: bool = False
    row_index: int = -1
    by_column: dict[str, float] = field(default_factory=dict, repr=False)


def _toks(text: str) -> set[str]:
    return set(_TOK.findall(text.lower()))


def _overlap(query: set[str], text: str) -> float:
    return _overlap_toks(query, _toks(text))


def _overlap_toks(query: set[str], toks: set[str]) -> float:
    if not toks or not query:
        return 0.0
    hit = len(query & toks)
    return hit / (len(query) ** 0.5 * len(toks) ** 0.5)


def _weighted(query: set[str], toks: set[str], weights: dict[str, float] | None) -> float:
    """Overlap where each query word counts by its weight (1 when not given)."""
    if not weights:
        return _overlap_toks(query, toks)
    if not toks or not query:
        return 0.0
    total = sum(weights.get(t, 1.0) for t in query)
    return sum(weights.get(t, 1.0) for t in query & toks) / (total ** 0.5 * len(toks) ** 0.5)


def _has_value(text: str) -> bool:
    return bool(re.search(r"\d", text))


def parse_value(text: str) -> float | None:
    """The number a cell states: parentheses and minus signs negative, currency and
    percent signs dropped; None for text, years alone and dashes.

    >>> [parse_value(t) for t in ["(1,577)", "$ 5,363", "12.5%", "—", "2018", "-3.2", "n/a"]]
    [-1577.0, 5363.0, 12.5, None, None, -3.2, None]
    """
    t = text.strip().replace("\u2212", "-")
    if not _VALUE.match(t) or _YEARISH.match(t.strip("()$ ")):
        return None
    digits = re.sub(r"[^\d.]", "", t)
    try:
        v = float(digits)
    except ValueError:
        return None
    return -v if "(" in t or re.search(r"[-–]\s*[$€£¥]?\s*\d", t) else v


def table_scale(texts: list[str]) -> str:
    """'billion', 'million', 'thousand' or '' from a table's caption and header cells.

    >>> table_scale(["(In millions, except per share data)", "2023"])
    'million'
    >>> table_scale(["$ in thousands"]), table_scale(["Revenue"])
    ('thousand', '')
    """
    joined = " ".join(texts)
    return next((name for name, pat in _SCALES if pat.search(joined)), "")


def header_rows(table: TableContent, grid: list[list[str]]) -> int:
    """The leading rows that are column headers: at least the declared ones, and the rows
    before the first one that holds a value other than a year (years label columns) or
    text in its first cell alone (a section heading of the body)."""
    n = 0
    for i, row in enumerate(grid):
        filled = [c for c in row if c]
        if any(parse_value(c) is not None for c in row[1:]) or \
                (i and len(set(filled)) == 1 and row[0] == filled[0]):
            break
        n = i + 1
    return max(table.header_rows, min(n, len(grid) - 1), 1)


def column_labels(grid: list[list[str]], n_head: int) -> list[str]:
    """Each column's header path, top to bottom, repeats (spanning headers) dropped."""
    width = max((len(r) for r in grid), default=0)
    return [" ".join(dict.fromkeys(r[c] for r in grid[:n_head] if c < len(r) and r[c]))
            for c in range(width)]


_WRAPS = re.compile(r"(?:\b(?:and|or|of|for|in|to|the|from|on|by|with|at)|[,&\-–])\s*$", re.I)


def row_labels(grid: list[list[str]], n_head: int) -> list[tuple[int, str]]:
    """(row index, label) for the body rows with values; a row of text alone is a section
    heading and prefixes the rows under it ("Current assets: Cash")."""
    out, section, wrapped = [], "", ""
    for i in range(n_head, len(grid)):
        row = grid[i]
        label = next((c for c in row if c and parse_value(c) is None and not
                      _YEARISH.match(c.strip())), "")
        values = [c for c in row if c != label and parse_value(c) is not None]
        if not values:
            if label and _WRAPS.search(label) and not (label.rstrip().endswith(",")
                                                       and re.search(r"\d", label)):
                # "Brokerage, clearing, exchange and" over "distribution fees": the first
                # line of the next row's label, no heading ("December 31," is one)
                wrapped = f"{wrapped} {label}".strip()
            elif label and len(label.split()) <= 8 and not label[0].islower():
                # a short heading row; a sentence cut into the table is none
                section, wrapped = label.rstrip(": "), ""
            continue
        label, wrapped = f"{wrapped} {label}".strip() if wrapped else label, ""
        out.append((i, f"{section}: {label}" if section and label else label))
    return out


def _column_score(col: str, kw: set[str], years: list[str]) -> float:
    if years:
        hits = sum(y in col for y in years)
        score = 1.0 if hits else 0.0
    else:
        score = 0.3
    return score + 0.5 * _overlap(kw - {y for y in years}, col)


def _row_score(kw: set[str], label: str, row_label: str,
               weights: dict[str, float] | None = None, last: bool = False) -> float:
    """Overlap with the row's own label counts fully, with its section a quarter; a
    total row (one that says "total", or with ``last``, the table's last row when the
    question names one of its parts, see :func:`_narrowed`) is a weaker match for a
    question that asks for no total."""
    own = _toks(row_label)
    strong = kw - _WEAK
    score = _weighted(kw, own, weights)
    if strong and not strong & own:
        score *= 0.5  # only "total", "net", ... in common
    if "total" not in kw and ("total" in own or last):
        score *= 0.7
    section = _toks(label) - own
    return score + 0.25 * _weighted(kw, section, weights)


def _narrowed(rows: list[tuple[int, str]], kw: set[str]) -> int:
    """The index of the table's last row when the question names one of the rows above it
    by all of its words, a word the last row lacks among them ("the deferred provision
    for income taxes": the "Deferred" row, not the "Provision for income taxes" it sums
    into); -1 otherwise."""
    if len(rows) < 3:
        return -1
    last = _toks(rows[-1][1].split(": ", 1)[-1]) - STOP
    for _, label in rows[:-1]:
        own = _toks(label.split(": ", 1)[-1]) - STOP
        if own and own <= kw and own - last:
            return rows[-1][0]
    return -1


def best_cell(table: TableContent, keywords: list[str], years: list[str],
              caption: str = "", weights: dict[str, float] | None = None,
              percent: bool = False) -> CellHit | None:
    """Best (row, column) match: rows by keyword overlap with their label (and section),
    each word counting by ``weights`` (rarer words say more), columns by the years the
    question names, keyword overlap with the header path and, when the question asks
    for a percent (``percent``), whether the column holds percents."""
    grid = table.grid()
    if len(grid) < 2:
        return None
    n_head = header_rows(table, grid)
    kw = {t for k in keywords for t in _toks(k)}
    cols = column_labels(grid, n_head)
    # words the caption or headers already say name the table, not one of its rows
    context = _toks(" ".join([caption, *cols]))
    row_kw = (kw - _NOT_ROW - set(years)) - context or (kw - _NOT_ROW - set(years)) or kw
    scale = table_scale([caption] + [c for r in grid[:n_head] for c in r] + grid[n_head][:1])
    best: CellHit | None = None
    rows = row_labels(grid, n_head)
    narrowed = _narrowed(rows, row_kw)
    for i, label in rows:
        row = grid[i]
        own = label.split(": ", 1)[-1]
        row_score = _row_score(row_kw, label, own, weights, i == narrowed)
        if row_score == 0:
            continue
        by_col = {f"{c}:{cols[c]}": (v, "%" in cell or "%" in cols[c])
                  for c, cell in enumerate(row) if c < len(cols)
                  and cell != own and (v := parse_value(cell)) is not None}
        for c, value in enumerate(row):
            col = cols[c] if c < len(cols) else ""
            if not value or value == own or parse_value(value) is None:
                continue
            is_pct = "%" in value or "%" in col
            fit = 1.0 if is_pct == percent else (0.85 if percent else 0.95)
            score = row_score * (0.5 + _column_score(col, kw, years)) * fit
            if best is None or score > best.score:
                best = CellHit(text=value, row=label, column=col, score=score,
                               value=parse_value(value), scale=scale, percent=is_pct,
                               row_index=i, by_column=by_col)
    return best


def year_values(hit: CellHit, years: list[str]) -> list[tuple[str, float]]:
    """The hit row's values in the columns naming each of ``years``, in their order: of
    the columns naming a year, the first of the kind (percent or not) of the hit's own
    cell ([] unless every year has one)."""
    out = []
    for y in years:
        vals = [v for col, (v, pct) in hit.by_column.items()
                if y in col.split(":", 1)[1] and pct == hit.percent]
        if not vals:
            return []
        out.append((y, vals[0]))
    return out


def pick_year(hit: CellHit, largest: bool = True) -> tuple[str, float, int] | None:
    """(year, value, years compared) of the hit row's column with the largest (smallest)
    value, over the columns naming one year each, of the kind (percent or not) of the hit's
    cell; None unless two years or more have one.

    >>> h = CellHit("5", "PP&E, net", "2019", 1.0, 5.0, by_column={"1:2019": (5.0, False),
    ...             "2:2018": (7.0, False), "3:2018 %": (9.0, True)})
    >>> pick_year(h), pick_year(h, largest=False)
    (('2018', 7.0, 2), ('2019', 5.0, 2))
    """
    by_year: dict[str, float] = {}
    for col, (v, pct) in hit.by_column.items():
        found = set(_YEAR_IN.findall(col.split(":", 1)[-1]))
        if pct == hit.percent and len(found) == 1:
            by_year.setdefault(found.pop(), v)
    if len(by_year) < 2:
        return None
    year = (max if largest else min)(by_year, key=by_year.__getitem__)
    return year, by_year[year], len(by_year)
