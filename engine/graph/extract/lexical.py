"""Deterministic entity/relation extractor: no models, no downloads.

Per passage (chunk or unit text) it finds

* numbers with units: money (``$1,577 million``), percentages (``12.5%``), quantities, years;
* acronyms (``PP&E``, ``3M``) and their long forms from "long form (ACR)" definitions;
* capitalised multi-word names (``Consolidated Statement of Cash Flows``);
* key phrases from a RAKE-style scorer over stopword-delimited n-grams;

and relates every pair of entities that share a sentence (``co-occurs``, weight = count;
pairs that share only the passage add ``chunk_weight``). Entities in a table / figure /
equation unit get ``belongs_to`` its anchor node.
"""
from __future__ import annotations

import logging
import re
from collections import Counter, defaultdict
from itertools import combinations
from typing import Sequence

from docray.engine.config import ExtractConfig
from docray.engine.graph.align import acronym_definitions, is_acronym, normalize
from docray.engine.graph.extract.base import Accumulator, Passage, passages
from docray.engine.graph.records import CO_OCCURS
from docray.engine.model import Chunk, Entity, Relation, Unit

log = logging.getLogger(__name__)

STOPWORDS = frozenset("""a about above after again against all also am an and any are as at be
because been before being below between both but by can could did do does doing down during each
few for from further had has have having he her here hers herself him himself his how i if in into
is it its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them themselves
then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves may might must shall
per via upon within without according approximately including include includes included new
next year years total net based due approximately respectively however therefore thus well like
one two three four five six seven eight nine ten first second third last several many much
million billion thousand percent rose grew fell rise grow fall increased decreased increase
decrease spent spend spends expects expect expected reported report reports said says ended ending
declined compared reached remained remain became become made make makes used use uses got get
gets see seen shown show shows later earlier meanwhile moreover furthermore""".split())

_MONEY = (r"[$€£¥]\s?\(?\d[\d,]*(?:\.\d+)?\)?(?:\s?(?:(?i:million|billion|thousand|trillion)"
          r"|bn|mn|[MBK])\b)?")
_PERCENT = r"[-+]?\d[\d,]*(?:\.\d+)?\s?(?:%|(?i:percent\b|per cent\b))"
_QUANTITY = (r"\b\d[\d,]*(?:\.\d+)?\s?(?:(?i:million|billion|thousand|trillion)|kg|mg|km|cm|mm|ms"
             r"|GB|MB|TB|kW|MW|GW|kWh|MWh|°C|(?i:tons?|tonnes?|units|shares|employees|hours"
             r"|days|months))\b")
_YEAR = r"\b(?:19|20)\d{2}\b"
NUMBER = re.compile(f"(?P<money>{_MONEY})|(?P<percent>{_PERCENT})|(?P<quantity>{_QUANTITY})"
                    f"|(?P<date>{_YEAR})")
ACRONYM = re.compile(r"(?<![\w&])(?=[A-Z0-9&.-]*[A-Z])[A-Z0-9][A-Za-z0-9&.-]*[A-Z0-9](?![\w&])")
_CAP = r"(?:[0-9]*[A-Z](?:[\w'&.-]*\w)?)"
NAME = re.compile(rf"(?<![\w&]){_CAP}(?:\s+(?:(?:of|and|for|the|de|&)\s+)?{_CAP})*")
_SENT = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9$(\"'])|\n+")
_WORD = re.compile(r"[A-Za-z0-9][\w'&-]*[A-Za-z0-9]|[A-Za-z0-9]|[^\sA-Za-z\d]")


def sentences(text: str) -> list[str]:
    """Split into sentences (and lines, so table rows stand alone).

    >>> sentences("3M grew. Sales rose 5%.\\nRow a | 1")
    ['3M grew.', 'Sales rose 5%.', 'Row a | 1']
    """
    return [s.strip() for s in _SENT.split(text) if s and s.strip()]


def rake_phrases(sents: Sequence[str], max_words: int = 4) -> list[tuple[str, float]]:
    """RAKE key phrases: stopword/punctuation-delimited runs scored by word degree/frequency.

    >>> rake_phrases(["capital spending on plants", "capital spending rose"])[0][0]
    'capital spending'
    """
    phrases: list[list[str]] = []
    for s in sents:
        run: list[str] = []
        for tok in _WORD.findall(s) + ["."]:
            if tok.isalpha() and tok.lower() not in STOPWORDS and not is_acronym(tok):
                run.append(tok)
                continue
            if 0 < len(run) <= max_words:
                phrases.append(run)
            run = []
    freq: Counter[str] = Counter()
    degree: Counter[str] = Counter()
    for ph in phrases:
        for w in ph:
            freq[w.lower()] += 1
            degree[w.lower()] += len(ph)
    counts = Counter(" ".join(ph) for ph in phrases)
    scored = {}
    for text, n in counts.items():
        words = text.split()
        if len(words) == 1 and (n < 2 or len(text) < 4):
            continue
        scored[text] = sum(degree[w.lower()] / freq[w.lower()] for w in words) * (1 + 0.1 * (n - 1))
    return sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))


