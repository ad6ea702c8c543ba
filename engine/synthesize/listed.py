"""How many things a heading lists: "How many steps are needed to customize the Down button?"

A manual or a course outline lists things under a heading: numbered steps under
"Customizing the function of the Down button", the questions under "UNIT 8 ... LEARNING
OUTCOMES:". No sentence states the count; it is the number of items between that heading
and the next one. The heading is the title unit of the top passages that best matches the
question: it names the counted noun ("learning outcomes"), or shares the question's other
words, with the title just before it counted too ("UNIT 8" above "LEARNING OUTCOMES").
The items are a numbered run (1, 2, 3 ...; "①" ...) or, failing that, questions ("?").
Anything else (a table, loose bullets) gives no count, and the question goes on to the
other answers.

>>> noun, topic = listed_ask("How many steps are needed to customize the Down Button?")
>>> noun, sorted(topic)
('steps', ['button', 'customize', 'down'])
>>> noun, topic = listed_ask("how many LEARNING OUTCOMES should be ANSWERed in UNIT 8?")
>>> noun, sorted(topic)
('learning outcomes', ['8', 'answered', 'unit'])
>>> listed_ask("What is the total revenue?"), listed_ask("how many of them are from 2021?")
(None, None)
>>> count_items(["1 Press the Up button.", "2 Select an app.", "Then press Down."])
(2, 'numbered')
>>> count_items(["Why plan? How do firms recruit?", "What is a union?"])
(3, 'questions')
>>> count_items(["Revenue grew 4%."])
(0, '')
"""
from __future__ import annotations

import re

from docray.engine.model import Unit
from docray.engine.retrieve.query import STOP
from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.citations import cite_units

_VERB = r"(?:are|is|were|was|should|do|does|did|can|could|will|would|must|have|has|need|" \
        r"needs|appear|appears)"
_ASK = re.compile(rf"\bhow many (?:distinct |different |separate )?(?P<noun>[a-z]+(?: "
                  rf"(?!{_VERB}\b)[a-z]+)?) {_VERB}\b(?P<rest>[^?]*)", re.I)
_NUMBERED = re.compile(r"(?:^|(?<=[.;:?!]\s)|(?<=\s\s))(?P<n>\d{1,2})[.)]?\s+(?=[A-Z])")
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫"
_FILLER = frozenset("""needed used required included listed mentioned shown given taken
there total all""".split())
_MIN_ITEMS = 2
_MAX_ITEMS = 30
_LISTED = 0.75  # confidence of a count read off the items under a heading
_SPAN = 14  # units read after a heading for its items


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower())
            if w not in STOP and (len(w) > 1 or w.isdigit())}


def listed_ask(question: str) -> tuple[str, set[str]] | None:
    """(the counted noun phrase, the question's other content words), or None."""
    m = _ASK.search(question)
    if m is None:
        return None
    noun = m.group("noun").lower()
    if any(w in STOP for w in noun.split()):  # "how many of them"
        return None
    return noun, _words(m.group("rest")) - _FILLER - _words(noun)


def _stem(w: str) -> str:
    return w[:5] if len(w) > 5 else w


def _overlap(words: set[str], text: str) -> int:
    stems = {_stem(w) for w in _words(text)}
    return sum(_stem(w) in stems for w in words)


def count_items(texts: list[str]) -> tuple[int, str]:
    """(the number of items, how they were told apart: 'numbered' or 'questions')."""
    joined = "\n".join(t.strip() for t in texts)
    circled = [c for c in _CIRCLED if c in joined]
    if len(circled) >= _MIN_ITEMS and circled == list(_CIRCLED[: len(circled)]):
        return len(circled), "numbered"
    run = 0
    for line in joined.split("\n"):
        for m in _NUMBERED.finditer(line):
            if int(m.group("n")) == run + 1:
                run += 1
    if run >= _MIN_ITEMS:
        return run, "numbered"
    asked = len(re.findall(r"\?(?=\s|$)", joined))
    return (asked, "questions") if asked >= _MIN_ITEMS else (0, "")


def _heading_score(units: list[Unit], i: int, noun: str, topic: set[str]) -> float:
    """How well the title at ``i`` (with the titles just above it) fits the question."""
    text = units[i].text
    above = " ".join(u.text for u in units[max(0, i - 2): i] if u.modality == "title")
    names_noun = _overlap(_words(noun), text) == len(_words(noun))
    hits = _overlap(topic, f"{text} {above}")
    if not topic:
        return float(names_noun)
    share = hits / len(topic)
    return share + names_noun if names_noun or share >= 0.75 else 0.0


def listed_answer(question: str, passages: list[Passage], content) -> Answer | None:
    """The count of the items under the heading of the top passages that the question
    names, or None when no heading fits or no list follows it."""
    ask = listed_ask(question)
    if ask is None or not passages:
        return None
    noun, topic = ask
    ch = passages[0].chunk
    pages = sorted({u.page for p in passages[:2] for u in p.units})
    held = {u.unit_id for p in passages[:2] for u in p.units}
    if not pages:
        return None
    units = [u for pg in pages + [pages[-1] + 1]
             for u in content.page_units(ch.workspace, ch.doc_id, pg)
             if u.modality not in ("page_number", "footer", "header")]
    best, at = 0.0, None
    for i, u in enumerate(units):
        if u.modality == "title" and u.unit_id in held:
            s = _heading_score(units, i, noun, topic)
            if s > best:
                best, at = s, i
    if at is None:
        return None
    items = []
    for u in units[at + 1: at + 1 + _SPAN]:
        if u.modality == "title" and items and not _NUMBERED.match(u.text.lstrip()):
            break  # the next heading (a numbered step set as a title is an item)
        if u.modality in ("table", "image"):
            return None
        items.append(u)
    n, how = count_items([u.text for u in items])
    if not _MIN_ITEMS <= n <= _MAX_ITEMS:
        return None
    heading = units[at]
    evidence, cites = cite_units(passages, [heading] + items[:1])
    e = evidence[cites[0]]
    kind = "numbered items" if how == "numbered" else "questions"
    return Answer(answer=f"{n} {noun}, listed under “{heading.text.strip()}”",
                  abstained=False, evidence=evidence, confidence=_LISTED, citations=cites,
                  reason=f"counted the {kind} under a heading in {e.doc} p.{e.page}",
                  value=str(n), support=heading.text.strip())
