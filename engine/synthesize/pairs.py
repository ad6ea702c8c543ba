"""Operations over two named values of a table: "the total of Tax Fees and All Other Fees in
2019", "what percentage of total loans were loans backed by real estate", "the difference
between the low and high price", "operating expenses were what multiple of pre-tax
earnings".

The question names two terms; each is matched to a row label (then both values come from
one column, picked by the years and other words of the question) or to a column header
(then both come from one row, picked the same way), and the operation is applied.

>>> pair_ask("What is the total of Tax Fees and All Other Fees in 2019?")
PairAsk(op='sum', first='Tax Fees', second='All Other Fees')
>>> pair_ask("What is the change in net sales between 2018 and 2019?") is None
True
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from docray.engine.model import Cell, TableContent  # noqa: F401 - Cell: doctest
from docray.engine.retrieve.query import STOP
from docray.engine.synthesize.asks import combine, fmt
from docray.engine.synthesize.cells import (_YEAR_IN, _toks, column_labels, header_rows,
                                            parse_value, row_labels, table_scale)

_V = r"(?:is|are|was|were)"
_PARTS = r"(?:comprised of|made up of|due to|from|attributable to|related to|accounted for by)"
# (op, pattern with groups a and b): the value asked for is ``a`` op ``b``
_PATTERNS = (
    ("ratio", re.compile(r"^\W*(?:what (?:is|was|were|are) )?(?:the )?(?:[\w.&]+['’]s )?"
                         r"(?:(?i:fy) ?\d{4} )?(?P<a>[\w&\- ]+?)[ -]to[ -](?P<b>[\w&\- ]+?)"
                         r" ratio\b", re.I)),
    ("share", re.compile(rf"\bwhat (?:percentage|percent|portion|proportion|share|%|fraction) "
                         rf"of (?:the )?(?P<b>.+?) {_V} (?:{_PARTS} )?(?P<a>.+)", re.I)),
    ("share", re.compile(r"\b(?:what (?:is|was|were|are) )?(?:the )?(?P<a>.+?) as an? "
                         r"(?:percentage|percent|%|share|proportion|fraction) of (?:the )?"
                         r"(?P<b>.+)", re.I)),
    ("ratio", re.compile(rf"\b(?P<a>.+?) {_V} what multiple of (?:the )?(?P<b>.+)", re.I)),
    ("ratio", re.compile(r"\bratio of (?:the )?(?P<a>.+?) to (?:the )?(?P<b>.+)", re.I)),
    ("sum", re.compile(r"\b(?:total|sum) of (?:the )?(?P<a>.+?) and (?:the )?(?P<b>.+)", re.I)),
    ("difference", re.compile(r"\bdifference between (?:the )?(?P<a>.+?)(?: and| as compared "
                              r"(?:to|with)| compared (?:to|with)| versus| vs\.?) (?:the )?"
                              r"(?P<b>.+)", re.I)),
    ("difference", re.compile(r"\bhow (?:much|many) (?:more|higher|less|lower|greater|fewer|"
                              r"larger|smaller)\b(?: \w+)?? (?:is|are|was|were|did|does|do) "
                              r"(?:the )?(?P<a>.+?) than (?:the )?(?P<b>.+)", re.I)),
    # a yes/no comparison: "did ABIOMED outperform the Nasdaq Composite Index?"
    ("compare", re.compile(r"^\W*(?:did|does|do|is|was|were|are|has|have) (?:the )?(?P<a>.+?) "
                           r"(?:outperform(?:ed)?|beat|exceed(?:ed)?|(?:do|perform)(?:ed)? "
                           r"better than|(?:higher|greater|larger|more) than) (?:the )?"
                           r"(?P<b>.+)", re.I)),
)
# "in 2019", "for fiscal 2018", "as of December 2016", "for Adobe": not part of a term
_TRAIL = re.compile(r"\s+(?:(?:in|for|of|at|during|as of|at the end of)\s+(?:the\s+)?(?:fiscal\s+"
                    r"(?:year\s+)?|(?i:fy)\s?)?(?:19|20)\d\d\b.*|(?:for|of|at)\s+[A-Z][\w&.\-]*"
                    r"(?:\s+[A-Z][\w&.\-]*)*\s*)$|\s*[?.]\s*$")
_SIGNIFICANT = 0.5  # share of a term's words a label must hold
# "due in 2018": the part of a schedule a year's row is, not a row's name
_DUE = frozenset("due payable paid owed mature maturing matures expire expiring expires "
                 "scheduled remaining".split())
_STOP = STOP - {"total"}  # "total" says which row (and column) is meant


@dataclass
class PairAsk:
    op: str  # sum, difference, share (first as a percent of second), ratio or compare (yes/no)
    first: str
    second: str


def _clean(term: str) -> str:
    term = re.split(r"[?;]|(?<=[a-z]{2})\.\s", term)[0]
    while True:
        cut = _TRAIL.sub("", term).strip(" ,.'’")
        if cut == term:
            return re.sub(r"^(?:the|a|an)\s+", "", term, flags=re.I)
        term = cut


def pair_ask(question: str) -> PairAsk | None:
    """The operation and the two terms ``question`` asks it over, or None."""
    parts = [p for p in re.split(r"\?", question) if p.strip()]  # a preamble, instructions
    for op, pat in _PATTERNS:
        for part in parts:
            m = pat.search(part.strip())
            if not m:
                continue
            a, b = _clean(m.group("a")), _clean(m.group("b"))
            if _terms(a) and _terms(b) and _terms(a) != _terms(b):
                return PairAsk(op, a, b)
    return None


def _norm(tok: str) -> str:
    """Plural to singular, roughly ("liabilities" -> "liability", "fees" -> "fee")."""
    if len(tok) > 4 and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss"):
        return tok[:-1]
    return tok


def _terms(text: str) -> set[str]:
    return {_norm(t) for t in _toks(text) - _STOP if len(t) > 1 and not _YEAR_IN.fullmatch(t)}


def _match(term: set[str], label: str) -> float:
    """Cosine of the term's words and the label's; 0 unless the label holds at least half
    the term's words, "total" aside."""
    own = _terms(label)
    hit = len(term & own)
    if not hit or hit < _SIGNIFICANT * len(term) or not (term - {"total"}) & own:
        return 0.0
    return hit / (len(term) * len(own)) ** 0.5


