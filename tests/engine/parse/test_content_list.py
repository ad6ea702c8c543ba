"""Round trip of a MinerU-style content_list.json written by hand from the published format."""
import json

import pytest

from docray.engine.errors import BadInput
from docray.engine.model import Document
from docray.engine.parse.content_list import (export_content_list, load_content_list,
                                              table_from_html, units_from_content_list)

MINERU = [
    {"type": "text", "text": "Attention Is All You Need", "text_level": 1, "page_idx": 0,
     "bbox": [160, 98, 838, 130]},
    {"type": "text", "text": "The dominant sequence transduction models are based on complex "
     "recurrent or convolutional neural networks.", "page_idx": 0, "bbox": [120, 300, 880, 420]},
    {"type": "text", "text": "3 Model Architecture", "text_level": 2, "page_idx": 1,
     "bbox": [117, 80, 400, 100]},
    {"type": "image", "img_path": "images/0f3c.jpg",
     "image_caption": ["Figure 1: The Transformer - model architecture."],
     "image_footnote": [], "page_idx": 2, "bbox": [300, 70, 700, 560]},
    {"type": "equation", "text": "$$\\mathrm{Attention}(Q,K,V)=\\mathrm{softmax}"
     "(\\frac{QK^T}{\\sqrt{d_k}})V \\tag{1}$$", "text_format": "latex", "page_idx": 3,
     "bbox": [290, 350, 710, 390]},
    {"type": "table", "img_path": "images/a1b2.jpg",
     "table_caption": ["Table 2: BLEU scores."], "table_footnote": ["* big model"],
     "table_body": "<table><tr><th rowspan=\"2\">Model</th><th colspan=\"2\">BLEU</th></tr>"
                   "<tr><th>EN-DE</th><th>EN-FR</th></tr>"
                   "<tr><td>Transformer (big)</td><td>28.4</td><td>41.8</td></tr></table>",
     "page_idx": 7, "bbox": [180, 120, 820, 300]},
]


def test_import_maps_every_block(tmp_path):
    p = tmp_path / "content_list.json"
    p.write_text(json.dumps(MINERU))
    doc = load_content_list(p, doc_id="d1")
    mods = [u.modality for u in doc.units]
    assert mods == ["title", "text", "title", "image", "equation", "table"]
    assert [u.page for u in doc.units] == [1, 1, 2, 3, 4, 8]
    assert doc.units[3].bbox == pytest.approx((0.3, 0.07, 0.7, 0.56))
    assert doc.units[3].caption.startswith("Figure 1")
    assert doc.units[4].equation_number == "1"
    assert doc.units[5].section == ["Attention Is All You Need", "3 Model Architecture"]
    table = doc.units[5].table
    assert table.header_rows == 2
    assert table.grid()[2] == ["Transformer (big)", "28.4", "41.8"]
    assert table.grid()[1] == ["Model", "EN-DE", "EN-FR"]
    assert doc.n_pages == 8


def test_round_trip_is_stable():
    units = units_from_content_list(MINERU, "d1")
    doc = Document(doc_id="d1", source="x", filename="x", units=units)
    exported = export_content_list(doc)
    for orig, back in zip(MINERU, exported):
        for key in ("type", "page_idx", "bbox", "text", "text_level", "img_path",
                    "image_caption", "table_caption", "table_footnote"):
            if key in orig:
                assert back[key] == orig[key], key
    again = units_from_content_list(exported, "d1")
    assert [u.model_dump() for u in again] == [u.model_dump() for u in units]


def test_table_html_spans_and_escaping():
    t = table_from_html("<table><tr><th>a &amp; b</th></tr><tr><td colspan='2'>x</td></tr></table>")
    assert t.rows[0][0].text == "a & b" and t.rows[1][0].col_span == 2


def test_bad_content_list_names_the_problem(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"type": "text"}')
    with pytest.raises(BadInput, match="JSON list"):
        load_content_list(p)
    with pytest.raises(BadInput, match=r"content_list\[0\].*unknown block type 'widget'"):
        units_from_content_list([{"type": "widget", "page_idx": 0}], "d")


def test_mineru4_block_types_import_as_the_nearest_modality():
    blocks = [
        {"type": "page_header", "text": "ACME annual report", "page_idx": 0},
        {"type": "aside_text", "text": "arXiv:1810.08699v1", "page_idx": 0},
        {"type": "chart", "img_path": "images/c.jpg", "content": "revenue 2021 2022",
         "chart_caption": ["Figure 2: Revenue"], "chart_footnote": [], "page_idx": 1},
        {"type": "index", "list_items": ["- Intro", "- Results"], "page_idx": 1},
        {"type": "code", "sub_type": "code", "code_body": "print(1)",
         "code_caption": ["Listing 1"], "code_footnote": [], "page_idx": 2},
        {"type": "page_footnote", "text": "1 See appendix.", "page_idx": 2},
        {"type": "page_number", "text": "3", "page_idx": 2},
    ]
    units = units_from_content_list(blocks, "d")
    assert [u.modality for u in units] == ["header", "text", "image", "list", "code", "text",
                                           "page_number"]
    chart = units[2]
    assert (chart.caption, chart.text, chart.artifact_id) == (
        "Figure 2: Revenue", "revenue 2021 2022", "images/c.jpg")
    assert units[3].text == "- Intro\n- Results" and units[4].caption == "Listing 1"
    with pytest.raises(BadInput, match="unknown block type 'seal'"):
        units_from_content_list([{"type": "seal", "page_idx": 0}], "d")
