"""Financial ratios computed from a document's statements: "what is the FY2021 inventory
turnover ratio for Nike?", "operating cash flow ratio is defined as: cash from operations /
total current liabilities".

A question that names a ratio this module knows (or defines one as ``A / B`` over line
items it knows) is answered by computing it from the line items of the document's
balance sheet, income statement and cash flow statement (:mod:`.statements`) for the
fiscal year the question names (else the latest one the statements give), or averaged
over the span of fiscal years it names ("the FY2017 - FY2019 3 year average of capex as a
% of revenue"), averaging a balance over a year and the one before where the ratio's
definition says so ("interest expense to average long-term debt"). :mod:`.fromstatements`
computes it and shapes the answer.

>>> ratio_ask("What is the FY2021 inventory turnover ratio for Nike?").name
'inventory turnover'
>>> ratio_ask("What is the total of Tax Fees in 2019?") is None
True
>>> a = ratio_ask("What is the FY2017 - FY2019 3 year average of capex as a % of revenue?")
>>> a.name, a.years, a.percent
('capex as a % of revenue', ['2017', '2018', '2019'], True)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from docray.engine.synthesize.statements import DocTables, Item
from docray.engine.synthesize.units import SCALE_FACTOR

_DECIMALS = re.compile(r"\b(?:round\w*|to)\b[^.?]*?\b(one|two|three|four|\d)\s+decimal", re.I)
_PERCENT = re.compile(r"\bpercent(?:age)?s?\b|%", re.I)
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}
_SCALE_OF = {f: name for name, f in SCALE_FACTOR.items()}  # 1e6 → "million"


class Missing(LookupError):
    """A line item the ratio needs is not in the document's statements for that year."""


@dataclass
class _Values:
    """Line items for one document and year; records each operand it hands out."""

    tables: DocTables
    workspace: str
    doc_id: str
    year: str
    fallback: float | None = None  # the scale of an operand whose table states none
    label: str = ""  # a row label to prefer (the question's own words)
    used: list[tuple[str, Item]] = field(default_factory=list)
    averaging: bool = False  # end() reads the average balance ("average long-term debt")

    def _factor(self, it: Item) -> float:
        return it.factor or self.fallback or 1.0

    def _get(self, name: str) -> Item:
        it = self.tables.item(self.workspace, self.doc_id, name, self.year, self.label)
        if it is None:
            raise Missing(name)
        return it

    def end(self, name: str) -> float:
        if self.averaging:
            return self.avg(name)
        it = self._get(name)
        self.used.append(("end", it))
        return it.value * self._factor(it)

    def avg(self, name: str) -> float:
        it = self._get(name)
        if it.prior is None:
            raise Missing(f"{name} for {int(self.year) - 1}")
        self.used.append(("avg", it))
        return (it.value + it.prior) / 2 * self._factor(it)

    def opt(self, name: str) -> float:
        """An item that may be absent (no current debt): 0 then."""
        try:
            return self.end(name)
        except Missing:
            return 0.0

    def averaged(self, formula: "Formula") -> float:
        """``formula`` over average balances (this year's and last year's)."""
        self.averaging = True
        try:
            return formula(self)
        finally:
            self.averaging = False

    # derived items
    def total_liabilities(self) -> float:
        """Stated, else total liabilities and equity less equity (Amazon states no total)."""
        try:
            return self.end("total_liabilities")
        except Missing:
            return self.end("liabilities_and_equity") - self.end("equity")

    def total_debt(self) -> float:
        """Stated ("Total debt and capital lease obligations"), else long-term debt plus
        its current portion."""
        try:
            return self.end("total_debt")
        except Missing:
            return self.end("long_term_debt") + self.opt("current_debt")

    def ebitda(self) -> float:
        return self.end("operating_income") + self.end("depreciation")

    def working_capital(self) -> float:
        return self.end("current_assets") - self.end("current_liabilities")

    def gross_profit(self) -> float:
        try:
            return self.end("gross_profit")
        except Missing:
            return self.end("revenue") - self.end("cogs")


