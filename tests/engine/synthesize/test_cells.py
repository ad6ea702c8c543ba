"""Cell-level table answers: header paths, spanning headers, section rows, scale,
negatives in parentheses, percents, and operations over a row's years."""
import asyncio

import pytest

from docray.engine.model import Cell, Chunk, TableContent, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.asks import ask
from docray.engine.synthesize.cells import best_cell, parse_value, table_scale
from docray.engine.synthesize.extractive import ExtractiveAnswerer


def _h(text, span=1):
    return Cell(text=text, is_header=True, col_span=span)


def _c(text):
    return Cell(text=text)


def _quarterly() -> TableContent:
    """Two spanning period headers over a year each; a section row; a percent row."""
    return TableContent(rows=[
        [_h(""), _h("Three Months Ended", 2), _h("Six Months Ended", 2)],
        [_h("(In millions)"), _h("July 29, 2023"), _h("July 30, 2022"), _h("July 29, 2023"),
         _h("July 30, 2022")],
        [_c("Revenue"), _c(""), _c(""), _c(""), _c("")],
        [_c("Data Center"), _c("10,323"), _c("3,806"), _c("14,607"), _c("7,557")],
        [_c("Gaming"), _c("2,486"), _c("2,042"), _c("4,726"), _c("5,662")],
        [_c("Other income (expense)"), _c("(59)"), _c("5"), _c("(40)"), _c("(2)")],
        [_c("Gross margin"), _c("70.1%"), _c("43.5%"), _c("68.2%"), _c("53.9%")],
    ], header_rows=2)


def _passage(table: TableContent, caption: str = "", score: float = 1.0) -> Passage:
    u = Unit(unit_id="d:p5:u2", doc_id="d", page=5, bbox=(0.1, 0.1, 0.9, 0.5),
             modality="table", table=table, caption=caption)
    ch = Chunk(chunk_id="d:c5", doc_id="d", text=u.display_text(), modality="table",
               pages=[5], unit_ids=[u.unit_id], bbox=u.bbox)
    return Passage(ch, [u], score, "nv.pdf")


def _answer(q: str, *passages: Passage):
    return asyncio.run(ExtractiveAnswerer(0.05).answer(q, list(passages)))


@pytest.mark.parametrize("text, value", [("(1,577)", -1577.0), ("$ (59)", -59.0),
                                         ("−3.5", -3.5), ("12.5%", 12.5), ("1,234", 1234.0),
                                         ("—", None), ("2023", None), ("Gaming", None)])
def test_cell_values_read_negatives_and_percents(text, value):
    assert parse_value(text) == value


def test_scale_comes_from_caption_or_headers():
    assert table_scale(["Consolidated balance sheets (in thousands)"]) == "thousand"
    assert table_scale(["($ in billions)"]) == "billion"
    assert table_scale(["Segment revenue", "2023"]) == ""


def test_spanning_header_path_picks_the_period_and_the_row():
    hit = best_cell(_quarterly(), ["six", "months", "data", "center", "revenue"], ["2022"])
    assert (hit.text, hit.value, hit.scale) == ("7,557", 7557.0, "million")
    assert hit.column == "Six Months Ended July 30, 2022"
    assert hit.row == "Revenue: Data Center"  # the section row heads the rows under it


def test_header_cell_is_never_the_answer():
    a = _answer("What was Gaming revenue for the three months ended July 29, 2023?",
                _passage(_quarterly()))
    assert a.value == "2,486 million" and a.answer.startswith("2,486 million (")
    assert "Three Months Ended July 29, 2023" in a.answer and "Gaming" in a.answer
    assert "Gaming" in a.support and "2,486" in a.support  # the table line that says it
    cited = a.evidence[a.citations[0]]
    assert (cited.modality, cited.page, cited.bbox) == ("table", 5, (0.1, 0.1, 0.9, 0.5))


def test_negative_in_parentheses_and_percent_keep_their_form():
    a = _answer("What was other income (expense) in the six months ended July 29, 2023?",
                _passage(_quarterly()))
    assert a.value == "(40) million"
    a = _answer("What was the gross margin in the six months ended July 30, 2022?",
                _passage(_quarterly()))
    assert a.value == "53.9%"  # a percent carries no scale


def _yearly() -> TableContent:
    return TableContent(rows=[
        [_h(""), _h("2019"), _h("2018")],
        [_c("Cheese"), _c("1,200"), _c("1,227")],
        [_c("Customer relationships"), _c("985"), _c("985")],
        [_c("Total net sales"), _c("98,000"), _c("99,012")]])


@pytest.mark.parametrize("q, value", [
    ("What is the change in the net sales for cheese between 2018 and 2019?", "-27 thousand"),
    ("What is the average total net sales for both 2018 and 2019?", "98,506 thousand"),
    ("What is the total cheese sales altogether for 2018 and 2019?", "2,427 thousand"),
    ("What is the percentage change in cheese sales from 2018 to 2019?", "-2.20%"),
    ("What is the value of customer relationships in 2018 and 2019 respectively?",
     "985; 985 thousand"),
])
def test_operations_over_the_years_named(q, value):
    a = _answer(q, _passage(_yearly(), "Net sales by product (in thousands)"))
    assert a.value == value


