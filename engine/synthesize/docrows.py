"""The table row a question names, anywhere in its document.

"What is the change in the net sales for cheese between 2018 and 2019?": retrieval ranked
the passages about net sales, not the table whose row reads "Cheese". When the passages
give no table cell for a number question over named years, the row is looked up among all
the document's table rows (:meth:`DocTables.rows`): its own label must be named in the
question in full and hold a word more specific than "total" or "net"; among those, the
longest label wins, then the one whose section the question also names, then the row of a
statement, then the first in reading order. The row, its section and its table's caption
and headers must name three quarters of the question's other content words (the
operation, the year and the company's name aside): "net sales for cheese" is not the
"Net sales" row.
"""
from __future__ import annotations

import re

from docray.engine.synthesize.asks import fmt
from docray.engine.synthesize.cells import CellHit
from docray.engine.synthesize.statements import DocTables, _Row, content_words

_GENERIC = frozenset("total net other year years ended fiscal current".split())
# words that say what to do with the row's values, not which row
_OPERATION = frozenset("""change changes difference increase decrease growth grow rate
percentage percent average mean sum combined respectively compared fy fiscal year years""".split())
_COVERAGE = 0.75  # share of the question's other content words the row and its section name
_RATIO = re.compile(r"\bratio\b|\b\w+[ -]to[ -]\w+(?: \w+)? ratio", re.I)


def named_row(tables: DocTables, workspace: str, doc_id: str, question: str,
              years: list[str], filename: str = "") -> tuple[CellHit, _Row] | None:
    """(the row's cell for the last of ``years``, the row), or None. ``filename``: the
    document's, whose words (the company's name) say no row."""
    if _RATIO.search(question):
        return None  # two rows and a formula (ratios.py), not one row
    asked = content_words(question) - _OPERATION - content_words(filename.rsplit(".", 1)[0])
    best, best_key = None, None
    for r in tables.rows(workspace, doc_id):
        if not years or not all(y in r.values for y in years):
            continue
        words = r.label_words
        if not words or not words <= asked or not words - _GENERIC:
            continue
        named = (words | r.context_words) & asked
        if len(named) < _COVERAGE * len(asked):
            continue  # the question says more than the row: another row, or none
        key = (len(words), len(named), r.items, -r.unit.page, -r.unit.order)
        if best_key is None or key > best_key:
            best, best_key = r, key
    if best is None:
        return None
    year = years[-1]
    by_column = {f"{i}:{y}": (v, best.percent) for i, (y, v) in enumerate(best.values.items())}
    text = fmt(best.values[year]) + ("%" if best.percent else "")
    return CellHit(text, best.label, year, 1.0, best.values[year], best.scale, best.percent,
                   -1, by_column), best
