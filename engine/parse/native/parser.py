"""NativeParser: pypdfium2 text layer + pdfplumber (ruled tables) + rapid-layout + rapidocr.

Flow per document: validate → per page (text layer, or OCR when the layer is missing or
garbage) → document passes (running headers, headings, reading order, sections) → units.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

from docray.engine.config import ParseConfig
from docray.engine.index.artifacts import render_name
from docray.engine.model import Document, Page, Unit, file_doc_id

from . import files
from .headings import assign_sections, classify_titles, mark_furniture
from .page import PageContext, ocr_page, text_page
from .pdf import check_file, is_blank, open_pdf, render
from .text import Block, extract_spans, reading_order, text_quality

log = logging.getLogger(__name__)

_MIN_QUALITY = 0.6


class NativeParser:
    """Parse PDFs (and images, .txt/.md) into units; see the module docstring."""

    name = "native"

    def __init__(self, config: ParseConfig | None = None, artifacts=None):
        self.config = config or ParseConfig()
        self.artifacts = artifacts

    def parse(self, path: Path | str, doc_id: str | None = None, *,
              max_ocr_pages: int | None = None, figure_ocr: bool = True) -> Document:
        """Parse one file.

        ``max_ocr_pages`` caps OCR'd pages (the rest get a skip_reason); ``figure_ocr=False``
        skips OCR of raster figures without a text layer (their crops are still stored).
        """
        path = Path(path)
        check_file(path, self.config)
        doc_id = doc_id or file_doc_id(path)
        suffix = path.suffix.lower()
        if suffix in files.IMAGE_SUFFIXES:
            return files.parse_image(path, doc_id, self.config, self.artifacts)
        if suffix in files.TEXT_SUFFIXES:
            return files.parse_text(path, doc_id)
        t0 = time.perf_counter()
        pdf = open_pdf(path, self.config)
        ctx = PageContext(self.config, path, doc_id, self.artifacts, figure_ocr=figure_ocr)
        budget = [max_ocr_pages if max_ocr_pages is not None else 1 << 30]
        try:
            pages, blocks, page_seconds, page_cpu = [], [], [], []
            for i in range(len(pdf)):
                tp, cp = time.perf_counter(), time.process_time()
                page_rec, page_blocks = self._page(ctx, pdf, i, budget)
                page_seconds.append(round(time.perf_counter() - tp, 4))
                page_cpu.append(round(time.process_time() - cp, 4))
                pages.append(page_rec)
                blocks.append(page_blocks)
        finally:
            ctx.close()
            pdf.close()
        with ctx.timed("assemble"):
            units = self._assemble(ctx, pages, blocks)
        n_ocr = sum(p.ocr for p in pages)
        meta = {"parser": self.name, "timings": ctx.timings, "ocr_pages": n_ocr,
                "page_seconds": page_seconds, "page_cpu_seconds": page_cpu,
                "seconds": time.perf_counter() - t0}
        return Document(doc_id=doc_id, source=str(path), filename=path.name,
                        n_pages=len(pages), pages=pages, units=units, meta=meta)

    # ------------------------------------------------------------------ pages

    def _page(self, ctx: PageContext, pdf, i: int, budget: list[int]) -> tuple[Page, list[Block]]:
        pno = i + 1
        try:
            page = pdf[i]
        except Exception as err:  # noqa: BLE001 - one broken page is recorded, not fatal
            log.warning("%s p%d: cannot load page: %s", ctx.path.name, pno, err)
            rec = Page(doc_id=ctx.doc_id, page=pno, width=612, height=792,
                       skip_reason=f"page failed to load: {err}")
            return rec, []
        try:
            return self._page_content(ctx, page, pno, budget)
        finally:
            page.close()

    def _page_content(self, ctx: PageContext, page, pno: int, budget: list[int]
                      ) -> tuple[Page, list[Block]]:
        w, h = page.get_size()
        rec = Page(doc_id=ctx.doc_id, page=pno, width=w or 612, height=h or 792)
        with ctx.timed("text"):
            textpage = page.get_textpage()
            spans, raw_text = extract_spans(textpage, h)
            textpage.close()
        usable = len(raw_text.strip()) >= self.config.min_text_chars and \
            text_quality(raw_text) >= _MIN_QUALITY
        image = None
        if ctx.artifacts is not None:
            with ctx.timed("render"):
                image = render(page, self.config.dpi)
            rec.render_id = ctx.store(render_name(pno), image)
        if not spans and is_blank(page):
            rec.skip_reason = "blank page"
            return rec, []
        if self.config.ocr == "always" or (self.config.ocr == "auto" and not usable):
            if budget[0] <= 0:
                rec.skip_reason = "OCR page limit reached (max_ocr_pages)"
                return rec, []
            budget[0] -= 1
            if image is None:
                with ctx.timed("render"):
                    image = render(page, self.config.dpi)
            rec.ocr = True
            blocks = ocr_page(ctx, image, w)
        elif not spans:
            rec.skip_reason = "no text layer (OCR disabled)"
            return rec, []
        else:
            ctx.sizes.extend((s.size, len(s.text)) for s in spans)
            blocks = text_page(ctx, page, pno - 1, spans)
        if not blocks:
            rec.skip_reason = "OCR found no text" if rec.ocr else "no content found"
        return rec, blocks

    # --------------------------------------------------------------- document

    def _assemble(self, ctx: PageContext, pages: list[Page], blocks: list[list[Block]]) -> list[Unit]:
        mark_furniture(blocks, [p.height for p in pages])
        body = _body(ctx.sizes)
        classify_titles(blocks, body)
        ordered_pages = []
        for rec, page_blocks in zip(pages, blocks):
            idx = reading_order([b.box for b in page_blocks], min_gap=max(4.0, 0.6 * body))
            ordered_pages.append([page_blocks[k] for k in idx])
        flat = [b for page_blocks in ordered_pages for b in page_blocks]
        sections = iter(assign_sections(flat))
        units: list[Unit] = []
        for rec, page_blocks in zip(pages, ordered_pages):
            page_units = [self._unit(ctx.doc_id, rec, k, len(units) + k, b, next(sections))
                          for k, b in enumerate(page_blocks)]
            units += page_units
            rec.text = "\n".join(u.display_text() for u in page_units)
        return units

    @staticmethod
    def _unit(doc_id: str, rec: Page, k: int, order: int, b: Block, section: list[str]) -> Unit:
        w, h = rec.width, rec.height
        x0, x1 = sorted((min(max(b.x0 / w, 0.0), 1.0), min(max(b.x1 / w, 0.0), 1.0)))
        y0, y1 = sorted((min(max(b.y0 / h, 0.0), 1.0), min(max(b.y1 / h, 0.0), 1.0)))
        text = b.text if b.kind in ("equation", "table") else " ".join(b.text.split())
        return Unit(unit_id=f"{doc_id}:p{rec.page}:u{k}", doc_id=doc_id, page=rec.page,
                    bbox=(x0, y0, x1, y1), modality=b.kind, order=order, section=section,
                    text=text, level=b.level if b.kind == "title" else None, table=b.table,
                    artifact_id=b.artifact_id, caption=b.caption,
                    equation_number=b.equation_number, ocr=b.ocr)


def _body(sizes: list[tuple[float, int]]) -> float:
    weights: dict[float, int] = {}
    for size, n in sizes:
        k = round(size * 2) / 2
        weights[k] = weights.get(k, 0) + n
    return max(weights.items(), key=lambda kv: kv[1])[0] if weights else 10.0