def test_a_percentage_change_is_over_the_amounts_not_the_share_columns():
    table = TableContent(rows=[
        [_h(""), _h("2019"), _h("2019"), _h("2018"), _h("2018")],
        [_h("In thousands"), _h(""), _h("%"), _h(""), _h("%")],
        [_c("Cheese"), _c("11,459"), _c("12%"), _c("11,486"), _c("11%")],
        [_c("Frozen Kefir"), _c("1,617"), _c("2%"), _c("1,434"), _c("1%")]], header_rows=2)
    a = _answer("What is the percentage change in net sales from Frozen Kefir between 2018 "
                "and 2019?", _passage(table))
    assert a.value == "12.76%"  # (1,617 - 1,434) / 1,434, not 2% over 1%


def test_question_kinds():
    assert ask("What is the change in cheese between 2018 and 2019?").op == "change"
    assert ask("What was revenue in 2019?").op is None  # one year: no operation
    assert ask("Who signed the agreement?").kind == "entity"
    assert ask("In which year was the company founded?").kind == "date"


@pytest.mark.parametrize("q, value", [
    ("in thousands, for 2019 , 2018 what were total net sales?", "197,012 thousand"),
    ("How much higher were cheese sales in 2018 compared to 2019?", "-27 thousand"),
    ("What is the change in cheese sales as a percentage between 2018 and 2019?", "-2.20%"),
    ("What is the total cheese sales for 2018 and 2019 respectively?", "1,227; 1,200 thousand"),
])
def test_more_ways_to_ask_for_an_operation(q, value):
    a = _answer(q, _passage(_yearly(), "Net sales by product (in thousands)"))
    assert a.value == value


@pytest.mark.parametrize("q, year", [
    ("Which year has a higher value of cheese sales?", "2018"),
    ("Which year has the lowest total net sales?", "2019"),
])
def test_which_year_is_higher_compares_the_row_across_years(q, year):
    a = _answer(q, _passage(_yearly(), "Net sales by product (in thousands)"))
    assert a.value == year and a.answer.startswith(f"{year} (")
    assert "2019: " not in a.answer  # the other year is not listed as a number


def _tax() -> TableContent:
    """Parts of a provision above the last row that sums them (TAT-QA style)."""
    return TableContent(rows=[
        [_h(""), _h("2019"), _h("2018")],
        [_c("Current:"), _c(""), _c("")],
        [_c("Federal"), _c("(27)"), _c("(13)")],
        [_c("State and local"), _c("276"), _c("249")],
        [_c("Deferred"), _c("533"), _c("(461)")],
        [_c("Provision (benefit) for income taxes"), _c("782"), _c("(225)")]])


def test_a_part_named_in_full_wins_over_the_row_that_names_the_table():
    a = _answer("What is the deferred provision (benefit) for income tax for 2018 and 2019 "
                "respectively?", _passage(_tax()))
    assert a.value == "-461; 533"
    a = _answer("What is the provision (benefit) for income taxes in 2019?", _passage(_tax()))
    assert a.value == "782"  # no part named: the row itself


def _expenses() -> TableContent:
    """GS's operating expenses: a label wrapped over two rows, and the head count at the
    foot of a "$ in millions" table."""
    rows = [["$ in millions", "2016", "2015"], ["Compensation and benefits", "11,647", "12,678"],
            ["Brokerage, clearing, exchange and", "", ""], ["distribution fees", "2,555", "2,576"],
            ["Total operating expenses", "20,304", "25,042"],
            ["Total staff at period-end", "34,400", "36,800"]]
    return TableContent(rows=[[Cell(text=t, is_header=i == 0) for t in r]
                              for i, r in enumerate(rows)], header_rows=1)


def _answer_over(table: TableContent, question: str):
    u = Unit(unit_id="gs:p70:u1", doc_id="gs", page=70, bbox=(0.1, 0.1, 0.9, 0.5),
             modality="table", table=table)
    p = Passage(Chunk(chunk_id="gs:c70", doc_id="gs", text=u.display_text(), pages=[70],
                      unit_ids=[u.unit_id]), [u], 1.0, "GS_2016.pdf")
    return asyncio.run(ExtractiveAnswerer(0.05).answer(question, [p]))


def test_a_wrapped_label_is_one_row_not_a_section():
    hit = best_cell(_expenses(), ["distribution", "fees"], ["2016"])
    assert hit.row == "Brokerage, clearing, exchange and distribution fees"
    assert best_cell(_expenses(), ["staff"], ["2016"]).row == "Total staff at period-end"


def test_a_net_change_in_head_count_has_no_scale():
    a = _answer_over(_expenses(), "What is the net change in the number of staff in 2016?")
    assert a.value == "-2,400" and "Total staff at period-end" in a.answer
