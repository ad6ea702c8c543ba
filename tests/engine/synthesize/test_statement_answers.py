"""Answers computed from a document's statements over more than one year, and the line
items and rows they read (fromstatements.py, lineitems.py, statements.py, docrows.py), on
a real content store."""
import asyncio

import pytest

from docray.engine.index.content import ContentStore
from docray.engine.model import Cell, Chunk, TableContent, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.extractive import ExtractiveAnswerer
from docray.engine.synthesize.lineitems import change_ask
from docray.engine.synthesize.ratios import ratio_ask
from docray.engine.synthesize.statements import DocTables

WS, DOC = "ws", "doc1"


def _unit(uid: str, page: int, order: int, rows: list[list[str]], heads: int = 1) -> Unit:
    table = TableContent(rows=[[Cell(text=t, is_header=i < heads) for t in r]
                               for i, r in enumerate(rows)], header_rows=heads)
    return Unit(unit_id=uid, doc_id=DOC, page=page, order=order, bbox=(0.1, 0.1, 0.9, 0.9),
                modality="table", table=table)


def _text(uid: str, page: int, order: int, text: str) -> Unit:
    return Unit(unit_id=uid, doc_id=DOC, page=page, order=order, bbox=(0.1, 0.05, 0.9, 0.1),
                modality="text", text=text)


# a retailer's statements: fiscal years of 52 weeks, no "total liabilities" row
INCOME = [["", "52 Weeks Ended", "52 Weeks Ended", "52 Weeks Ended"],
          ["(in millions)", "August 29, 2021", "August 30, 2020", "September 1, 2019"],
          ["Total revenue", "195,929", "166,761", "152,703"],
          ["Operating income", "6,708", "5,435", "4,737"],
          ["Net income", "5,007", "4,002", "3,659"]]
BALANCE = [["(in millions)", "2021", "2020"], ["Cash and cash equivalents", "11,258", "12,277"],
           ["Total assets", "59,268", "55,556"], ["Total current liabilities", "29,441", "24,844"],
           ["Long-term debt, excluding current portion", "6,692", "7,514"],
           ["Total equity", "18,078", "15,243"],
           ["Total liabilities and equity", "59,268", "55,556"]]
CASH_FLOW = [["(in millions)", "2021", "2020", "2019"],
             ["CASH FLOWS FROM INVESTING ACTIVITIES", "", "", ""],
             ["Purchases of property and equipment", "(3,588)", "(2,810)", "(2,998)"]]
QUARTER = [["(in millions)", "13 Weeks Ended May 9, 2021", "13 Weeks Ended May 10, 2020"],
           ["Total revenue", "45,277", "37,266"]]
PRODUCTS = [["", "2021", "2020"], ["Cheese", "11,459", "11,486"], ["Kefir", "2,780", "2,795"]]


@pytest.fixture
def tables(tmp_path):
    store = ContentStore(tmp_path / "content.sqlite")
    store.add_doc(WS, [_unit("inc", 30, 1, INCOME, heads=2), _unit("bal", 31, 1, BALANCE),
                       _unit("cf", 32, 1, CASH_FLOW), _unit("q", 40, 1, QUARTER),
                       _text("lead", 50, 1, "Net sales of products by category were as "
                                            "follows (in thousands):"),
                       _unit("prod", 50, 2, PRODUCTS)], [])
    yield DocTables(store)
    store.close()


def _ask(tables, question: str):
    passage = Passage(chunk=Chunk(chunk_id="c1", doc_id=DOC, text="Costco annual report.",
                                  pages=[2], workspace=WS),
                      units=[], score=1.0, filename="COSTCO_2021_10K.pdf")
    return asyncio.run(ExtractiveAnswerer(threshold=0.1, tables=tables).answer(
        question, [passage]))


def test_a_52_week_year_is_a_fiscal_year_and_13_weeks_is_not(tables):
    it = tables.item(WS, DOC, "operating_income", "2021")
    assert (it.value, it.unit.unit_id) == (6708.0, "inc")
    # the quarter's larger-looking revenue table is never read as a year
    assert tables.item(WS, DOC, "revenue", "2021").unit.unit_id == "inc"
    assert all(r.unit.unit_id != "q" for r in tables.rows(WS, DOC))


@pytest.mark.parametrize("question, value", [
    # total liabilities stated nowhere: total liabilities and equity less equity
    ("What is the FY2021 cash balance to total liability ratio? Round to three decimals.",
     "0.273"),  # 11,258 / (59,268 - 18,078)
    ("What is total debt to total assets for Costco in FY 2021?", "0.113"),  # no "ratio"
    ("What is the FY2021 capex to average long-term debt ratio? Round to two decimals.",
     "0.51"),  # 3,588 / ((6,692 + 7,514) / 2)
    ("What is the FY2021 capital expenditure amount (in USD millions)?", "3,588 million"),
    ("What is the FY2019 - FY2021 3 year average of capex as a % of revenue? Round to one "
     "decimal place.", "1.8%"),  # (1.96 + 1.69 + 1.83) / 3
    ("What is the year-over-year change in revenue from FY2020 to FY2021 (in percents)?",
     "17.5%"),
    ("What was the change in total revenue from FY2020 to FY2021?", "29,168 million"),
])
def test_ratios_items_and_changes(tables, question, value):
    a = _ask(tables, question)
    assert a.value == value, a.answer
    assert a.confidence == 0.9 and a.evidence[a.citations[0]].page in (30, 31, 32)


def test_an_average_names_each_year_and_a_fraction_is_also_read_as_a_percent(tables):
    a = _ask(tables, "What is the FY2019 - FY2021 3 year average of capex as a % of revenue?")
    assert "2019 2.0%, 2020 1.7%, 2021 1.8%" in a.answer
    cited = sorted(a.evidence[i].unit_id for i in a.citations)
    assert cited == ["cf", "inc"]
    a = _ask(tables, "What is the FY2021 cash balance to total liability ratio?")
    assert a.answer.startswith("0.273 (27.33%; cash balance to total liability ratio")


def test_questions_that_are_no_change_of_one_line_item():
    assert change_ask("Did wages expense as a percent of net sales increase in FY2023?") is None
    assert change_ask("What is the change in net sales for cheese between 2018 and 2019?") \
        is None  # no fiscal year: a row of the passages' tables, not the statement's
    assert ratio_ask("What was the average gross margin over FY2010 - FY2020?") is None


def test_a_row_named_by_the_line_that_leads_into_its_table(tables):
    # retrieval gave no table; "net sales" is said only by the sentence above the table
    a = _ask(tables, "What is the change in the net sales for cheese between 2020 and 2021?")
    assert a.value.startswith("-27") and "Cheese" in a.answer
    assert a.evidence[a.citations[0]].unit_id == "prod"
