"""Value spans in a sentence: the amount, date or name that answers, not the whole line.

Not an answer: numbers the question itself gives (its years, "page 10", "3M"), days of a
month ("December 31"), the numbers of labels and references ("Figure 4", "Table 7",
"pages 399–412"), a list's "1)", and, for an amount, bare years. When nothing fits, the
caller keeps the sentence.
"""
from __future__ import annotations

import re
from datetime import datetime

from docray.engine.retrieve.query import QueryPlan, analyze, years
from docray.engine.synthesize.asks import Ask, ask, combine, fmt, ordered
from docray.engine.synthesize.cells import parse_value

_NUMBER = re.compile(r"(?<![A-Za-z0-9.,”\"’])\(?[$€£]?\s?\d(?:[\d,]*\d)?(?:\.\d+)?"
                     r"(?:\s?(?:%|percent\b|million\b|billion\b|thousand\b|bn\b|m\b))?\)?", re.I)
_MONTH = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*$", re.I)
# "Figure 4", "Fig. 4(b)", "Table 7", "Section 3.1", "pages 399–412": a label, not an amount
_LABELLED = re.compile(r"\b(?:fig(?:ure)?s?\.?|tables?|sections?|§|pages?|pp?\.|chapters?|"
                       r"eqs?\.|equations?|appendix|footnotes?)\s*\(?(?:\d+\s*(?:[–-]|,|and)\s*)*$",
                       re.I)
_STEP = re.compile(r"\s*\d{1,2}(?=\s+[A-Z][a-z])")  # a numbered step: "1 At a position ..."
_MONTHS = (r"(?:January|February|March|April|May|June|July|August|September|October|"
           r"November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?")
_DATE = re.compile(rf"\b{_MONTHS}\s+\d{{1,2}},?\s+(?:19|20)\d\d\b|\b\d{{1,2}}\s+{_MONTHS}\s+"
                   rf"(?:19|20)\d\d\b|\b{_MONTHS}\s+(?:19|20)\d\d\b|\b\d{{1,2}}/\d{{1,2}}/"
                   rf"(?:19|20)?\d\d\b|\b(?:19|20)\d\d\b")
_NAME = re.compile(r"\b(?:[A-Z][a-zA-Z&'’.\-]+|of|the|and|de|van|von)"
                   r"(?:\s+(?:[A-Z][a-zA-Z&'’.\-]+|of|the|and|de|van|von|&))*")
_TITLE = (r"(?:Justice|Judge|Dr|Mr|Ms|Mrs|Prof|Professor|President|CEO|Chairman|Director|"
          r"Secretary|Senator|Governor|Commissioner)\.?")
_AGENT = re.compile(rf"\b(?:by|{_TITLE}|named|called)\s+$")
_TITLED = re.compile(rf"^{_TITLE}\s+")
# A month or a weekday is capitalised, but names a date, not who or what
_CALENDAR = frozenset("""january february march april may june july august september october
november december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday
thursday friday saturday sunday""".split())


def _digits(text: str) -> str:
    return re.sub(r"[^\d.]", "", text).strip(".")


def _respective(sentence: str, nums: list, asked_years: list[str]):
    """In "$714.3 million, $533.1 million and $409.0 million in 2015, 2014 and 2013,
    respectively", the amount in the place of the one year the question names (or None)."""
    if "respectively" not in sentence.lower():
        return None
    listed = years(sentence)
    asked = [y for y in asked_years if y in listed]
    if len(listed) < 2 or len(asked) != 1 or len(nums) != len(listed):
        return None
    return nums[listed.index(asked[0])]


def _anchors(sentence: str, kw: set[str]) -> list[int]:
    words = [(m.start(), m.group(0).lower()) for m in re.finditer(r"[a-z0-9&]+", sentence, re.I)]
    return [pos for pos, w in words if w in kw] or [0]


_STATES = re.compile(r"\s+(?:was|were|is|are|totall?ed|amounted to|reached|stood at|of|"
                     r"increased to|decreased to|grew to|fell to|rose to)\s+(?:approximately\s+|"
                     r"about\s+|nearly\s+|roughly\s+|an? \w+ of\s+)?$", re.I)


def stated(sentence: str, kw: set[str], nums: list) -> "re.Match | None":
    """The number a question's term is said to be ("Net sales were $93,662 ...": the
    amount right after a keyword and "was", "were", "totaled", ...), or None.

    >>> m = stated("Net sales were $93,662 for 2019, a decrease of $9,688.", {"net", "sales"},
    ...            list(_NUMBER.finditer("Net sales were $93,662 for 2019, a decrease of $9,688.")))
    >>> m.group(0)
    '$93,662'
    """
    for m in nums:
        before = sentence[:m.start()]
        verb = _STATES.search(before)
        if not verb:
            continue
        words = re.findall(r"[a-z0-9&]+", before[:verb.start()].lower())[-3:]
        if words and words[-1] in kw:
            return m
    return None


