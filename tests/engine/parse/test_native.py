"""NativeParser on generated PDFs: modalities, pages, bboxes, order, sections, bad input."""
from __future__ import annotations

import pytest

from docray.engine.config import LimitsConfig, ParseConfig
from docray.engine.errors import BadInput, EncryptedDocument, TooLarge
from docray.engine.index.artifacts import ArtifactStore
from docray.engine.model import file_doc_id
from docray.engine.parse import Parser
from docray.engine.parse.native import NativeParser
from docray.engine.parse.native.tables import find_cell

from native_pdfs import SCAN_LINES, contains, text_image


def _parse(path, **cfg):
    return NativeParser(ParseConfig(**cfg)).parse(path)


def _check_invariants(doc):
    assert [u.order for u in doc.units] == list(range(len(doc.units)))
    assert len(doc.pages) == doc.n_pages
    for p in doc.pages:
        units = doc.units_on(p.page)
        assert units or p.skip_reason, f"page {p.page} has no units and no skip_reason"
        for k, u in enumerate(units):
            assert u.unit_id == f"{doc.doc_id}:p{p.page}:u{k}"
            x0, y0, x1, y1 = u.bbox
            assert 0 <= x0 <= x1 <= 1 and 0 <= y0 <= y1 <= 1


def test_registry_resolves_native_parser():
    from docray.engine.registry import PARSERS  # imported here: the registry is shared code

    cls = PARSERS.resolve("native")
    assert cls is NativeParser and cls.name == "native"
    assert isinstance(NativeParser(ParseConfig()), Parser)


def test_two_column_order_and_sections(two_column_pdf):
    doc = _parse(two_column_pdf)
    _check_invariants(doc)
    assert doc.doc_id == file_doc_id(two_column_pdf)
    titles = [u for u in doc.units if u.modality == "title"]
    names = [t.text for t in titles]
    assert names[0] == "Parsing Layouts Study" and titles[0].level == 1
    assert {"1 Introduction", "2 Background", "3 Methods"} <= set(names)
    assert all(t.level and t.level > 1 for t in titles[1:])
    text = [u for u in doc.units if u.modality == "text"]
    joined = " ".join(u.text for u in text)
    # left column (both sections) is read before the right column
    assert joined.index("LEFTSTART") < joined.index("LEFTEND") < joined.index("MIDDLE") \
        < joined.index("RIGHTSTART") < joined.index("RIGHTEND")
    left = next(u for u in text if "LEFTSTART" in u.text)
    right = next(u for u in text if "RIGHTSTART" in u.text)
    assert left.section == ["Parsing Layouts Study", "1 Introduction"]
    assert right.section == ["Parsing Layouts Study", "3 Methods"]
    assert left.bbox[2] < 0.5 < right.bbox[0]
    assert doc.pages[0].text and not doc.pages[0].ocr


def test_ruled_table_with_two_level_header(table_pdf):
    path, drawn = table_pdf
    doc = _parse(path)
    _check_invariants(doc)
    tables = [u for u in doc.units if u.modality == "table"]
    assert len(tables) == 1
    t = tables[0]
    assert t.page == 1 and contains(t.bbox, drawn, tol=0.01)
    assert t.caption.startswith("Table 1")
    tc = t.table
    assert tc.header_rows == 2
    top = [c for c in tc.rows[0] if c.text in ("Revenue", "Profit")]
    assert len(top) == 2 and all(c.col_span == 2 and c.is_header for c in top)
    assert tc.rows[0][0].row_span == 2
    assert tc.grid()[1][1:] == ["2023", "2024", "2023", "2024"]
    assert find_cell(tc, "Asia", "2024") == "1,105"
    assert 'colspan="2"' in tc.html and "<th" in tc.html and "1,105" in tc.html
    # table text and caption are not duplicated as text units
    assert not any("1,105" in u.text or u.text.startswith("Table 1")
                   for u in doc.units if u.modality == "text")


def test_borderless_financial_table(borderless_table_pdf):
    doc = _parse(borderless_table_pdf)
    tables = [u for u in doc.units if u.modality == "table"]
    assert len(tables) == 1
    tc = tables[0].table
    assert tc.header_rows == 1 and tc.header_cols == 1
    assert find_cell(tc, "Purchases of property, plant and equipment (PP&E)", "2018") == "(1,577)"
    assert find_cell(tc, "Net sales", "2017") == "31,657"  # currency sign stripped
    assert tc.rows[0][1].is_header and tc.rows[2][0].is_header and not tc.rows[2][1].is_header


def test_year_header_centred_left_of_its_amounts_heads_its_column(statement_pdf):
    """"2021" ends left of the amounts under it (the "$" sits between): it heads the first
    column, not the row labels, and "2020" heads only the second."""
    tc = next(u.table for u in _parse(statement_pdf).units if u.modality == "table")
    assert tc.header_rows == 2
    assert [c.text for c in tc.rows[1]] == ["", "2021", "2020"]
    assert find_cell(tc, "TOTAL LIABILITIES", "2021") == "41,190"
    assert find_cell(tc, "TOTAL ASSETS", "2020") == "55,556"


