import pytest

from docray.engine.synthesize.units import asked_unit, in_asked_unit


@pytest.mark.parametrize("question, unit", [
    ("What is total long-term Liabilities for COSTCO in FY 2021? Anwser in millions", "million"),
    ("what is Cash and cash equivalents for Best Buy? Answer in million", "million"),
    ("What is FY2019 revenue (in USD thousands)?", "thousand"),
    ("How many stores were opened in 2021?", None),
    ("How many million users joined?", None),
])
def test_the_unit_a_question_asks_for(question, unit):
    assert asked_unit(question) == unit


def test_restating_keeps_the_sign_and_leaves_unitless_values_alone():
    assert in_asked_unit("(1,577) million", "Answer in USD billions.") == "-1.58 billion"
    assert in_asked_unit("1,902,216 thousand", "Answer in USD millions.") == "1,902.2 million"
    assert in_asked_unit("12.5%", "Answer in USD millions.") is None
    assert in_asked_unit("1,577", "Answer in USD billions.") is None


def test_the_company_the_document_is_names_no_row():
    """"Best Buy" in a question over BESTBUY_2023_10K.pdf is the filer, not the store
    table's "Best Buy" row; the segment the question names picks the row."""
    import asyncio

    from docray.engine.model import Cell, Chunk, TableContent, Unit
    from docray.engine.synthesize import Passage
    from docray.engine.synthesize.extractive import ExtractiveAnswerer

    rows = [["", "Stores Opened", "Total Stores at End of Fiscal 2023"],
            ["Best Buy", "1", "917"], ["Outlet Centers", "5", "22"],
            ["Total Domestic segment stores", "6", "978"]]
    table = TableContent(rows=[[Cell(text=t, is_header=i == 0) for t in r]
                               for i, r in enumerate(rows)], header_rows=1)
    u = Unit(unit_id="bby:p26:u1", doc_id="bby", page=26, bbox=(0.1, 0.1, 0.9, 0.5),
             modality="table", table=table)
    p = Passage(Chunk(chunk_id="bby:c1", doc_id="bby", text=u.display_text(), pages=[26],
                      unit_ids=[u.unit_id]), [u], 1.0, "BESTBUY_2023_10K.pdf")
    a = asyncio.run(ExtractiveAnswerer(0.05).answer(
        "How many Domestic segment stores does Best Buy have at the end of fiscal 2023?", [p]))
    assert a.value == "978"
