"""Scope check: abstain when the question names something its document never mentions.

Unanswerable questions about a document are usually plausible ones that name a year, a
person, a product or a code the document does not contain ("How many Tweets are attributed
to Boeing?" over a Germanwings report). Those names are the question's *specific* terms:
years, words mixing letters and digits, capitalised words inside the sentence and acronyms.
When one of them appears nowhere in the documents the question is scoped to, no passage can
hold the answer, whatever the retrieval scores say. The same holds for a page beyond the
document's last one ("How many figures are in pages 100-120?" over a 30-page paper) and for
a figure or table number its text never labels ("Figure 8" where the captions stop at 7).
"""
from __future__ import annotations

import re
from collections import OrderedDict
from functools import cached_property

from docray.engine.retrieve.query import STOP
from docray.engine.synthesize.respell import english_words, one_edit

# Words that are capitalised in questions without naming anything in the document.
_GENERIC = frozenset("""according among answer anwser assume enumerate format here list page
pages please round save using write email figure fig table chart slide section appendix
highest lowest real directly""".split()) | STOP
# Metric names a question may ask to compute from a filing that never spells them out.
_METRICS = frozenset("""ebitda ebit ebitdar cogs dpo dso dio ccc eps roa roe roic roce capex
opex fcf p&l pp&e ppne d&a sg&a r&d yoy qoq ttm ltm gaap non-gaap after-tax pre-tax""".split())
_QTOK = re.compile(r"[A-Za-z0-9][\w.\-&'’]*[\w%]|\w")
_DTOK = re.compile(r"[a-z0-9][a-z0-9&\-.]*[a-z0-9&%]|[a-z0-9]")
_PERIOD = re.compile(r"(?:fy|f|q[1-4]|h[12])?'?((?:19|20)\d\d)s?")
_DEFINED = re.compile(r"\(([A-Z][A-Za-z&\-]{1,9})\)")  # "days payable outstanding (DPO)"
_YEAR = re.compile(r"(?:19|20)\d\d")
_NUMBER_WORDS = {w: i for i, w in enumerate(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty""".split())}
_NUM = r"(\d{1,5}|" + "|".join(_NUMBER_WORDS) + r")"
_PAGE_REF = re.compile(r"\bpages?\s+(?:no\.?\s*)?" + _NUM + r"\b", re.I)
_LABEL_REF = re.compile(r"\b(fig(?:ure)?|table)s?\.?\s+(\d{1,3})\b", re.I)
_NOT_NAME = re.compile(r"\d+(?:st|nd|rd|th)|q[1-4]|top-?\d+|p\d+|y{2,4}(?:-m{1,2})?(?:-d{1,2})?")
_EXAMPLE = re.compile(r"\[[^\]]*\]")  # "a list like ['2006', '2007']": the answer's format
_EMPHASIS = re.compile(r"[A-Z]{3,}(?:ed|ing)")  # "ANSWERed": a word stressed, not named


def normalise(token: str) -> str:
    """Lower-case, strip possessives and fiscal prefixes.

    >>> [normalise(t) for t in ["Boeing's", "FY2018", "Q2'2023", "GPT-4o.", "AMCOR'FY", "2010s"]]
    ['boeing', '2018', '2023', 'gpt-4o', 'amcor', '2010']
    """
    t = re.sub(r"['’]s$", "", token.lower().strip(".'’"))
    m = _PERIOD.fullmatch(t)
    return m.group(1) if m else re.split(r"['’]", t)[0]


def specific_terms(question: str) -> list[str]:
    """Years, letter+digit codes, capitalised words after the first and acronyms.

    >>> specific_terms("How many Tweets are attributed to Boeing in FY2015?")
    ['tweets', 'boeing', '2015']
    >>> specific_terms("What is the color of the icons that users touch?")
    []
    >>> specific_terms("Which years does the chart show? Answer as a list like ['2006', '2011']")
    []
    """
    shouting = question.isupper()
    defined = {d.lower() for d in _DEFINED.findall(question)}  # acronyms it spells out
    out: dict[str, None] = {}
    for i, tok in enumerate(_QTOK.findall(_EXAMPLE.sub(" ", question))):
        t = normalise(tok)
        if len(t) < 2 or t in _GENERIC or t in _METRICS or t in defined or \
                _NOT_NAME.fullmatch(t) or _EMPHASIS.fullmatch(tok):
            continue
        has_digit, has_alpha = bool(re.search(r"\d", t)), bool(re.search(r"[a-z]", t))
        if _YEAR.fullmatch(t):
            out.setdefault(t)
        elif has_digit and has_alpha:
            out.setdefault(t)
        elif has_alpha and not shouting and len(tok) > 2 and i > 0 and tok[0].isupper():
            out.setdefault(t)
    return list(out)


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]


def references(question: str) -> list[tuple[str, int]]:
    """Pages and figure/table labels the question points at.

    >>> references("How many figures are in Pages 100-120? See Figure 7 and Table 2.")
    [('page', 100), ('figure', 7), ('table', 2)]
    >>> references("What is INF SERCRL LLP FAX No on page thirteen?")
    [('page', 13)]
    """
    refs = [("page", _number(m.group(1))) for m in _PAGE_REF.finditer(question)]
    refs += [("table" if m.group(1).lower() == "table" else "figure", int(m.group(2)))
             for m in _LABEL_REF.finditer(question)]
    return refs


class Vocabulary:
    """The normalised words of a document, its lower-cased text (for phrases) and the last
    page that holds any of it."""

    def __init__(self, texts: list[str], last_page: int | None = None,
                 page_labels: dict[int, list[int]] | None = None):
        self.text = "\n".join(texts).lower()
        self.last_page = last_page
        self.page_labels = page_labels or {}  # a number printed as a page's label → pages

    def pages(self, number: int) -> list[int]:
        """The pages a question's "page N" may mean: the N-th page, and the pages that
        print N as their page number (a report's page 9 is often its 12th); -1: the last."""
        if number == -1:
            return [self.last_page] if self.last_page else []
        counted = [number] if self.last_page is None or number <= self.last_page else []
        return list(dict.fromkeys(counted + self.page_labels.get(number, [])))

    @cached_property
    def words(self) -> set[str]:
        """Built on first need: most terms are settled by a substring test of the text."""
        words = {normalise(t) for t in _DTOK.findall(self.text)}
        words.update(_YEAR.findall(self.text))
        return words

    def mentions(self, term: str) -> bool:
        """Said as such, in the singular ("Rupees"), with a space or nothing for a hyphen
        ("after-tax"), as two words run together ("liabilitiesfor"), or misspelt by one edit
        in a long name ("Neflix", "Activsion") or in a five-letter one that is no English
        word ("Kelir" for "Kefir")."""
        if term in self.text or term in self.words:
            return True
        if len(term) > 3 and (term.endswith("s") and term[:-1] in self.words
                              or term.endswith("es") and term[:-2] in self.words):
            return True
        if "-" in term and (term.replace("-", " ") in self.text
                            or term.replace("-", "") in self.words):
            return True
        if term.isalpha() and len(term) >= 8 and any(
                term[:i] in self.words and term[i:] in self.words
                for i in range(3, len(term) - 2)):
            return True
        # five letters are few to judge by: only a word that is no English word ("Kelir")
        long = len(term) >= 6 or (len(term) == 5 and term not in english_words())
        return term.isalpha() and long and any(
            one_edit(term, w) for w in self.words
            if w[:2] == term[:2] and abs(len(w) - len(term)) <= 1 and len(w) >= 5)

    def resolves(self, kind: str, number: int) -> bool:
        """A page within the document (or a page number it prints, e.g. a proceedings
        page), or a figure/table label its text carries ("Figure 7", "Fig. 7", "Table 7")."""
        if kind == "page":
            return self.last_page is None or number <= self.last_page or \
                number in self.page_labels
        pattern = r"\bfig(?:ure)?\.?\s*" if kind == "figure" else r"\btable\s*"
        return re.search(pattern + str(number) + r"\b", self.text) is not None


def unsupported(question: str, text: str, filename: str = "") -> tuple[list[str], int]:
    """The question's specific terms that ``text`` (one passage) never mentions, and how
    many terms were checked. Words of the document's file name are left out: a filing's
    passages rarely repeat the company ("COSTCO_2021_10K.pdf").

    >>> unsupported("What is the address of Florida Department of Science?",
    ...             "Florida Department of Health, 4052 Bald Cypress Way")
    (['science'], 3)
    >>> unsupported("How many stores did Costco run?", "We ran 815 warehouses.", "COSTCO_10K.pdf")
    ([], 0)
    """
    stem = set(re.findall(r"[a-z0-9]+", filename.lower()))
    terms = [t for t in specific_terms(question) if t not in stem]
    if not terms:
        return [], 0
    vocab = Vocabulary([text])
    return [t for t in terms if not vocab.mentions(t)], len(terms)


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
        texts, last_page = self.content.doc_texts(workspace, doc_id)
        labels: dict[int, list[int]] = {}
        for u in self.content.doc_units(workspace, doc_id, "page_number"):
            for m in re.findall(r"\d{1,6}", u.text or ""):
                labels.setdefault(int(m), []).append(u.page)
        vocab = Vocabulary(texts, last_page, labels)
        self._cache[key] = vocab
        if len(self._cache) > self.max_docs:
            self._cache.popitem(last=False)
        return vocab

    def unmentioned(self, question: str, workspace: str, doc_ids: list[str] | None) -> list[str]:
        """Specific terms and page/figure/table references of the question that none of
        ``doc_ids`` holds ([] when the question is not scoped to documents: across a
        workspace absence proves little)."""
        if not doc_ids:
            return []
        terms, refs = specific_terms(question), references(question)
        if not terms and not refs:
            return []
        vocabs = [self.vocabulary(workspace, d) for d in doc_ids]
        missing = [t for t in terms if not any(v.mentions(t) for v in vocabs)]
        return missing + [f"{kind} {n}" for kind, n in refs
                          if not any(v.resolves(kind, n) for v in vocabs)]


def scope_reason(missing: list[str]) -> str:
    """The abstention reason for terms the document never mentions.

    >>> scope_reason(["boeing"])
    "the document never mentions 'boeing'"
    """
    return "the document never mentions " + ", ".join(repr(m) for m in missing[:3])