def test_justified_line_and_table_beside_prose(justified_beside_table_pdf):
    """The stretched line's words stay in their paragraph, in order; the table beside the
    prose keeps only its own rows (its labels are the years), and the prose lines that
    share its rows' heights stay text."""
    doc = _parse(justified_beside_table_pdf)
    _check_invariants(doc)
    text = [u.text for u in doc.units if u.modality == "text"]
    para = next(t for t in text if "Investment commitments" in t)
    assert "include $2.10 billion and $2.86 billion as of 2016 and December 2015, " \
        "respectively" in para
    assert "not covered by SMFG" in para
    assert not any(t in ("billion", "of", "December") for t in text)
    tc = next(u.table for u in doc.units if u.modality == "table")
    assert find_cell(tc, "2018", "December 2016") == "282"
    assert find_cell(tc, "Total", "December 2016") == "2,032"
    # a long label of the table's own is no prose
    assert find_cell(tc, "Other commitments and guarantees", "December 2016") == "91"
    assert all("SMFG" not in c.text and "invest in" not in c.text for row in tc.rows for c in row)


def test_statement_head_row_and_long_labels_stay_a_table(cash_flow_pdf):
    """Three-word heads evenly spaced are a table's head row, not a justified line; long
    row labels that start with a capital are the table's, not prose beside it."""
    tables = [u.table for u in _parse(cash_flow_pdf).units if u.modality == "table"]
    assert len(tables) == 1
    tc = tables[0]
    assert find_cell(tc, "Depreciation and amortization of property and equipment",
                     "2020") == "1,645"
    assert find_cell(tc, "Net income including noncontrolling interests", "2021") == "5,079"
    assert sum("52 Weeks Ended" == c.text for row in tc.rows for c in row) >= 3


def test_figures_half_an_em_apart_are_separate_cells(tight_columns_pdf):
    """"— $ 11,896 $ 7,886" is three cells: a figure after a figure splits at 0.45 em."""
    tc = next(u.table for u in _parse(tight_columns_pdf).units if u.modality == "table")
    assert find_cell(tc, "Time deposits", "2017") == "—"
    assert find_cell(tc, "Time deposits", "2019") == "11,896"
    assert find_cell(tc, "Time deposits", "2022") == "7,886"
    assert find_cell(tc, "Minimum rental payments", "2019") == "520"


def test_two_tables_side_by_side_are_one_list_and_a_footnote_mark_no_column(
        side_by_side_pdf):
    """"Alabama 11 | Nebraska 5" is two rows of one list, not one row "Alabama Nebraska";
    the raised "(1)" stays with its head; a text column between amounts ("3 - 11 years")
    keeps its table whole."""
    tables = [u.table for u in _parse(side_by_side_pdf).units if u.modality == "table"]
    assert len(tables) == 2
    stores, assets = tables
    grid = stores.grid()
    assert grid[0] == ["", "U.S. Stores(1)"]
    assert [r[0] for r in grid[1:]] == ["Alabama", "Alaska", "Arizona", "Arkansas", "California",
                                        "Nebraska", "Nevada", "New Hampshire", "New Jersey",
                                        "Total Domestic store count"]
    assert find_cell(stores, "Total Domestic store count", "U.S. Stores") == "978"
    assert find_cell(stores, "Nebraska", "U.S. Stores") == "5"
    rows = {r[0].split(" ")[0]: r[1:] for r in assets.grid()}  # (the life joins its label)
    assert rows["Internally-developed"] == ["1,154", "(1,105)", "49"]
    assert rows["Trade"] == ["54", "(30)", "24"]


def test_figure_with_caption_ocr_text_and_crop(figure_pdf, tmp_path):
    path, drawn = figure_pdf
    store = ArtifactStore(tmp_path / "artifacts")
    doc = NativeParser(ParseConfig(), store).parse(path)
    _check_invariants(doc)
    figs = [u for u in doc.units if u.modality == "image"]
    assert len(figs) == 1
    fig = figs[0]
    assert fig.page == 1 and contains(fig.bbox, drawn, tol=0.01)
    assert fig.caption.startswith("Figure 1: Quarterly sales")
    assert "SALES" in fig.text.upper() and fig.ocr
    assert fig.artifact_id and store.resolve(fig.artifact_id).stat().st_size > 0
    assert doc.pages[0].render_id == store.make_id(doc.doc_id, "page-0001.jpg")
    assert not any(u.text.startswith("Figure 1") for u in doc.units if u.modality == "text")


def test_numbered_equation(equation_pdf):
    path, drawn = equation_pdf
    doc = _parse(path)
    eqs = [u for u in doc.units if u.modality == "equation"]
    assert len(eqs) == 1
    eq = eqs[0]
    assert eq.equation_number == "1" and eq.text.replace(" ", "") == "E=mc^2"
    assert eq.page == 1 and contains(drawn, eq.bbox, tol=0.01)
    assert eq.display_text().endswith("(1)")


