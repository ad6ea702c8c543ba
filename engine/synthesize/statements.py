"""Line items of a document's financial statements, read from its table units.

A 10-K states "Total current liabilities", "Inventories" or "Net cash provided by operating
activities" as rows of its balance sheet, income statement and cash flow statement, with
one column per fiscal year. :class:`DocTables` reads every table of one document once
(cached per document) and finds a line item's value for a year, and for the year before
(for averages), with the table unit that states it and its scale, so a ratio computed from
them can cite its operands (see :mod:`.ratios`).

A row matches a line item when its label, section prefix aside ("Current assets:
Inventories" → "inventories"), matches the item's pattern in full, and a balance is not
read from a cash flow or reconciliation section (where "Inventories" is the year's change).
Among the tables that hold it for the year, the one that states the most line items wins
(a statement, over a note or the selected financial data), then the one with the most year
columns, then the first in reading order; for a total a segment table repeats per segment
(revenue, operating income, total assets), the largest amount wins: the consolidated one.
Quarterly tables are never read.
"""
from __future__ import annotations

import logging
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from functools import cached_property

from docray.engine.model import Unit
from docray.engine.retrieve.query import STOP
from docray.engine.synthesize.cells import (_YEAR_IN, _toks, column_labels, header_rows,
                                            parse_value, row_labels, table_scale)
from docray.engine.synthesize.units import SCALE_FACTOR

log = logging.getLogger(__name__)

_EQUITY = (r"total (?:[\w.&,]+ )*(?:stockholders|shareholders|shareowners)'? (?:equity|investment)"
           r"|total equity")
# line item → a pattern its normalised row label matches in full
ITEMS: dict[str, str] = {
    "revenue": r"(?:total )?(?:net )?(?:revenues?|net sales|sales)(?: net)?|total net "
               r"(?:revenues?|sales)|net revenues?|total revenues?",
    "cogs": r"(?:total )?cost of (?:goods sold|sales|revenues?|products sold)|merchandise costs",
    "gross_profit": r"gross (?:profit|margin)",
    "operating_income": r"(?:total )?operating income(?: loss)?|income loss from operations|"
                        r"income from operations|operating profit",
    "net_income": r"net (?:income|earnings)(?: loss)?(?: attributable to (?!non)[\w.&, ]+)?",
    "pretax_income": r"(?:income|earnings)(?: loss)? (?:from continuing operations )?before "
                     r"(?:provision for |the provision for )?income tax(?:es)?(?: expense)?",
    "income_tax": r"(?:provision for|benefit from|provision benefit for) income tax(?:es)?|"
                  r"income tax(?:es)?(?: expense| provision)?(?: benefit)?",
    "interest_expense": r"interest expense(?: net)?",
    "depreciation": r"depreciation(?: and|&)? amortization(?: of [\w ,]+)?|depreciation",
    "total_assets": r"total assets",
    "current_assets": r"total current assets",
    "current_liabilities": r"total current liabilities",
    "total_liabilities": r"total liabilities",
    "equity": _EQUITY,
    "inventory": r"(?:merchandise )?inventor(?:y|ies)(?: net)?",
    "receivables": r"(?:accounts )?receivables?(?: net)?(?: and other)?|accounts receivable net of [\w ,]+|"
                   r"trade (?:accounts )?receivables?(?: net)?",
    "payables": r"(?:trade )?accounts payable",
    "cash": r"cash and (?:cash )?equivalents",
    "short_term_investments": r"short[ -]term investments|marketable securities",
    "ppe": r"property(?: plant)? and equipment net",
    "operating_cash_flow": r"net cash (?:provided by|from|provided by used in|used in provided "
                           r"by) operating activities|cash provided by operations",
    "long_term_debt": r"long[ -]term debt(?: net)?(?: (?:excluding|less|net of) current "
                      r"(?:portion|maturities))?|long[ -]term debt due after one year",
    "current_debt": r"current portion of long[ -]term debt|short[ -]term (?:debt|borrowings)|"
                    r"current maturities of long[ -]term debt|notes payable",
    "rnd": r"research and development(?: expense)?|product development",
    "capex": r"(?:purchases? of|payments? for|additions? to|expenditures? for|capital "
             r"expenditures? for) property(?: plant)? and equipment(?: net)?(?: pp&e)?|capital "
             r"expenditures?(?: net)?",
    "goodwill": r"goodwill(?: net)?",
    "total_debt": r"total debt(?: and (?:capital|finance) lease obligations)?",
    "liabilities_and_equity": r"total liabilities (?:[\w']+ )*and (?:[\w']+ )*(?:equity|deficit)",
}
_COMPILED = {k: re.compile(rf"^(?:{p})$") for k, p in ITEMS.items()}
# Sections whose rows are changes or reconciliations of an item, not its balance: the cash
# flow statement's "Inventories" is the year's change in inventories.
_NOT_BALANCE = re.compile(r"cash flows?|operating activities|changes? in|adjustments|deferred "
                          r"tax|increase|decrease|reconcil", re.I)