Formula = Callable[[_Values], float]
# (name, question pattern, formula, a rate shown as a percent unless asked otherwise)
RATIOS: list[tuple[str, str, Formula, bool]] = [
    ("cash conversion cycle", r"cash conversion cycle",
     lambda v: 365 * (v.avg("inventory") / v.end("cogs") + v.avg("receivables") / v.end("revenue")
                      - v.avg("payables") / v.end("cogs")), False),
    ("days payable outstanding", r"days payables? outstanding|\bdpo\b",
     lambda v: 365 * v.avg("payables") / v.end("cogs"), False),
    ("days sales outstanding", r"days sales outstanding|\bdso\b",
     lambda v: 365 * v.avg("receivables") / v.end("revenue"), False),
    ("days inventory outstanding", r"days (?:of )?inventory(?: outstanding)?|\bdio\b",
     lambda v: 365 * v.avg("inventory") / v.end("cogs"), False),
    ("inventory turnover", r"inventory turnover",
     lambda v: v.end("cogs") / v.avg("inventory"), False),
    ("receivables turnover", r"(?:receivables?|receive) turnover",
     lambda v: v.end("revenue") / v.avg("receivables"), False),
    ("payables turnover", r"payables? turnover",
     lambda v: v.end("cogs") / v.avg("payables"), False),
    ("fixed asset turnover", r"fixed assets? turnover",
     lambda v: v.end("revenue") / v.avg("ppe"), False),
    ("asset turnover", r"\basset turnover",
     lambda v: v.end("revenue") / v.avg("total_assets"), False),
    ("operating cash flow ratio", r"operating cash flow ratio",
     lambda v: v.end("operating_cash_flow") / v.end("current_liabilities"), False),
    ("quick ratio", r"quick ratio|acid[- ]test",
     lambda v: (v.end("cash") + v.opt("short_term_investments") + v.end("receivables"))
     / v.end("current_liabilities"), False),
    ("cash ratio", r"cash[ _]ratio",
     lambda v: v.end("cash") / v.end("current_liabilities"), False),
    ("current ratio", r"current ratio",
     lambda v: v.end("current_assets") / v.end("current_liabilities"), False),
    ("interest coverage ratio", r"interest coverage",
     lambda v: v.end("operating_income") / abs(v.end("interest_expense")), False),
    ("return on average equity", r"return on average (?:\w+ )?equity",
     lambda v: v.end("net_income") / v.avg("equity"), False),
    ("return on equity", r"return on (?:\w+ )?equity|\broe\b",
     lambda v: v.end("net_income") / v.end("equity"), False),
    ("return on assets", r"return on (?:total )?assets?|\broa\b",
     lambda v: v.end("net_income") / v.end("total_assets"), False),
    ("return on capital employed", r"return on capital employed|\broce\b",
     lambda v: v.end("operating_income") / (v.end("total_assets")
                                            - v.end("current_liabilities")), False),
    ("effective tax rate", r"effective (?:income )?tax (?:rate|ratio)",
     lambda v: abs(v.end("income_tax")) / v.end("pretax_income"), True),  # "(769)": expense
    ("EBITDA margin", r"ebitda (?:%\s*)?margin",
     lambda v: v.ebitda() / v.end("revenue"), True),
    ("gross margin", r"gross (?:profit )?margin(?! profile)",
     lambda v: v.gross_profit() / v.end("revenue"), True),
    ("operating margin before depreciation", r"operating (?:profit )?margin before depreciation",
     lambda v: v.ebitda() / v.end("revenue"), True),
    ("operating margin", r"operating (?:profit )?margin(?! before)",
     lambda v: v.end("operating_income") / v.end("revenue"), True),
    ("net profit margin", r"net (?:profit )?margin",
     lambda v: v.end("net_income") / v.end("revenue"), True),
    ("debt to EBITDA", r"debt[- ]to[- ]ebitda",
     lambda v: v.total_debt() / v.ebitda(), False),
    ("capitalization ratio", r"capitali[sz]ation ratio",
     lambda v: v.total_debt() / (v.total_debt() + v.end("equity")), False),
    ("cash flow to total debt", r"cash flow to (?:total )?debt",
     lambda v: v.end("operating_cash_flow") / v.total_debt(), False),
]
_COMPILED = [(n, re.compile(p, re.I), f, pct) for n, p, f, pct in RATIOS]

# "A to B ratio" over these terms (checked in order: the longest first)
TERMS: list[tuple[str, Formula]] = [
    (r"working capital", lambda v: v.working_capital()),
    (r"(?:total )?(?:stockholders?|shareholders?)['’]? equity|equity", lambda v: v.end("equity")),
    (r"total liabilit(?:y|ies)", lambda v: v.total_liabilities()),
    (r"operating cash flows?|cash flows? from operations|cash from operations",
     lambda v: v.end("operating_cash_flow")),
    (r"interest expenses?", lambda v: abs(v.end("interest_expense"))),
    (r"capex|capital expenditures?", lambda v: abs(v.end("capex"))),
    (r"long[- ]term debt", lambda v: v.end("long_term_debt")),
    (r"(?:total )?debt", lambda v: v.total_debt()),
    (r"gross profit", lambda v: v.gross_profit()),
    (r"r&d|research and development", lambda v: v.end("rnd")),
    (r"cash(?: balance| and cash equivalents)?", lambda v: v.end("cash")),
    (r"net income", lambda v: v.end("net_income")),
    (r"ebitda", lambda v: v.ebitda()),
    (r"(?:net )?(?:sales|revenues?)", lambda v: v.end("revenue")),
    (r"(?:total )?assets?", lambda v: v.end("total_assets")),
    (r"current assets", lambda v: v.end("current_assets")),
    (r"current liabilities", lambda v: v.end("current_liabilities")),
    (r"inventor(?:y|ies)", lambda v: v.end("inventory")),
]
_TERM_RE = "|".join(f"(?:{p})" for p, _ in TERMS)
_TERM_AVG = rf"(?:average )?(?:{_TERM_RE})"  # "average long-term debt": the year's average
_A_TO_B = re.compile(rf"\b({_TERM_AVG})[ -]to[ -](?:the )?({_TERM_AVG})(?: ratio)?\b", re.I)
_AS_SHARE = re.compile(rf"\b({_TERM_AVG}) as an? (?:%|percent(?:age)?|share|proportion) of "
                       rf"(?:the )?(?:total )?({_TERM_AVG})\b", re.I)
