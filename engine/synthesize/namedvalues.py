"""Sums and differences of the numbers a passage gives named things.

A slide or an infographic writes a name and its number side by side ("Germanwings 24 ...
Lufthansa 12 Airbus 5"), with no table to read. "How many more Tweets are attributed to
Germanwings than Lufthansa?" is then the difference of the two numbers, and "How many
Tweets are attributed to Germanwings, Lufthansa, and Airbus in total?" their sum. Each
name must be followed directly by its number in one passage; when a name has none there,
the question goes on to the other answers.

>>> named_ask("How many more Tweets are attributed to Germanwings than Lufthansa?")
('difference', ['Germanwings', 'Lufthansa'])
>>> named_ask("How many Tweets are attributed to Germanwings, Lufthansa, and Airbus in total?")
('sum', ['Germanwings', 'Lufthansa', 'Airbus'])
>>> named_ask("What is the total revenue in 2019?") is None
True
>>> value_after("Company Tweets Germanwings 24 activity ... Lufthansa 12 Airbus 5", "Airbus")
5.0
>>> value_after("Airbus wipes its website; 2015 results", "Airbus") is None
True
"""
from __future__ import annotations

import re

from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.asks import fmt
from docray.engine.synthesize.citations import to_evidence

_NAME = r"[A-Z][\w&.'-]*(?: [A-Z][\w&.'-]*){0,2}"
_DIFF = re.compile(rf"(?i:\bhow (?:many|much) (?:more|fewer|less))\b.*?\b(?P<a>{_NAME}) than "
                   rf"(?:for |by |to |in |at )?(?P<b>{_NAME})")
_SUM = re.compile(rf"\b(?P<names>{_NAME}(?:, {_NAME})*,? and {_NAME})\b"
                  r"(?= (?:in total|combined|altogether|together)\b)")
_SPLIT = re.compile(r",? and |, ")
_PASSAGES = 3  # the top passages a question's names are looked for in
_COMPUTED = 0.7  # confidence of a sum or difference of numbers written beside the names


def named_ask(question: str) -> tuple[str, list[str]] | None:
    """('difference' | 'sum', the names in the question's order), or None."""
    m = _DIFF.search(question)
    if m:
        return "difference", [m.group("a"), m.group("b")]
    m = _SUM.search(question)
    if m:
        return "sum", [n for n in _SPLIT.split(m.group("names")) if n]
    return None


def value_after(text: str, name: str) -> float | None:
    """The number written right after the first ``name`` that has one (no year)."""
    for m in re.finditer(rf"(?<![\w-]){re.escape(name)}\s*[:\-–]?\s*(\d[\d,]*(?:\.\d+)?)"
                         r"(?![\d.,]*\s*%)(?![\w])", text):
        raw = m.group(1).replace(",", "")
        if not re.fullmatch(r"(?:19|20)\d\d", raw):
            return float(raw)
    return None


def named_answer(question: str, passages: list[Passage]) -> Answer | None:
    """The sum or difference of the numbers beside the names the question lists, read from
    the first top passage that gives every name one."""
    ask = named_ask(question)
    if ask is None:
        return None
    op, names = ask
    for i, p in enumerate(passages[:_PASSAGES]):
        values = [value_after(p.chunk.text, n) for n in names]
        if any(v is None for v in values):
            continue
        result = values[0] - values[1] if op == "difference" else sum(values)
        shown = ", ".join(f"{n} {fmt(v)}" for n, v in zip(names, values))
        evidence = to_evidence(passages)
        e = evidence[i]
        value = fmt(abs(result) if op == "difference" else result)
        return Answer(answer=f"{value} ({op} of {shown})", abstained=False,
                      evidence=evidence, confidence=_COMPUTED, citations=[i],
                      reason=f"the {op} of the numbers beside the names in {e.doc} p.{e.page}",
                      value=value, support=shown)
    return None
