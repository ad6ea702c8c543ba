"""NativeParser over the shared corpus (../shared/corpus): every PDF parses, every page is
accounted for, image-only decks get OCR text, and known 3M table cells read right.

OCR is capped per document (``max_ocr_pages``) to keep the run inside the CI budget; the
pages beyond the cap carry a skip_reason, which the checks accept. Figure OCR is off here
(``figure_ocr=False``): it is covered by test_native.py and measured by benchmarks/parse.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from docray.engine.config import ParseConfig
from docray.engine.parse.native import NativeParser
from docray.engine.parse.native.tables import find_cell

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus"
MAX_OCR_PAGES = 3

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.slow,
    pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}"),
]


def _image_only(path: Path) -> bool:
    """At least 70% of the pages have no text layer."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        empty = sum(1 for page in pdf if page.get_textpage().count_chars() < 20)
        return empty >= 0.7 * len(pdf)
    finally:
        pdf.close()


@pytest.fixture(scope="module")
def parsed():
    parser = NativeParser(ParseConfig())
    docs, errors = {}, {}
    for f in sorted(CORPUS.glob("*.pdf")):
        try:
            docs[f.name] = parser.parse(f, max_ocr_pages=MAX_OCR_PAGES, figure_ocr=False)
        except Exception as err:  # noqa: BLE001 - collected and reported below
            errors[f.name] = f"{type(err).__name__}: {err}"
    return docs, errors


def test_every_pdf_parses(parsed):
    docs, errors = parsed
    assert not errors, errors
    assert len(docs) == len(list(CORPUS.glob("*.pdf"))) == 60


def test_every_page_yields_units_or_a_reason(parsed):
    docs, _ = parsed
    bad = []
    for name, doc in docs.items():
        assert [p.page for p in doc.pages] == list(range(1, doc.n_pages + 1))
        for p in doc.pages:
            if not doc.units_on(p.page) and not p.skip_reason:
                bad.append((name, p.page))
        assert [u.order for u in doc.units] == list(range(len(doc.units)))
    assert not bad, bad[:20]


def test_image_only_decks_get_ocr_text(parsed):
    docs, _ = parsed
    decks = [f for f in sorted(CORPUS.glob("*.pdf")) if _image_only(f)]
    assert len(decks) == 5, [f.name for f in decks]
    for f in decks:
        doc = docs[f.name]
        ocr_pages = [p for p in doc.pages if p.ocr]
        assert ocr_pages, f.name
        words = " ".join(p.text for p in ocr_pages).split()
        assert len(words) >= 20, (f.name, words[:20])
        assert any(u.ocr for u in doc.units)


def test_3m_table_cells(parsed):
    docs, _ = parsed
    doc = docs["3M_2018_10K.pdf"]

    def cell(page: int, row: str, col: str) -> list[str | None]:
        return [find_cell(u.table, row, col) for u in doc.units_on(page) if u.modality == "table"]

    assert "(1,577)" in cell(60, "Purchases of property, plant and equipment (PP&E)", "2018")
    assert "8,738" in cell(58, "Property, plant and equipment net", "2018")


def test_glyph_coded_text_layer_goes_to_ocr(parsed):
    """afe620b9…pdf has a text layer of unmapped glyph codes (control characters)."""
    docs, _ = parsed
    doc = docs["afe620b9beac86c1027b96d31d396407.pdf"]
    first = doc.pages[0]
    assert first.ocr and len(first.text.split()) >= 20
    assert not any(ord(c) < 32 and c not in "\n\t" for c in first.text)
