"""Financial ratios computed from a document's statements (statements.py, ratios.py), read
from a real content store, and their use by the extractive answerer."""
import asyncio

import pytest

from docray.engine.index.content import ContentStore
from docray.engine.model import Cell, Chunk, TableContent, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.extractive import ExtractiveAnswerer
from docray.engine.synthesize.ratios import ratio_ask
from docray.engine.synthesize.statements import DocTables

WS, DOC = "ws", "doc1"


def _table(rows: list[list[str]]) -> TableContent:
    return TableContent(rows=[[Cell(text=t, is_header=i == 0) for t in r]
                              for i, r in enumerate(rows)], header_rows=1)


def _unit(uid: str, page: int, rows: list[list[str]], caption: str = "") -> Unit:
    return Unit(unit_id=uid, doc_id=DOC, page=page, bbox=(0.1, 0.1, 0.9, 0.9),
                modality="table", table=_table(rows), caption=caption)


BALANCE = [["(In millions)", "May 31, 2021", "May 31, 2020"],
           ["Current assets:", "", ""],
           ["Cash and equivalents", "$ 9,889", "$ 8,348"],
           ["Accounts receivable, net", "4,463", "2,749"],
           ["Inventories", "6,854", "7,367"],
           ["Total current assets", "26,291", "20,556"],
           ["Total assets", "37,740", "31,342"],
           ["Current liabilities:", "", ""],
           ["Accounts payable", "2,836", "2,248"],
           ["Total current liabilities", "9,674", "8,284"],
           ["Total shareholders' equity", "12,767", "8,055"]]
INCOME = [["(In millions)", "2021", "2020", "2019"],
          ["Revenues", "$ 44,538", "$ 37,403", "$ 39,117"],
          ["Cost of sales", "24,576", "21,162", "21,643"],
          ["Gross profit", "19,962", "16,241", "17,474"],
          ["Income before income taxes", "6,661", "2,887", "4,801"],
          ["Income tax expense", "934", "348", "772"],
          ["Net income", "$ 5,727", "$ 2,539", "$ 4,029"]]
# a cash flow statement: its "Inventories" row is the year's change, not the balance
CASH_FLOW = [["(In millions)", "2021", "2020", "2019"],
             ["Cash provided by operations:", "", "", ""],
             ["Net income", "5,727", "2,539", "4,029"],
             ["Changes in certain working capital components:", "", "", ""],
             ["Inventories", "507", "(1,854)", "(490)"],
             ["Cash provided by operations", "6,657", "2,485", "5,903"]]


@pytest.fixture
def tables(tmp_path):
    store = ContentStore(tmp_path / "content.sqlite")
    store.add_doc(WS, [_unit("u-inc", 33, INCOME), _unit("u-bal", 35, BALANCE),
                       _unit("u-cf", 37, CASH_FLOW)], [])
    yield DocTables(store)
    store.close()


def _passage(text="NIKE, Inc. annual report on Form 10-K for fiscal 2021.") -> Passage:
    return Passage(chunk=Chunk(chunk_id="c1", doc_id=DOC, text=text, pages=[2], workspace=WS),
                   units=[], score=1.0, filename="NIKE_2021_10K.pdf")


def _ask(tables, question: str):
    answerer = ExtractiveAnswerer(threshold=0.1, tables=tables)
    return asyncio.run(answerer.answer(question, [_passage()]))


def test_line_items_come_from_the_statements_not_the_cash_flow_changes(tables):
    inv = tables.item(WS, DOC, "inventory", "2021")
    assert (inv.value, inv.prior, inv.unit.unit_id) == (6854.0, 7367.0, "u-bal")
    ni = tables.item(WS, DOC, "net_income", "2021")
    assert ni.value == 5727.0 and ni.factor == 1e6
    assert tables.item(WS, DOC, "long_term_debt", "2021") is None
    assert tables.years(WS, DOC)[0] == "2021"


def test_turnover_averages_the_balance_over_two_years_and_cites_both_tables(tables):
    a = _ask(tables, "What is the FY2021 inventory turnover ratio for Nike? Round your answer "
                     "to two decimal places.")
    # 24,576 / ((7,367 + 6,854) / 2) = 3.456...
    assert a.value == "3.46" and not a.abstained
    assert a.answer.startswith("3.46 (inventory turnover, fiscal 2021: Cost of sales 24,576")
    cited = {a.evidence[i].unit_id for i in a.citations}
    assert cited == {"u-inc", "u-bal"}
    assert all(a.evidence[i].page in (33, 35) and a.evidence[i].doc == "NIKE_2021_10K.pdf"
               for i in a.citations)


