"""How many figures, tables, appendices or exhibits a document has, counted from the
labels it gives them.

"How many tables are included in the document?" is answered by no sentence: the answer is
the number of distinct labels the document's text carries ("Table 1" to "Table 3"), read
from every unit that says the noun, not from the five passages retrieval ranked. Only a
question about the whole document is counted this way ("... in the paper", "... in the
entire course"); a noun the document never numbers ("pie charts") gives no count, and the
question goes on to the other answers.

>>> inventory_ask("How many figures are there in total in the article?")
'figure'
>>> inventory_ask("How many appendices appear in the document?")
'appendix'
>>> inventory_ask("How many datasets are used for experiments of this paper?") is None
True
>>> sorted(labels_in("See Table 2 and Table 10; Appendix B, Fig. 3a, Exhibit P-12.", "table"))
['10', '2']
>>> labels_in("Quiz #1 and Quiz #2, then Quiz # 2 again", "quiz")
['1', '2']
>>> labels_in("Exhibits P-1 and P-2; Tables 4, 5 and 7; Figure 3 and 2019", "exhibit")
['P-1', 'P-2']
>>> labels_in("Exhibits P-1 and P-2; Tables 4, 5 and 7; Figure 3 and 4 more", "table")
['4', '5', '7']
>>> labels_in("Figure 3 and 4 more", "figure")
['3']
"""
from __future__ import annotations

import re

from docray.engine.model import Unit
from docray.engine.retrieve.query import analyze
from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.citations import cite_units

_WHERE = r"(?:document|paper|article|report|file|deck|slides?|presentation|course|book|" \
         r"manual|guide|thesis|brochure|filing)"
_ASK = re.compile(
    r"\bhow many (?:distinct |different |unique |separate )?(?:[a-z]+ )?"
    r"(?P<noun>(?!(?:are|were|is|does|do|did|appears?|there|have|has)\b)[a-z]+) "
    r"(?:(?:are|were|is|does|do|did|appear|appears|appeared|there|in total|in all|"
    r"altogether|mentioned|included|listed|shown|presented|contained|used|cited|"
    r"referenced|numbered|given|provided|have|has)\s+)*"
    rf"(?:(?:in|within|throughout|across|of)\s+)?(?:the\s+|this\s+|that\s+)?"
    rf"(?:entire\s+|whole\s+)?{_WHERE}\b(?!['’]s)", re.I)  # not "the paper's main body"
# how a document writes the label before the number or letter
_ALIASES = {"figure": r"fig(?:ure)?s?\.?", "equation": r"eq(?:uation)?s?\.?",
            "appendix": r"append(?:ix|ices)"}
# a label: "3", "2.1", "P-12", "B", "IV"
LABEL_FORM = r"(?:[A-Z]{1,2}-)?\d{1,3}(?:\.\d{1,2})?(?!\d)|[A-Z](?![\w-])|[IVX]{1,5}(?!\w)"
_LABEL = rf"\s*(?:#\s*|no\.\s*)?(?P<label>{LABEL_FORM})"
_COUNTED = 0.8  # confidence of a count read off the document's own labels
_MAX_CITES = 8


def singular(noun: str) -> str:
    noun = noun.lower()
    for plural, one in (("ices", "ix"), ("zzes", "z"), ("ies", "y"), ("ses", "s"),
                        ("xes", "x"), ("s", "")):
        if noun.endswith(plural) and len(noun) > len(plural) + 2:
            return noun[: -len(plural)] + one
    return noun


def inventory_ask(question: str) -> str | None:
    """The labelled thing (singular) a question counts over its whole document, or None."""
    m = _ASK.search(question)
    return singular(m.group("noun")) if m else None


def _pattern(noun: str) -> re.Pattern:
    alias = _ALIASES.get(noun, re.escape(noun) + "(?:e?s)?")
    return re.compile(rf"(?<![\w-])(?i:{alias}){_LABEL}")


_MORE = re.compile(rf"\s*(?:,|and|&|or)\s*(?P<label>{LABEL_FORM})")


def labels_in(text: str, noun: str) -> list[str]:
    """The distinct labels ``text`` gives the noun, in the order first met; a plural noun
    gives each label it lists ("Exhibits P-1 and P-2", "Tables 2, 3 and 5")."""
    found = []
    for m in _pattern(noun).finditer(text):
        found.append(m.group("label"))
        plural = text[m.start(): m.start("label")].rstrip(" #.").lower().endswith("s")
        at = m.end()
        while plural and (more := _MORE.match(text, at)):
            found.append(more.group("label"))
            at = more.end()
    return list(dict.fromkeys(found))


def count_answer(question: str, passages: list[Passage], content) -> Answer | None:
    """The count of the labels the question's document gives the noun it asks about."""
    noun = inventory_ask(question)
    if noun is None or not passages:
        return None
    ch = passages[0].chunk
    stem = "fig" if noun == "figure" else "eq" if noun == "equation" else \
        "append" if noun == "appendix" else noun
    pages = set(analyze(question).pages)
    first: dict[str, Unit] = {}
    for u in content.doc_units_saying(ch.workspace, ch.doc_id, stem):
        if pages and u.page not in pages:
            continue
        # on the pages named, the things set there: a caption or heading opens with the
        # label (a mention may point at one elsewhere)
        texts = [u.caption, u.text] if pages else [f"{u.text}\n{u.caption}"]
        for t in texts:
            found = labels_in(t, noun)
            if pages and not _pattern(noun).match(t.lstrip()):
                found = []
            for label in found[:1] if pages else found:
                first.setdefault(label, u)
    if not first:
        return None
    n, shown = len(first), list(first)[:_MAX_CITES]
    evidence, cites = cite_units(passages, [first[k] for k in shown])
    name = noun.title()
    listed = ", ".join(f"{name} {k} (p.{first[k].page})" for k in shown)
    listed += f" and {n - len(shown)} more" if n > len(shown) else ""
    where = f" on pages {min(pages)}-{max(pages)}" if len(pages) > 1 else \
        f" on page {min(pages)}" if pages else ""
    answer = f"{n} {noun if n == 1 else _plural(noun)}{where}{_span(list(first), name)}"
    e = evidence[cites[0]]
    return Answer(answer=answer, abstained=False, evidence=evidence, confidence=_COUNTED,
                  citations=cites, reason=f"counted from the labels, first in {e.doc} "
                  f"p.{e.page}", value=str(n), support=listed)


def _span(labels: list[str], name: str) -> str:
    """", labelled Table 1 to Table 3" when the labels run 1..n (or A..): the run states
    the count again; otherwise the answer is the count alone and the labels its support."""
    if len(labels) < 2:
        return ""
    run = [str(i) for i in range(1, len(labels) + 1)]
    letters = [chr(ord("A") + i) for i in range(len(labels))]
    ordered = sorted(labels, key=lambda k: (len(k), k))
    if ordered in (run, letters):
        return f", labelled {name} {ordered[0]} to {name} {ordered[-1]}"
    return ""


def _plural(noun: str) -> str:
    if noun.endswith("ix"):
        return noun[:-2] + "ices"
    if noun.endswith(("s", "x", "z")):
        return noun + ("zes" if noun.endswith("z") else "es")
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
