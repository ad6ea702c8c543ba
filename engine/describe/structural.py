"""Structural describer: deterministic retrieval proxies from structure and context.

* table: caption, column headers and linearised facts ``"row | column: value"`` from the
  span-expanded grid (``header_rows`` / ``header_cols``), footnotes, and the sentences of
  the document that cite it ("Table 2").
* image: caption, the OCR text inside the figure (``unit.text``) and the sentences anywhere
  in the document that cite it ("Figure 3", "Fig. 3"); nearby text when it has no caption.
* equation: its text and number, definitions found in the context window ("where x is …",
  "… denotes …") and sentences citing it ("Eq. (3)").

The context window is the units on the same page within ±``context_units`` positions,
nearest first, capped at ``context_tokens`` (whitespace words approximate tokens).
"""
from __future__ import annotations

import logging
import re

from docray.engine.config import DescribeConfig
from docray.engine.describe.base import describe_missing
from docray.engine.model import TableContent, Unit

log = logging.getLogger(__name__)

MAX_FACTS = 200
# The line labels of the proxies below: how a proxy line reads, not what it says.
PROXY_LABEL = re.compile(r"^(?:Figure|Text in figure|Referenced|Context|Table|Columns|Notes|"
                         r"Caption|Definitions):\s+")
CONTEXT_MODALITIES = frozenset({"text", "list", "title", "caption", "code"})
_SENT_SPLIT = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9(\[\\$])")
_ABBREV = re.compile(r"(?:\b(?:fig|figs|eq|eqs|tab|no|nos|vs|al|e\.g|i\.e|cf|sec|ref|approx)"
                     r"|\b[A-Z])\.$", re.I)
_LABEL = {
    "image": re.compile(r"\b(?:fig(?:ure)?)\.?\s*(\d+[a-z]?)\b", re.I),
    "table": re.compile(r"\b(?:tab(?:le)?)\.?\s*(\d+[a-z]?)\b", re.I),
}
_REF = {
    "image": r"\bfig(?:ure)?s?\.?\s*{n}(?![\w.]\d)\b",
    "table": r"\btab(?:le)?s?\.?\s*{n}(?![\w.]\d)\b",
    "equation": r"\b(?:eq(?:uation)?s?\.?\s*\(?{n}\)?)(?![\w.]\d)",
}
_DEFINITION = re.compile(r"\bwhere\b|\bdenot(?:e|es|ed|ing)\b|\bdefined as\b|\bstands? for\b|"
                         r"\brepresents?\b|\bis given by\b", re.I)


def n_tokens(text: str) -> int:
    """Approximate token count: whitespace-separated words.

    >>> n_tokens("a b  c")
    3
    """
    return len(text.split())


def sentences(text: str) -> list[str]:
    """Split on sentence ends followed by a capital, digit or bracket.

    >>> sentences("See Fig. 3 here. Then x is y.")
    ['See Fig. 3 here.', 'Then x is y.']
    """
    out: list[str] = []
    for piece in _SENT_SPLIT.split(" ".join(text.split())):
        if out and _ABBREV.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        elif piece:
            out.append(piece)
    return out


def take_budget(parts: list[str], budget: int) -> list[str]:
    """Leading ``parts`` whose word count fits ``budget``; a first oversize part is cut."""
    out: list[str] = []
    for part in parts:
        cost = n_tokens(part)
        if cost > budget:
            if not out and budget > 0:
                out.append(" ".join(part.split()[:budget]))
            break
        out.append(part)
        budget -= cost
    return out


def _dedup(items) -> list[str]:
    return list(dict.fromkeys(i.strip() for i in items if i and i.strip()))


def _header_rows(table: TableContent) -> int:
    if table.header_rows:
        return table.header_rows
    n = 0
    for row in table.rows:
        if row and all(c.is_header for c in row):
            n += 1
        else:
            break
    return n


def table_facts(table: TableContent, limit: int = MAX_FACTS) -> tuple[list[str], list[str]]:
    """(column headers, facts ``"row | column: value"``) of a table.

    Without header columns the first column names the row.

    >>> from docray.engine.model import Cell
    >>> t = TableContent(rows=[[Cell(text="Model"), Cell(text="F1")],
    ...                        [Cell(text="ours"), Cell(text="0.9")]], header_rows=1)
    >>> table_facts(t)
    (['Model', 'F1'], ['ours | F1: 0.9'])
    """
    grid = table.grid()
    if not grid or not grid[0]:
        return [], []
    width, hr = len(grid[0]), min(_header_rows(table), len(grid))
    hc = min(table.header_cols or (1 if width > 1 else 0), width)
    labels = [" / ".join(_dedup(grid[r][c] for r in range(hr))) for c in range(width)]
    headers = _dedup(labels)
    facts: list[str] = []
    for r in range(hr, len(grid)):
        row_label = " / ".join(_dedup(grid[r][c] for c in range(hc))) or f"row {r - hr + 1}"
        for c in range(hc, width):
            value = " ".join(grid[r][c].split())
            if value:
                facts.append(f"{row_label} | {labels[c] or f'column {c + 1}'}: {value}")
    return headers, _dedup(facts)[:limit]


