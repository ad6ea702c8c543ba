"""Text layer → spans → blocks, plus reading order (XY-cut) and text-quality checks.

A *span* is a run of characters on one visual line without a wide gap (a word group,
a table cell, one column's part of a line). A *block* is a stack of spans that read as
one paragraph. All boxes are PDF points, origin top-left.
"""
from __future__ import annotations

import ctypes
import re
import statistics
import unicodedata
from dataclasses import dataclass, field, replace

import pypdfium2.raw as raw

Box = tuple[float, float, float, float]

_GAP_EM = 1.1          # a horizontal gap wider than this (in font sizes) splits a span
_JUSTIFIED_EM = 2.2    # ... unless the line is justified with word gaps under this
_NUM_GAP_EM = 0.45     # between two figures, a gap wider than this splits (tight columns)
_NUM_END = re.compile(r"(?:^|\s)(?:[(\-−$€£]?\d[\d,]*(?:\.\d+)?\)?%?|[—–-])$")
_NUM_START = frozenset("0123456789$(—–-€£")
_WORD_RE = re.compile(r"[A-Za-z]{2,}")
_VOWELS = set("aeiouyAEIOUY")
_SECNUM = re.compile(r"^(\d+(\.\d+)*\.?|[IVX]+\.|[A-Z]\.)$")


@dataclass
class Span:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float = 10.0
    bold: bool = False
    angle: float = 0.0
    line: int = -1  # the text layer's line it came from

    @property
    def box(self) -> Box:
        return (self.x0, self.y0, self.x1, self.y1)

    @property
    def yc(self) -> float:
        return (self.y0 + self.y1) / 2


@dataclass
class Block:
    """A unit in the making: kind is text/title/table/image/equation/caption/…"""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str = ""
    kind: str = "text"
    size: float = 10.0
    bold: bool = False
    n_lines: int = 1
    spans: list[Span] = field(default_factory=list)
    level: int | None = None
    caption: str = ""
    table: object | None = None
    artifact_id: str | None = None
    equation_number: str | None = None
    ocr: bool = False

    @property
    def box(self) -> Box:
        return (self.x0, self.y0, self.x1, self.y1)


def union(boxes) -> Box:
    boxes = list(boxes)
    return (min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes))


def inside(inner: Box, outer: Box, tol: float = 2.0) -> bool:
    cx, cy = (inner[0] + inner[2]) / 2, (inner[1] + inner[3]) / 2
    return outer[0] - tol <= cx <= outer[2] + tol and outer[1] - tol <= cy <= outer[3] + tol


# ---------------------------------------------------------------- extraction

def _font_info(tp, i: int) -> tuple[float, bool]:
    """Effective font size (loose glyph box height) and boldness of char ``i``."""
    rect = raw.FS_RECTF()
    size = 0.0
    if raw.FPDFText_GetLooseCharBox(tp, i, rect):
        size = abs(rect.top - rect.bottom) / 1.15  # ascent+descent ≈ 1.15 em
    if size <= 0.5:
        size = float(raw.FPDFText_GetFontSize(tp, i) or 10.0)
    weight = raw.FPDFText_GetFontWeight(tp, i)
    bold = weight >= 600
    if not bold:
        buf = ctypes.create_string_buffer(128)
        flags = ctypes.c_int()
        n = raw.FPDFText_GetFontInfo(tp, i, buf, 128, flags)
        name = buf.raw[: max(0, n - 1)].decode("latin-1", "replace").lower()
        bold = "bold" in name or "black" in name or "heavy" in name or name.endswith(",b")
    return round(size, 1), bold