class LexicalExtractor:
    """The default :class:`~docray.engine.graph.extract.Extractor`."""

    def __init__(self, config: ExtractConfig | None = None, chunk_weight: float = 0.25,
                 max_phrases: int = 5):
        self.config = config or ExtractConfig()
        self.chunk_weight, self.max_phrases = chunk_weight, max_phrases

    def extract(self, items: Sequence[Chunk | Unit]) -> tuple[list[Entity], list[Relation]]:
        acc = Accumulator()
        for p in passages(items):
            self.extract_passage(p, acc)
        return acc.result()

    def extract_passage(self, p: Passage, acc: Accumulator) -> list[str]:
        """Add one passage's entities and relations to ``acc``; returns its entity ids."""
        sents = sentences(p.text)
        per_sent = [self._sentence_spans(s) for s in sents]
        ranked = Counter()
        for spans in per_sent:
            for name, etype, aliases, prio in spans:
                ranked[(name, etype, tuple(aliases))] += prio
        keep = {k for k, _ in ranked.most_common(self.config.max_entities_per_chunk)}
        ids_per_sent: list[list[str]] = []
        for spans in per_sent:
            ids = []
            for name, etype, aliases, _ in spans:
                if (name, etype, tuple(aliases)) in keep:
                    eid = acc.entity(name, etype, p, aliases)
                    if eid and eid not in ids:
                        ids.append(eid)
            ids_per_sent.append(ids)
        for phrase, _ in rake_phrases(sents)[: self.max_phrases]:
            eid = acc.entity(phrase, "concept", p)
            for s, ids in zip(sents, ids_per_sent):
                if eid and phrase in s and eid not in ids:
                    ids.append(eid)
        all_ids = list(dict.fromkeys(i for ids in ids_per_sent for i in ids))
        self._cooccur(ids_per_sent, all_ids, p, acc)
        acc.belongs_to(all_ids, p)
        return all_ids

    def _cooccur(self, ids_per_sent, all_ids, p: Passage, acc: Accumulator) -> None:
        together: set[tuple[str, str]] = set()
        for ids in ids_per_sent:
            for a, b in combinations(sorted(set(ids)), 2):
                acc.relation(a, b, CO_OCCURS, 1.0, p)
                together.add((a, b))
        if self.chunk_weight > 0:
            for a, b in combinations(sorted(all_ids), 2):
                if (a, b) not in together:
                    acc.relation(a, b, CO_OCCURS, self.chunk_weight, p)

    def _sentence_spans(self, s: str) -> list[tuple[str, str, list[str], float]]:
        """(name, type, aliases, priority) for each span in one sentence."""
        spans: list[tuple[str, str, list[str], float]] = []
        defs = [(start, end) for *_, start, end in acronym_definitions(s)]
        spans += [(exp, "concept", [acr], 3.0) for exp, acr, _, _ in acronym_definitions(s)]
        used = list(defs)
        for m in NUMBER.finditer(s):
            spans.append((m.group(0).strip(), m.lastgroup or "quantity", [], 2.0))
            used.append(m.span())
        for m in ACRONYM.finditer(s):
            if is_acronym(m.group(0)) and m.group(0).lower() not in STOPWORDS \
                    and not _inside(m.span(), used):
                spans.append((m.group(0), "acronym", [], 2.5))
        for m in NAME.finditer(s):
            name = _trim_name(s, m)
            if name and not _inside(m.span(), used):
                spans.append((name, "name", [], 1.5))
        return _dedupe(spans)


def _inside(span: tuple[int, int], used: list[tuple[int, int]]) -> bool:
    return any(a <= span[0] and span[1] <= b for a, b in used)


def _trim_name(s: str, m: re.Match) -> str | None:
    """Drop leading stopwords and sentence-initial single words; keep real names."""
    words = m.group(0).split()
    while words and words[0].lower() in STOPWORDS:
        words = words[1:]
    while words and words[-1].lower() in {"of", "and", "for", "the", "de", "&"}:
        words = words[:-1]
    if not words:
        return None
    at_start = not s[: m.start()].strip(" \"'(|")
    if len(words) == 1 and (at_start or is_acronym(words[0]) or len(words[0]) < 3):
        return None
    return " ".join(words)


def _dedupe(spans):
    seen: dict[str, tuple] = {}
    for sp in spans:
        key = normalize(sp[0])
        if key and (key not in seen or sp[3] > seen[key][3]):
            seen[key] = sp
    return list(seen.values())
