"""Scope check: abstain when the question names something its document never mentions.

Unanswerable questions about a document are usually plausible ones that name a year, a
person, a product or a code the document does not contain ("How many Tweets are attributed
to Boeing?" over a Germanwings report). Those names are the question's *specific* terms:
years, words mixing letters and digits, capitalised words inside the sentence and acronyms.
When one of them appears nowhere in the documents the question is scoped to, no passage can
hold the answer, whatever the retrieval scores say.
"""
from __future__ import annotations

import re
from collections import OrderedDict

from docray.engine.retrieve.query import STOP

# Words that are capitalised in questions without naming anything in the document.
_GENERIC = frozenset("""according among answer anwser assume enumerate format here list page
pages please round save using write email figure fig table chart slide section appendix
highest lowest real directly""".split()) | STOP
_QTOK = re.compile(r"[A-Za-z0-9][\w.\-&'’]*[\w%]|\w")
_DTOK = re.compile(r"[a-z0-9][a-z0-9&\-.]*[a-z0-9&%]|[a-z0-9]")
_PERIOD = re.compile(r"(?:fy|q[1-4]|h[12])'?((?:19|20)\d\d)")
_YEAR = re.compile(r"(?:19|20)\d\d")
_NOT_NAME = re.compile(r"\d+(?:st|nd|rd|th)|q[1-4]|top-?\d+|p\d+|y{2,4}(?:-m{1,2})?(?:-d{1,2})?")


def normalise(token: str) -> str:
    """Lower-case, strip possessives and fiscal prefixes.

    >>> [normalise(t) for t in ["Boeing's", "FY2018", "Q2'2023", "GPT-4o."]]
    ['boeing', '2018', '2023', 'gpt-4o']
    """
    t = re.sub(r"['’]s$", "", token.lower().strip(".'’"))
    m = _PERIOD.fullmatch(t)
    return m.group(1) if m else t


def specific_terms(question: str) -> list[str]:
    """Years, letter+digit codes, capitalised words after the first and acronyms.

    >>> specific_terms("How many Tweets are attributed to Boeing in FY2015?")
    ['tweets', 'boeing', '2015']
    >>> specific_terms("What is the color of the icons that users touch?")
    []
    """
    shouting = question.isupper()
    out: dict[str, None] = {}
    for i, tok in enumerate(_QTOK.findall(question)):
        t = normalise(tok)
        if len(t) < 2 or t in _GENERIC:
            continue
        has_digit, has_alpha = bool(re.search(r"\d", t)), bool(re.search(r"[a-z]", t))
        if _YEAR.fullmatch(t):
            out.setdefault(t)
        elif has_digit and has_alpha and not _NOT_NAME.fullmatch(t):
            out.setdefault(t)
        elif has_alpha and not shouting and len(tok) > 2 and i > 0 and tok[0].isupper():
            out.setdefault(t)
    return list(out)


class Vocabulary:
    """The normalised words of a document plus its lower-cased text (for phrases)."""

    def __init__(self, texts: list[str]):
        self.text = "\n".join(texts).lower()
        self.words = {normalise(t) for t in _DTOK.findall(self.text)}
        self.words.update(_YEAR.findall(self.text))

    def mentions(self, term: str) -> bool:
        return term in self.words or term in self.text


class ScopeChecker:
    """Caches one :class:`Vocabulary` per (workspace, doc) read from the content store."""

    def __init__(self, content, max_docs: int = 64):
        self.content, self.max_docs = content, max_docs
        self._cache: OrderedDict[tuple[str, str], Vocabulary] = OrderedDict()

    def vocabulary(self, workspace: str, doc_id: str) -> Vocabulary:
        key = (workspace, doc_id)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        vocab = Vocabulary([c.text for c in self.content.doc_chunks(workspace, doc_id)])
        self._cache[key] = vocab
        if len(self._cache) > self.max_docs:
            self._cache.popitem(last=False)
        return vocab

    def unmentioned(self, question: str, workspace: str, doc_ids: list[str] | None) -> list[str]:
        """Specific terms of the question that none of ``doc_ids`` mentions ([] when the
        question is not scoped to documents: across a workspace absence proves little)."""
        if not doc_ids:
            return []
        terms = specific_terms(question)
        if not terms:
            return []
        vocabs = [self.vocabulary(workspace, d) for d in doc_ids]
        return [t for t in terms if not any(v.mentions(t) for v in vocabs)]


def scope_reason(missing: list[str]) -> str:
    """The abstention reason for terms the document never mentions.

    >>> scope_reason(["boeing"])
    "the document never mentions 'boeing'"
    """
    return "the document never mentions " + ", ".join(repr(m) for m in missing[:3])
