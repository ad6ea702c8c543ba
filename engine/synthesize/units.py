"""The unit a question asks its amount in ("Answer in USD billions"), and a value restated
in it: a table in millions answers 8,738, the question wants 8.74 billion.

>>> asked_unit("What is the year end FY2018 net PPNE for 3M? Answer in USD billions.")
'billion'
>>> in_asked_unit("8,738 million", "What is net PP&E? Answer in USD billions.")
'8.74 billion'
>>> in_asked_unit("$1.47 billion", "How much cash did it hold, in millions?")
'1,470 million'
>>> in_asked_unit("(1,577) million", "What was capex? Answer in USD millions.") is None
True
"""
from __future__ import annotations

import re

from docray.engine.synthesize.asks import fmt
from docray.engine.synthesize.cells import parse_value
from docray.engine.synthesize.values import in_asked_format

SCALE_FACTOR = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_WORD = r"(thousand|million|billion)s?"
_ASKED = re.compile(rf"\b(?:in|into|as)\s+(?:(?:usd|us\$|\$|dollars?|u\.s\. dollars)\s+)?{_WORD}"
                    rf"\b|\b(?:usd|us\$|\$)\s?{_WORD}\b", re.I)
_VALUE = re.compile(rf"^\s*(\(?\s*[-−–]?\s*[$€£]?\s*\d[\d,]*(?:\.\d+)?\s*\)?)\s*(?:{_WORD}|bn)\b",
                    re.I)


def asked_unit(question: str) -> str | None:
    """'thousand', 'million' or 'billion' when the question names the unit of its answer."""
    m = _ASKED.search(question)
    return None if m is None else (m.group(1) or m.group(2)).lower()


def in_asked_unit(value: str, question: str) -> str | None:
    """``value`` ("8,738 million", "$1.47 billion") restated in the unit the question asks
    for, or None when it names none, the value has no unit, or the units already agree."""
    target = asked_unit(question)
    m = _VALUE.match(value) if target else None
    if m is None:
        return None
    unit = (m.group(2) or "billion").lower()  # "bn"
    number = parse_value(m.group(1))
    if number is None or unit == target:
        return None
    return f"{fmt(number * SCALE_FACTOR[unit] / SCALE_FACTOR[target])} {target}"


def restate(answer: str, value: str, question: str, kind: str) -> tuple[str, str]:
    """(answer, value) with the value restated in the unit ("Answer in USD billions" over a
    table in millions) or the date form ("YYYY-MM-DD") the question asks for, the value as
    found kept beside it.

    >>> restate("8,738 million (Net PP&E)", "8,738 million", "Net PP&E, in billions?", "number")
    ('8.74 billion (8,738 million) (Net PP&E)', '8.74 billion')
    >>> restate("May 3, 2021 — Signed May 3, 2021.", "May 3, 2021", "Date as YYYY-MM-DD?", "date")
    ('2021-05-03 (May 3, 2021) — Signed May 3, 2021.', '2021-05-03')
    """
    if not value:
        return answer, value
    new = in_asked_unit(value, question) if kind == "number" else \
        in_asked_format(value, question) if kind == "date" else None
    if not new:
        return answer, value
    shown = answer.replace(value, f"{new} ({value})", 1) if value in answer \
        else f"{new} — {answer}"
    return shown, new


def doc_name_words(words: list[str], filename: str) -> set[str]:
    """The question's words that spell its document's file name: one name part, or two
    adjacent words run together ("best", "buy" in BESTBUY_2023_10K.pdf). Numbers never
    (a year in the name is still the column asked for).

    >>> sorted(doc_name_words(["domestic", "store", "best", "buy", "2023"], "BESTBUY_2023_10K.pdf"))
    ['best', 'buy']
    >>> sorted(doc_name_words(["amazon", "fy2017", "days"], "AMAZON_2017_10K.pdf"))
    ['amazon']
    """
    parts = {t for t in re.findall(r"[a-z0-9]+", filename.lower().rsplit(".", 1)[0])
             if not t.isdigit() and len(t) > 2}
    out = {w for w in words if w in parts}
    out |= {w for a, b in zip(words, words[1:]) if a + b in parts for w in (a, b)}
    return {w for w in out if not w.isdigit()}
