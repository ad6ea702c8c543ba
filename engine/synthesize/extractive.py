"""Extractive answerer (CPU default): the table cell or the sentence that answers.

For table evidence it returns the cell at the best row × column match with its headers;
otherwise the best sentence (keyword overlap plus, when an encoder is given, MiniLM
similarity), narrowed to its number when the question asks for an amount. Confidence
combines the retrieval score and the match strength, lowered by the share of the
question's names, codes and years the answer's passage never mentions (an answer about
the Department of Health to a question about the Department of Science); below the
calibrated threshold the answer is an explicit abstention.

The MiniLM similarity needs a vector per candidate sentence: with ``spans``
(:class:`~docray.engine.synthesize.spans.StoredSpans`) they are pooled from the chunk
token vectors stored at ingest, and only sentences without stored tokens are encoded.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import AsyncIterator, NamedTuple

import numpy as np

from docray.engine.describe.structural import PROXY_LABEL
from docray.engine.retrieve.query import QueryPlan, analyze, years
from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.abstain import abstain
from docray.engine.synthesize.cells import _overlap_toks, _toks, best_cell
from docray.engine.synthesize.citations import to_evidence
from docray.engine.synthesize.scope import unsupported

_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])|\n+")
_NUMQ = re.compile(r"\b(how (much|many)|what (is|was|were) the (amount|number|total|value|"
                   r"percentage|rate|ratio)|percentage|amount)\b", re.I)
_NUMBER = re.compile(r"(?<![A-Za-z0-9.,”\"’])\(?[$€£]?\s?\d(?:[\d,]*\d)?(?:\.\d+)?"
                     r"(?:\s?(?:%|percent\b|million\b|billion\b|thousand\b|bn\b|m\b))?\)?", re.I)
_LEADER = re.compile(r"(?:\.\s?){5,}|…{2,}")  # a contents line's dot leader
_MONTH = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*$", re.I)


def sentences(text: str) -> list[str]:
    """Split into sentences/lines, dropping fragments too short to answer anything.

    >>> sentences("Revenue grew. It was $5 million in 2023.\\nNext line here")
    ['Revenue grew.', 'It was $5 million in 2023.', 'Next line here']
    """
    return [s.strip() for s in _SENT.split(text) if len(s.strip()) > 8]


def _digits(text: str) -> str:
    return re.sub(r"[^\d.]", "", text).strip(".")


def _respective(sentence: str, nums: list, asked_years: list[str]):
    """In "$714.3 million, $533.1 million and $409.0 million in 2015, 2014 and 2013,
    respectively", the amount in the place of the one year the question names (or None)."""
    if "respectively" not in sentence.lower():
        return None
    listed = years(sentence)
    asked = [y for y in asked_years if y in listed]
    if len(listed) < 2 or len(asked) != 1 or len(nums) != len(listed):
        return None
    return nums[listed.index(asked[0])]


def _number_near(sentence: str, kw: set[str], plan: QueryPlan) -> str | None:
    """The amount in ``sentence`` nearest the question's keywords, or None.

    Not an answer: years, days of a month ("December 31"), and numbers the question itself
    gives ("at 2021", "page 10", "3M"): the caller then keeps the whole sentence.

    >>> _number_near("As of December 31, 2019, brand names were $3,700.", {"brand"},
    ...              analyze("What is the value of brand names as of December 31, 2019?"))
    '$3,700'
    >>> _number_near("Costco operated 815 warehouses in 2021.", {"warehouses"},
    ...              analyze("How many warehouses did Costco operate at 2021?"))
    '815'
    >>> _number_near("Warehouses at August 29, 2021.", {"warehouses"},
    ...              analyze("How many in 2021?")) is None
    True
    """
    given = {_digits(m.group(0)) for m in _NUMBER.finditer(plan.text)}
    nums = []
    for m in _NUMBER.finditer(sentence):
        core = _digits(m.group(0))
        if not core or core in given or re.fullmatch(r"(19|20)\d{2}", core):
            continue
        if _MONTH.search(sentence[:m.start()]) and re.fullmatch(r"\d{1,2}", core):
            continue  # the day of a date
        nums.append(m)
    if not nums:
        return None
    words = [(m.start(), m.group(0).lower()) for m in re.finditer(r"[a-z0-9&]+", sentence,
                                                                  re.I)]
    anchors = [pos for pos, w in words if w in kw] or [0]
    best = _respective(sentence, nums, plan.years) or \
        min(nums, key=lambda m: min(abs(m.start() - a) for a in anchors))
    found = best.group(0).strip()
    return found if found.startswith("(") or not found.endswith(")") else found[:-1]


def _skeleton(line: str) -> bool:
    """A table line that is mostly empty cells ("Error Type |  |  |  | FEVEROUS")."""
    cells = line.split("|")
    return len(cells) >= 3 and sum(not c.strip() for c in cells) * 2 >= len(cells)


def _states_nothing(line: str, toks: set[str], asked: set[str], cased: bool) -> bool:
    """Lines that cannot be an answer: the question's own words again ("January 28, 2023"),
    a label of fewer than three words ("NIKE, INC."), a table row of empty cells, a contents
    line ("Strategic Priorities ......"), or, in a passage that has capitals, a fragment
    starting in lower case (the rest of a sentence cut by the chunk or a line break)."""
    return (toks <= asked or len(toks) < 3 or _skeleton(line) or bool(_LEADER.search(line))
            or (cased and line[0].islower()))


