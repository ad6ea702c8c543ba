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
                     r"(amount|number|total|value|percentage|rate|ratio|sum|cost|price|size|gap|"
                     r"average|mean|share|proportion|count|level|balance|change|difference)|"
                     r"what (share|proportion|fraction|percent)|percentage|amount|in (usd|us\$|\$|dollars|millions|thousands|billions)|"
                     r"round(ed)? (your answer |it )?to|decimal|ratio|margin|score|accuracy|"
                     r"f1|precision|recall|bleu|rouge|count|number of|what (is|was) [a-z' ]{0,40}"
                     r"(revenue|income|expense|expenses|sales|cost|costs|assets|liabilities|"
                     r"cash|capex|expenditure|eps|dividend|profit|loss|debt|equity))\b", re.I)
_DATE = re.compile(r"\b(when|what (year|date|month|day|time)|which (year|date|month|day)|"
                   r"in what year|on what date|how long ago|yyyy|dates? (mentioned|written|"
                   r"shown|given|stated|printed))\b", re.I)
# "who" asks for a person when it opens the question (or follows a preposition), not in
# "the percentage of people who do not go online"
_ENTITY = re.compile(r"(^\W*(who|whom|whose)\b|\b(by|to|for|with|from|of) (who|whom)\b|"
                     r"\bwhich (company|person|author|organi[sz]ation|country|city|state|team|"
                     r"agency|firm|model|method|dataset|university)|"
                     r"what (company|organi[sz]ation|agency|firm)|name of|by whom|"
                     r"what is the name)\b", re.I)
_LIST = re.compile(r"\b(list|which .{0,30}\b(are|were)\b|what are the|enumerate)\b", re.I)
_DEFINE = re.compile(r"\b(what (is|are|does) (a |an |the )?[\w\- ]{1,40}(mean|stand for|"
                     r"refer to|defined as)|define|definition of|what is meant by)\b", re.I)
_OPS = (("percent_change", re.compile(r"\b(percentage|percent|%) (change|increase|decrease|"
                                      r"growth|decline)\b|\bgrowth rate\b|\bas a percent(age)?\b|\broi\b|"
                                      r"\breturn on (an |the )?investment\b|"
                                      r"\b(by )?what (percent(age)?|%) (did|does|has|had|was|is)\b",
                                      re.I)),
        ("ratio", re.compile(r"\bwhat multiple of\b|\bhow many times\b", re.I)),
        ("change", re.compile(r"\b(change|difference|increase|decrease|grow|growth|decline|"
                              r"fell|rose|drop)\b|\bhow much (higher|lower|more|less|greater|"
                              r"bigger|smaller)\b", re.I)),
        ("average", re.compile(r"\b(average|mean)\b", re.I)),
        ("sum", re.compile(r"\b(total|sum|combined|altogether|in all|together)\b", re.I)))
_RESPECTIVELY = re.compile(r"\b(respectively|each of|both years|for each)\b", re.I)
# A change in one year named: "the net change in staff in 2016", "growth rate in 2010"
_ONE_YEAR_CHANGE = re.compile(r"\b(change|increase|decrease|growth|decline)\b(?! from)", re.I)
# "Which year has a higher X?": the year whose column holds the larger (smaller) value
_WHICH_YEAR = (("max_year", re.compile(r"\b(which|what) (fiscal )?year\b.{0,40}\b(higher|"
                                       r"highest|larger|largest|greater|greatest|more|most)\b",
                                       re.I)),
               ("min_year", re.compile(r"\b(which|what) (fiscal )?year\b.{0,40}\b(lower|"
                                       r"lowest|smaller|smallest|less|least|fewer|fewest)\b",
                                       re.I)))
# "How much was the bonus when he joined?": an amount, the date only a clause
_AMOUNT_FIRST = re.compile(r"^\W*(how (much|many)|what (is|was|were|are) the (amount|number|"
                           r"value|total))\b", re.I)


@dataclass
class Ask:
    kind: str  # number, date, entity, list, definition or fact
    # change, percent_change, ratio, average or sum over the years named; max_year or
    # min_year: which year's value is the larger (smaller)
    op: str | None = None
    years: list[str] = field(default_factory=list)
    percent: bool = False
    each: bool = False  # one value per year named ("in 2018 and 2019 respectively")


def ask(question: str) -> Ask:
    """The kind of answer ``question`` wants; an operation only over two or more years."""
    q = question
    ys = list(dict.fromkeys(_years(q)))
    each = len(ys) >= 2 and (bool(_RESPECTIVELY.search(q)) or
                             bool(re.search(r"\b(19|20)\d\d\s+and\s+", q)))
    pick = next((name for name, pat in _WHICH_YEAR if pat.search(q)), None)
    if pick:
        return Ask("date", pick, ys, percent=bool(re.search(r"percent|%", q, re.I)))
    if _DATE.search(q) and not _AMOUNT_FIRST.search(q):
        kind = "date"
    elif _ENTITY.search(q) and not _AMOUNT_FIRST.search(q):
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
    if len(ys) == 1 and kind == "number" and _ONE_YEAR_CHANGE.search(q):
        # "the percentage increase in interest expense in 2009": over the year before
        ys = [str(int(ys[0]) - 1), ys[0]]
    if len(ys) >= 2 and kind in ("number", "fact", "list"):
        # one value per year ("... in 2018 and 2019 respectively") is no sum of them
        op = next((name for name, pat in _OPS if pat.search(q)
                   and not (name == "sum" and _RESPECTIVELY.search(q))), None)
        kind = "number" if op else kind
    each = each and op is None
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
    if op == "ratio":
        return last / first if first else None
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
