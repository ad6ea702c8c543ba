"""Per-page pipelines: text-layer pages (fast path) and OCR pages (render → layout → OCR).

Both return :class:`~.text.Block` lists in PDF points (origin top-left); the parser
turns them into units.
"""
from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from docray.engine.config import ParseConfig

from . import figures, layout, ocr
from .equations import find_equations
from .pdf import page_objects, render
from .tables import FoundTable, find_borderless, find_ruled
from .text import Block, Span, build_blocks, inside

log = logging.getLogger(__name__)

_LAYOUT_DPI = 72


@dataclass
class PageContext:
    """Everything a page pipeline needs besides the page: config, sinks, timings."""

    config: ParseConfig
    path: Path
    doc_id: str
    artifacts: object | None = None
    figure_ocr: bool = True
    timings: dict[str, float] = field(default_factory=dict)
    sizes: list[tuple[float, int]] = field(default_factory=list)
    _plumber: object | None = None

    @contextmanager
    def timed(self, stage: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - t0

    def plumber_page(self, index: int):
        if self._plumber is None:
            import pdfplumber

            self._plumber = pdfplumber.open(str(self.path))
        return self._plumber.pages[index]

    def close(self) -> None:
        """Close pdfplumber's file. Its own close() loads every page first, and a malformed
        page it never needed (a MediaBox of non-numbers, a broken resource dict) raised
        there, failing a document that had parsed (found by benchmarks/fuzz_parse.py)."""
        if self._plumber is None:
            return
        plumber, self._plumber = self._plumber, None
        try:
            plumber.close()
        except Exception as err:  # noqa: BLE001 - the parse is done; only the file remains
            log.debug("%s: pdfplumber close: %s", self.path.name, err)
            plumber.stream.close()

    def store(self, name: str, image) -> str | None:
        if self.artifacts is None:
            return None
        with self.timed("artifacts"):
            return self.artifacts.put_image(self.doc_id, name, image)


def _table_blocks(tables: list[FoundTable]) -> list[Block]:
    return [Block(*t.box, kind="table", table=t.content) for t in tables]


def _find_tables(ctx: PageContext, page, index: int, spans: list[Span], objs) -> list[FoundTable]:
    found: list[FoundTable] = []
    rules = objs.h_rules + objs.v_rules
    if objs.h_rules >= 3 and objs.v_rules >= 2 and objs.paths - rules <= 2 * rules:  # not a chart
        with ctx.timed("tables_plumber"):
            try:
                found = find_ruled(ctx.plumber_page(index))
            except Exception as err:  # noqa: BLE001 - a bad drawing must not kill the page
                log.warning("%s p%d: pdfplumber table finding failed: %s", ctx.path.name, index + 1, err)
    with ctx.timed("tables"):
        rest = [s for s in spans if not any(inside(s.box, t.box) for t in found)]
        found += find_borderless(rest)
    for t in found:
        if not t.used:
            t.used = {id(s) for s in spans if inside(s.box, t.box)}
    return found


def _figure_regions(ctx: PageContext, page, objs, blocks, spans, captions) -> list:
    w, h = page.get_size()
    regions = figures.image_regions(objs.images, w, h)
    matched = figures.attach(regions, captions, h, ("above",))
    orphans = [c for c in captions if c not in matched.values()]
    if orphans and ctx.config.layout:
        with ctx.timed("layout"):
            img = render(page, _LAYOUT_DPI)
            scale = w / img.width  # points per pixel (the render may be capped below dpi)
            boxes = [tuple(v * scale for v in r.box) for r in layout.detect(img) if r.label == "figure"]
        for k in figures.attach(boxes, orphans, h, ("above",)):
            if not any(inside(boxes[k], r) for r in regions):
                regions.append(boxes[k])
    matched = figures.attach(regions, captions, h)
    orphans = [c for c in captions if c not in matched.values()]
    for cap in orphans:
        gap = figures.gap_above(cap, blocks, spans)
        if gap is not None:
            regions.append(gap)
    return regions


def _figure_blocks(ctx: PageContext, page, pno: int, objs, blocks, spans) -> tuple[list[Block], set[int]]:
    captions = [b for b in blocks if figures.is_fig_caption(b)]
    with ctx.timed("figures"):
        regions = _figure_regions(ctx, page, objs, blocks, spans, captions)
        caption_of = figures.attach(regions, captions, page.get_height())
        cap_ids = {id(s) for c in caption_of.values() for s in c.spans}
        figs, used = figures.make_figures(regions, caption_of,
                                          [s for s in spans if id(s) not in cap_ids])
    for cap in caption_of.values():
        used.update(id(s) for s in cap.spans)
    for k, fig in enumerate(figs):
        _finish_figure(ctx, page, pno, k, fig)
    return figs, used


def _finish_figure(ctx: PageContext, page, pno: int, k: int, fig: Block) -> None:
    want_ocr = not fig.text and ctx.figure_ocr and ctx.config.ocr != "never"
    if not want_ocr and ctx.artifacts is None:
        return
    with ctx.timed("render"):
        crop = render(page, ctx.config.dpi, fig.box)
    if want_ocr:
        with ctx.timed("figure_ocr"):
            lines = ocr.ocr_image(crop)
        fig.text = " ".join(line.text for line in sorted(lines, key=lambda l: (round(l.box[1] / 8), l.box[0])))
        fig.ocr = bool(lines)
    fig.artifact_id = ctx.store(f"p{pno:04d}-fig{k}.png", crop)


def _tables_outside_figures(tables: list[Block], figs: list[Block]) -> list[Block]:
    """Numbers aligned inside a chart are not a table: fold them into the figure's text."""
    keep = []
    for t in tables:
        fig = next((f for f in figs if inside(t.box, f.box)), None)
        if fig is None:
            keep.append(t)
        else:
            fig.text = (fig.text + " " + " ".join(" ".join(r) for r in t.table.grid())).strip()
    return keep


def _attach_table_captions(tables: list[Block], blocks: list[Block], h: float) -> set[int]:
    used: set[int] = set()
    caps = [b for b in blocks if figures.is_tab_caption(b)]
    for t in tables:
        best, best_d = None, 0.2 * h
        for c in caps:
            if id(c) in used or min(c.x1, t.x1) - max(c.x0, t.x0) <= 0:
                continue
            d = t.y0 - c.y1 if c.y1 <= t.y0 + 4 else c.y0 - t.y1
            if -4 <= d < best_d:
                best, best_d = c, d
        if best is not None:
            t.caption = best.text.replace("\n", " ")
            used.add(id(best))
    return used


def text_page(ctx: PageContext, page, index: int, spans: list[Span]) -> list[Block]:
    """Text-layer page: tables, equations, figures, then paragraph blocks."""
    pno = index + 1
    with ctx.timed("objects"):
        objs = page_objects(page)
    tables = _find_tables(ctx, page, index, spans, objs)
    used = set().union(*(t.used for t in tables)) if tables else set()
    rest = [s for s in spans if id(s) not in used]
    with ctx.timed("equations"):
        eqs, eq_used = find_equations(rest)
    rest = [s for s in rest if id(s) not in eq_used]
    with ctx.timed("blocks"):
        blocks = build_blocks(rest)
    figs, fig_used = _figure_blocks(ctx, page, pno, objs, blocks, rest)
    if fig_used:
        with ctx.timed("blocks"):
            blocks = build_blocks([s for s in rest if id(s) not in fig_used])
    table_blocks = _tables_outside_figures(_table_blocks(tables), figs)
    cap_used = _attach_table_captions(table_blocks, blocks, page.get_height())
    blocks = [b for b in blocks if id(b) not in cap_used]
    for k, t in enumerate(table_blocks):
        if ctx.artifacts is not None:
            t.artifact_id = ctx.store(f"p{pno:04d}-table{k}.png", render(page, ctx.config.dpi, t.box))
    return blocks + eqs + figs + table_blocks


def ocr_spans(lines, scale: float) -> list[Span]:
    out = []
    for line in lines:
        x0, y0, x1, y1 = (v * scale for v in line.box)
        out.append(Span(x0, y0, x1, y1, line.text, size=max(3.0, (y1 - y0) / 1.2)))
    return out


def ocr_page(ctx: PageContext, image, width: float) -> list[Block]:
    """Image page: OCR lines, grouped into blocks; layout regions give figures, tables, titles."""
    scale = width / image.width
    with ctx.timed("ocr"):
        spans = ocr_spans(ocr.ocr_image(image), scale)
    ctx.sizes.extend((s.size, len(s.text)) for s in spans)
    regions = []
    if ctx.config.layout:
        with ctx.timed("layout"):
            regions = [(r.label, tuple(v * scale for v in r.box)) for r in layout.detect(image)]
    out: list[Block] = []
    used: set[int] = set()
    for label, box in regions:
        inner = [s for s in spans if id(s) not in used and inside(s.box, box)]
        if label == "figure":
            out.append(Block(*box, kind="image", ocr=True,
                             text=" ".join(s.text for s in sorted(inner, key=lambda s: (round(s.y0 / 8), s.x0)))))
        elif label == "table" and inner:
            found = find_borderless(inner)
            if not found:
                continue
            out += [Block(*t.box, kind="table", table=t.content, ocr=True) for t in found]
            inner = [s for s in inner if any(id(s) in t.used for t in found)]
        else:
            continue
        used.update(id(s) for s in inner)
    titles = [box for label, box in regions if label == "title"]
    blocks = build_blocks([s for s in spans if id(s) not in used])
    for b in blocks:
        b.ocr = True
        if any(inside(b.box, t) for t in titles) and b.n_lines <= 3 and \
                sum(c.isalpha() for c in b.text) >= 3:
            b.kind = "title"
    _attach_ocr_captions(out, blocks, regions)
    return [b for b in blocks if b.kind != "caption"] + out


def _attach_ocr_captions(objs: list[Block], blocks: list[Block], regions) -> None:
    caps = [b for b in blocks if figures.is_fig_caption(b) or figures.is_tab_caption(b)]
    for o in objs:
        near = [c for c in caps if c.kind != "caption" and min(c.x1, o.x1) - max(c.x0, o.x0) > 0
                and (0 <= c.y0 - o.y1 < 60 or 0 <= o.y0 - c.y1 < 60)]
        if near:
            o.caption = near[0].text.replace("\n", " ")
            near[0].kind = "caption"
