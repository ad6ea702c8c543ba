"""Overlay PNGs: each unit's box drawn on its page render, coloured by modality."""
from __future__ import annotations

import logging
from pathlib import Path

from PIL import Image, ImageDraw

from docray.engine.model import Document

log = logging.getLogger(__name__)

COLOURS = {
    "text": (31, 119, 180), "title": (214, 39, 40), "list": (23, 190, 207),
    "table": (44, 160, 44), "image": (255, 127, 14), "equation": (148, 103, 189),
    "code": (140, 86, 75), "caption": (227, 119, 194), "header": (127, 127, 127),
    "footer": (127, 127, 127), "page_number": (127, 127, 127),
}


def render_page(pdf_path: Path, page: int, dpi: int) -> Image.Image:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        return pdf[page - 1].render(scale=dpi / 72).to_pil().convert("RGB")
    finally:
        pdf.close()


def draw_overlay(image: Image.Image, doc: Document, page: int) -> Image.Image:
    """Return a copy of ``image`` with the page's unit boxes and modality labels."""
    out = image.convert("RGB").copy()
    draw = ImageDraw.Draw(out, "RGBA")
    w, h = out.size
    for unit in doc.units_on(page):
        colour = COLOURS.get(unit.modality, (0, 0, 0))
        x0, y0, x1, y1 = unit.bbox
        box = (x0 * w, y0 * h, x1 * w, y1 * h)
        draw.rectangle(box, outline=colour + (255,), fill=colour + (40,), width=2)
        draw.text((box[0] + 2, max(box[1] - 11, 0)), f"{unit.order}:{unit.modality}",
                  fill=colour + (255,))
    return out


def write_overlays(doc: Document, pdf_path: Path, out_dir: Path, dpi: int = 72,
                   page_images: dict[int, Image.Image] | None = None) -> list[Path]:
    """Write ``page-NNNN.overlay.png`` for every page of ``doc``; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for p in doc.pages:
        image = (page_images or {}).get(p.page)
        if image is None:
            if pdf_path.suffix.lower() != ".pdf":
                continue
            image = render_page(pdf_path, p.page, dpi)
        target = out_dir / f"page-{p.page:04d}.overlay.png"
        draw_overlay(image, doc, p.page).save(target)
        paths.append(target)
    log.info("wrote %d overlay pages to %s", len(paths), out_dir)
    return paths
