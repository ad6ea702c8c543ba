"""Document-level passes: running headers/footers, headings with levels, section paths."""
from __future__ import annotations

import re
from collections import Counter

from .text import Block

_SECNUM = re.compile(r"^((\d+)(\.\d+)*)\.?\s+\S")
_DIGITS = re.compile(r"\d+")
_PAGE_NO = re.compile(r"^(page\s*)?[-–]?\s*\d{1,4}\s*[-–]?(\s*of\s*\d+)?$|^[ivxlc]{1,6}$", re.I)


def _key(text: str) -> str:
    return _DIGITS.sub("#", " ".join(text.lower().split()))[:80]


def mark_furniture(pages: list[list[Block]], heights: list[float]) -> None:
    """Blocks repeated near the top/bottom of many pages become header/footer;
    lone numbers there become page_number."""
    n = len(pages)
    counts: Counter[str] = Counter()
    for blocks, h in zip(pages, heights):
        seen = {_key(b.text) for b in blocks if b.kind == "text" and _edge(b, h)}
        counts.update(seen)
    min_rep = max(3, int(0.3 * n))
    for blocks, h in zip(pages, heights):
        for b in blocks:
            if b.kind != "text" or not _edge(b, h):
                continue
            if _PAGE_NO.match(b.text.strip()):
                b.kind = "page_number"
            elif n >= 3 and counts[_key(b.text)] >= min_rep:
                b.kind = "header" if b.y0 < h / 2 else "footer"


def _edge(b: Block, h: float) -> bool:
    return (b.y1 < 0.08 * h or b.y0 > 0.92 * h) and b.n_lines <= 2


def _title_like(b: Block, body: float) -> bool:
    t = b.text.strip()
    if b.kind != "text" or not t or b.n_lines > 3 or len(t) > 160 or len(t.split()) > 20:
        return False
    letters = sum(c.isalpha() for c in t)
    if letters < 2 or letters < 0.5 * len(t.replace(" ", "")):
        return False
    if t.endswith((".", ",", ";")) and not _SECNUM.match(t + " x"):
        return False
    if b.ocr:  # OCR box heights are noisy: only clearly larger type
        return b.size >= 1.35 * body and b.n_lines <= 2
    if b.size >= 1.18 * body:
        return True
    m = _SECNUM.match(t)
    if m and b.n_lines == 1 and len(t.split()) <= 10 and not t.endswith(".") and \
            ("." in m.group(1) or t[m.end() - 1:].isupper()) and t[m.end() - 1].isupper():
        return True
    return b.bold and b.size >= 0.9 * body and b.n_lines <= 2 and len(t) > 2


def classify_titles(pages: list[list[Block]], body: float) -> None:
    """Mark heading blocks ``kind='title'`` with ``level`` (1 = largest type)."""
    titles = [b for blocks in pages for b in blocks if _title_like(b, body)
              or (b.kind == "title" and b.level is None)]
    counts = Counter(round(b.size * 2) / 2 for b in titles if b.size >= 1.18 * body)
    top = max(counts, default=None)
    sizes = sorted({k for k, n in counts.items() if n >= 2 or k == top}, reverse=True)
    for b in titles:
        b.kind = "title"
        m = _SECNUM.match(b.text)
        if m and "." in m.group(1):
            b.level = min(6, m.group(1).count(".") + 1 + (1 if sizes and b.size >= sizes[0] and
                                                          len(sizes) > 2 else 0))
            continue
        k = round(b.size * 2) / 2
        b.level = min(6, 1 + sum(1 for z in sizes if z > k + 0.25)) if k >= 1.18 * body \
            else min(6, len(sizes) + 1)


def assign_sections(ordered: list[Block]) -> list[list[str]]:
    """Heading path for each block in reading order (a title's path excludes itself)."""
    stack: list[tuple[int, str]] = []
    out = []
    for b in ordered:
        if b.kind == "title":
            level = b.level or 1
            while stack and stack[-1][0] >= level:
                stack.pop()
            out.append([t for _, t in stack])
            stack.append((level, " ".join(b.text.split())))
        else:
            out.append([t for _, t in stack])
    return out
