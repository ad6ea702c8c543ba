"""What a question asks for: the kind of value (number, date, name, ...) and, over a
table row, the operation on its values (change, average, total, percentage change).

>>> a = ask("What is the change in the net sales for cheese between 2018 and 2019?")
>>> a.kind, a.op, a.years
('number', 'change', ['2018', '2019'])
>>> ask("Who is the Chief Justice?").kind, ask("When was the plan adopted?").kind
('entity', 'date')
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from docray.engine.retrieve.query import years as _years

_NUMBER = re.compile(r"\b(how (much|many|big|large|long|far|old)|what (is|was|were|are) the "
                     r"(amount|number|total|value|percentage|rate|ratio|sum|cost|price|size|"
                     r"average|mean|share|proportion|count|level|balance|change|difference)|"
                     r"what (share|proportion|fraction|percent)|percentage|amount|in (usd|us\$|\$|dollars|millions|thousands|billions)|"
                     r"round(ed)? (your answer |it )?to|decimal|ratio|margin|score|accuracy|"
                     r"f1|precision|recall|bleu|rouge|count|number of|what (is|was) [a-z' ]{0,40}"
                     r"(revenue|income|expense|expenses|sales|cost|costs|assets|liabilities|"
                     r"cash|capex|expenditure|eps|dividend|profit|loss|debt|equity))\b", re.I)
_DATE = re.compile(r"\b(when|what (year|date|month|day|time)|which (year|date|month|day)|"
                   r"in what year|on what date|how long ago)\b", re.I)
_ENTITY = re.compile(r"\b(who|whom|whose|which (company|person|author|organi[sz]ation|"
                     r"country|city|state|team|agency|firm|model|method|dataset|university)|"
                     r"what (company|organi[sz]ation|agency|firm)|name of|by whom|"
                     r"what is the name)\b", re.I)
_LIST = re.compile(r"\b(list|which .{0,30}\b(are|were)\b|what are the|enumerate)\b", re.I)
_DEFINE = re.compile(r"\b(what (is|are|does) (a |an |the )?[\w\- ]{1,40}(mean|stand for|"
                     r"refer to|defined as)|define|definition of|what is meant by)\b", re.I)
_OPS = (("percent_change", re.compile(r"\b(percentage|percent|%) (change|increase|decrease|"
                                      r"growth|decline)\b|\bgrowth rate\b", re.I)),
        ("change", re.compile(r"\b(change|difference|increase|decrease|grow|growth|decline|"
                              r"fell|rose|drop)\b", re.I)),
        ("average", re.compile(r"\b(average|mean)\b", re.I)),
        ("sum", re.compile(r"\b(total|sum|combined|altogether|in all|together)\b.{0,80}"
                           r"\b(and|both)\b|\baltogether\b|\bcombined\b", re.I)))
_RESPECTIVELY = re.compile(r"\b(respectively|each of|both years|for each)\b", re.I)


@dataclass
class Ask:
    kind: str  # number, date, entity, list, definition or fact
    op: str | None = None  # change, percent_change, average or sum over the years named
    years: list[str] = field(default_factory=list)
    percent: bool = False
    each: bool = False  # one value per year named ("in 2018 and 2019 respectively")


def ask(question: str) -> Ask:
    """The kind of answer ``question`` wants; an operation only over two or more years."""
    q = question
    ys = list(dict.fromkeys(_years(q)))
    if _DATE.search(q):
        kind = "date"
    elif _ENTITY.search(q):
        kind = "entity"
    elif _NUMBER.search(q):
        kind = "number"
    elif _DEFINE.search(q):
        kind = "definition"
    elif _LIST.search(q):
        kind = "list"
    else:
        kind = "fact"
    op = None
    if len(ys) >= 2 and kind in ("number", "fact", "list"):
        op = next((name for name, pat in _OPS if pat.search(q)), None)
        kind = "number" if op else kind
    each = len(ys) >= 2 and op is None and (bool(_RESPECTIVELY.search(q)) or
                                            bool(re.search(r"\b(19|20)\d\d\s+and\s+", q)))
    return Ask(kind, op, ys, percent=bool(re.search(r"percent|%|\brate\b", q, re.I)),
               each=each)


def combine(op: str, values: list[float]) -> float | None:
    """``op`` over the values of the years named, in the question's order (a change is
    the later year less the earlier: years are compared as numbers).

    >>> combine("change", [100.0, 80.0]), combine("average", [1.0, 2.0])
    (-20.0, 1.5)
    >>> round(combine("percent_change", [80.0, 100.0]), 2)
    25.0
    """
    if len(values) < 2:
        return None
    if op == "sum":
        return sum(values)
    if op == "average":
        return sum(values) / len(values)
    first, last = values[0], values[-1]
    if op == "change":
        return last - first
    if op == "percent_change":
        return (last - first) / abs(first) * 100 if first else None
    return None


def ordered(pairs: list[tuple[str, float]]) -> list[float]:
    """Values by year, earliest first."""
    return [v for _, v in sorted(pairs, key=lambda p: p[0])]


def fmt(value: float) -> str:
    """A computed value as a reader writes it.

    >>> fmt(-27.0), fmt(1234567.0), fmt(0.48812), fmt(98506.5)
    ('-27', '1,234,567', '0.49', '98,506.5')
    """
    if abs(value - round(value)) < 1e-9:
        return f"{round(value):,}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:,.2f}"