_FLOW_ITEMS = frozenset({"depreciation", "operating_cash_flow", "capex"})
# Items a segment table repeats per segment: the consolidated row is the largest one (and a
# statement split over two table units still gives its total).
_LARGEST = frozenset("""revenue cogs gross_profit operating_income net_income pretax_income
total_assets rnd""".split())
# a column of one quarter or half ("For the Quarters Ended December 31, 2019", "Three
# Months Ended", "13 Weeks Ended"): never a fiscal year's amount ("52 Weeks Ended" is one)
_QUARTER = re.compile(r"quarter|\b(?:three|six|nine|3|6|9) months|\bq[1-4]\b|"
                      r"\b(?:1[2-7]|2[4-7]|3[89]|40|twelve|thirteen|sixteen|seventeen|"
                      r"twenty[- ]six|thirty[- ]nine)[- ]weeks", re.I)
_CONTEXT_UNITS = 6  # text units before a headerless table read for its dates
_NORM = re.compile(r"[^a-z0-9&' ]+")


def content_words(text: str) -> set[str]:
    """Words that say what a text is about: no function words, no numbers."""
    return {t for t in _toks(text) - STOP if not t.isdigit()}


def norm_label(label: str) -> str:
    """A row label as the patterns read it: its own part, lower case, footnote marks,
    punctuation and dollar signs gone.

    >>> norm_label("Current assets: Accounts receivable, net (1)")
    'accounts receivable net'
    """
    own = label.split(": ")[-1].lower().replace("’", "'")
    own = re.sub(r"\(\d\)|\(\w\)$", " ", own)
    return " ".join(_NORM.sub(" ", own).split()).replace("' ", " ").strip("' ")


@dataclass
class Item:
    """One line item's value for a year (and the year before, when the table has it)."""

    name: str
    label: str
    year: str
    value: float
    prior: float | None
    scale: str
    unit: Unit
    factor: float | None = None  # value × factor = the amount in units of currency


@dataclass
class _Row:
    label: str
    values: dict[str, float]  # year → value (the first column naming that year)
    scale: str
    years: int
    unit: Unit
    items: int = 0  # how many line items the row's table states
    factor: float | None = None  # the scale as a multiplier (None: the table states none)
    percent: bool = False  # its cells are percentages
    heads: str = ""  # the table's caption, header cells and the lines that gave its years

    @cached_property
    def label_words(self) -> set[str]:
        """The content words of the row's own label (its section aside)."""
        return content_words(self.label.rpartition(": ")[2])

    @cached_property
    def context_words(self) -> set[str]:
        """The content words of its section, its table's caption and headers."""
        return content_words(self.label.rpartition(": ")[0]) | content_words(self.heads)


def _value_columns(grid: list[list[str]], n_head: int) -> list[int]:
    """The columns (after the first) whose filled body cells are mostly amounts."""
    out = []
    for c in range(1, max((len(r) for r in grid), default=0)):
        filled = [r[c] for r in grid[n_head:] if c < len(r) and r[c]]
        if filled and sum(parse_value(t) is not None for t in filled) * 5 >= len(filled) * 3:
            out.append(c)
    return out