def states_value(sentence: str, kw: set[str]) -> bool:
    """Whether ``sentence`` says one of the question's terms is an amount ("Net sales
    were $93,662")."""
    return stated(sentence, kw, list(_NUMBER.finditer(sentence))) is not None


def number_near(sentence: str, kw: set[str], plan: QueryPlan, percent: bool = False
                ) -> str | None:
    """The amount in ``sentence`` nearest the question's keywords (a percent first when
    the question asks for one), or None.

    >>> number_near("As of December 31, 2019, brand names were $3,700.", {"brand"},
    ...             analyze("What is the value of brand names as of December 31, 2019?"))
    '$3,700'
    >>> number_near("Costco operated 815 warehouses in 2021.", {"warehouses"},
    ...             analyze("How many warehouses did Costco operate at 2021?"))
    '815'
    >>> number_near("The steps are in Figure 4 (pages 399–412; cited on page 4, 13).", {"steps"},
    ...             analyze("How many steps are there?")) is None
    True
    >>> number_near("1 Position the ruler two fingers from the palm: 2.5 cm.", {"position"},
    ...             analyze("How many cm is the position?"))
    '2.5'
    >>> number_near("Warehouses at August 29, 2021.", {"warehouses"},
    ...             analyze("How many in 2021?")) is None
    True
    """
    given = {_digits(m.group(0)) for m in _NUMBER.finditer(plan.text)}
    nums = []
    step = _STEP.match(sentence)
    for m in _NUMBER.finditer(sentence):
        core = _digits(m.group(0))
        if not core or core in given or re.fullmatch(r"(19|20)\d{2}", core):
            continue
        if _MONTH.search(sentence[:m.start()]) and re.fullmatch(r"\d{1,2}", core):
            continue  # the day of a date
        if _LABELLED.search(sentence[:m.start()]) or re.fullmatch(r"\s?\d{1,2}\)", m.group(0)) \
                or step and m.start() <= step.end():
            continue  # a label's number, or a list's "1)" or a step's "1 Press ..."
        nums.append(m)
    if percent and any("%" in m.group(0) or "percent" in m.group(0).lower() for m in nums):
        nums = [m for m in nums if "%" in m.group(0) or "percent" in m.group(0).lower()]
    if not nums:
        return None
    anchors = _anchors(sentence, kw)
    best = _respective(sentence, nums, plan.years) or stated(sentence, kw, nums) or \
        min(nums, key=lambda m: min(abs(m.start() - a) for a in anchors))
    found = best.group(0).strip()
    return found if found.startswith("(") or not found.endswith(")") else found[:-1]


def date_near(sentence: str, kw: set[str], plan: QueryPlan) -> str | None:
    """The date (or year) in ``sentence`` nearest the keywords, other than those the
    question gives.

    >>> date_near("The plan was adopted on March 3, 2021 by the board.", {"adopted"},
    ...           analyze("When was the plan adopted?"))
    'March 3, 2021'
    """
    given = set(plan.years)
    found = [m for m in _DATE.finditer(sentence) if m.group(0) not in given]
    if not found:
        return None
    anchors = _anchors(sentence, kw)
    return min(found, key=lambda m: min(abs(m.start() - a) for a in anchors)).group(0)


_ISO_ASKED = re.compile(r"\byyyy-mm-dd\b", re.I)
_DATE_FORMS = ("%B %d, %Y", "%B %d %Y", "%d %B %Y", "%b %d, %Y", "%b %d %Y", "%d %b %Y",
               "%b. %d, %Y", "%m/%d/%Y")


def has_date(sentence: str) -> bool:
    """Whether ``sentence`` holds a full date (a month and a year at least)."""
    return any(not re.fullmatch(r"(?:19|20)\d\d", m.group(0)) for m in _DATE.finditer(sentence))


def in_asked_format(value: str, question: str) -> str | None:
    """A date restated in the form the question asks for ("Format the date as YYYY-MM-DD").

    >>> in_asked_format("February 8, 2021", "Format the date on page 14 as YYYY-MM-DD.")
    '2021-02-08'
    >>> in_asked_format("2021", "Format the date as YYYY-MM-DD.") is None
    True
    """
    if not _ISO_ASKED.search(question):
        return None
    for form in _DATE_FORMS:
        try:
            return datetime.strptime(value.strip(), form).date().isoformat()
        except ValueError:
            continue
    return None