def _fit(term: set[str], label: str) -> float:
    """How well a row (or column) label names the term: the match of its own part (after
    the section's "Segment: "), then of the whole label, then the share of the term's words
    it says ("Nasdaq Medical Equipment SIC Code 3840-3849" for "nasdaq medical equipment
    index" over "Nasdaq Composite Index")."""
    own = _match(term, label.split(": ", 1)[-1])
    said = len(term & _terms(label)) / len(term) if own else 0.0
    return own + 0.25 * _match(term, label) + 0.2 * said


def combine_pair(op: str, a: float, b: float) -> float | None:
    """``a`` op ``b``, through :func:`asks.combine` (whose change and ratio read the later
    of two values over the earlier: here ``b`` comes first).

    >>> combine_pair("share", 530.0, 922.0), combine_pair("ratio", 6.0, 3.0)
    (57.48373101952278, 2.0)
    """
    if op == "share":
        ratio = combine("ratio", [b, a])
        return None if ratio is None else ratio * 100
    if op == "compare":  # > 0: the first is the higher
        return a - b
    return combine({"difference": "change"}.get(op, op), [b, a])


@dataclass
class PairHit:
    value: str  # the computed value as shown
    answer: str  # with the two values it comes from
    line: str  # the two labels and the shared column (or row)
    score: float


def _pick(labels: list[tuple[int, str]], context: set[str], years: list[str],
          usable) -> int | None:
    """The index among ``labels`` that the question's other words and years fit best, of
    those ``usable`` accepts (the first such on a tie)."""
    best, best_score = None, -1.0
    for i, label in labels:
        if not usable(i):
            continue
        own = _toks(label)
        score = len(context & {_norm(t) for t in own}) + (2.0 if any(y in label for y in years)
                                                            else 0.0)
        if years and any(_YEAR_IN.search(lab) for _, lab in labels) and \
                not any(y in label for y in years):
            score -= 5.0  # a column of another year
        if score > best_score:
            best, best_score = i, score
    return best


