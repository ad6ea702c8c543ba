"""Operations over two values the question names: two rows of one column, or two columns
of one row (pairs.py), and their use by the extractive answerer."""
import asyncio

import pytest

from docray.engine.model import Cell, Chunk, TableContent, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.extractive import ExtractiveAnswerer
from docray.engine.synthesize.pairs import PairAsk, pair_ask, pair_cell, schedule_share


def _h(text):
    return Cell(text=text, is_header=True)


def _c(text):
    return Cell(text=text)


def _fees() -> TableContent:
    return TableContent(rows=[
        [_h(""), _h("Fiscal 2019"), _h("Fiscal 2018")],
        [_c("Audit Fees (1)"), _c("3,631,575"), _c("3,784,488")],
        [_c("Tax Fees (3)"), _c("169,776"), _c("61,592")],
        [_c("All Other Fees (4)"), _c("4,500"), _c("3,600")],
        [_c("Total"), _c("3,805,851"), _c("4,208,680")],
    ], header_rows=1)


def _assets() -> TableContent:
    return TableContent(rows=[
        [_h("$ in billions"), _h("2016"), _h("2015")],
        [_c("Equity"), _c("256"), _c("247")],
        [_c("Fixed income"), _c("578"), _c("530")],
        [_c("Total long-term assets under supervision"), _c("983"), _c("922")],
    ], header_rows=1)


def _prices() -> TableContent:
    return TableContent(rows=[
        [_h(""), _h("2018"), _h("2018"), _h("2019"), _h("2019")],
        [_h(""), _h("Low"), _h("High"), _h("Low"), _h("High")],
        [_c("First Quarter"), _c("5.99"), _c("8.40"), _c("1.98"), _c("2.75")],
        [_c("Second Quarter"), _c("4.79"), _c("6.48"), _c("1.94"), _c("4.00")],
    ], header_rows=2)


def _pay() -> TableContent:
    return TableContent(rows=[
        [_h("Name"), _h("Fees Earned ($)"), _h("Stock Awards ($)"), _h("Total ($)")],
        [_c("Richard E. Belluzzo"), _c("160,000"), _c("178,317"), _c("338,317")],
        [_c("Laura Black"), _c("67,500"), _c("150,000"), _c("217,500")],
    ], header_rows=1)


@pytest.mark.parametrize("q, op, first, second", [
    ("What is the total of Tax Fees and All Other Fees in 2019?", "sum", "Tax Fees",
     "All Other Fees"),
    ("what percentage of total long-term assets under supervision are comprised of fixed "
     "income in 2015?", "share", "fixed income", "total long-term assets under supervision"),
    ("What was R&D as a percentage of revenue for Adobe in FY2015?", "share", "R&D",
     "revenue"),
    ("operating expenses were what multiple of pre-tax earnings in 2015?", "ratio",
     "operating expenses", "pre-tax earnings"),
    ("What is the difference between Richard E. Belluzzo's total compensation as compared "
     "to Laura Black?", "difference", "Richard E. Belluzzo's total compensation",
     "Laura Black"),
    ("How many more Tweets are attributed to Germanwings than Lufthansa?", "difference",
     "attributed to Germanwings", "Lufthansa"),
    # the question ends at its "?": the instruction after it names no term
    ("What is sales to working capital ratio of Netflix in FY 2015?Round your answer to two "
     "decimal places.", "ratio", "sales", "working capital"),
    ("what is Amazon's FY2017 cash balance to total liability ratio?", "ratio",
     "cash balance", "total liability"),
])
def test_pair_questions_name_the_operation_and_both_terms(q, op, first, second):
    assert pair_ask(q) == PairAsk(op, first, second)


@pytest.mark.parametrize("q", [
    "What is the change in net sales between 2018 and 2019?",  # a change over years
    "What was the total revenue in 2019?",
    "What is the difference between 2018 and 2019?",  # years are no terms
])
def test_questions_over_one_term_are_no_pairs(q):
    assert pair_ask(q) is None


def test_two_rows_of_the_year_column_are_summed():
    hit = pair_cell(_fees(), PairAsk("sum", "Tax Fees", "All Other Fees"),
                    "What is the total of Tax Fees and All Other Fees in 2019?", ["2019"])
    assert hit.value == "174,276"
    assert "Fiscal 2019" in hit.answer


def test_a_share_of_the_total_row_is_a_percent_of_the_year_asked():
    q = "what percentage of total long-term assets under supervision are fixed income in 2015?"
    hit = pair_cell(_assets(), pair_ask(q), q, ["2015"])
    assert hit.value == "57.48%"  # 530 / 922, the 2015 column, not 2016's 578 / 983


def test_two_columns_of_one_row_in_the_year_asked():
    q = "In the first quarter of 2018, what is the difference between the low and high price?"
    hit = pair_cell(_prices(), pair_ask(q), q, ["2018"])
    assert hit.value == "-2.41"  # 5.99 - 8.40 in 2018's columns, the first quarter row