def _label_number(unit: Unit) -> str | None:
    if unit.modality == "equation":
        return (unit.equation_number or "").strip("() ") or None
    pattern = _LABEL.get(unit.modality)
    m = pattern.search(unit.caption) if pattern and unit.caption else None
    return m.group(1) if m else None


class StructuralDescriber:
    """:class:`~docray.engine.describe.Describer` with no model: structure + context."""

    def __init__(self, config: DescribeConfig | None = None):
        self.config = config or DescribeConfig()

    def describe(self, units: list[Unit]) -> list[Unit]:
        return describe_missing(units, self.proxy)

    # -- pieces shared with the VLM describer -------------------------------------------
    def context(self, units: list[Unit], i: int) -> list[str]:
        """Sentences of same-page text units within ±δ of ``units[i]``, nearest first."""
        unit, delta = units[i], self.config.context_units
        found: list[str] = []
        for d in range(1, delta + 1):
            for j in (i - d, i + d):
                if 0 <= j < len(units) and units[j].page == unit.page \
                        and units[j].modality in CONTEXT_MODALITIES:
                    found.extend(sentences(units[j].text))
        return _dedup(found)

    def references(self, units: list[Unit], i: int) -> list[str]:
        """Sentences anywhere in the document that cite ``units[i]`` by its number."""
        unit = units[i]
        number = _label_number(unit)
        if number is None or unit.modality not in _REF:
            return []
        cite = re.compile(_REF[unit.modality].format(n=re.escape(number)), re.I)
        caption_like = re.compile(r"^\W*" + _REF[unit.modality].format(n=re.escape(number))
                                  + r"\s*[:.|]", re.I)
        caption = " ".join(unit.caption.split())
        found = []
        for j, other in enumerate(units):
            if j == i or other.modality not in CONTEXT_MODALITIES:
                continue
            for s in sentences(other.text):
                if cite.search(s) and not caption_like.match(s) and s not in caption:
                    found.append(s)
        return _dedup(found)

    def proxy(self, units: list[Unit], i: int) -> str:
        unit, budget = units[i], self.config.context_tokens
        if unit.modality == "table":
            return self._table(unit, self.references(units, i), budget)
        if unit.modality == "image":
            refs = take_budget(self.references(units, i), budget)
            parts = [f"Figure: {unit.caption}" if unit.caption else "Figure",
                     f"Text in figure: {' '.join(unit.text.split())}" if unit.text.strip() else "",
                     "Referenced: " + " ".join(refs) if refs else ""]
            if not unit.caption and not refs:
                ctx = take_budget(self.context(units, i), budget)
                parts.append("Context: " + " ".join(ctx) if ctx else "")
            return "\n".join(p for p in parts if p)
        return self._equation(units, i, budget)

    def _table(self, unit: Unit, refs: list[str], budget: int) -> str:
        headers, facts = table_facts(unit.table) if unit.table else ([], [])
        refs = take_budget(refs, budget)
        parts = [f"Table: {unit.caption}" if unit.caption else "Table",
                 "Columns: " + "; ".join(headers) if headers else "",
                 "\n".join(facts),
                 "Notes: " + " ".join(unit.footnotes) if unit.footnotes else "",
                 "Referenced: " + " ".join(refs) if refs else ""]
        if not unit.table and unit.text.strip():
            parts.insert(1, " ".join(unit.text.split()))
        return "\n".join(p for p in parts if p)

    def _equation(self, units: list[Unit], i: int, budget: int) -> str:
        unit = units[i]
        defs = [s for s in self.context(units, i) if _DEFINITION.search(s)]
        defs = take_budget(_dedup(defs + self.references(units, i)), budget)
        number = f" ({unit.equation_number.strip('() ')})" if unit.equation_number else ""
        parts = [f"Equation{number}: {' '.join(unit.text.split())}",
                 f"Caption: {unit.caption}" if unit.caption else "",
                 "Definitions: " + " ".join(defs) if defs else ""]
        return "\n".join(p for p in parts if p)