def pair_cell(table: TableContent, p: PairAsk, question: str, years: list[str],
              caption: str = "") -> PairHit | None:
    """Both terms of ``p`` in ``table``, as two rows of one column or two columns of one
    row, and the operation over their values; None when either is missing."""
    grid = table.grid()
    if len(grid) < 2:
        return None
    n_head = header_rows(table, grid)
    cols = list(enumerate(column_labels(grid, n_head)))
    rows = row_labels(grid, n_head)
    ta, tb = _terms(p.first), _terms(p.second)
    dated = bool(years) and any(_YEAR_IN.search(lab) for _, lab in cols)

    def best(labels, term, need_year=False):
        scored = [(_fit(term, lab), i, lab)
                  for i, lab in labels if not need_year or any(y in lab for y in years)]
        return max(scored, default=(0.0, -1, ""))

    def value(r, c):
        row = grid[r]
        return parse_value(row[c]) if c < len(row) else None

    ra, rb = best(rows, ta), best(rows, tb)
    if ra[0] and rb[0] and ra[1] != rb[1]:
        # the question's words the two rows do not say pick the column ("total", a year)
        context = _terms(question) - _terms(ra[2]) - _terms(rb[2])
        both = [c for c, _ in cols[1:] if value(ra[1], c) is not None
                and value(rb[1], c) is not None]
        # a comparison over no year is made at the end of the period the table covers
        c = both[-1] if p.op == "compare" and not years and both else \
            _pick(cols[1:], context, years, lambda c: c in both)
        if c is None:
            return None
        (sa, ia, la), (sb, ib, lb) = ra, rb
        va, vb, where = value(ia, c), value(ib, c), cols[c][1]
    else:
        ca, cb = best(cols[1:], ta, dated), best(cols[1:], tb, dated)
        if not (ca[0] and cb[0]) or ca[1] == cb[1]:
            return None
        context = _terms(question) - _terms(ca[2]) - _terms(cb[2])
        r = _pick(rows, context, [], lambda r: value(r, ca[1]) is not None
                  and value(r, cb[1]) is not None)
        if r is None:
            return None
        (sa, ia, la), (sb, ib, lb) = ca, cb
        va, vb, where = value(r, ia), value(r, ib), dict(rows)[r]
    # a year asked for that neither the table's headers nor the row says: a weaker match
    undated = 0.7 if years and not any(y in f"{la} {lb} {where}" for y in years) else 1.0
    result = combine_pair(p.op, va, vb)
    if result is None:
        return None
    scale = table_scale([caption] + [c for row in grid[:n_head] for c in row])
    unit = "%" if p.op == "share" else (f" {scale}" if scale and p.op in ("sum", "difference")
                                        else "")
    line = f"{la}: {fmt(va)}; {lb}: {fmt(vb)}" + (f" ({where})" if where else "")
    score = min(1.0, (sa * sb) ** 0.5) * undated
    if p.op == "compare":
        shown = "Yes" if result > 0 else "No"
        return PairHit(shown, f"{shown} ({line})", line, score)
    shown = f"{fmt(result)}{unit}"
    return PairHit(shown, f"{shown} ({p.op} of {line})", line, score)



def schedule_share(table: TableContent, p: PairAsk, years: list[str], context: str
                   ) -> PairHit | None:
    """"What percentage of future minimum rental payments are due in 2018?": a maturity
    schedule's rows are years ("2017" ... "2022 - thereafter", "Total"), so the share is
    the year's row over the Total row. ``context`` (the passage's text, the caption) must
    name half the words of the whole ("future minimum rental payments").

    >>> t = TableContent(rows=[[Cell(text=c) for c in r] for r in (
    ...     ["$ in millions", "2016"], ["2017", "290"], ["2018", "282"], ["Total", "1,941"])])
    >>> ask = pair_ask("What percentage of future minimum rental payments are due in 2017?")
    >>> schedule_share(t, ask, ["2017"], "future minimum rental payments").answer
    '14.94% (share of 2017: 290; Total: 1,941)'
    """
    if p.op != "share" or len(years) != 1 or _terms(p.first) - _DUE:
        return None
    whole = _terms(p.second)
    if not whole or len(whole & _terms(context)) < _SIGNIFICANT * len(whole):
        return None
    grid = table.grid()
    first = {i: (row[0].strip() if row else "") for i, row in enumerate(grid)}
    year = next((i for i, lab in first.items() if re.fullmatch(years[0], lab)), None)
    total = next((i for i, lab in first.items() if re.match(r"total\b", lab, re.I)), None)
    if year is None or total is None or total < year:
        return None
    for c in range(1, min(len(grid[year]), len(grid[total]))):
        va, vb = parse_value(grid[year][c]), parse_value(grid[total][c])
        if va is not None and vb:
            shown = f"{fmt(va / vb * 100)}%"
            line = f"{years[0]}: {fmt(va)}; Total: {fmt(vb)}"
            return PairHit(shown, f"{shown} (share of {line})", line, 0.9)
    return None
