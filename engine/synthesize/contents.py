"""The chapters a table of contents lists: "What are the last 4 chapters listed in the table
of contents?".

A contents page sets each entry as a label, a title, a dot leader and a page number
("6. Climate Impacts on Water-Related Illness.......157"). The entries are read from every
unit of the document that has a dot leader, not from the passages retrieval ranked (the
leaders make poor sentences), and the first or last N numbered entries are the answer, in
the document's order.

>>> contents_ask("What are the last 4 chapters listed in the table of contents?")
('last', 4)
>>> contents_ask("List the first three sections in the contents.")
('first', 3)
>>> contents_ask("What is the last chapter about?") is None
True
>>> entries("1. Introduction: Climate Change........25 2. Air Quality Impacts.......69 "
...         "Appendix 1: Glossary ....301")
[('1', 'Introduction: Climate Change', '25'), ('2', 'Air Quality Impacts', '69')]
"""
from __future__ import annotations

import re

from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.citations import cite_units

_COUNT = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10}
_ASK = re.compile(r"\b(?P<end>first|last)\s+(?P<n>\d{1,2}|" + "|".join(_COUNT) + r")\s+"
                  r"(?:chapters|sections|parts|units|entries)\b.*\bcontents\b", re.I)
_ENTRY = re.compile(r"(?<![\w:])(?P<label>\d{1,2})\.\s+(?P<title>[^.…]+?(?:\.[^.…\s][^.…]*?)*)"
                    r"\s*(?:(?:\.\s?){3,}|…+)\s*(?P<page>\d{1,4}|[ivxlc]{1,6})\b")
_LEADER = "...."
_LISTED = 0.75  # confidence of entries read off the document's contents page


def contents_ask(question: str) -> tuple[str, int] | None:
    """('first' | 'last', how many entries), or None."""
    m = _ASK.search(question)
    if m is None:
        return None
    n = m.group("n").lower()
    return m.group("end").lower(), int(_COUNT.get(n, n))


def entries(text: str) -> list[tuple[str, str, str]]:
    """(label, title, page) of each numbered contents entry in ``text``."""
    return [(m.group("label"), " ".join(m.group("title").split()), m.group("page"))
            for m in _ENTRY.finditer(text)]


def contents_answer(question: str, passages: list[Passage], content) -> Answer | None:
    """The first or last N numbered entries of the document's contents, or None when the
    document lists fewer."""
    ask = contents_ask(question)
    if ask is None or not passages:
        return None
    end, n = ask
    ch = passages[0].chunk
    found: dict[int, tuple[str, object]] = {}  # label -> (title, unit); the first listing
    for u in content.doc_units_saying(ch.workspace, ch.doc_id, _LEADER):
        for label, title, _ in entries(u.text):
            found.setdefault(int(label), (title, u))
    labels = sorted(found)
    if len(labels) < n or labels != list(range(labels[0], labels[0] + len(labels))):
        return None  # a gap: not one run of numbered entries
    picked = labels[:n] if end == "first" else labels[-n:]
    titles = [found[k][0] for k in picked]
    evidence, cites = cite_units(passages, [found[k][1] for k in picked])  # once each
    e = evidence[cites[0]]
    listed = "; ".join(titles)
    return Answer(answer=listed, abstained=False, evidence=evidence, confidence=_LISTED,
                  citations=cites, reason=f"the {end} {n} entries of the contents in {e.doc} "
                  f"p.{e.page}", value=listed,
                  support="; ".join(f"{k}. {found[k][0]}" for k in picked))
