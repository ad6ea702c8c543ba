"""The title of a numbered part of a document: "What's the topic of UNIT 14?".

A course outline, a report or a manual names its parts with a label and a title on one
line ("UNIT 14: Using Financial Information and Accounting", "Chapter 3 — Methods"). A
question that asks for the title, topic or name of such a part is answered by that line,
read from every unit of the document that says the label's word, not from the five
passages retrieval ranked (a heading is short, and the passages around it rank higher).
The line must open with the label and give the title after a colon, a dash or a full stop,
so a mention ("concepts from Unit 13 & 14") is not taken for it.

>>> title_asks("what's the topic of UNIT 14?")
('unit', ['14'])
>>> title_asks("What are the names of Unit 1 and Unit 2 in Semester 1?")
('unit', ['1', '2'])
>>> title_asks("How many units are there?") is None
True
>>> title_in("UNIT 14: Using Financial Information and Accounting\\nSWBAT ...", "unit", "14")
'Using Financial Information and Accounting'
>>> title_in("Quiz #7- Concepts from Unit 13 & 14", "unit", "14") is None
True
"""
from __future__ import annotations

import re

from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.citations import cite_units
from docray.engine.synthesize.inventory import LABEL_FORM

_NOUNS = r"(?:unit|chapter|section|part|module|lesson|appendix|phase|stage|week|session|" \
         r"lecture|article|goal|objective)"
_LABEL = rf"(?:{LABEL_FORM})"
_ASK = re.compile(rf"\b(?:title|topic|name|subject|heading|theme)s?\s+(?:of|for)\s+(?:the\s+)?"
                  rf"(?P<noun>{_NOUNS})s?[\s\-#]*(?P<labels>{_LABEL}(?:\s*(?:,|and|&)\s*"
                  rf"(?:(?P=noun)s?[\s\-#]*)?{_LABEL})*)", re.I)
_TITLED = 0.8  # confidence of a title read off the line that labels the part


def title_asks(question: str) -> tuple[str, list[str]] | None:
    """(the part's noun, its labels) when the question asks for the title of numbered
    parts, else None."""
    m = _ASK.search(question)
    if m is None:
        return None
    noun = m.group("noun").lower()
    labels = re.findall(_LABEL, re.sub(noun, " ", m.group("labels"), flags=re.I))
    return noun, labels


def title_in(text: str, noun: str, label: str) -> str | None:
    """The title on the line of ``text`` that opens with the noun and label, or None."""
    m = re.search(rf"(?im)^\s*{noun}s?[\s\-#]*{re.escape(label)}\s*[:.\-–—]\s*"
                  r"(?P<title>[^\n]{3,120}?)\s*$", text)
    return m.group("title").strip() if m else None


def title_answer(question: str, passages: list[Passage], content) -> Answer | None:
    """The titles of the parts a question names, read from its document's lines."""
    asked = title_asks(question)
    if asked is None or not passages:
        return None
    noun, labels = asked
    ch = passages[0].chunk
    found: dict[str, tuple[str, object]] = {}
    for u in content.doc_units_saying(ch.workspace, ch.doc_id, noun):
        for label in labels:
            title = title_in(u.text or "", noun, label)
            if title and label not in found:
                found[label] = (title, u)
    if len(found) < len(labels):
        return None  # a part without its titled line: the other answers try
    titles = [found[label][0] for label in labels]
    evidence, cites = cite_units(passages, [found[label][1] for label in labels])
    name = noun.title()
    support = "; ".join(f"{name} {label}: {found[label][0]}" for label in labels)
    e = evidence[cites[0]]
    return Answer(answer=f"{'; '.join(titles)} ({support})", abstained=False,
                  evidence=evidence, confidence=_TITLED, citations=cites,
                  reason=f"the line that labels {name} {labels[0]}, {e.doc} p.{e.page}",
                  value="; ".join(titles), support=support)
