"""The e-mail address a question asks for, read from every unit of its document.

"What is the email id of Mtre Laurent Nahmiash?" is answered by an address, which no
sentence states as such: a letterhead or a signature block sets names and addresses side by
side. The address is the one whose local part carries a name the question gives
("lnahmiash@..."); failing that, the one on the page the question points at; failing that,
the document's only address. Otherwise the question goes on to the other answers.

>>> email_ask("What is the Email address in this document?"), email_ask("What is the revenue?")
(True, False)
>>> addresses("Mtre Laurent Nahmiash mignacz@infavocats.com lnahmiash@infavocats.com.")
['mignacz@infavocats.com', 'lnahmiash@infavocats.com']
>>> owner(["mignacz@inf.com", "lnahmiash@inf.com"], "what is the email id of mtre laurent nahmiash?")
'lnahmiash@inf.com'
"""
from __future__ import annotations

import re

from docray.engine.model import Unit
from docray.engine.retrieve.query import STOP, analyze
from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.citations import cite_units

_ASK = re.compile(r"\be-?mail\b", re.I)
_ADDRESS = re.compile(r"[A-Za-z0-9][\w.+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_NOT_NAMES = frozenset("""email mail address addresses document page cover what which whose
author authors contact given listed""".split())
_FOUND = 0.8  # confidence of an address read off the document


def email_ask(question: str) -> bool:
    return bool(_ASK.search(question))


def addresses(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(0).rstrip(".") for m in _ADDRESS.finditer(text)))


def owner(emails: list[str], question: str) -> str | None:
    """The address whose local part carries a name the question gives (four letters or
    more), when exactly one does."""
    names = {w for w in re.findall(r"[a-z]{4,}", question.lower())
             if w not in STOP and w not in _NOT_NAMES}
    hits = [e for e in emails if any(n in e.split("@")[0].lower() for n in names)]
    return hits[0] if len(set(hits)) == 1 else None


def email_answer(question: str, passages: list[Passage], content) -> Answer | None:
    if not email_ask(question) or not passages:
        return None
    ch = passages[0].chunk
    where: dict[str, Unit] = {}
    for u in content.doc_units_saying(ch.workspace, ch.doc_id, "@"):
        for e in addresses(u.text):
            where.setdefault(e, u)
    if not where:
        return None
    pages = set(analyze(question).pages)
    on_pages = [e for e, u in where.items() if u.page in pages]
    found = owner(list(where), question) or (on_pages[0] if len(on_pages) == 1 else None) \
        or (next(iter(where)) if len(where) == 1 else None)
    if found is None:
        return None
    evidence, cites = cite_units(passages, [where[found]])
    e = evidence[cites[0]]
    return Answer(answer=found, abstained=False, evidence=evidence, confidence=_FOUND,
                  citations=cites, reason=f"the address in {e.doc} p.{e.page}", value=found,
                  support=where[found].text[:200])
