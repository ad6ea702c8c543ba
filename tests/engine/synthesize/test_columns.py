"""Sums and averages over a whole column the question names (columns.py), and their use
by the extractive answerer."""
import asyncio

import pytest

from docray.engine.model import Cell, Chunk, TableContent, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.columns import ColumnAsk, column_ask, column_cell
from docray.engine.synthesize.extractive import ExtractiveAnswerer


def _salaries() -> TableContent:
    head = [["", "Fiscal Year", "Fiscal Year", ""], ["", "2018", "2019", "Percentage"],
            ["Named Executive Officer", "Base Salary", "Base Salary", "Increase"]]
    body = [["Oleg Khaykin", "750,000", "800,000", "6.7%"],
            ["Amar Maletira", "425,000", "500,000", "17.7%"],
            ["Paul McNab", "435,000", "435,000", "—"],
            ["Gary Staley", "360,000", "375,000", "4.2%"],
            ["Total", "1,970,000", "2,110,000", ""]]
    return TableContent(rows=[[Cell(text=t, is_header=True) for t in r] for r in head]
                        + [[Cell(text=t) for t in r] for r in body], header_rows=3)


@pytest.mark.parametrize("q, ask", [
    ("How much do the top 3 base salaries in 2019 add up to?", ColumnAsk("sum", 3)),
    ("What was the total base salary of all Named Executive Officers in 2018?",
     ColumnAsk("sum", None)),
    ("What is the average base salary of all officers in 2019?", ColumnAsk("average", None)),
    ("What is the summed compensation for the top three most compensated directors?",
     ColumnAsk("sum", 3)),
    ("What is the total of Tax Fees and All Other Fees in 2019?", None),  # two rows
    ("What was the total base salary in 2018?", None),  # one row: "total" names it
    ("Which officer had the top salary?", None),  # no sum or average
])
def test_column_questions(q, ask):
    assert column_ask(q) == ask


def test_the_year_column_is_summed_without_its_total_row():
    hit = column_cell(_salaries(), ColumnAsk("sum", None), {"base", "salary", "2018"},
                      ["2018"])
    assert hit.value == "1,970,000"  # 750,000 + 425,000 + 435,000 + 360,000
    assert "over all 4 rows" in hit.answer and "Total" not in hit.answer.split(":", 1)[1]
    top = column_cell(_salaries(), ColumnAsk("sum", 2), {"base", "salary"}, ["2019"])
    assert top.value == "1,300,000"  # 800,000 + 500,000
    # a column named by none of the question's words: no answer
    assert column_cell(_salaries(), ColumnAsk("sum", None), {"bonus"}, []) is None


def test_the_answerer_answers_with_the_columns_sum_and_cites_its_table():
    unit = Unit(unit_id="u1", doc_id="d", page=39, bbox=(0.1, 0.1, 0.9, 0.5),
                modality="table", table=_salaries())
    passage = Passage(chunk=Chunk(chunk_id="c1", doc_id="d", text="Named Executive Officer "
                                  "base salaries", pages=[39], modality="table"),
                      units=[unit], score=1.0, filename="proxy.pdf")
    a = asyncio.run(ExtractiveAnswerer(threshold=0.1).answer(
        "How much do the top 3 base salaries in 2019 add up to?", [passage]))
    assert a.value == "1,735,000" and a.answer.startswith("1,735,000 (sum of")
    assert a.evidence[a.citations[0]].page == 39
