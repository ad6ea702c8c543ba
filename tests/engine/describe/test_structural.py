from docray.engine.config import DescribeConfig
from docray.engine.describe import Describer, get_describer
from docray.engine.describe.structural import StructuralDescriber, sentences, table_facts
from docray.engine.model import Cell, TableContent

from .units import document, results_table, unit


def _described():
    units = get_describer(DescribeConfig()).describe(document())
    return {u.unit_id.split(":")[1]: u for u in units}


def test_protocol_and_text_units_untouched():
    d = get_describer(DescribeConfig())
    assert isinstance(d, Describer) and isinstance(d, StructuralDescriber)
    before, after = document(), d.describe(document())
    assert [u.unit_id for u in after] == [u.unit_id for u in before]
    for b, a in zip(before, after):
        if b.modality not in ("table", "image", "equation"):
            assert a == b
        else:
            assert a.description


def test_table_facts_expand_spans_and_headers():
    headers, facts = table_facts(results_table())
    assert "docray | Accuracy / test: 90.7" in facts
    assert "BERT | Accuracy / dev: 84.1" in facts
    assert len(facts) == 4 and "Model" in headers


def test_table_without_header_cols_uses_first_column_as_row_label():
    rows = [[Cell(text="City", is_header=True), Cell(text="Pop", is_header=True)],
            [Cell(text="Oslo"), Cell(text="0.7M")]]
    assert table_facts(TableContent(rows=rows)) == (["City", "Pop"], ["Oslo | Pop: 0.7M"])


def test_table_proxy_has_caption_facts_and_citing_sentence():
    desc = _described()["u2"].description
    assert "Table 1: Accuracy on the benchmark." in desc
    assert "docray | Accuracy / test: 90.7" in desc
    assert "Table 1 shows docray beats BERT" in desc  # from page 2


def test_figure_proxy_has_ocr_and_reference_from_another_page():
    desc = _described()["u8"].description
    assert "Figure 3: Recall versus k." in desc and "recall@k 0.5 0.9" in desc
    assert "As shown in Fig. 3, recall grows with k." in desc  # page 1, figure on page 3
    assert "Figure 30" not in desc


def test_equation_proxy_has_where_definition_and_number():
    desc = _described()["u5"].description
    assert desc.startswith("Equation (2): s(q, p)")
    assert "where q_i is the i-th query token vector" in desc
    assert "The score combines" not in desc  # context, but no definition


def test_context_window_respects_page_delta_and_token_cap():
    units = document()
    d = StructuralDescriber(DescribeConfig(context_units=1, context_tokens=16))
    ctx = d.context(units, 5)  # equation on page 2: neighbours u4 and u6 only
    assert "The score combines both signals." in ctx
    assert not any("Table 1 shows" in s for s in ctx)
    far = [unit(0, "text", 1, "where z is far away")] + [unit(i, "text", 1, "filler.")
                                                        for i in range(1, 5)]
    far.append(unit(5, "equation", 1, "z = 1"))
    assert "where z" not in StructuralDescriber(DescribeConfig(context_units=2)).proxy(far, 5)
    long = [unit(0, "text", 1, "where " + "w " * 100), unit(1, "equation", 1, "y = 2")]
    desc = StructuralDescriber(DescribeConfig(context_tokens=16)).proxy(long, 1)
    assert len(desc.split("Definitions: ")[1].split()) <= 16


def test_existing_description_is_kept():
    u = unit(1, "image", 1, caption="Figure 1: x", description="given")
    assert StructuralDescriber().describe([u])[0].description == "given"


def test_sentences_keep_abbreviations():
    assert sentences("See Fig. 3 and Eq. 2 here. Next one.") == [
        "See Fig. 3 and Eq. 2 here.", "Next one."]


def test_every_proxy_line_label_is_one_the_answerer_strips():
    """Answers drop a proxy line's label (PROXY_LABEL); a new label must be added there."""
    import re

    from docray.engine.describe.structural import PROXY_LABEL

    described = _described()
    lines = [ln for key in ("u2", "u8") for ln in described[key].description.split("\n")]
    labelled = [ln for ln in lines if re.match(r"^[A-Z][a-z]+(?: [a-z]+)*: ", ln)]
    assert len(labelled) >= 4  # caption, columns, OCR text, references
    for ln in labelled:
        assert PROXY_LABEL.match(ln), ln
