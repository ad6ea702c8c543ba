"""Tables: borderless (aligned numeric columns, from text spans) and ruled (pdfplumber).

Both paths end in :class:`~docray.engine.model.TableContent` with header flags, spans
and HTML. pdfplumber is only opened for pages whose drawing has a grid of rules.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from docray.engine.model import Cell, TableContent
from docray.engine.parse.content_list import table_to_html

from .text import Box, Span, absorb_marks, median, union

log = logging.getLogger(__name__)

_NUM = re.compile(r"^\(?[-–—−+]?\(?[\d][\d,]*(\.\d+)?\)?%?\)?[*†‡]?$|^[-–—]+$|^n/?a$|^nm$", re.I)
_YEAR = re.compile(r"^(FY ?)?(19|20)\d\d[A-Z]?$")
_CURRENCY = str.maketrans("", "", "$€£¥ ")


@dataclass
class FoundTable:
    box: Box
    content: TableContent
    used: set[int]  # ids (id()) of spans consumed


def is_value(text: str) -> bool:
    t = text.translate(_CURRENCY)
    return bool(t) and bool(_NUM.match(t))


def _clean(text: str) -> str:
    t = text.strip().strip("$").strip()
    return re.sub(r"^\$\s*|\s*\$$", "", t)


def group_rows(spans: list[Span]) -> list[list[Span]]:
    rows: list[list[Span]] = []
    for s in sorted(spans, key=lambda s: s.yc):
        if rows and abs(s.yc - median(x.yc for x in rows[-1])) < 0.45 * max(s.size, 3):
            rows[-1].append(s)
        else:
            rows.append([s])
    return [sorted(r, key=lambda s: s.x0) for r in rows]


def _numeric(row: list[Span]) -> bool:
    real = [s for s in row if s.text.strip() != "$"]
    vals = [s for s in real[1:] if is_value(s.text)]
    return len(real) >= 2 and len(vals) >= 1 and all(len(s.text) < 80 for s in real[1:])


def _year_row(row: list[Span]) -> bool:
    vals = [s for s in row[1:] if is_value(s.text)]
    return bool(vals) and all(_YEAR.match(s.text.strip()) for s in vals)


def _regions(rows: list[list[Span]]) -> list[tuple[int, int]]:
    out, start, last_num, n_num = [], None, None, 0
    for i, row in enumerate(rows):
        size = max(s.size for s in row)
        if start is not None:
            prev_bottom = max(s.y1 for s in rows[i - 1])
            near = row[0].y0 - prev_bottom < 2.2 * size
            label_only = len(row) == 1 and len(row[0].text) < 90
            if near and (_numeric(row) or label_only):
                if _numeric(row):
                    last_num, n_num = i, n_num + 1
                continue
            if n_num >= 2:
                out.append((start, last_num))
            start = None
        if _numeric(row):
            start, last_num, n_num = i, i, 1
    if start is not None and n_num >= 2:
        out.append((start, last_num))
    return out


def _columns(rows: list[list[Span]]) -> list[tuple[float, float]]:
    ivs = sorted((s.x0, s.x1) for r in rows if _numeric(r) and not _year_row(r)
                 for s in r[1:] if is_value(s.text))
    cols: list[list[float]] = []
    for x0, x1 in ivs:
        if cols and x0 <= cols[-1][1] + 1:
            cols[-1][1] = max(cols[-1][1], x1)
        else:
            cols.append([x0, x1])
    return [(a, b) for a, b in cols]


def _col_of(s: Span, cols) -> int | None:
    best, best_ov = None, 0.0
    for j, (a, b) in enumerate(cols):
        ov = min(b, s.x1) - max(a, s.x0)
        if ov > best_ov:
            best, best_ov = j, ov
    if best is None:
        cx = (s.x0 + s.x1) / 2
        dists = [min(abs(cx - a), abs(cx - b)) for a, b in cols]
        j = min(range(len(cols)), key=dists.__getitem__)
        if dists[j] < 3 * s.size:
            best = j
    return best


def _body_row(row: list[Span], cols, label_edge: float) -> list[Cell]:
    texts = [""] * (len(cols) + 1)
    for s in row:
        if s.text.strip() == "$":
            continue
        j = None if s.x1 < label_edge else _col_of(s, cols)
        k = 0 if j is None else j + 1
        texts[k] = (texts[k] + " " + _clean(s.text)).strip()
    return [Cell(text=t, is_header=(k == 0 and bool(t))) for k, t in enumerate(texts)]


def _header_row(row: list[Span], cols, label_edge: float, stub_left: float) -> list[Cell]:
    """Each column is claimed by the nearest header span (so one span can cover several).
    The row's label is what starts in the left half of the stub: a 10-K centres "2021" over
    its "$" and amount, so it can end left of the amounts without being the row's label
    (taken as one, it made the next year's header span both columns)."""
    mid = (stub_left + label_edge) / 2

    def is_label(s: Span) -> bool:
        return s.x1 < label_edge and s.x0 < mid

    label = " ".join(s.text for s in row if is_label(s))
    heads = [s for s in row if not is_label(s)]
    pitch = median((cols[i + 1][0] - cols[i][0] for i in range(len(cols) - 1)), 60.0)
    owner: list[int | None] = []
    for a, b in cols:
        cx = (a + b) / 2
        d = [0.0 if h.x0 <= cx <= h.x1 else min(abs(cx - h.x0), abs(cx - h.x1)) for h in heads]
        k = min(range(len(heads)), key=d.__getitem__) if heads else None
        owner.append(k if k is not None and d[k] < 0.75 * pitch else None)
    cells = [Cell(text=label, is_header=True)]
    j = 0
    while j < len(cols):
        k, span = owner[j], 1
        while k is not None and j + span < len(cols) and owner[j + span] == k:
            span += 1
        cells.append(Cell(text=_clean(heads[k].text) if k is not None else "", is_header=True,
                          col_span=span))
        j += span
    return cells


def _is_header_row(row: list[Span], label_edge: float) -> bool:
    right = [s for s in row if s.x1 >= label_edge and s.text.strip() != "$"]
    if not right or any(len(s.text) > 60 for s in row):
        return False
    return all(_YEAR.match(s.text.strip()) or not is_value(s.text) for s in right)


def _beside_prose(body: list[list[Span]], label_edge: float) -> float | None:
    """Where a column of prose beside the table ends, if one does.

    A table set in the right column of a two-column page shares its rows' heights with
    the left column's lines, so those lines grouped into its rows as a first column of
    sentences (GS's 10-K: "uses other financial instruments to mitigate credit risks |
    2017 | 290"). They are prose when they are long runs of words, many of them lines
    that run on mid-sentence, and the table's own row labels start right of them, past a
    gutter."""
    every = [s for r in body for s in r]
    margin = min(s.x0 for s in every) + 3 * max(s.size for s in every)
    # the lines of the column at the page's left edge (the table's own long labels, past
    # the gutter, are not among them)
    prose = [s for s in every if s.x0 <= margin and s.x1 < label_edge and len(s.text) >= 25
             and len(s.text.split()) >= 4]
    # a paragraph's lines run on mid-sentence ("uses other financial instruments to"); a
    # table's own long row labels start with a capital, each
    running = sum(s.text[:1].islower() for s in prose)
    if len(prose) < 2 or running < 0.4 * len(prose):
        return None
    cut = max(s.x1 for s in prose)
    em = max(s.size for s in prose)
    table = [s for s in every if s.x0 > cut]
    if len(table) < 4 or min(s.x0 for s in table) - cut < 1.5 * em \
            or any(s.x0 < cut < s.x1 for s in every):
        return None
    # what is left must have row labels (words or years), not start with a column of
    # amounts: long row labels of the table itself ("Subordinated liabilities of
    # consolidated VIEs") are no prose
    labels = [r[0].text.strip() for r in ([s for s in row if s.x0 > cut and
                                           s.text.strip() not in ("$", "€", "£")]
                                          for row in body) if len(r) >= 2]
    named = sum(bool(re.search(r"[A-Za-z]{2}", t)) or bool(_YEAR.match(t)) for t in labels)
    return cut if len(labels) >= 2 and named >= 0.8 * len(labels) else None


def _wordy(text: str, digits: bool = True) -> bool:
    """A label rather than an amount: a word of three letters, and (``digits=False``) no
    digit at all."""
    return not is_value(text) and bool(re.search(r"[A-Za-z]{3}", text)) and \
        (digits or not re.search(r"\d", text))


def _side_by_side(body: list[list[Span]], cols) -> float | None:
    """Where a second table starts beside the first, if one does.

    A long list is often set as two tables side by side ("Alabama 11 | Nebraska 5": a
    10-K's stores by state). Read as one table, the second one's labels sat in no column
    and joined the first one's ("Alabama Nebraska"). The second table's labels are words
    that start at one x, right of an amount column and left of another, in most rows, and
    nearly all differ (a column of ratings or "Yes" repeats; a list of names does not)."""
    if len(cols) < 2 or len(body) < 4:
        return None
    em = max(s.size for r in body for s in r)
    starts = [s for r in body for s in r[1:] if s.x0 > cols[0][1] and _wordy(s.text)]
    if len(starts) < 0.6 * len(body):
        return None
    x = median(s.x0 for s in starts)
    aligned = [s for s in starts if abs(s.x0 - x) < em]
    if len(aligned) < 0.6 * len(body) or len({s.text.strip().lower() for s in aligned}) < \
            0.8 * len(aligned):
        return None
    if sum(not _wordy(s.text, digits=False) for s in aligned) > 0.2 * len(aligned):
        return None  # "3 - 11 years": a column of the table, not labels
    split = min(s.x0 for s in aligned) - 1
    # the same shape on both sides: as many amount columns, and labels first on the left
    if sum(hi < split for _, hi in cols) != sum(lo > split for lo, _ in cols):
        return None
    lefts = [r[0] for r in body if r[0].x1 < split]
    if sum(_wordy(s.text, digits=False) for s in lefts) < 0.6 * len(body):
        return None
    return split


def _stacked(left: list[FoundTable], right: list[FoundTable]) -> list[FoundTable]:
    """Two tables side by side under the same header are one list set in two columns:
    one table, the right one's rows after the left one's (its "Total" row comes last)."""
    if len(left) != 1 or len(right) != 1:
        return left + right
    a, b = left[0].content, right[0].content
    ga, gb = a.grid(), b.grid()
    if len(ga[0]) != len(gb[0]) or a.header_rows != b.header_rows or \
            ga[:a.header_rows] != gb[:b.header_rows]:
        return left + right
    rows = a.rows + b.rows[b.header_rows:]
    content = make_content(rows, header_rows=a.header_rows, header_cols=1)
    return [FoundTable(union([left[0].box, right[0].box]), content,
                       left[0].used | right[0].used)]


def find_borderless(spans: list[Span]) -> list[FoundTable]:
    spans, origin = absorb_marks(spans)
    found = _borderless(spans)
    for t in found:
        t.used = {i for u in t.used for i in origin.get(u, (u,))}
    return found


def _borderless(spans: list[Span]) -> list[FoundTable]:
    rows = group_rows(spans)
    found = []
    for a, b in _regions(rows):
        body = rows[a:b + 1]
        cols = _columns(body)
        if not cols:
            continue
        split = _side_by_side(body, cols)
        if split is not None:  # two tables side by side: each read on its own
            near = [s for r in rows[max(0, a - 4):b + 1] for s in r]
            found += _stacked(_borderless([s for s in near if s.x0 < split]),
                              _borderless([s for s in near if s.x0 >= split]))
            continue
        label_edge = cols[0][0] - 1.5 * max(s.size for s in body[0])
        cut = _beside_prose(body, label_edge)
        if cut is not None:  # a table in one column of two: the other column's lines
            body = [r for r in ([s for s in row if s.x0 > cut] for row in body) if r]
            cols = _columns(body)  # a row's first span is its label again
            if not cols:
                continue
            label_edge = cols[0][0] - 1.5 * max(s.size for s in body[0])
        near = rows if cut is None else [[s for s in row if s.x0 > cut] for row in rows]
        head: list[list[Span]] = []
        while body and _is_header_row(body[0], label_edge) and len(head) < 4:
            head.append(body.pop(0))
        i = a - 1
        while i >= 0 and len(head) < 4 and near[i] and _is_header_row(near[i], label_edge):
            top = rows[i + 1][0].y0 if i + 1 < len(rows) else 0
            if top - max(s.y1 for s in near[i]) > 2.5 * near[i][0].size:
                break
            head.insert(0, near[i])
            i -= 1
        if len(body) < 2:
            continue
        stub_left = min(s.x0 for r in body for s in r)
        cells = [_header_row(r, cols, label_edge, stub_left) for r in head]
        cells += [_body_row(r, cols, label_edge) for r in body]
        content = make_content(cells, header_rows=len(head), header_cols=1)
        used_rows = head + body
        box = union(s.box for r in used_rows for s in r)
        found.append(FoundTable(box, content, {id(s) for r in used_rows for s in r}))
    return found


# ---------------------------------------------------------------- ruled (pdfplumber)

def _edges(values: list[float], tol: float = 2.0) -> list[float]:
    out: list[float] = []
    for v in sorted(values):
        if not out or v - out[-1] > tol:
            out.append(v)
    return out


def _index(edges: list[float], v: float) -> int:
    return min(range(len(edges)), key=lambda i: abs(edges[i] - v))


def find_ruled(plumber_page) -> list[FoundTable]:
    """Tables drawn with a grid of lines, through pdfplumber's lattice finder."""
    out = []
    settings = {"vertical_strategy": "lines", "horizontal_strategy": "lines"}
    for t in plumber_page.find_tables(settings):
        text_of: dict[tuple, str] = {}
        for row, texts in zip(t.rows, t.extract()):
            for cell, txt in zip(row.cells, texts):
                if cell is not None:
                    text_of[tuple(round(v, 1) for v in cell)] = (txt or "").replace("\n", " ").strip()
        cells = [tuple(round(v, 1) for v in c) for c in t.cells]
        if len(cells) < 4:
            continue
        xs = _edges([c[0] for c in cells] + [c[2] for c in cells])
        ys = _edges([c[1] for c in cells] + [c[3] for c in cells])
        grid: dict[int, list[tuple[int, Cell]]] = {}
        for c in cells:
            r0, r1 = _index(ys, c[1]), _index(ys, c[3])
            c0, c1 = _index(xs, c[0]), _index(xs, c[2])
            cell = Cell(text=text_of.get(c, ""), row_span=max(1, r1 - r0), col_span=max(1, c1 - c0))
            grid.setdefault(r0, []).append((c0, cell))
        rows = [[c for _, c in sorted(grid[r], key=lambda x: x[0])] for r in sorted(grid)]
        n_cols = max(sum(c.col_span for c in r) for r in rows)
        filled = sum(1 for r in rows for c in r if c.text) / max(1, sum(len(r) for r in rows))
        if len(rows) < 2 or n_cols < 2 or filled < 0.4:
            continue
        out.append(FoundTable(tuple(t.bbox), make_content(rows), set()))
    return out


# ---------------------------------------------------------------- content

def _guess_header_rows(rows: list[list[Cell]]) -> int:
    n = 0
    for row in rows[:4]:
        vals = [c for c in row[1:] if c.text and is_value(c.text) and not _YEAR.match(c.text)]
        if vals:
            break
        n += 1
    if n == 0:
        n = 1
    return min(n, max(1, len(rows) - 1))


def make_content(rows: list[list[Cell]], header_rows: int | None = None,
                 header_cols: int = 0) -> TableContent:
    if header_rows is None:
        header_rows = _guess_header_rows(rows)
        for row in rows[:header_rows]:
            for c in row:
                c.is_header = True
    return TableContent(rows=rows, html=table_to_html(rows), header_rows=header_rows,
                        header_cols=header_cols)


def find_cell(table: TableContent, row_text: str, col_text: str) -> str | None:
    """Text of the cell whose row header contains ``row_text`` and whose column header
    contains ``col_text`` (case-insensitive; spans expanded)."""
    grid = table.grid()
    hr = max(1, table.header_rows)
    norm = lambda s: " ".join(re.sub(r"[^0-9a-z]+", " ", s.lower()).split())  # noqa: E731
    cols = [j for j in range(len(grid[0]) if grid else 0)
            if any(norm(col_text) in norm(grid[r][j]) for r in range(min(hr, len(grid))))]
    for row in grid[hr:]:
        if row and norm(row_text) in norm(" ".join(row[: max(1, table.header_cols)])):
            for j in cols:
                if j < len(row) and row[j]:
                    return row[j]
    return None