_DEFINED = re.compile(rf"defined as:?\s*(?:the )?({_TERM_AVG})\s*/\s*(?:the )?({_TERM_AVG})",
                      re.I)
# "What is total debt to total assets for Costco?": a ratio named without the word
_LEAD = re.compile(r"^\W*what (?:is|was|were) (?:the )?(?:[\w.&]+'s )?(?:fy\s?\d{2,4} )?", re.I)
# "the FY2017 - FY2019 3 year average of ...": the ratio of each year, averaged
_SPAN = re.compile(r"\b(?:fy\s?)?((?:19|20)\d\d)\s*(?:-|–|to|through)\s*(?:fy\s?)?"
                   r"((?:19|20)\d\d)\b", re.I)
_AVERAGE_OF = re.compile(r"\b(?:\w+[- ]year )?average (?:of )?", re.I)


def _term(text: str) -> Formula | None:
    t = text.strip().lower()
    if t.startswith("average "):
        inner = _term(t[len("average "):])
        return None if inner is None else (lambda v: v.averaged(inner))
    return next((f for p, f in TERMS if re.fullmatch(p, t, re.I)), None)


@dataclass
class RatioAsk:
    name: str
    formula: Formula
    percent: bool  # show as a percent
    decimals: int | None  # as asked ("round to two decimal places")
    amount: bool = False  # one line item's amount, not a ratio
    label: str = ""  # the row label the question names ("cost of goods sold"), preferred
    years: list[str] = field(default_factory=list)  # averaged over these fiscal years
    change: str | None = None  # "percent" or "absolute": the last year's over the first's


def asked_decimals(question: str) -> int | None:
    """The decimal places the question asks for ("round your answer to three decimal")."""
    m = _DECIMALS.search(question)
    return (_WORDS.get(m.group(1).lower()) or int(m.group(1))) if m else None


def ratio_ask(question: str) -> RatioAsk | None:
    """The ratio a question asks for (of one fiscal year, or averaged over a span of them),
    or None."""
    q = " ".join(question.replace("’", "'").split())
    asked_pct, decimals = bool(_PERCENT.search(q)), asked_decimals(q)
    span = _SPAN.search(q)
    years: list[str] = []
    if span and _AVERAGE_OF.search(q):
        first, last = sorted((int(span.group(1)), int(span.group(2))))
        years = [str(y) for y in range(first, last + 1)]
        q = _AVERAGE_OF.sub("", q)
    if len(years) > 6 or re.search(r"\b(?:change|growth|increase|decrease|average of|"
                                   r"consistent|improving)\b", q, re.I):
        return None  # over several years: not one year's ratio
    found = _named(q, asked_pct, decimals)
    if found is not None:
        found.years = years
    return found


def _named(q: str, asked_pct: bool, decimals: int | None) -> RatioAsk | None:
    d = _DEFINED.search(q)
    if d and _term(d.group(1)) and _term(d.group(2)):
        a, b = _term(d.group(1)), _term(d.group(2))
        return RatioAsk(f"{d.group(1)} / {d.group(2)}", lambda v: a(v) / b(v), asked_pct,
                        decimals)
    for name, pat, formula, pct in _COMPILED:
        if pat.search(q):
            return RatioAsk(name, formula, asked_pct or (pct and decimals is None), decimals)
    share = _AS_SHARE.search(q)
    if share and _term(share.group(1)) and _term(share.group(2)):
        a, b = _term(share.group(1)), _term(share.group(2))
        return RatioAsk(f"{share.group(1)} as a % of {share.group(2)}", lambda v: a(v) / b(v),
                        decimals is None or asked_pct, decimals)
    m = _A_TO_B.search(q)
    lead = _LEAD.match(q)
    if m and (re.search(r"\bratio\b", q, re.I) or decimals is not None or
              (lead and lead.end() == m.start())):
        a, b = _term(m.group(1)), _term(m.group(2))
        if a and b:
            return RatioAsk(f"{m.group(1)} to {m.group(2)} ratio", lambda v: a(v) / b(v),
                            asked_pct, decimals)
    return None


def show(value: float, ask: RatioAsk) -> str:
    """The value as the question asks for it.

    >>> show(0.0542, RatioAsk("m", None, True, 1)), show(3.4567, RatioAsk("t", None, False, 2))
    ('5.4%', '3.46')
    >>> show(0.02309, RatioAsk("roa", None, False, None))
    '0.023'
    """
    if ask.percent:
        return f"{value * 100:.{ask.decimals if ask.decimals is not None else 1}f}%"
    if ask.decimals is not None:
        return f"{value:.{ask.decimals}f}"
    return f"{value:.3f}" if abs(value) < 1 else f"{value:.2f}"