@pytest.mark.parametrize("question, value", [
    ("What is cash ratio in FY2021 for Nike? Round your answer to two decimal places.", "1.02"),
    ("What is current ratio in FY2021 for Nike?", "2.72"),
    ("What is the effective tax rate of Nike in FY2021?", "14.0%"),
    ("What was the gross margin for FY2021? Answer in percentage terms, round to two "
     "decimal places.", "44.82%"),
    ("what is Nike's FY2021 return on asset? round your answer to three decimal", "0.152"),
    ("What is sales to working capital ratio of Nike in FY 2021?", "2.68"),
    ("Operating cash flow ratio is defined as: cash from operations / total current "
     "liabilities. What is it for FY2021?", "0.688"),
])
def test_named_and_defined_ratios(tables, question, value):
    assert _ask(tables, question).value == value


def test_a_missing_operand_or_year_falls_back_to_the_passages(tables):
    # no long-term debt row: the debt ratio is not invented
    a = _ask(tables, "What is the debt to EBITDA ratio for FY2021?")
    assert "fiscal" not in a.answer
    # no column for 2018 balances
    a = _ask(tables, "What is the FY2018 current ratio for Nike?")
    assert "current ratio, fiscal" not in a.answer


def test_a_table_without_a_scale_takes_the_scale_its_amounts_match(tmp_path):
    store = ContentStore(tmp_path / "content.sqlite")
    income = [["(In thousands)", "2015", "2014"], ["Revenue", "4,795,511", "4,147,065"],
              ["Net income", "629,551", "268,395"]]
    summary = [["", "2015", "2014"], ["Net income", "629.6", "268.4"],
               ["Net cash provided by operating activities", "1,469.5", "1,287.5"],
               ["Revenue", "4,795.5", "4,147.1"]]  # in millions, said only in the text
    balance = [["", "2015", "2014"], ["Total current liabilities", "2,213,556", "2,494,435"],
               ["Total assets", "11,726,472", "10,785,829"], ["Net income", "629,551", "1"]]
    store.add_doc(WS, [_unit("i", 1, income), _unit("s", 2, summary),
                       _unit("b", 3, balance)], [])
    tables = DocTables(store)
    assert tables.item(WS, DOC, "operating_cash_flow", "2015").factor == 1e6
    assert tables.item(WS, DOC, "current_liabilities", "2015").factor == 1e3
    a = asyncio.run(ExtractiveAnswerer(0.1, tables=tables).answer(
        "What is the FY2015 operating cash flow ratio? Round to two decimal places.",
        [_passage()]))
    assert a.value == "0.66"  # 1,469.5 million / 2,213,556 thousand
    store.close()


def test_questions_that_name_no_single_year_ratio():
    assert ratio_ask("What is the total of Tax Fees and All Other Fees in 2019?") is None
    assert ratio_ask("Does Boeing have an improving gross margin profile as of FY2022?") is None
    assert ratio_ask("What is the change of gross margins from FY2022 to FY2021?") is None
    r = ratio_ask("what is R&D to asset ratio for Activision Blizzard in FY 2019?")
    assert r is not None and r.name == "R&D to asset ratio"


def test_one_line_item_of_a_fiscal_year_is_read_from_the_statement(tables):
    a = _ask(tables, "Using the balance sheet: what is the year end FY2021 total current "
                     "liabilities for Nike? Answer in USD billions.")
    assert a.value == "9.67 billion"  # 9,674 million, restated as asked
    assert [a.evidence[i].unit_id for i in a.citations] == ["u-bal"]
    # the statement's own row, not the cash flow statement's change in inventories
    assert _ask(tables, "What were inventories at FY2021 year end?").value == "6,854 million"


def test_the_row_the_question_names_wins_over_a_larger_total(tmp_path):
    store = ContentStore(tmp_path / "content.sqlite")
    income = [["($ in thousands)", "2019", "2018"], ["Cost of goods sold", "74,646", "70,001"],
              ["Occupancy", "2,846", "2,700"], ["Total cost of goods sold", "77,492", "72,701"],
              ["Net sales", "93,662", "90,120"]]
    store.add_doc(WS, [_unit("i", 1, income)], [])
    a = asyncio.run(ExtractiveAnswerer(0.1, tables=DocTables(store)).answer(
        "What is the Cost of goods sold for year ended December 31, 2019?", [_passage()]))
    assert a.value == "74,646 thousand"
    store.close()