def _years_in(texts: list[str]) -> list[str]:
    """The years the texts name, in reading order, once each."""
    return list(dict.fromkeys(y for t in texts for y in _YEAR_IN.findall(t)))


def _rows(unit: Unit, context: list[str], inherited: tuple[list[str], str]
          ) -> tuple[list[_Row], list[str], str]:
    """(rows with a value for a year, the years of the table's value columns in order, its
    scale).

    Years come from the header rows; a table without them (a balance sheet whose dates are
    text lines above it) takes them from ``context`` (those lines: the text just before
    the table on its page) and then ``inherited`` (the previous table's years and scale,
    for a statement continued in a second table unit), when there are as many as it has
    value columns."""
    table = unit.table
    grid = table.grid()
    if len(grid) < 2:
        return [], [], ""
    n_head = header_rows(table, grid)
    cols = column_labels(grid, n_head)
    if sum(bool(_QUARTER.search(label)) for label in cols) >= 2 or \
            any(_QUARTER.search(t) for t in context):
        return [], [], ""  # quarterly data: no column is a fiscal year's
    year_of = {}
    for c, label in enumerate(cols):
        found = _YEAR_IN.findall(label)
        if len(set(found)) == 1 and not _QUARTER.search(label):
            year_of[c] = found[0]
    heads = [unit.caption or "", *(c for r in grid[:n_head] for c in r)]
    scale = table_scale(heads)
    if not year_of:
        values = _value_columns(grid, n_head if table.header_rows else 0)
        for years, their_scale in ((_years_in(context), table_scale(context)), inherited):
            if values and len(years) == len(values):
                year_of, n_head = dict(zip(values, years)), table.header_rows
                scale, heads = scale or their_scale, [*heads[:1], *context]
                break
    if not year_of:
        return [], [], ""
    out = []
    for i, label in row_labels(grid, n_head):
        values: dict[str, float] = {}
        percent = False
        for c, year in year_of.items():
            v = parse_value(grid[i][c]) if c < len(grid[i]) else None
            if v is not None and year not in values:
                values[year] = v
                percent = percent or "%" in grid[i][c]
        if values:
            out.append(_Row(label, values, scale, len(set(year_of.values())), unit,
                            percent=percent, heads=" ".join(heads)))
    return out, [year_of[c] for c in sorted(year_of)], scale


