"""Figures: regions from image objects, layout boxes or the gap above a caption;
captions ("Figure N", "Fig. N"); text inside (text layer, else OCR of the crop).
"""
from __future__ import annotations

import logging
import re

from .text import Block, Box, Span, inside, union

log = logging.getLogger(__name__)

FIG_CAPTION = re.compile(r"^\s*(Figure|Fig\.?)\s*(\d+|[IVX]+)[a-z]?\s*(?:[:.|—–-]|$)", re.I)
TAB_CAPTION = re.compile(r"^\s*Table\s*(\d+|[IVX]+)[a-z]?\s*(?:[:.|—–-]|$)", re.I)


def is_fig_caption(b: Block) -> bool:
    return b.kind == "text" and bool(FIG_CAPTION.match(b.text)) and len(b.text) < 1200


def is_tab_caption(b: Block) -> bool:
    return b.kind == "text" and bool(TAB_CAPTION.match(b.text)) and len(b.text) < 1200


def _merge(boxes: list[Box], pad: float = 4.0) -> list[Box]:
    boxes = list(boxes)
    changed = True
    while changed:
        changed = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                if a[0] - pad < b[2] and b[0] - pad < a[2] and a[1] - pad < b[3] and b[1] - pad < a[3]:
                    boxes[i] = union([a, b])
                    boxes.pop(j)
                    changed = True
                    break
            if changed:
                break
    return boxes


def image_regions(images: list[Box], w: float, h: float) -> list[Box]:
    """Sizeable embedded images, merged when they touch; full-page backgrounds dropped."""
    keep = []
    for x0, y0, x1, y1 in images:
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
        bw, bh = x1 - x0, y1 - y0
        if bw < 0.08 * w or bh < 0.05 * h or bw * bh > 0.85 * w * h:
            continue
        keep.append((x0, y0, x1, y1))
    return _merge(keep)


def _h_overlap(a: Box, b: Box) -> float:
    return min(a[2], b[2]) - max(a[0], b[0])


def _nearest(cap: Block, regions: list[Box], h: float, sides: tuple[str, ...]) -> int | None:
    """Closest region above the caption (figures), else closely below it."""
    for side, limit in (("above", 0.25 * h), ("below", 0.08 * h)):
        if side not in sides:
            continue
        best, best_d = None, limit
        for k, r in enumerate(regions):
            if _h_overlap(r, cap.box) <= 0:
                continue
            d = cap.y0 - r[3] if side == "above" else r[1] - cap.y1
            if -4 <= d < best_d:
                best, best_d = k, d
        if best is not None:
            return best
    return None


def gap_above(cap: Block, blocks: list[Block], spans: list[Span]) -> Box | None:
    """Fallback figure region: the empty-ish band between the caption and the text above."""
    above = [b.y1 for b in blocks if b is not cap and b.kind == "text" and b.y1 <= cap.y0
             and _h_overlap(b.box, cap.box) > 0 and b.n_lines >= 2]
    top = max(above, default=0.0)
    if cap.y0 - top < 40:
        return None
    inner = [s.box for s in spans if top < s.y0 and s.y1 < cap.y0 - 1]
    x0 = min([cap.x0] + [b[0] for b in inner])
    x1 = max([cap.x1] + [b[2] for b in inner])
    return (x0, top + 1, x1, cap.y0 - 1)


def attach(regions: list[Box], captions: list[Block], h: float,
           sides: tuple[str, ...] = ("above", "below")) -> dict[int, Block]:
    """Map region index → caption block (each caption used once)."""
    out: dict[int, Block] = {}
    for cap in captions:
        k = _nearest(cap, regions, h, sides)
        if k is not None and k not in out:
            out[k] = cap
    return out


def make_figures(regions: list[Box], caption_of: dict[int, Block], spans: list[Span]
                 ) -> tuple[list[Block], set[int]]:
    """Image blocks with the text-layer text inside each region; ids of spans used."""
    figs, used = [], set()
    for k, r in enumerate(regions):
        inner = [s for s in spans if inside(s.box, r)]
        if k not in caption_of and sum(len(s.text) for s in inner) > 120:
            continue  # an uncaptioned image under running text: decoration, not a figure
        used.update(id(s) for s in inner)
        inner.sort(key=lambda s: (round(s.y0), s.x0))
        cap = caption_of.get(k)
        figs.append(Block(*r, kind="image", text=" ".join(s.text for s in inner),
                          caption=cap.text.replace("\n", " ") if cap else ""))
    return figs, used