@pytest.mark.parametrize("question", [
    "What is Long-term Debt to Total Liabilities for COSTCO in FY2021?",  # a ratio
    "What was the change in total assets from FY2020 to FY2021?",
    "What is total assets in the second quarter of FY2021?",
    "What is the total assets figure?",  # no fiscal year named
])
def test_questions_that_are_not_one_line_item(question):
    from docray.engine.synthesize.lineitems import amount_ask

    assert amount_ask(question) is None


def test_a_headerless_balance_sheet_takes_its_dates_and_scale_from_the_lines_above(tmp_path):
    """The parser left "January 28, 2023 | January 29, 2022" and "$ in millions" outside
    the table, as text units above it; its continuation is a second headerless table."""
    store = ContentStore(tmp_path / "content.sqlite")

    def text(uid, order, t):
        return Unit(unit_id=uid, doc_id=DOC, page=39, bbox=(0.1, 0.1, 0.5, 0.12),
                    modality="text", text=t, order=order)

    def bare(uid, order, rows):
        return Unit(unit_id=uid, doc_id=DOC, page=39, bbox=(0.1, 0.1, 0.9, 0.5), order=order,
                    modality="table", table=TableContent(rows=[[Cell(text=t) for t in r]
                                                               for r in rows]))

    assets = [["Cash and cash equivalents", "1,874", "2,936"],
              ["Receivables, net", "1,141", "1,042"], ["Total current assets", "8,802", "10,539"],
              ["Total assets", "15,803", "17,504"]]
    more = [["Total current liabilities", "8,979", "10,674"], ["Total equity", "2,795", "3,020"]]
    store.add_doc(WS, [text("t0", 1, "Consolidated Balance Sheets $ in millions"),
                       text("t1", 2, "January 28, 2023"), text("t2", 3, "January 29, 2022"),
                       bare("b1", 4, assets), text("t3", 5, "Liabilities and equity"),
                       bare("b2", 6, more)], [])
    tables = DocTables(store)
    cash = tables.item(WS, DOC, "cash", "2023")
    assert (cash.value, cash.prior, cash.factor) == (1874.0, 2936.0, 1e6)
    cl = tables.item(WS, DOC, "current_liabilities", "2023")  # years from the table before
    assert (cl.value, cl.prior, cl.unit.unit_id, cl.factor) == (8979.0, 10674.0, "b2", 1e6)
    store.close()


def _sales_by_category(tmp_path):
    store = ContentStore(tmp_path / "content.sqlite")
    sales = [["(In thousands)", "2019", "2018"], ["Drink Kefir", "71,822", "78,523"],
             ["Cheese", "11,459", "11,486"], ["Net sales", "93,662", "103,350"]]
    payroll = [["", "2019", "2018"], ["Payroll and incentive compensation", "3,009", "1,937"],
               ["Total accrued expenses", "4,500", "3,900"]]
    store.add_doc(WS, [_unit("s", 60, sales, "Net sales by product category"),
                       _unit("p", 61, payroll)], [])
    return store


@pytest.mark.parametrize("question, value, unit_id", [
    ("What is the change in the net sales for cheese between 2018 and 2019?", "-27 thousand",
     "s"),
    ("What is the change in payroll and incentive compensation between 2018 and 2019?",
     "1,072", "p"),
    ("How much were the net sales of drink kefir in 2018?", "78,523 thousand", "s"),
])
def test_a_row_the_passages_miss_is_found_by_its_label(tmp_path, question, value, unit_id):
    store = _sales_by_category(tmp_path)
    a = asyncio.run(ExtractiveAnswerer(0.1, tables=DocTables(store)).answer(
        question, [_passage("Net sales were $93,662 for the year, a decrease of 9.4%.")]))
    assert a.value == value
    assert [a.evidence[i].unit_id for i in a.citations] == [unit_id]
    store.close()


@pytest.mark.parametrize("question", [
    "What is the change in the net sales for yogurt between 2018 and 2019?",  # no such row
    "What is the ratio of cheese to net sales in 2019?",  # two rows and a formula
    "What were NIKE's net sales in 2030?",  # no such year
])
def test_no_row_is_named(tmp_path, question):
    from docray.engine.synthesize.docrows import named_row

    store = _sales_by_category(tmp_path)
    assert named_row(DocTables(store), WS, DOC, question, ["2019"] if "2030" not in question
                     else ["2030"], "NIKE_2021_10K.pdf") is None
    store.close()


def test_warm_reads_every_document_with_tables_before_the_first_question(tables):
    assert tables.warm(WS) == 1 and tables.warm("other workspace") == 0
    assert (WS, DOC) in tables._docs  # the first question finds it read