def extract_spans(textpage, height: float) -> tuple[list[Span], str]:
    """Char boxes from pdfium, cut into spans at line breaks and wide gaps."""
    tp = textpage.raw
    n = textpage.count_chars()
    if n <= 0:
        return [], ""
    text = textpage.get_text_range(0, n)
    if len(text) != n:  # surrogates etc.: fall back to per-char unicode
        text = "".join(chr(raw.FPDFText_GetUnicode(tp, i) or 32) for i in range(n))
    l, r, b, t = (ctypes.c_double() for _ in range(4))
    spans: list[Span] = []
    cur: list = []  # [x0, y0, x1, y1, chars, size, bold, angle, last char, line]
    line = 0
    for i, ch in enumerate(text):
        if ch in "\r\n\x02":
            cur = _flush(cur, spans, tp)
            line += ch != "\n"  # \r\n ends one line
            continue
        if ch in "\ufffe\u00ad":  # soft hyphen at a line end
            ch = "-"
        if ch.isspace():
            if cur:
                cur[4].append(" ")
            continue
        raw.FPDFText_GetCharBox(tp, i, l, r, b, t)
        x0, x1, y0, y1 = l.value, r.value, height - t.value, height - b.value
        if cur:
            em = max(cur[5], 4.0)
            gap = x0 - cur[2]
            off_line = y0 > cur[3] + 0.3 * em or y1 < cur[1] - 0.3 * em
            if gap > _GAP_EM * em or gap < -2 * em or off_line or (
                    gap > _NUM_GAP_EM * em and ch in _NUM_START
                    and _NUM_END.search("".join(cur[4]).rstrip())):
                # a figure after a figure: GS sets its columns 0.5 em apart, so
                # "— $ 11,896 $ 7,612" was one cell
                cur = _flush(cur, spans, tp)
        if not cur:
            size, bold = _font_info(tp, i)
            cur = [x0, y0, x1, y1, [], size, bold, raw.FPDFText_GetCharAngle(tp, i), i, line]
        else:
            cur[0], cur[1] = min(cur[0], x0), min(cur[1], y0)
            cur[2], cur[3] = max(cur[2], x1), max(cur[3], y1)
        cur[4].append(ch)
        cur[8] = i
    _flush(cur, spans, tp)
    return rejoin_justified(_drop_rotated(spans)), text


def rejoin_justified(spans: list[Span]) -> list[Span]:
    """Rejoin the words of a justified line. Justification stretches a line's word gaps
    past the split width (GS's 10-K: 1.5 em), so each word became a span and a paragraph
    read "include $2.10 billion and // $2.86 // billion // of". A run of three or more
    spans of one text-layer line, with gaps alike (within 35% of the line's median, under
    2.2 em) and mostly words, is one span; a gap unlike the rest (a gutter) still splits,
    and a row of figures (a table's columns are evenly spaced too) is never joined."""
    out: list[Span] = []
    i = 0
    while i < len(spans):
        j = i + 1
        while j < len(spans) and spans[j].line == spans[i].line and spans[i].line >= 0:
            j += 1
        out += _justified(spans[i:j])
        i = j
    return out


def _justified(line: list[Span]) -> list[Span]:
    if len(line) < 3:
        return line
    gaps = [b.x0 - a.x1 for a, b in zip(line, line[1:])]
    med = statistics.median(gaps)
    em = max(statistics.median(s.size for s in line), 4.0)
    if not 0 < med < _JUSTIFIED_EM * em:
        return line
    out, run = [], [line[0]]
    for gap, s in zip(gaps, line[1:]):
        if abs(gap - med) <= 0.2 * med and abs(s.size - run[-1].size) <= 0.15 * em:
            run.append(s)
        else:
            out += _merged(run)
            run = [s]
    return out + _merged(run)


def _merged(run: list[Span]) -> list[Span]:
    words = sum(bool(_WORD_RE.search(s.text)) for s in run)
    # stretching widens every word gap alike, so each part is one word; a table's header
    # row ("52 Weeks Ended   52 Weeks Ended   52 Weeks Ended") has parts of several
    several = sum(" " in s.text for s in run)
    if len(run) < 3 or words < 0.6 * len(run) or several > len(run) // 5:
        return run
    first = run[0]
    span = Span(min(s.x0 for s in run), min(s.y0 for s in run), max(s.x1 for s in run),
                max(s.y1 for s in run), " ".join(s.text for s in run), first.size,
                all(s.bold for s in run), first.angle, first.line)
    return [span]


