"""Extractive answerer (CPU default): the value that answers, then the line that says it.

The question's misspelt words are first put right against its passages ("ProBugs Kelir"
for the table's "ProBugs Kefir": respell.py).

A financial ratio the question names ("the FY2021 inventory turnover") is computed from the
document's statements (ratios.py); how many tables, figures or appendices the document has
is counted from the labels it gives them (inventory.py), the title of its "Unit 14" read
off the line that labels it (titles.py). For table evidence it finds the cell at the best
row × column match over the cell graph (header paths, section rows, the table's scale) and
answers with the value, its row, column and scale (when the passages hold no cell, the row
the question names is read from any table of the document: docrows.py); over two or more years it computes the change, percentage change,
average or total the question asks for from that row; over two rows (or columns) the
question names, their sum, difference, ratio or share (pairs.py). Otherwise it takes the best
sentence (keyword overlap plus, when an encoder is given, MiniLM similarity) and narrows
it to the span the question asks for (an amount, a date, a name, or the sum, change or
average of the amounts it gives per year): that span is the value, and the answer reads
the value, then the sentence that supports it. Figures answer from the text inside them (OCR) and
their description lines, equations from the sentences around them. Confidence
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
from docray.engine.retrieve.query import analyze
from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.abstain import abstain
from docray.engine.synthesize.asks import Ask, ask, combine, fmt, ordered
from docray.engine.synthesize.cells import (CellHit, _overlap_toks, _toks, best_cell, pick_year,
                                            year_values)
from docray.engine.synthesize.citations import cite_units, to_evidence
from docray.engine.synthesize.columns import column_ask, column_cell
from docray.engine.synthesize.docrows import named_row
from docray.engine.synthesize.leadin import with_led_tables
from docray.engine.synthesize.pairs import PairAsk, pair_ask, pair_cell, schedule_share
from docray.engine.synthesize.readers import read_document
from docray.engine.synthesize.respell import respell
from docray.engine.synthesize.scope import ScopeChecker, unsupported
from docray.engine.synthesize.units import doc_name_words, restate
from docray.engine.synthesize.values import has_date, states_value, value_span

_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])|\n+")
_LEADER = re.compile(r"(?:\.\s?){5,}|…{2,}")  # a contents line's dot leader
_COLUMNS = "Columns: "  # the header listing a table chunk opens with (describe/structural.py)
# a line break inside a sentence: no stop before it, lower case (after a bullet) after it
_BROKEN = re.compile(r"(?<![.!?:;])[ \t]*\n+[ \t]*(?:[•o§▪◦·]\s+)?(?=[a-z])")


def sentences(text: str) -> list[str]:
    """Split into sentences/lines, dropping fragments too short to answer anything.

    >>> sentences("Revenue grew. It was $5 million in 2023.\\nNext line here")
    ['Revenue grew.', 'It was $5 million in 2023.', 'Next line here']

    A sentence broken over two lines (the second in lower case) is one sentence:

    >>> sentences("Case Study- Discrimination in\\n• the Workplace Continues")
    ['Case Study- Discrimination in the Workplace Continues']
    """
    return [s.strip() for s in _SENT.split(_BROKEN.sub(" ", text)) if len(s.strip()) > 8]


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


def with_support(value: str, support: str) -> str:
    """The answer as read: the value first, then the sentence that states it.

    >>> with_support("$5 million", "It was $5 million in 2023.")
    '$5 million — It was $5 million in 2023.'
    >>> with_support("Revenue grew.", "Revenue grew.")
    'Revenue grew.'
    """
    return value if not support or support == value else f"{value} — {support}"


class _Cand(NamedTuple):
    strength: float
    text: str  # what the answer shows
    idx: int  # passage index
    cell: CellHit | None  # the cell, for table answers
    span: str  # the text of the chunk it stands on (the sentence, or the cell's table line)
    fit: float = 1.0  # how well its form fits the question, kept through the semantic mix
    value: str = ""  # a value computed from two cells (see pairs.py)


def _cell_line(chunk_text: str, row: str, value: str) -> str:
    """The line of a table chunk's text that holds this row's value ("" if none)."""
    own = row.split(": ", 1)[-1]
    return next((ln for ln in chunk_text.split("\n") if own in ln and value in ln), "")


def table_answer(hit: CellHit, a: Ask) -> tuple[str, str]:
    """(value, answer) for a cell: the value with its scale, then its row and column; over
    the years the question names, the operation it asks for or each year's value.

    >>> h = CellHit("(27)", "Cheese", "2019", 1.0, -27.0, "thousand",
    ...             by_column={"1:2019": (-27.0, False), "2:2018": (10.0, False)})
    >>> table_answer(h, ask("What was the net sales of cheese in 2019?"))
    ('(27) thousand', '(27) thousand (Cheese — 2019)')
    >>> table_answer(h, ask("What is the change in cheese between 2018 and 2019?"))[0]
    '-37 thousand'
    """
    # a head count in a "$ in millions" table is no amount of millions
    scale = f" {hit.scale}" if hit.scale and not hit.percent and not _COUNTED_ROW.search(
        hit.row.split(": ")[-1]) else ""
    if a.op in ("max_year", "min_year"):
        picked = pick_year(hit, a.op == "max_year")
        if picked:
            year, v, n = picked
            return year, f"{year} ({hit.row}: {fmt(v)}{scale}, the {a.op[:3]} of {n} years)"
    pairs = year_values(hit, a.years) if len(a.years) >= 2 else []
    if pairs and a.op:
        result = combine(a.op, ordered(pairs))
        if result is not None:
            pct = "%" if a.op == "percent_change" or hit.percent else ""
            scale = "" if a.op == "percent_change" else scale
            shown = ", ".join(f"{y}: {fmt(v)}" for y, v in pairs)
            value = f"{fmt(result)}{pct}{scale}"
            return value, f"{value} ({a.op.replace('_', ' ')} of {hit.row}; {shown})"
    if pairs and a.each:
        value = "; ".join(fmt(v) for _, v in pairs) + scale
        return value, f"{value} ({hit.row} — {', '.join(y for y, _ in pairs)})"
    value = f"{hit.text}{scale}"
    return value, f"{value} ({hit.row} — {hit.column})".replace(" — )", ")")


_NAMED_ROW = 0.6  # confidence of a row found by its label outside the passages
_COUNTED_ROW = re.compile(r"\b(?:staff|employees|headcount|people|persons|stores|warehouses|"
                          r"locations|branches|offices|countries)\b", re.I)
_PAIR_FIT = 1.3  # a value computed from the two cells the question names
_STATES_BONUS = 1.3  # a number question's line that says "<its term> was <amount>"
_VALUE_MARGIN = 0.85  # how close to the best a value-bearing candidate must be
_NO_VALUE = 0.7  # confidence kept by an answer that lacks the kind of value asked for
_ANY_DATE = 0.1  # a date line sharing no word with a question that asks for a date
_SAME_PASSAGE_MARGIN = 0.5  # ... when it is a line of the best candidate's passage
# How a question is to be answered, not what it is about ("using only the information
# within the balance sheet", "round your answer to two decimal places").
_INSTRUCTION = frozenset("""using use only information within shown primarily assume analyst
answer answers response round rounded decimal decimals places place units unit terms format
formatted please directly give write calculate compute help basing based relying details
following question questions resource resources investment banker public equities have has
had""".split())
_VALUE_KINDS = ("number", "date", "entity")
_FIGURE_CUES = re.compile(r"\b(figure|fig\.|chart|graph|plot|diagram|image|picture|slide|"
                          r"map|logo|icon|colou?r|shown|illustrat)", re.I)


def _rarity(kw: set[str], passages: list[Passage]) -> dict[str, float]:
    """Each keyword's weight for picking a table row: 1 / (1 + the passages saying it), so
    the words every passage shares (the topic, "net sales") count less than the one that
    says which row ("cheese")."""
    said = [_toks(p.chunk.text) for p in passages]
    return {t: 1.0 / (1 + sum(t in s for s in said)) for t in kw}


class ExtractiveAnswerer:
    name = "extractive"

    def __init__(self, threshold: float = 0.3, encoder=None, spans=None,
                 unsupported_weight: float = 0.0, tables=None):
        self.threshold, self.encoder, self.spans = threshold, encoder, spans
        self.unsupported_weight = unsupported_weight
        self.tables = tables  # DocTables: the statements a named ratio is computed from
        self._scope = ScopeChecker(tables.content) if tables is not None else None

    def _table_cands(self, plan, a: Ask, i: int, p: Passage, rel: float,
                     weights: dict[str, float], pair: PairAsk | None = None) -> list[_Cand]:
        out = []
        for u in p.units if pair else []:
            hit = pair_cell(u.table, pair, plan.text, plan.years, u.caption) or \
                schedule_share(u.table, pair, plan.years, f"{p.chunk.text} {u.caption}") \
                if u.table is not None else None
            if hit:
                out.append(_Cand(hit.score * (0.5 + 0.5 * rel), hit.answer, i, None, hit.line,
                                 _PAIR_FIT, hit.value))
        # "total" is a stopword for retrieval, but says which row: "Total net sales"
        # (unless it names the sum asked for over the years)
        total = a.op != "sum" and re.search(r"\btotal\b", plan.text, re.I)
        # the company the document is ("Best Buy" in BESTBUY_2023_10K.pdf) names no row
        own = doc_name_words(plan.keywords, p.filename)
        if re.search(r"\bnet (?:change|increase|decrease)", plan.text, re.I):
            own = own | {"net"}  # the operation's word, not the row's ("Net revenues")
        keywords = [k for k in plan.keywords if k not in _INSTRUCTION and k not in own] + (
            ["total"] if total else [])
        # a percentage change is computed from amounts, not from the percent columns
        percent = a.percent and a.op != "percent_change"
        for u in p.units:
            if u.table is None:
                continue
            hit = best_cell(u.table, keywords, plan.years, u.caption, weights, percent)
            if hit and hit.score > 0.15 and not (a.kind == "entity" and hit.value is not None):
                # (an amount is no answer to "who")
                value, text = table_answer(hit, a)
                computed = 1.25 if a.op and " of " in text[len(value):] else 1.0
                if a.kind == "number" and plan.years and any(y in hit.column
                                                             for y in plan.years):
                    computed = max(computed, 1.2)  # row and the year's column both met
                out.append(_Cand(min(1.0, hit.score * computed) * (0.5 + 0.5 * rel), text,
                                 i, hit, _cell_line(p.chunk.text, hit.row, hit.text)))
        return out

    def _candidates(self, question: str, passages: list[Passage]):
        plan, a = analyze(question), ask(question)
        kw = {t for k in plan.keywords for t in _toks(k)} - _INSTRUCTION
        top = max((p.score for p in passages), default=1.0) or 1.0
        out: list[_Cand] = []
        asked = _toks(question)
        figure_q = bool(_FIGURE_CUES.search(question))
        lines_of = [sentences(p.chunk.text) for p in passages]
        seen = Counter(s for lines in lines_of for s in set(lines))
        running = {s for s, n in seen.items() if n >= 3}  # page headers and footers
        weights = _rarity(kw, passages)
        pair = pair_ask(question) if a.kind in ("number", "fact") else None
        col = column_ask(question)
        for i, p in enumerate(passages):
            rel = p.score / top
            out += self._table_cands(plan, a, i, p, rel, weights, pair)
            for u in p.units if col else []:
                hit = column_cell(u.table, col, kw, a.years or plan.years, u.caption) \
                    if u.table is not None else None
                if hit:  # a sum or average over the column the question names
                    out.append(_Cand(hit.score * (0.5 + 0.5 * rel), hit.answer, i, None,
                                     hit.answer, _PAIR_FIT, hit.value))
            headings = {u.text.strip() for u in p.units if u.modality == "title"}
            # a caption answers a question about the figure, not one about the topic
            off_modality = 0.8 if p.chunk.modality == "image" and not figure_q else 1.0
            lines = lines_of[i]
            if any(u.table is not None for u in p.units):  # the cell graph reads those
                # (the rows, and the header listing: a column header is never the answer)
                lines = [s for s in lines if " | " not in s and not s.startswith(_COLUMNS)]
            cased = any(s[0].isupper() for s in lines)
            for s in lines:
                toks = _toks(s)
                if s in headings or s in running or _states_nothing(s, toks, asked, cased):
                    continue
                ov = _overlap_toks(kw, toks)
                if ov > 0:
                    bonus = 1.15 if a.kind == "number" and re.search(r"\d", s) else 1.0
                    # "Net sales were $93,662": says what the question's term is
                    fit = _STATES_BONUS if a.kind == "number" and states_value(s, kw) else 1.0
                    out.append(_Cand(min(1.0, ov * bonus) * rel * off_modality, s, i, None, s,
                                     fit))
                elif a.kind == "date" and has_date(s):  # "the date on page 14": any date
                    out.append(_Cand(_ANY_DATE * rel * off_modality, s, i, None, s))
        return plan, a, kw, out

    def _stored(self, cands: list[_Cand], passages: list[Passage]) -> list:
        if self.spans is None:
            return [None] * len(cands)
        return self.spans.vectors(passages, [(c.idx, c.span) for c in cands])

    def _semantic(self, question: str, cands: list[_Cand], passages: list[Passage],
                  qvec) -> list:
        """Strength becomes ½ lexical + ½ cosine to the question, for the ten strongest.
        A sentence without stored tokens is encoded only if it could still win: its cosine
        is at most 1, so ½ s + ½ bounds it."""
        if self.encoder is None or not cands:
            return [c._replace(strength=min(1.0, c.strength * c.fit)) for c in cands]
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
        return [c._replace(strength=min(1.0, (0.5 * c.strength if f is None else f) * c.fit))
                for c, f in zip(cands, final)]  # f None: cannot win

    def _shape(self, c: _Cand, a: Ask, kw: set[str], plan) -> tuple[str, str, str]:
        """(answer, value, support) of a candidate; value "" when no span answers."""
        if c.value:
            return c.text, c.value, c.span
        if c.cell is not None:
            value, answer = table_answer(c.cell, a)
            return answer, value, c.span or answer
        line = PROXY_LABEL.sub("", c.text)
        span = value_span(line, a, kw, plan) if a.kind in _VALUE_KINDS else None
        return (with_support(span, line), span, line) if span else (line, "", line)

    def _pick(self, cands: list[_Cand], a: Ask, kw: set[str], plan):
        """The best candidate; for a question that wants a value, the best one that holds
        such a value when it is nearly as strong (a caption or title line ranks high on
        the question's words but states no number)."""
        best = cands[0]
        shaped = self._shape(best, a, kw, plan)
        if a.kind not in _VALUE_KINDS or shaped[1]:
            return best, shaped
        for c in cands[1:]:
            # a line of the same passage (the text inside a figure) may be weaker
            margin = _SAME_PASSAGE_MARGIN if c.idx == best.idx else _VALUE_MARGIN
            if c.strength < best.strength * margin:
                continue
            other = self._shape(c, a, kw, plan)
            if other[1]:
                return c, other
        return best, shaped

    async def answer(self, question: str, passages: list[Passage],
                     qvec: np.ndarray | None = None) -> Answer:
        question = respell(question, [p.chunk.text for p in passages])  # "Activsion"
        if self.tables:
            if (found := read_document(question, passages, self.tables)) is not None:
                return found
            # a lead-in ranked without its table: the table's cells too
            passages = with_led_tables(passages, self.tables.content)
        plan, a, kw, cands = self._candidates(question, passages)
        cands = sorted(self._semantic(question, cands, passages, qvec),
                       key=lambda c: -c.strength)
        evidence = to_evidence(passages)
        if self.tables and passages and a.kind == "number" and plan.years and (
                not cands or (cands[0].cell is None and not cands[0].value)):
            named = self._named_row(question, passages, a, plan)  # no cell in the passages
            if named is not None:
                return named
        if not cands:
            return abstain(evidence, 0.0, "no passage shares a content word with the question")
        best, (answer, value, support) = self._pick(cands, a, kw, plan)
        answer, value = restate(answer, value, question, a.kind)  # "in USD billions"
        strength, idx = best.strength, best.idx
        if a.kind in _VALUE_KINDS and not value:
            strength *= _NO_VALUE  # asked for an amount, a date or a name; none found
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
        off = self._off_page(plan, passages, evidence[idx].page)
        if off:
            return abstain(evidence, 0.0, off)
        return Answer(answer=answer, abstained=False, evidence=evidence, confidence=strength,
                      citations=[idx], reason=f"from {evidence[idx].doc} p.{evidence[idx].page}",
                      value=value or answer, support=support)

    def _off_page(self, plan, passages: list[Passage], page: int) -> str:
        """Why the answer cannot stand when the question points at pages ("on page 10",
        "the last page") and its evidence lies on none of them; "" otherwise."""
        if not plan.pages or self._scope is None:
            return ""
        ch = passages[0].chunk
        vocab = self._scope.vocabulary(ch.workspace, ch.doc_id)
        wanted = {p for n in plan.pages for p in vocab.pages(n)}
        if not wanted or page in wanted:
            return ""
        return (f"the question points at page {', '.join(map(str, sorted(wanted)[:3]))}; "
                f"the best evidence is on page {page}")

    def _named_row(self, question: str, passages: list[Passage], a: Ask, plan
                   ) -> Answer | None:
        """The answer from the document's table row the question names (docrows.py), when
        the passages hold no table cell for it."""
        ch = passages[0].chunk
        found = named_row(self.tables, ch.workspace, ch.doc_id, question, a.years or plan.years,
                          passages[0].filename)
        if found is None:
            return None
        hit, row = found
        value, answer = table_answer(hit, a)
        evidence, cites = cite_units(passages, [row.unit])
        e = evidence[cites[0]]
        return Answer(answer=answer, abstained=False, evidence=evidence,
                      confidence=_NAMED_ROW, citations=cites, reason=f"from {e.doc} p.{e.page}",
                      value=value, support=row.label)

    async def stream(self, question: str, passages: list[Passage],
                     qvec: np.ndarray | None = None) -> AsyncIterator[str]:
        result = await self.answer(question, passages, qvec)
        for token in re.findall(r"\S+\s*", result.answer):
            yield token