def name_near(sentence: str, question: str) -> str | None:
    """A capitalised name the question does not already say: the one after "by",
    "Justice", "Dr." and such first, else the first one past the sentence's opening word.

    >>> name_near("The opinion was written by Justice Sonia Sotomayor in 2019.",
    ...           "Who wrote the opinion?")
    'Sonia Sotomayor'
    >>> name_near("The plan will be revised by January each year.", "Who revised the plan?")
    """
    asked = {w.lower() for w in re.findall(r"[A-Za-z]+", question)}
    best, fallback = None, None
    for m in _NAME.finditer(sentence):
        name = re.sub(r"^(?:(?:of|the|and|de|van|von|&)\s+)+|(?:\s+(?:of|the|and|&))+$", "",
                      m.group(0)).strip(" .")
        titled = bool(_TITLED.match(name))
        name = _TITLED.sub("", name)
        words = [w.lower() for w in re.findall(r"[A-Za-z]+", name)]
        if not name or not words or all(w in asked for w in words) or not name[0].isupper() \
                or all(w in _CALENDAR for w in words):
            continue
        if titled or _AGENT.search(sentence[:m.start()]):
            best = best or name
        elif m.start() > 0 and fallback is None:
            fallback = name
    return best or fallback


_FOR_YEAR = re.compile(r"^\s*(?:for|in|during|of|at)?\s*(?:the\s+)?(?:fiscal\s+(?:year\s+)?|"
                       r"fy\s?)?((?:19|20)\d\d)\b", re.I)


def year_amounts(sentence: str, asked: list[str]) -> list[tuple[str, str]]:
    """(year, amount) for each year of ``asked`` that ``sentence`` gives an amount for: "$244
    million for 2016, $249 million for 2015", or a "respectively" list; [] unless every
    asked year has one.

    >>> year_amounts("Rent was $244 million for 2016, $249 million for 2015 and $309 million "
    ...              "for 2014.", ["2016", "2015", "2014"])
    [('2016', '$244 million'), ('2015', '$249 million'), ('2014', '$309 million')]
    >>> year_amounts("For the year ended December 31, 2019 and 2018, $288 and $636 were expensed "
    ...              "under the 2017 Plan, respectively.", ["2018", "2019"])  # 31: a day
    []
    """
    nums = [m for m in _NUMBER.finditer(sentence)
            if not re.fullmatch(r"(19|20)\d{2}", _digits(m.group(0)))
            and not (_MONTH.search(sentence[:m.start()]) and re.fullmatch(r"\d{1,2}", m.group(0)))]
    found: dict[str, str] = {}
    listed = years(sentence)
    if "respectively" in sentence.lower() and len(nums) == len(listed) >= 2:
        found = dict(zip(listed, (m.group(0).strip() for m in nums)))
    else:
        for m in nums:
            after = _FOR_YEAR.match(sentence[m.end():])
            if after:
                found.setdefault(after.group(1), m.group(0).strip())
    return [(y, found[y]) for y in asked] if all(y in found for y in asked) else []


def computed_span(sentence: str, a: Ask) -> str | None:
    """The operation ``a.op`` (sum, average, change, ...) over the amounts ``sentence`` gives
    for the years asked, with their unit ("802 million"), or None.

    >>> computed_span("Rent was $244 million for 2016, $249 million for 2015 and $309 "
    ...               "million for 2014.", ask("What was total rent for 2016, 2015 and 2014?"))
    '$802 million'
    """
    if not a.op or a.op in ("max_year", "min_year") or len(a.years) < 2:
        return None
    pairs = year_amounts(sentence, a.years)
    values = [parse_value(re.sub(r"\s?(?:million|billion|thousand|bn|m|percent)$", "",
                                 amount, flags=re.I)) for _, amount in pairs]
    if not pairs or any(v is None for v in values):
        return None
    result = combine(a.op, ordered(list(zip([y for y, _ in pairs], values))))
    if result is None:
        return None
    unit = re.search(r"(million|billion|thousand|bn|m|%|percent)\)?$", pairs[0][1], re.I)
    pct = a.op == "percent_change"
    shown = "%" if pct else (f" {unit.group(1)}" if unit and unit.group(1) != "%" else
                             "%" if unit else "")
    cur = "" if pct else re.match(r"\(?([$€£]?)", pairs[0][1]).group(1)
    return f"{'-' if result < 0 else ''}{cur}{fmt(abs(result))}{shown}"


def value_span(sentence: str, a: Ask, kw: set[str], plan: QueryPlan) -> str | None:
    """The span of ``sentence`` that answers a question of kind ``a.kind``, or None."""
    if a.kind == "number" and a.op:
        found = computed_span(sentence, a)
        if found:
            return found
    if a.kind == "number":
        return number_near(sentence, kw, plan, a.percent)
    if a.kind == "date":
        return date_near(sentence, kw, plan)
    if a.kind == "entity":
        return name_near(sentence, plan.text)
    return None


__all__ = ["analyze", "date_near", "has_date", "in_asked_format", "name_near", "number_near",
           "states_value", "value_span"]