def _drop_rotated(spans: list[Span]) -> list[Span]:
    """Drop spans set at an angle to the page's dominant text direction (margin stamps)."""
    angles = [round(getattr(s, "angle", 0.0), 1) for s in spans]
    if not angles:
        return spans
    main = max(set(angles), key=angles.count)
    return [s for s, a in zip(spans, angles) if abs(a - main) < 0.2]


def _flush(cur: list, spans: list[Span], tp) -> list:
    if cur:
        s = "".join(cur[4]).strip()
        if s:
            bold = cur[6] and (len(s) < 4 or _font_info(tp, cur[8])[1])  # bold at both ends
            span = Span(cur[0], cur[1], cur[2], cur[3], s, cur[5], bold, cur[7], cur[9])
            spans.append(span)
    return []


def text_quality(text: str) -> float:
    """Share of the text that reads as real text (0..1); garbage glyph codes score low."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    bad = 0
    for c in chars:
        o = ord(c)
        if o == 0xFFFD or 0xE000 <= o <= 0xF8FF or o < 32 or unicodedata.category(c) in ("Co", "Cn", "Cc"):
            bad += 1
    bad += 8 * text.count("(cid:")
    good_ratio = 1.0 - min(1.0, bad / len(chars))
    words = _WORD_RE.findall(text)
    if len(words) >= 20:
        wordy = sum(1 for w in words if set(w) & _VOWELS and len(w) < 25) / len(words)
        good_ratio = min(good_ratio, wordy + 0.2)
    return good_ratio


# ---------------------------------------------------------------- blocks

def build_blocks(spans: list[Span]) -> list[Block]:
    """Stack spans into paragraph blocks (same column, tight line spacing, same style)."""
    blocks: list[Block] = []
    open_blocks: list[Block] = []
    for s in sorted(spans, key=lambda s: (round(s.y0, 0), s.x0)):
        target = None
        for blk in reversed(open_blocks):
            if _joins(blk, s):
                target = blk
                break
        if target is None:
            blk = Block(s.x0, s.y0, s.x1, s.y1, s.text, size=s.size, bold=s.bold, spans=[s])
            blocks.append(blk)
            open_blocks.append(blk)
        else:
            last = target.spans[-1]
            same_line = abs(s.yc - last.yc) < 0.4 * max(s.size, 1)
            if same_line:
                target.text += " " + s.text
            elif target.text.endswith("-") and s.text[:1].islower():
                target.text = target.text[:-1] + s.text
            else:
                target.text += "\n" + s.text
            target.n_lines += 0 if same_line else 1
            target.x0, target.y0 = min(target.x0, s.x0), min(target.y0, s.y0)
            target.x1, target.y1 = max(target.x1, s.x1), max(target.y1, s.y1)
            target.bold = target.bold and s.bold
            target.spans.append(s)
        open_blocks = [b for b in open_blocks if s.y0 - b.y1 < 3 * max(b.size, 4)]
    return blocks


def _joins(blk: Block, s: Span) -> bool:
    last = blk.spans[-1]
    em = max(min(blk.size, s.size), 4.0)
    if abs(s.size - blk.size) > 0.15 * max(blk.size, s.size):
        return False
    if s.bold != last.bold and (len(s.text) < 60 or len(last.text) < 60):
        return False
    if abs(s.yc - last.yc) < 0.4 * em:  # same line: only join a near neighbour
        reach = 3.5 if blk.n_lines == 1 and _SECNUM.match(last.text) else _GAP_EM
        return 0 <= s.x0 - last.x1 < reach * em
    gap = s.y0 - blk.y1
    if gap < -0.3 * em or gap > 0.9 * em:
        return False
    overlap = min(blk.x1, s.x1) - max(blk.x0, s.x0)
    return overlap > 0.5 * min(s.x1 - s.x0, blk.x1 - blk.x0) or abs(s.x0 - blk.x0) < 2 * em


_MARK = re.compile(r"^\(?\d{1,2}\)?$|^[*†‡]$")


def absorb_marks(spans: list[Span]) -> tuple[list[Span], dict[int, tuple[int, int]]]:
    """Footnote marks joined to the word they follow ("U.S. Stores" + a raised "(1)"):
    alone, a mark reads as an amount and made a column of its own. Returns the spans and,
    for each joined span, the ids of the two it replaces."""
    marks = [m for m in spans if _MARK.match(m.text.strip())]
    words = sorted((s for s in spans if re.search(r"[A-Za-z]", s.text)), key=lambda s: s.x1)
    joined: dict[int, Span] = {}  # id of the host word → the word with its mark
    origin: dict[int, tuple[int, int]] = {}
    for m in marks:
        host = next((w for w in words if 0 <= m.x0 - w.x1 < 0.5 * w.size and m.size < 0.9 * w.size
                     and m.y0 < w.y1 and w.y0 < m.y1 and id(w) not in joined), None)
        if host is not None:
            joined[id(host)] = replace(host, x1=m.x1, text=host.text + m.text)
            origin[id(joined[id(host)])] = (id(host), id(m))
    if not joined:
        return spans, {}
    absorbed = {m for _, m in origin.values()}
    return [joined.get(id(s), s) for s in spans if id(s) not in absorbed], origin


# ---------------------------------------------------------------- reading order

def _cuts(items: list[Box], axis: int, min_gap: float) -> list[list[int]]:
    """Split item indices into groups separated by gaps along an axis (0=x, 1=y)."""
    idx = sorted(range(len(items)), key=lambda i: items[i][axis])
    groups, cur, reach = [], [], None
    for i in idx:
        lo, hi = items[i][axis], items[i][axis + 2]
        if cur and lo - reach >= min_gap:
            groups.append(cur)
            cur = []
        cur.append(i)
        reach = hi if reach is None or not cur[:-1] else max(reach, hi)
    if cur:
        groups.append(cur)
    return groups


def reading_order(boxes: list[Box], min_gap: float = 6.0) -> list[int]:
    """Indices of ``boxes`` in reading order: columns left→right, bands top→bottom."""
    return _order(list(range(len(boxes))), boxes, min_gap, 0)


def _order(ids: list[int], boxes: list[Box], gap: float, depth: int) -> list[int]:
    if len(ids) <= 1 or depth > 40:
        return sorted(ids, key=lambda i: (boxes[i][1], boxes[i][0]))
    sub = [boxes[i] for i in ids]
    cols = _cuts(sub, 0, gap)
    if len(cols) > 1:
        return _concat(cols, ids, boxes, gap, depth)
    bands = _cuts(sub, 1, 0.01)
    if len(bands) == 1:
        return sorted(ids, key=lambda i: (boxes[i][1], boxes[i][0]))
    merged: list[list[int]] = [bands[0]]
    for band in bands[1:]:
        trial = merged[-1] + band
        if len(_cuts([sub[k] for k in trial], 0, gap)) > 1:
            merged[-1] = trial
        else:
            merged.append(band)
    if len(merged) == 1:  # no way to separate: fall back to top-down
        return sorted(ids, key=lambda i: (boxes[i][1], boxes[i][0]))
    return _concat(merged, ids, boxes, gap, depth)


def _concat(groups, ids, boxes, gap, depth) -> list[int]:
    out: list[int] = []
    for g in groups:
        out.extend(_order([ids[k] for k in g], boxes, gap, depth + 1))
    return out


def median(values, default: float = 0.0) -> float:
    values = list(values)
    return statistics.median(values) if values else default
