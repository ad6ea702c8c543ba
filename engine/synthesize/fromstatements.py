"""Answers computed from a document's statements: a named ratio (:mod:`.ratios`), one line
item of a fiscal year or its change between two (:mod:`.lineitems`), each for the fiscal
year the question names (else the latest the statements give) or averaged over the span of
years it names.

The answer shows the value, then each operand's row label, amount and year, and cites the
tables that state them. Amounts in tables of different scales are brought to one scale
first; an operand whose table states no scale takes the scale of the others.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.asks import fmt
from docray.engine.synthesize.cells import _YEAR_IN
from docray.engine.synthesize.citations import cite_units
from docray.engine.synthesize.lineitems import amount_ask, change_ask
from docray.engine.synthesize.ratios import (Missing, RatioAsk, _SCALE_OF, _Values, ratio_ask,
                                             show)
from docray.engine.synthesize.statements import DocTables, Item
from docray.engine.synthesize.units import in_asked_unit

CONFIDENCE = 0.9  # every operand found as a statement row for the year


@dataclass
class RatioResult:
    value: str
    answer: str
    operands: list[Item]


def _evaluate(ask: RatioAsk, tables: DocTables, workspace: str, doc_id: str,
              year: str) -> tuple[float, _Values] | None:
    """The formula for one fiscal year, and the values that recorded its operands."""
    v = _Values(tables, workspace, doc_id, year, label=ask.label)
    try:
        result = ask.formula(v)
        known = Counter(it.factor for _, it in v.used if it.factor)
        if known and any(not it.factor for _, it in v.used):
            # an operand's table states no scale: take the others'
            v = _Values(tables, workspace, doc_id, year, known.most_common(1)[0][0], ask.label)
            result = ask.formula(v)
    except (Missing, ZeroDivisionError):
        return None
    return result, v


def _operands(v: _Values) -> str:
    """Each operand's row label and amount: "Net revenues 6,489 million"."""
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
    return "; ".join(parts)


def _amount(result: float, v: _Values, question: str) -> str:
    """An amount in the scale of its table ("8,738 million"), restated as asked."""
    factor = v._factor(v.used[0][1])
    scale = _SCALE_OF.get(factor, "")
    value = f"{fmt(result / (factor if scale else 1.0))} {scale}".strip()
    return in_asked_unit(value, question) or value


def _over_years(ask: RatioAsk, tables: DocTables, workspace: str, doc_id: str,
                question: str) -> RatioResult | None:
    """A ratio averaged over ``ask.years``, or a line item's change between its two."""
    got = [_evaluate(ask, tables, workspace, doc_id, y) for y in ask.years]
    if any(g is None for g in got):
        return None
    values = [r for r, _ in got]
    used = [it for _, v in got for _, it in v.used]
    detail = "; ".join(f"{y}: {_operands(v)}" for y, (_, v) in zip(ask.years, got))
    first, last = ask.years[0], ask.years[-1]
    if ask.change == "percent":
        if not values[0]:
            return None
        rate = (values[-1] - values[0]) / abs(values[0])
        value = f"{rate * 100:.{ask.decimals if ask.decimals is not None else 1}f}%"
        what = f"change in {ask.name}, fiscal {first} to {last}"
    elif ask.change == "absolute":
        value = _amount(values[-1] - values[0], got[-1][1], question)
        what = f"change in {ask.name}, fiscal {first} to {last}"
    else:
        value = show(sum(values) / len(values), ask)
        each = ", ".join(f"{y} {show(r, ask)}" for y, r in zip(ask.years, values))
        what = f"{len(values)}-year average of {ask.name}, fiscal {first}-{last}: {each}"
    return RatioResult(value, f"{value} ({what}; {detail})", used)


def compute(ask: RatioAsk, tables: DocTables, workspace: str, doc_id: str,
            question: str) -> RatioResult | None:
    """The ratio for the question's fiscal year (else the latest the statements give), or
    over the years it names; None when an operand is missing."""
    if ask.years:
        return _over_years(ask, tables, workspace, doc_id, question)
    years = _YEAR_IN.findall(question)
    year = years[-1] if years else next(iter(tables.years(workspace, doc_id)), None)
    got = _evaluate(ask, tables, workspace, doc_id, year) if year else None
    if got is None:
        return None
    result, v = got
    value = _amount(result, v, question) if ask.amount else show(result, ask)
    # a fraction is also read as a percent: "0.050 (5.03%; R&D to asset ratio, ...)"
    pct = f"{result * 100:.2f}%; " if not (ask.amount or ask.percent) and abs(result) < 1 \
        else ""
    answer = f"{value} ({pct}{ask.name}, fiscal {year}: {_operands(v)})"
    return RatioResult(value, answer, [it for _, it in v.used])


def statement_answer(question: str, passages: list[Passage], tables: DocTables
                     ) -> Answer | None:
    """The ratio, line item or change the question names, computed from the statements of
    the top passage's document and citing the tables its operands come from; None when the
    question names none or an operand is missing (the answer is then read from the
    passages)."""
    ask = ratio_ask(question) or change_ask(question) or amount_ask(question)
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