def test_scanned_page_goes_through_ocr(scanned_pdf):
    doc = _parse(scanned_pdf)
    _check_invariants(doc)
    p1, p2 = doc.pages
    assert p1.ocr and "Revenue increased" in p1.text
    units = doc.units_on(1)
    assert units and all(u.ocr for u in units)
    line = next(u for u in units if "dividend" in u.text)
    # drawn at y = 160 + 2*70 px of 1584 px, x from 120 px of 1224
    assert line.bbox[0] < 120 / 1224 + 0.02 and line.bbox[1] < 300 / 1584 < line.bbox[3] + 0.02
    assert p2.skip_reason == "blank page" and not doc.units_on(2)


def test_ocr_never_records_reason(scanned_pdf):
    doc = _parse(scanned_pdf, ocr="never")
    assert not doc.units and doc.pages[0].skip_reason == "no text layer (OCR disabled)"


def test_max_ocr_pages(scanned_pdf):
    doc = NativeParser(ParseConfig()).parse(scanned_pdf, max_ocr_pages=0)
    assert doc.pages[0].skip_reason.startswith("OCR page limit")


def test_garbage_text_layer_detected():
    from docray.engine.parse.native.text import text_quality

    assert text_quality("The quick brown fox jumps over the lazy dog. " * 5) > 0.9
    assert text_quality("\ue001\ue002\ue003 \ue004\ue005 \ufffd\ufffd" * 10) < 0.2
    assert text_quality("(cid:12)(cid:40)(cid:3) " * 10) < 0.2
    assert text_quality("xkcd qwrt zzpf bcdfg hjkl mnpq rstv wxz " * 5) < 0.6


def test_image_and_text_inputs(tmp_path):
    img = tmp_path / "scan.png"
    text_image(SCAN_LINES).save(img)
    doc = _parse(img)
    assert doc.n_pages == 1 and doc.pages[0].ocr and "dividend" in doc.pages[0].text
    md = tmp_path / "notes.md"
    md.write_text("# Guide\n\nIntro text.\n\n## Setup\n\nInstall it.\n")
    doc = _parse(md)
    assert [u.modality for u in doc.units] == ["title", "text", "title", "text"]
    assert doc.units[3].section == ["Guide", "Setup"] and doc.units[2].level == 2


# ---------------------------------------------------------------- bad input

def test_encrypted(tmp_path):
    from reportlab.lib.pdfencrypt import StandardEncryption
    from reportlab.pdfgen import canvas

    path = tmp_path / "locked.pdf"
    c = canvas.Canvas(str(path), encrypt=StandardEncryption("secret", ownerPassword="owner"))
    c.drawString(72, 720, "hidden")
    c.showPage()
    c.save()
    with pytest.raises(EncryptedDocument) as err:
        _parse(path)
    assert err.value.source == str(path) and "encrypted" in err.value.cause


def test_truncated(multi_page_pdf, tmp_path):
    data = multi_page_pdf.read_bytes()
    path = tmp_path / "truncated.pdf"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(BadInput) as err:
        _parse(path)
    assert "truncated" in err.value.cause and str(path) in str(err.value)


def test_zero_pages(tmp_path):
    import pypdfium2 as pdfium

    path = tmp_path / "empty.pdf"
    pdfium.PdfDocument.new().save(str(path))  # a valid file with an empty page tree
    with pytest.raises(BadInput) as err:
        _parse(path)
    assert not isinstance(err.value, (TooLarge, EncryptedDocument))
    assert "no pages" in err.value.cause


@pytest.mark.parametrize("name", ["setup.exe", "setup.pdf"])
def test_not_a_pdf(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"MZ\x90\x00\x03\x00\x00\x00" + b"\x00" * 200)
    with pytest.raises(BadInput) as err:
        _parse(path)
    assert "not a PDF" in err.value.cause


def test_missing_and_empty(tmp_path):
    with pytest.raises(BadInput):
        _parse(tmp_path / "nope.pdf")
    (tmp_path / "zero.pdf").write_bytes(b"")
    with pytest.raises(BadInput):
        _parse(tmp_path / "zero.pdf")


def test_over_limits(multi_page_pdf):
    with pytest.raises(TooLarge) as err:
        NativeParser(ParseConfig(limits=LimitsConfig(max_pages=2))).parse(multi_page_pdf)
    assert "3 pages" in err.value.cause
    with pytest.raises(TooLarge) as err:
        NativeParser(ParseConfig(limits=LimitsConfig(max_file_mb=0.0001))).parse(multi_page_pdf)
    assert "MB" in err.value.cause
    doc = _parse(multi_page_pdf)
    assert [p.page for p in doc.pages] == [1, 2, 3] and all(doc.units_on(n) for n in (1, 2, 3))


def test_import_does_no_model_work():
    """Importing the parser loads no model and no OCR/layout package (lazy, once per process)."""
    import subprocess
    import sys

    code = ("import sys; from docray.engine.parse.native import NativeParser, ocr, layout; "
            "assert ocr._engine is None and layout._engine is None; "
            "assert 'rapidocr' not in sys.modules and 'rapid_layout' not in sys.modules; "
            "assert 'pdfplumber' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
