import pytest
from pydantic import ValidationError

from docray.engine.model import Cell, TableContent, Unit, content_hash, expand_spans, file_doc_id


def test_doc_id_is_a_content_hash(tmp_path):
    a, b = tmp_path / "a.pdf", tmp_path / "b.pdf"
    a.write_bytes(b"same bytes")
    b.write_bytes(b"same bytes")
    assert file_doc_id(a) == file_doc_id(b) == content_hash(b"same bytes")
    b.write_bytes(b"other")
    assert file_doc_id(a) != file_doc_id(b)


def test_bbox_must_be_page_relative():
    with pytest.raises(ValidationError, match="bbox"):
        Unit(unit_id="u", doc_id="d", page=1, bbox=(0.5, 0.1, 0.2, 0.3), modality="text")
    with pytest.raises(ValidationError):
        Unit(unit_id="u", doc_id="d", page=0, bbox=(0, 0, 1, 1), modality="text")


def test_spans_expand_into_a_grid():
    rows = [[Cell(text="", row_span=2), Cell(text="Years", col_span=2, is_header=True)],
            [Cell(text="2018", is_header=True), Cell(text="2017", is_header=True)],
            [Cell(text="Capex"), Cell(text="(1,577)"), Cell(text="(1,373)")]]
    assert expand_spans(rows) == [["", "Years", "Years"], ["", "2018", "2017"],
                                  ["Capex", "(1,577)", "(1,373)"]]


def test_table_display_text_linearises_rows():
    t = TableContent(rows=[[Cell(text="a"), Cell(text="1")]], header_rows=0)
    u = Unit(unit_id="u", doc_id="d", page=2, bbox=(0, 0, 1, 1), modality="table", table=t,
             caption="Table 1: x")
    assert u.display_text() == "Table 1: x\na | 1"


def test_lone_surrogates_from_text_layers_are_dropped():
    bad = "Total" + chr(0xD835) + " revenue"
    u = Unit(unit_id="u", doc_id="d", page=1, bbox=(0, 0, 1, 1), modality="text", text=bad,
             section=[bad])
    assert u.text == "Total revenue" and u.section == ["Total revenue"]
    assert Cell(text=bad).text == "Total revenue"
    u.model_dump_json().encode("utf-8")  # serialisable: this raised before
