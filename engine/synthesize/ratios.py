"""Financial ratios computed from a document's statements: "what is the FY2021 inventory
turnover ratio for Nike?", "operating cash flow ratio is defined as: cash from operations /
total current liabilities".

A question that names a ratio this module knows (or defines one as ``A / B`` over line
items it knows) is answered by computing it from the line items of the document's
balance sheet, income statement and cash flow statement (:mod:`.statements`) for the
fiscal year the question names (else the latest one the statements give), averaging a
balance over that year and the one before where the ratio's definition says so. The
answer shows the value, then the formula with each operand's row label, amount and year,
and cites the tables that state them. Amounts in tables of different scales are brought
to one scale first. A question for one line item of a fiscal year ("total liabilities for
Costco in FY 2021") reads it from the statement the same way.

>>> ratio_ask("What is the FY2021 inventory turnover ratio for Nike?").name
'inventory turnover'
>>> ratio_ask("What is the total of Tax Fees in 2019?") is None
True
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.asks import fmt
from docray.engine.synthesize.cells import _YEAR_IN
from docray.engine.synthesize.citations import cite_units
from docray.engine.synthesize.statements import DocTables, Item, norm_label
from docray.engine.synthesize.units import SCALE_FACTOR, in_asked_unit

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

    def _factor(self, it: Item) -> float:
        return it.factor or self.fallback or 1.0

    def _get(self, name: str) -> Item:
        it = self.tables.item(self.workspace, self.doc_id, name, self.year, self.label)
        if it is None:
            raise Missing(name)
        return it

    def end(self, name: str) -> float:
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

    # derived items
    def total_debt(self) -> float:
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
    (r"total liabilit(?:y|ies)", lambda v: v.end("total_liabilities")),
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
_A_TO_B = re.compile(rf"\b({_TERM_RE})[ -]to[ -](?:the )?({_TERM_RE})(?: ratio)?\b", re.I)
_DEFINED = re.compile(rf"defined as:?\s*(?:the )?({_TERM_RE}|cash from operations)\s*/\s*"
                      rf"(?:the )?({_TERM_RE})", re.I)


# One line item of a fiscal year's statements ("What is the year end FY2018 net PPNE for
# 3M?"): read from the statement itself, which retrieval may not have ranked in the top 5.
AMOUNTS: list[tuple[str, str, Formula]] = [
    ("total current assets", r"total current assets", lambda v: v.end("current_assets")),
    ("total current liabilities", r"total current liabilities",
     lambda v: v.end("current_liabilities")),
    ("total liabilities", r"total liabilit(?:y|ies)", lambda v: v.end("total_liabilities")),
    ("total assets", r"total assets", lambda v: v.end("total_assets")),
    ("net PP&E", r"(?:net )?(?:pp&e|ppne|ppe|property,? plant,? and equipment|property and "
                 r"equipment)(?:,? net)?", lambda v: v.end("ppe")),
    ("inventories", r"(?:merchandise )?inventor(?:y|ies)", lambda v: v.end("inventory")),
    ("accounts receivable", r"accounts receivable", lambda v: v.end("receivables")),
    ("accounts payable", r"accounts payable", lambda v: v.end("payables")),
    ("cash and cash equivalents", r"cash and (?:cash )?equivalents",
     lambda v: v.end("cash")),
    ("shareholders' equity", r"(?:total )?(?:stockholders|shareholders)'? equity",
     lambda v: v.end("equity")),
    ("cost of sales", r"cost of (?:goods sold|sales|revenues?)|\bcogs\b",
     lambda v: v.end("cogs")),
    ("gross profit", r"gross profit", lambda v: v.gross_profit()),
    ("operating income", r"operating income", lambda v: v.end("operating_income")),
    ("net income", r"net income", lambda v: v.end("net_income")),
    ("EBITDA", r"(?<!adjusted )(?<!adj\. )\bebitda\b", lambda v: v.ebitda()),
    ("revenue", r"total revenues?|net sales|\brevenues?\b", lambda v: v.end("revenue")),
]
_AMOUNT_Q = re.compile(r"\b(?:what (?:is|was|were|are)|how much (?:is|was|were|are|did))\b",
                       re.I)
_FISCAL = re.compile(r"\bfy\s?'?\d{2,4}\b|\bfiscal (?:year )?\d{4}|fiscal year end|year[- ]end"
                     r"|\bfor (?:the )?(?:full )?year\b", re.I)
_NOT_AMOUNT = re.compile(r"ratio|percent|%|margin|per share|change|grow|increase|decrease|"
                         r"average|quarter|\bq[1-4]\b|three months|segment|adjusted|non[- ]gaap|"
                         r"compare|driv|why|which", re.I)


def amount_ask(question: str) -> "RatioAsk | None":
    """One line item of one fiscal year's statements, or None."""
    q = " ".join(question.replace("’", "'").split())
    if not (_AMOUNT_Q.search(q) and _FISCAL.search(q)) or _NOT_AMOUNT.search(q) or \
            _A_TO_B.search(q):
        return None
    for name, pat, formula in AMOUNTS:
        m = re.search(pat, q, re.I)
        if m:
            return RatioAsk(name, formula, False, None, amount=True, label=norm_label(m.group(0)))
    return None