class _Cand(NamedTuple):
    strength: float
    text: str  # what the answer shows
    idx: int  # passage index
    cell: str | None  # the cell value, for table answers
    span: str  # the text of the chunk it stands on (the sentence, or the cell's table line)


def _cell_line(chunk_text: str, row: str, value: str) -> str:
    """The line of a table chunk's text that holds this row's value ("" if none)."""
    return next((ln for ln in chunk_text.split("\n") if row in ln and value in ln), "")


class ExtractiveAnswerer:
    name = "extractive"

    def __init__(self, threshold: float = 0.3, encoder=None, spans=None,
                 unsupported_weight: float = 0.0):
        self.threshold, self.encoder, self.spans = threshold, encoder, spans
        self.unsupported_weight = unsupported_weight

    def _candidates(self, question: str, passages: list[Passage]):
        plan = analyze(question)
        kw = {t for k in plan.keywords for t in _toks(k)}
        top = max((p.score for p in passages), default=1.0) or 1.0
        out: list[_Cand] = []
        wants_number = bool(_NUMQ.search(question))
        asked = _toks(question)
        lines_of = [sentences(p.chunk.text) for p in passages]
        seen = Counter(s for lines in lines_of for s in set(lines))
        running = {s for s, n in seen.items() if n >= 3}  # page headers and footers
        for i, p in enumerate(passages):
            rel = p.score / top
            headings = {u.text.strip() for u in p.units if u.modality == "title"}
            for u in p.units:
                if u.table is not None:
                    hit = best_cell(u.table, plan.keywords, plan.years)
                    if hit and hit.score > 0.15:
                        text = f"{hit.text} ({hit.row} — {hit.column})".strip()
                        out.append(_Cand(min(1.0, hit.score) * (0.5 + 0.5 * rel), text, i,
                                         hit.text, _cell_line(p.chunk.text, hit.row, hit.text)))
            lines = lines_of[i]
            cased = any(s[0].isupper() for s in lines)
            for s in lines:
                toks = _toks(s)
                if s in headings or s in running or _states_nothing(s, toks, asked, cased):
                    continue
                ov = _overlap_toks(kw, toks)
                if ov > 0:
                    bonus = 1.15 if wants_number and re.search(r"\d", s) else 1.0
                    out.append(_Cand(min(1.0, ov * bonus) * rel, s, i, None, s))
        return plan, kw, out

    def _stored(self, cands: list[_Cand], passages: list[Passage]) -> list:
        if self.spans is None:
            return [None] * len(cands)
        return self.spans.vectors(passages, [(c.idx, c.span) for c in cands])

    def _semantic(self, question: str, cands: list[_Cand], passages: list[Passage],
                  qvec) -> list:
        """Strength becomes ½ lexical + ½ cosine to the question. Only the best candidate
        is used, so a sentence without stored tokens is encoded only if it could still
        win: its cosine is at most 1, so ½ s + ½ bounds it (the best one is the same)."""
        if self.encoder is None or not cands:
            return cands
        cands = sorted(cands, key=lambda c: -c.strength)[:10]
        vecs = self._stored(cands, passages)
        if qvec is None:
            qvec = self.encoder.encode([question])[0]
        qvec = np.asarray(qvec, np.float32)  # (dim,)
        final = [None if v is None else 0.5 * c.strength + 0.5 * max(float(v @ qvec), 0.0)
                 for c, v in zip(cands, vecs)]
        best = max((f for f in final if f is not None), default=-1.0)
        todo = [j for j, f in enumerate(final)
                if f is None and 0.5 * cands[j].strength + 0.5 >= best]
        if todo:
            enc = self.encoder.encode([cands[j].text[:240] for j in todo])  # (len(todo), dim)
            for j, v in zip(todo, enc):
                final[j] = 0.5 * cands[j].strength + 0.5 * max(float(np.asarray(v) @ qvec), 0.0)
        return [c._replace(strength=0.5 * c.strength if f is None else f)  # f None: cannot win
                for c, f in zip(cands, final)]

    async def answer(self, question: str, passages: list[Passage],
                     qvec: np.ndarray | None = None) -> Answer:
        plan, kw, cands = self._candidates(question, passages)
        cands = sorted(self._semantic(question, cands, passages, qvec),
                       key=lambda c: -c.strength)
        evidence = to_evidence(passages)
        if not cands:
            return abstain(evidence, 0.0, "no passage shares a content word with the question")
        strength, text, idx, cell, _ = cands[0]
        missing: list[str] = []
        if self.unsupported_weight:
            missing, checked = unsupported(question, passages[idx].chunk.text,
                                           passages[idx].filename)
            strength *= 1 - self.unsupported_weight * len(missing) / max(checked, 1)
        if strength < self.threshold:
            unnamed = f"; its passage never mentions {', '.join(map(repr, missing[:3]))}" \
                if missing else ""
            return abstain(evidence, strength, f"best evidence match {strength:.2f} is below "
                           f"{self.threshold:.2f}{unnamed}")
        answer = PROXY_LABEL.sub("", text) if cell is None else text
        if cell is None and _NUMQ.search(question):
            answer = _number_near(answer, kw, plan) or answer
        return Answer(answer=answer, abstained=False, evidence=evidence, confidence=strength,
                      citations=[idx], reason=f"from {evidence[idx].doc} p.{evidence[idx].page}")

    async def stream(self, question: str, passages: list[Passage],
                     qvec: np.ndarray | None = None) -> AsyncIterator[str]:
        result = await self.answer(question, passages, qvec)
        for token in re.findall(r"\S+\s*", result.answer):
            yield token