def test_the_column_comes_from_the_words_the_rows_do_not_say():
    q = ("What is the difference between Richard E. Belluzzo's total compensation as "
         "compared to Laura Black?")
    hit = pair_cell(_pay(), pair_ask(q), q, [])
    assert hit.value == "120,817"  # the Total column, not the first one (92,500)


def test_total_alone_does_not_match_a_label():
    # "total liability" shares only "total" with the Total row: no match, so no pair
    q = "What is the ratio of fixed income to total liability in 2016?"
    assert pair_cell(_assets(), pair_ask(q), q, ["2016"]) is None


def test_a_term_no_label_holds_finds_nothing():
    q = "What is the total of Tax Fees and Legal Fees in 2019?"
    assert pair_cell(_assets(), pair_ask(q), q, ["2019"]) is None


def _passage(table: TableContent, caption: str = "") -> Passage:
    u = Unit(unit_id="d:p5:u2", doc_id="d", page=5, bbox=(0.1, 0.1, 0.9, 0.5),
             modality="table", table=table, caption=caption)
    ch = Chunk(chunk_id="d:c5", doc_id="d", text=u.display_text(), modality="table",
               pages=[5], unit_ids=[u.unit_id], bbox=u.bbox)
    return Passage(ch, [u], 1.0, "fees.pdf")


def test_the_answerer_gives_the_computed_pair_value():
    a = asyncio.run(ExtractiveAnswerer(0.05).answer(
        "What is the total of Tax Fees and All Other Fees in 2019?", [_passage(_fees())]))
    assert a.value == "174,276"
    assert not a.abstained


def _rentals() -> TableContent:
    """GS's maturity schedule: the rows are years, the whole is the Total row."""
    return TableContent(rows=[
        [_h("$ in millions"), _h("As of December 2016")],
        [_c("2017"), _c("290")], [_c("2018"), _c("282")], [_c("2019"), _c("238")],
        [_c("2022 - thereafter"), _c("766")], [_c("Total"), _c("1,941")],
    ], header_rows=1)


def test_a_schedule_year_as_a_share_of_its_total():
    a = asyncio.run(ExtractiveAnswerer(0.05).answer(
        "What percentage of future minimum rental payments are due in 2018?",
        [_passage(_rentals(), "Future minimum rental payments, net of sublease rentals")]))
    assert a.value == "14.53%" and "2018: 282; Total: 1,941" in a.answer


def test_a_schedule_share_needs_the_whole_named_nearby():
    q = "What percentage of future purchase obligations are due in 2018?"
    assert schedule_share(_rentals(), pair_ask(q), ["2018"], "Rental payments by year") is None


def _returns() -> TableContent:
    """A performance graph's table: cumulative total return per index, one column a year."""
    return TableContent(rows=[
        [_h(""), _h("3/31/2007"), _h("3/31/2008"), _h("3/31/2012")],
        [_c("ABIOMED, Inc"), _c("100"), _c("96.19"), _c("162.45")],
        [_c("Nasdaq Composite Index"), _c("100"), _c("94.11"), _c("127.66")],
        [_c("Nasdaq Medical Equipment SIC Code 3840-3849"), _c("100"), _c("82.91"), _c("74.40")],
        [_c("Peer Group"), _c("100"), _c("120.00"), _c("190.00")],
    ], header_rows=1)


@pytest.mark.parametrize("q, first, second", [
    ("did abiomed outperform the nasdaq composite index?", "abiomed", "nasdaq composite index"),
    ("Does the peer group perform better than ABIOMED?", "peer group", "ABIOMED"),
    ("Was the Nasdaq Composite Index higher than the peer group?", "Nasdaq Composite Index",
     "peer group"),
])
def test_yes_no_comparisons_name_both_terms(q, first, second):
    assert pair_ask(q) == PairAsk("compare", first, second)


@pytest.mark.parametrize("q, yes, row", [
    ("did abiomed outperform the nasdaq medical equipment index?", "Yes",
     "Nasdaq Medical Equipment SIC Code 3840-3849: 74.40"),  # the row saying more of the term
    ("did abiomed outperform the nasdaq composite index?", "Yes", "Nasdaq Composite Index: 127.7"),
    ("Did ABIOMED outperform the peer group?", "No", "Peer Group: 190"),
])
def test_a_comparison_is_answered_yes_or_no_at_the_last_column(q, yes, row):
    a = asyncio.run(ExtractiveAnswerer(0.05).answer(q, [_passage(_returns())]))
    assert a.value == yes and row in a.answer and "(3/31/2012)" in a.answer
    assert not a.abstained


def test_a_comparison_in_a_year_uses_that_years_column():
    q = "Did ABIOMED outperform the Nasdaq Composite Index in 2008?"
    hit = pair_cell(_returns(), pair_ask(q), q, ["2008"])
    assert hit.value == "Yes" and "96.19" in hit.answer and "94.11" in hit.answer