def _term(text: str) -> Formula | None:
    t = text.strip().lower()
    if t == "cash from operations":
        return lambda v: v.end("operating_cash_flow")
    return next((f for p, f in TERMS if re.fullmatch(p, t, re.I)), None)


@dataclass
class RatioAsk:
    name: str
    formula: Formula
    percent: bool  # show as a percent
    decimals: int | None  # as asked ("round to two decimal places")
    amount: bool = False  # one line item's amount, not a ratio
    label: str = ""  # the row label the question names ("cost of goods sold"), preferred


def ratio_ask(question: str) -> RatioAsk | None:
    """The ratio a question asks for, or None."""
    q = " ".join(question.replace("’", "'").split())
    asked_pct = bool(_PERCENT.search(q))
    m = _DECIMALS.search(q)
    decimals = (_WORDS.get(m.group(1).lower()) or int(m.group(1))) if m else None
    if re.search(r"\b(?:change|growth|increase|decrease|average of|consistent|improving)\b",
                 q, re.I):
        return None  # over several years: not one year's ratio
    d = _DEFINED.search(q)
    if d and _term(d.group(1)) and _term(d.group(2)):
        a, b = _term(d.group(1)), _term(d.group(2))
        return RatioAsk(f"{d.group(1)} / {d.group(2)}", lambda v: a(v) / b(v), asked_pct,
                        decimals)
    for name, pat, formula, pct in _COMPILED:
        if pat.search(q):
            return RatioAsk(name, formula, asked_pct or (pct and decimals is None), decimals)
    m = _A_TO_B.search(q)
    if m and re.search(r"\bratio\b", q, re.I):
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


@dataclass
class RatioResult:
    value: str
    answer: str
    operands: list[Item]


def compute(ask: RatioAsk, tables: DocTables, workspace: str, doc_id: str,
            question: str) -> RatioResult | None:
    """The ratio for the question's fiscal year (else the latest the statements give);
    None when an operand is missing."""
    years = _YEAR_IN.findall(question)
    candidates = [years[-1]] if years else tables.years(workspace, doc_id)[:1]
    for year in candidates:
        v = _Values(tables, workspace, doc_id, year, label=ask.label)
        try:
            result = ask.formula(v)
            known = Counter(it.factor for _, it in v.used if it.factor)
            if known and any(not it.factor for _, it in v.used):
                # an operand's table states no scale: take the others'
                v = _Values(tables, workspace, doc_id, year, known.most_common(1)[0][0],
                            ask.label)
                result = ask.formula(v)
        except (Missing, ZeroDivisionError):
            continue
        parts, seen = [], set()
        for how, it in v.used:
            key = (how, it.label, it.unit.unit_id)
            if key in seen:
                continue
            seen.add(key)
            factor = v._factor(it)
            scale = f" {_SCALE_OF[factor]}" if factor in _SCALE_OF else ""
            amount = (f"average of {fmt(it.prior)} and {fmt(it.value)}{scale}" if how == "avg"
                      else f"{fmt(it.value)}{scale}")
            label = re.sub(r"\s*\.{2,}.*$", "", it.label.split(": ")[-1])
            parts.append(f"{label} {amount}")
        if ask.amount:
            factor = v._factor(v.used[0][1])
            scale = _SCALE_OF.get(factor, "")
            value = f"{fmt(result / (factor if scale else 1.0))} {scale}".strip()
            value = in_asked_unit(value, question) or value
        else:
            value = show(result, ask)
        answer = f"{value} ({ask.name}, fiscal {year}: {'; '.join(parts)})"
        return RatioResult(value, answer, [it for _, it in v.used])
    return None


CONFIDENCE = 0.9  # every operand found as a statement row for the year


def ratio_answer(question: str, passages: list[Passage], tables: DocTables) -> Answer | None:
    """The ratio the question names, computed from the statements of the top passage's
    document and citing the tables its operands come from; None when the question names
    none or an operand is missing (the answer is then read from the passages)."""
    ask = ratio_ask(question) or amount_ask(question)
    if ask is None or not passages:
        return None
    ch = passages[0].chunk
    result = compute(ask, tables, ch.workspace, ch.doc_id, question)
    if result is None:
        return None
    evidence, cites = cite_units(passages, [it.unit for it in result.operands])
    pages = ", ".join(f"p.{evidence[i].page}" for i in cites)
    return Answer(answer=result.answer, abstained=False, evidence=evidence,
                  confidence=CONFIDENCE, citations=cites,
                  reason=f"computed from {evidence[cites[0]].doc} {pages}",
                  value=result.value, support=result.answer[len(result.value):].strip(" ()"))
