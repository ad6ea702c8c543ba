"""Query analysis: modality cues, keywords, entity mentions, year/number cues, scope."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

FUNCTION_WORDS = frozenset("""a an the of in on at to for from by with and or but is are was
were be been being do does did what which who whom whose when where why how this that these
those it its as than then there their they them we our you your i me my he she his her can
could would should will shall may might must if into about""".split())
# Keywords also drop question boilerplate and unit words; BM25 keeps those (they score).
STOP = FUNCTION_WORDS | frozenset("""much many not no yes over under between during per give
show shown tell list according based answer question provide relying details total value
amount usd million millions billion thousand number percentage percent""".split())

MODALITY_CUES = {
    "table": ("table", "row", "column", "cell", "statement", "balance sheet", "cash flow",
              "income statement", "tabular"),
    "image": ("figure", "fig.", "chart", "graph", "plot", "diagram", "image", "picture",
              "photo", "slide", "illustration", "map", "logo", "icon", "color", "colour"),
    "equation": ("equation", "formula", "eq.", "derive", "expression", "theorem"),
}
_YEAR = re.compile(r"\b(?:FY\s?)?((?:19|20)\d{2})\b", re.I)
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?%?")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9&'\-\.]*[A-Za-z0-9&]|[A-Za-z]")


@dataclass
class QueryPlan:
    text: str
    sparse_text: str = ""
    keywords: list[str] = field(default_factory=list)
    modalities: list[str] = field(default_factory=list)
    years: list[str] = field(default_factory=list)
    numbers: list[str] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    doc_ids: list[str] | None = None
    pages: list[int] = field(default_factory=list)  # pages it points at; -1: the last


def keywords(text: str) -> list[str]:
    """Content words in order, lower-cased, stopwords dropped, deduplicated.

    >>> keywords("What is the FY2018 capital expenditure amount for 3M?")
    ['fy2018', 'capital', 'expenditure', '3m']
    """
    out: dict[str, None] = {}
    for tok in re.findall(r"[A-Za-z0-9][A-Za-z0-9&\-\.]*[A-Za-z0-9&]|[A-Za-z0-9]", text):
        low = tok.lower().strip(".")
        if low not in STOP and len(low) > 1:
            out.setdefault(low, None)
    return list(out)


def sparse_text(text: str) -> str:
    """The question without function words, for BM25: those words are in most chunks, so
    they add little to a score but make the inverted-index search walk long posting lists.

    >>> sparse_text("What is the FY2018 capital expenditure amount for 3M?")
    'FY2018 capital expenditure amount 3M'
    """
    words = (w.strip(".,;:?!()[]{}\"'") for w in text.split())
    return " ".join(w for w in words if w and w.lower() not in FUNCTION_WORDS) or text.strip()


def modality_cues(text: str) -> list[str]:
    """Modalities the question points at.

    >>> modality_cues("According to the chart on slide 3, which bar is tallest?")
    ['image']
    >>> modality_cues("In the cash flow statement, what was capex?")
    ['table']
    """
    low = f" {text.lower()} "
    return [m for m, cues in MODALITY_CUES.items()
            if any(re.search(rf"\b{re.escape(c)}", low) for c in cues)]


def mentions(text: str, max_len: int = 4) -> list[str]:
    """Candidate entity mentions: capitalised spans, acronyms and content n-grams.

    >>> mentions("How much did 3M spend on Property, Plant and Equipment?")[:2]
    ['3M', 'Property, Plant and Equipment']
    """
    spans: dict[str, None] = {}
    for m in re.finditer(r"\b(?:[A-Z0-9][\w&\-]*)(?:(?:,? (?:and|of|&|for) |,? )"
                         r"[A-Z0-9][\w&\-]*)*", text):
        span = m.group(0).strip(" ,")
        if span.lower() not in STOP and len(span) > 1:
            spans.setdefault(span, None)
    words = keywords(text)
    for n in range(min(max_len, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            spans.setdefault(" ".join(words[i:i + n]), None)
    return list(spans)


_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "last": -1}
_NUMBER_WORD = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10}
_PAGE_NUM = r"(\d{1,5}|" + "|".join(_NUMBER_WORD) + r")"
_PAGE_RANGE = re.compile(rf"\bpages?\s+{_PAGE_NUM}\s*(?:-|–|to|through|and)\s*(?:pages?\s+)?"
                         rf"{_PAGE_NUM}\b", re.I)
_PAGE_ONE = re.compile(rf"\bpages?\s+(?:no\.?\s*)?{_PAGE_NUM}\b", re.I)
_PAGE_ORDINAL = re.compile(r"\b(first|second|third|fourth|fifth|last) page\b|"
                           r"\b(?:the|front) (cover)\b", re.I)
_EXAMPLE = re.compile(r"\[[^\]]*\]")  # "formatted as a list, e.g. ['Page 2', 'Page 4']"
MAX_PAGE_SPAN = 12  # a range wider than this points at no page in particular


def page_refs(text: str) -> list[int]:
    """The pages a question points at: "page 14", "pages 3 to 10", "the second page", "the
    cover" (the first), "the last page" (-1). Numbers are as printed or as counted: the
    caller maps them to pages.

    >>> page_refs("Format the date mentioned on page 14."), page_refs("on the cover page?")
    ([14], [1])
    >>> page_refs("How many figures are in this paper from Page 3 to Page 5?")
    [3, 4, 5]
    """
    def num(word: str) -> int:
        return int(word) if word.isdigit() else _NUMBER_WORD[word.lower()]

    text = _EXAMPLE.sub(" ", text)
    out: dict[int, None] = {}
    ranges = list(_PAGE_RANGE.finditer(text))
    for m in ranges:
        a, b = sorted((num(m.group(1)), num(m.group(2))))
        if b - a < MAX_PAGE_SPAN:
            out.update(dict.fromkeys(range(a, b + 1)))
    if not ranges:
        out.update(dict.fromkeys(num(m.group(1)) for m in _PAGE_ONE.finditer(text)))
    for m in _PAGE_ORDINAL.finditer(text):
        out.setdefault(_ORDINAL[m.group(1).lower()] if m.group(1) else 1)
    return list(out)


def years(text: str) -> list[str]:
    """The years a text names, in order, once each ("FY2018" -> "2018")."""
    return list(dict.fromkeys(_YEAR.findall(text)))


def analyze(question: str, doc_ids: list[str] | None = None) -> QueryPlan:
    return QueryPlan(text=question.strip(), sparse_text=sparse_text(question),
                     keywords=keywords(question),
                     modalities=modality_cues(question),
                     years=years(question),
                     numbers=[n for n in _NUM.findall(question) if not _YEAR.fullmatch(n)],
                     mentions=mentions(question), doc_ids=doc_ids, pages=page_refs(question))
