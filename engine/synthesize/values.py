"""Value spans in a sentence: the amount, date or name that answers, not the whole line.

Not an answer: numbers the question itself gives (its years, "page 10", "3M"), days of a
month ("December 31"), and, for an amount, bare years. When nothing fits, the caller keeps
the sentence.
"""
from __future__ import annotations

import re

from docray.engine.retrieve.query import QueryPlan, analyze, years
from docray.engine.synthesize.asks import Ask

_NUMBER = re.compile(r"(?<![A-Za-z0-9.,”\"’])\(?[$€£]?\s?\d(?:[\d,]*\d)?(?:\.\d+)?"
                     r"(?:\s?(?:%|percent\b|million\b|billion\b|thousand\b|bn\b|m\b))?\)?", re.I)
_MONTH = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*$", re.I)
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
    >>> number_near("Warehouses at August 29, 2021.", {"warehouses"},
    ...             analyze("How many in 2021?")) is None
    True
    """
    given = {_digits(m.group(0)) for m in _NUMBER.finditer(plan.text)}
    nums = []
    for m in _NUMBER.finditer(sentence):
        core = _digits(m.group(0))
        if not core or core in given or re.fullmatch(r"(19|20)\d{2}", core):
            continue
        if _MONTH.search(sentence[:m.start()]) and re.fullmatch(r"\d{1,2}", core):
            continue  # the day of a date
        nums.append(m)
    if percent and any("%" in m.group(0) or "percent" in m.group(0).lower() for m in nums):
        nums = [m for m in nums if "%" in m.group(0) or "percent" in m.group(0).lower()]
    if not nums:
        return None
    anchors = _anchors(sentence, kw)
    best = _respective(sentence, nums, plan.years) or \
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


def name_near(sentence: str, question: str) -> str | None:
    """A capitalised name the question does not already say: the one after "by",
    "Justice", "Dr." and such first, else the first one past the sentence's opening word.

    >>> name_near("The opinion was written by Justice Sonia Sotomayor in 2019.",
    ...           "Who wrote the opinion?")
    'Sonia Sotomayor'
    """
    asked = {w.lower() for w in re.findall(r"[A-Za-z]+", question)}
    best, fallback = None, None
    for m in _NAME.finditer(sentence):
        name = re.sub(r"^(?:(?:of|the|and|de|van|von|&)\s+)+|(?:\s+(?:of|the|and|&))+$", "",
                      m.group(0)).strip(" .")
        titled = bool(_TITLED.match(name))
        name = _TITLED.sub("", name)
        words = [w.lower() for w in re.findall(r"[A-Za-z]+", name)]
        if not name or not words or all(w in asked for w in words) or not name[0].isupper():
            continue
        if titled or _AGENT.search(sentence[:m.start()]):
            best = best or name
        elif m.start() > 0 and fallback is None:
            fallback = name
    return best or fallback


def value_span(sentence: str, a: Ask, kw: set[str], plan: QueryPlan) -> str | None:
    """The span of ``sentence`` that answers a question of kind ``a.kind``, or None."""
    if a.kind == "number":
        return number_near(sentence, kw, plan, a.percent)
    if a.kind == "date":
        return date_near(sentence, kw, plan)
    if a.kind == "entity":
        return name_near(sentence, plan.text)
    return None


__all__ = ["analyze", "date_near", "name_near", "number_near", "value_span"]