class DocTables:
    """Line items of one document's tables, read from the content store once per document."""

    def __init__(self, content, cache_docs: int = 64):
        self.content, self._cache_docs = content, cache_docs
        self._docs: OrderedDict[tuple[str, str], dict[str, list[_Row]]] = OrderedDict()
        self._all: dict[tuple[str, str], list[_Row]] = {}  # every row with a year's value
        self._lock = threading.Lock()  # warm() builds on its own thread

    def warm(self, workspace: str) -> int:
        """Read the workspace's documents' tables now, as many as the cache holds: the
        first question about a document pays it otherwise (17 ms median over the corpus,
        190 ms for a 230-page 10-K). Returns how many."""
        docs = self.content.docs_with(workspace, "table")[: self._cache_docs]
        for doc_id in docs:
            self._index(workspace, doc_id)
        log.info("statements of %d documents read", len(docs))
        return len(docs)

    def _index(self, workspace: str, doc_id: str) -> dict[str, list[_Row]]:
        with self._lock:
            return self._index_locked(workspace, doc_id)

    def _index_locked(self, workspace: str, doc_id: str) -> dict[str, list[_Row]]:
        key = (workspace, doc_id)
        if key in self._docs:
            self._docs.move_to_end(key)
            return self._docs[key]
        every: list[_Row] = []
        units = sorted((u for u in self.content.doc_units(workspace, doc_id, "table")
                        if u.table is not None), key=lambda u: (u.page, u.order))
        index: dict[str, list[_Row]] = {name: [] for name in ITEMS}
        inherited: tuple[list[str], str] = ([], "")
        pages: dict[int, list[Unit]] = {}
        for u in units:
            before = self._before(workspace, doc_id, u, pages)
            rows, years, scale = _rows(u, [] if u.table.header_rows else before, inherited)
            inherited = (years, scale) if years else inherited
            lead = before[-1] if before else ""
            for row in rows:
                row.heads = f"{row.heads} {lead}" if lead not in row.heads else row.heads
            every += rows
            for row in rows:
                label, section = norm_label(row.label), row.label.rpartition(": ")[0]
                for name, pat in _COMPILED.items():
                    if not pat.match(label) or re.search(r"deferred tax", section, re.I):
                        continue
                    if name in _FLOW_ITEMS or not _NOT_BALANCE.search(section):
                        index[name].append(row)
        # a table that states many line items is a statement: its rows win over a note's
        found = Counter(id(r.unit) for rows in index.values() for r in rows)
        for r in every:
            r.items, r.factor = found[id(r.unit)], SCALE_FACTOR.get(r.scale)
        _infer_scales(index)
        self._docs[key], self._all[key] = index, every
        while len(self._docs) > self._cache_docs:
            self._all.pop(self._docs.popitem(last=False)[0], None)
        return index

    def rows(self, workspace: str, doc_id: str) -> list[_Row]:
        """Every table row of the document with a value under a year column, in reading
        order."""
        self._index(workspace, doc_id)
        return self._all.get((workspace, doc_id), [])

    def _before(self, workspace: str, doc_id: str, table: Unit,
                pages: dict[int, list[Unit]]) -> list[str]:
        """The text lines just before a table on its page, after any table before it: the
        lead-in that says what it lists ("Net sales of products by category were as
        follows"), and its column dates and scale when the parser left them outside."""
        if table.page not in pages:
            pages[table.page] = self.content.page_units(workspace, doc_id, table.page)
        before = [u for u in pages[table.page] if u.order < table.order]
        lines = []
        for u in reversed(before[-_CONTEXT_UNITS:]):
            if u.modality == "table":
                break
            lines.insert(0, u.text)
        return lines

    def item(self, workspace: str, doc_id: str, name: str, year: str,
             label: str = "") -> Item | None:
        """``name``'s value in ``year`` (see the module's note on which table wins; rows
        whose label is ``label``, normalised, first); None when no table states it for
        that year."""
        rows = [r for r in self._index(workspace, doc_id).get(name, []) if year in r.values]
        named = [r for r in rows if label and norm_label(r.label) == label]
        rows = named or rows
        if not rows:
            return None
        if name in _LARGEST:
            best = max(rows, key=lambda r: (abs(r.values[year]) * (r.factor or 1.0),
                                            r.items, -r.unit.page))
        else:
            best = max(rows, key=lambda r: (r.items, r.years, -r.unit.page))
        prior = best.values.get(str(int(year) - 1))
        return Item(name, best.label, year, best.values[year], prior, best.scale, best.unit,
                    best.factor)

    def years(self, workspace: str, doc_id: str) -> list[str]:
        """The years the document's statements have columns for, latest first."""
        idx = self._index(workspace, doc_id)
        found = {y for name in ("total_assets", "revenue", "net_income") for r in idx[name]
                 for y in r.values}
        return sorted(found, reverse=True)


def _infer_scales(index: dict[str, list[_Row]]) -> None:
    """A table that states no scale takes the one under which its amounts equal those of
    the same line item and year in a table that does (a 10-K's balance sheet often says
    "in thousands" only in the page header): votes of 10^3k within 0.5%."""
    votes: dict[int, Counter] = {}
    for rows in index.values():
        known = [r for r in rows if r.factor is not None]
        for r in rows:
            if r.factor is not None:
                continue
            tally = votes.setdefault(id(r.unit), Counter())
            for k in known:
                for year, v in r.values.items():
                    w = k.values.get(year)
                    if not v or not w:
                        continue
                    f = w * k.factor / v
                    for cand in (1.0, 1e3, 1e6, 1e9):
                        if abs(f / cand - 1) <= 0.005:
                            tally[cand] += 1
    for rows in index.values():
        for r in rows:
            tally = votes.get(id(r.unit))
            if r.factor is None and tally:
                r.factor = tally.most_common(1)[0][0]
