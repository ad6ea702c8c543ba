"""Open, validate and render PDFs with pypdfium2; cheap page-object statistics.

Coordinates handed out here are PDF points with the origin at the top-left of the
page (y grows downwards), which is what every other module in this package uses.
"""
from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as raw

from docray.engine.config import ParseConfig
from docray.engine.errors import BadInput, EncryptedDocument, TooLarge

log = logging.getLogger(__name__)

PDF_MAGIC = b"%PDF-"
_TAIL_BYTES = 8192

Box = tuple[float, float, float, float]


def check_file(path: Path, config: ParseConfig) -> None:
    """Existence and size limit; raises BadInput / TooLarge naming the file."""
    if not path.is_file():
        raise BadInput(str(path), "file does not exist or is not a regular file")
    size_mb = path.stat().st_size / (1 << 20)
    if size_mb > config.limits.max_file_mb:
        raise TooLarge(str(path), f"file is {size_mb:.1f} MB, over the limit of "
                                  f"{config.limits.max_file_mb} MB (limits.max_file_mb)")
    if path.stat().st_size == 0:
        raise BadInput(str(path), "file is empty")


def looks_like_pdf(path: Path) -> bool:
    with open(path, "rb") as fh:
        return PDF_MAGIC in fh.read(1024)


def _check_trailer(path: Path) -> None:
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - _TAIL_BYTES))
        tail = fh.read()
    if b"%%EOF" not in tail:
        raise BadInput(str(path), "corrupt PDF: truncated (no %%EOF trailer at the end)")


def _find(path: Path, needle: bytes) -> bool:
    import mmap

    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        return mm.find(needle) >= 0


def open_pdf(path: Path, config: ParseConfig) -> pdfium.PdfDocument:
    """Open and validate a PDF: magic, trailer, password, page count limits."""
    if not looks_like_pdf(path):
        with open(path, "rb") as fh:
            head = fh.read(8)
        raise BadInput(str(path), f"not a PDF file (starts with {head!r})")
    _check_trailer(path)
    try:
        doc = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as err:
        code = getattr(err, "err_code", None)
        if _find(path, b"/Count 0") and not _find(path, b"/Encrypt"):
            raise BadInput(str(path), "document has no pages (empty page tree)") from None
        if code in (raw.FPDF_ERR_PASSWORD, raw.FPDF_ERR_SECURITY) and not _find(path, b"/Encrypt"):
            raise BadInput(str(path), f"corrupt PDF: {err}") from None
        if code == raw.FPDF_ERR_PASSWORD:
            raise EncryptedDocument(str(path), "document is encrypted (password required)") from None
        if code == raw.FPDF_ERR_SECURITY:
            raise EncryptedDocument(str(path), "unsupported security handler") from None
        raise BadInput(str(path), f"corrupt PDF: {err}") from None
    n = len(doc)
    if n == 0:
        doc.close()
        raise BadInput(str(path), "document has no pages")
    if n > config.limits.max_pages:
        doc.close()
        raise TooLarge(str(path), f"document has {n} pages, over the limit of "
                                  f"{config.limits.max_pages} (limits.max_pages)")
    return doc


MAX_RENDER_PIXELS = 36_000_000  # a 200-inch page box at 144 dpi would be 830 MP (2.5 GB)


def render_scale(width_pt: float, height_pt: float, dpi: int) -> float:
    """Pixels per point: ``dpi / 72`` unless the image would pass ``MAX_RENDER_PIXELS``,
    then as large as fits (callers map pixels back with ``points / image.width``).

    >>> render_scale(612, 792, 144)
    2.0
    >>> round(render_scale(14400, 14400, 144) * 14400)
    6000
    """
    scale = dpi / 72.0
    area = max(width_pt, 1.0) * max(height_pt, 1.0) * scale * scale
    if area > MAX_RENDER_PIXELS:
        scale *= (MAX_RENDER_PIXELS / area) ** 0.5
    return scale


def render(page: pdfium.PdfPage, dpi: int, crop: Box | None = None):
    """Render a page (or a top-left-origin crop of it, in points) to an RGB PIL image, at
    ``dpi`` unless that passes ``MAX_RENDER_PIXELS`` (then smaller)."""
    w, h = page.get_size()
    if crop is None:
        scale = render_scale(w, h, dpi)
        if scale < dpi / 72.0:
            log.warning("page of %.0fx%.0f pt rendered at %.0f dpi, not %d (pixel cap)",
                        w, h, scale * 72, dpi)
        return page.render(scale=scale).to_pil().convert("RGB")
    x0, x1 = sorted((min(max(crop[0], 0.0), w), min(max(crop[2], 0.0), w)))
    y0, y1 = sorted((min(max(crop[1], 0.0), h), min(max(crop[3], 0.0), h)))
    scale = render_scale(x1 - x0, y1 - y0, dpi)
    if x1 - x0 < 1.0 or y1 - y0 < 1.0:  # a box outside the page (rotated pages, bad boxes)
        from PIL import Image

        return Image.new("RGB", (max(1, int((x1 - x0) * scale)), max(1, int((y1 - y0) * scale))),
                         "white")
    # pdfium crop is (left, bottom, right, top) amounts to cut away, in points
    cut = (x0, h - y1, w - x1, y0)
    return page.render(scale=scale, crop=cut).to_pil().convert("RGB")


@dataclass
class PageObjects:
    """Counts and boxes of a page's objects, read through the raw API (fast)."""

    images: list[Box] = field(default_factory=list)
    h_rules: int = 0
    v_rules: int = 0
    paths: int = 0
    path_boxes: list[Box] = field(default_factory=list)


def _bounds(obj, height: float) -> Box | None:
    l, b, r, t = (ctypes.c_float() for _ in range(4))
    if not raw.FPDFPageObj_GetBounds(obj, l, b, r, t):
        return None
    return (l.value, height - t.value, r.value, height - b.value)


def _visit(obj, height: float, out: PageObjects, depth: int) -> None:
    kind = raw.FPDFPageObj_GetType(obj)
    if kind == raw.FPDF_PAGEOBJ_IMAGE:
        box = _bounds(obj, height)
        if box:
            out.images.append(box)
    elif kind == raw.FPDF_PAGEOBJ_PATH:
        out.paths += 1
        box = _bounds(obj, height)
        if box:
            w, h = box[2] - box[0], box[3] - box[1]
            if h <= 2.5 and w >= 30:
                out.h_rules += 1
            elif w <= 2.5 and h >= 20:
                out.v_rules += 1
            elif len(out.path_boxes) < 2000:
                out.path_boxes.append(box)
    elif kind == raw.FPDF_PAGEOBJ_FORM and depth < 3:
        for i in range(raw.FPDFFormObj_CountObjects(obj)):
            _visit(raw.FPDFFormObj_GetObject(obj, i), height, out, depth + 1)


def page_objects(page: pdfium.PdfPage) -> PageObjects:
    out = PageObjects()
    height = page.get_height()
    for i in range(raw.FPDFPage_CountObjects(page.raw)):
        _visit(raw.FPDFPage_GetObject(page.raw, i), height, out, 0)
    return out


def is_blank(page: pdfium.PdfPage) -> bool:
    """True when a low-resolution render is (almost) uniform."""
    import numpy as np

    img = np.asarray(page.render(scale=0.25, grayscale=True).to_pil().convert("L"))
    if img.size == 0:
        return True
    return float(img.std()) < 2.0 or float((np.abs(img.astype(int) - int(np.median(img))) > 40).mean()) < 0.0005
