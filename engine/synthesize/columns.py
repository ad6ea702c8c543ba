"""Operations over a whole column of a table: "What was the total base salary of all Named
Executive Officers in 2018?", "How much do the top 3 base salaries in 2019 add up to?",
"What is the average bonus of all directors?".

The question asks for a sum or an average over all the rows of a table, or over the N
largest; the column is the one whose header path names the question's year (when it
names one) and most of its other words, and must hold a value in at least two rows. Rows
that are themselves totals are left out.

>>> column_ask("How much do the top 3 base salaries in 2019 add up to?")
ColumnAsk(op='sum', top=3)
>>> column_ask("What is the total of Tax Fees and All Other Fees in 2019?") is None
True
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from docray.engine.model import TableContent
from docray.engine.synthesize.asks import fmt
from docray.engine.synthesize.cells import (_overlap, column_labels, header_rows, parse_value,
                                            row_labels, table_scale)

_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}
_N = r"(\d{1,2}|" + "|".join(_NUMBERS) + r")"
_TOP = re.compile(rf"\btop[- ]{_N}\b|\b{_N} (?:highest|largest|most)\b", re.I)
_ALL = re.compile(r"\b(?:all|every)\b(?! (?:other|of the (?:years|above)))", re.I)
_SUM = re.compile(r"\b(?:total|sum|summed|combined|add(?:s|ed)? up|altogether)\b", re.I)
_AVERAGE = re.compile(r"\b(?:average|mean)\b", re.I)
_TOTAL_ROW = re.compile(r"^\s*(?:total|sum|all|subtotal)\b|\btotals?\s*$", re.I)
_PAIR = re.compile(r"\b(?:of|between) (?:the )?[\w&\- ]+? and (?:the )?[\w&\- ]+", re.I)


@dataclass
class ColumnAsk:
    op: str  # sum or average
    top: int | None  # over the N largest values; None: over all rows


@dataclass
class ColumnHit:
    value: str
    answer: str
    score: float  # how well the column's header matches the question (0..1)


def column_ask(question: str) -> ColumnAsk | None:
    """A sum or average over all a column's rows (or its N largest), or None."""
    top = _TOP.search(question)
    if not (top or _ALL.search(question)) or _PAIR.search(question) and not top:
        return None  # "the total of A and B" is two rows (pairs.py)
    op = "average" if _AVERAGE.search(question) else "sum" if _SUM.search(question) else None
    if op is None:
        return None
    n = None
    if top:
        word = (top.group(1) or top.group(2)).lower()
        n = int(word) if word.isdigit() else _NUMBERS[word]
    return ColumnAsk(op, n)


def column_cell(table: TableContent, c: ColumnAsk, keywords: set[str], years: list[str],
                caption: str = "") -> ColumnHit | None:
    """``c`` over the best column of ``table``, or None when no column has the question's
    year and two values."""
    grid = table.grid()
    if len(grid) < 3:
        return None
    n_head = header_rows(table, grid)
    rows = [(i, lab) for i, lab in row_labels(grid, n_head) if not _TOTAL_ROW.search(lab)]
    best = None
    for col, label in enumerate(column_labels(grid, n_head)):
        if col == 0 or (years and not any(y in label for y in years)):
            continue
        values = [(lab, v) for i, lab in rows if col < len(grid[i])
                  for v in [parse_value(grid[i][col])] if v is not None]
        if len(values) < 2 or (c.top and len(values) <= c.top):
            continue
        score = _overlap(keywords - set(years), label)
        if best is None or score > best[0]:
            best = (score, label, values)
    if best is None or best[0] == 0.0:
        return None  # no column named by the question's words
    score, label, values = best
    if c.top:
        values = sorted(values, key=lambda lv: -lv[1])[: c.top]
    total = sum(v for _, v in values)
    result = total / len(values) if c.op == "average" else total
    scale = table_scale([caption, *(x for r in grid[:n_head] for x in r)])
    value = f"{fmt(result)} {scale}".strip()
    which = f"the top {c.top}" if c.top else f"all {len(values)} rows"
    listed = ", ".join(f"{lab} {fmt(v)}" for lab, v in values)
    return ColumnHit(value, f"{value} ({c.op} of {label} over {which}: {listed})", score)
