"""Non-PDF inputs: an image file is one OCR page; .txt/.md files are text units."""
from __future__ import annotations

import re
from pathlib import Path

from docray.engine.config import ParseConfig
from docray.engine.errors import BadInput
from docray.engine.index.artifacts import render_name
from docray.engine.model import Document, Page, Unit

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp"})
TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown"})
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


def parse_image(path: Path, doc_id: str, config: ParseConfig, artifacts) -> Document:
    from PIL import Image, UnidentifiedImageError

    from .page import PageContext, ocr_page
    from .parser import NativeParser

    from .pdf import MAX_RENDER_PIXELS

    try:
        with Image.open(path) as im:
            if im.width * im.height > MAX_RENDER_PIXELS:  # checked before decoding a pixel
                raise BadInput(str(path), f"image of {im.width}x{im.height} pixels is over "
                                          f"the cap of {MAX_RENDER_PIXELS:,} pixels")
            image = im.convert("RGB")
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as err:
        raise BadInput(str(path), f"not a readable image: {err}") from None
    width, height = image.width * 72.0 / config.dpi, image.height * 72.0 / config.dpi
    ctx = PageContext(config, path, doc_id, artifacts)
    rec = Page(doc_id=doc_id, page=1, width=width, height=height, ocr=True)
    rec.render_id = ctx.store(render_name(1), image)
    blocks = ocr_page(ctx, image, width) if config.ocr != "never" else []
    if not blocks:
        rec.skip_reason = "OCR found no text" if config.ocr != "never" else "image (OCR disabled)"
    units = NativeParser(config, artifacts)._assemble(ctx, [rec], [blocks])
    return Document(doc_id=doc_id, source=str(path), filename=path.name, n_pages=1,
                    pages=[rec], units=units, meta={"parser": "native", "timings": ctx.timings,
                                                    "ocr_pages": 1})


def parse_text(path: Path, doc_id: str) -> Document:
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise BadInput(str(path), f"not UTF-8 text: {err}") from None
    if "\x00" in raw:
        raise BadInput(str(path), f"binary data (NUL bytes at offset {raw.index(chr(0))}), "
                                  "not text")
    paras = [p.strip() for p in re.split(r"\n\s*\n", raw) if p.strip()]
    n = max(1, len(paras))
    units, stack = [], []
    for k, para in enumerate(paras):
        m = _MD_HEADING.match(para) if path.suffix.lower() != ".txt" and "\n" not in para else None
        bbox = (0.0, k / n, 1.0, (k + 1) / n)
        uid = f"{doc_id}:p1:u{k}"
        if m:
            level = len(m.group(1))
            stack = [(lv, t) for lv, t in stack if lv < level]
            units.append(Unit(unit_id=uid, doc_id=doc_id, page=1, bbox=bbox, modality="title",
                              order=k, level=level, text=m.group(2).strip(),
                              section=[t for _, t in stack]))
            stack.append((level, m.group(2).strip()))
        else:
            units.append(Unit(unit_id=uid, doc_id=doc_id, page=1, bbox=bbox, modality="text",
                              order=k, text=para, section=[t for _, t in stack]))
    page = Page(doc_id=doc_id, page=1, width=612, height=792, text=raw[:100_000],
                skip_reason=None if units else "empty text file")
    return Document(doc_id=doc_id, source=str(path), filename=path.name, n_pages=1,
                    pages=[page], units=units, meta={"parser": "native"})
