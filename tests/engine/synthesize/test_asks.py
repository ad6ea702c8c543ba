"""What a question asks for: its kind and the operation over the years it names."""
import pytest

from docray.engine.synthesize.asks import ask, combine


@pytest.mark.parametrize("q, kind, op, years", [
    ("What is the provision for total current income taxes for 2018 and 2019 respectively?",
     "number", None, ["2018", "2019"]),  # one value per year, not their sum
    ("in billions , for 2016 , 2015 , and 2014 , what are total alternative investments?",
     "number", "sum", ["2016", "2015", "2014"]),
    ("How much higher was the dividend paid in 2002 compared to 2001?", "number", "change",
     ["2002", "2001"]),
    ("What is the change in All Other Fees as a percentage between 2018 and 2019?", "number",
     "percent_change", ["2018", "2019"]),
    ("what percentage did the balance increase from 2007 to 2009?", "number",
     "percent_change", ["2007", "2009"]),
    ("What multiple of the 2014 e-commerce sales was achieved in 2018?", "number", "ratio",
     ["2014", "2018"]),
    ("what is the net change in the number of staff in 2016?", "number", "change",
     ["2015", "2016"]),  # one year named: its change over the year before
    ("Which year has a higher value of net intangible assets?", "date", "max_year", []),
    ("In which year were sales lowest?", "date", "min_year", []),
])
def test_operations_and_years(q, kind, op, years):
    a = ask(q)
    assert (a.kind, a.op, a.years) == (kind, op, years)


@pytest.mark.parametrize("q, kind", [
    ("How much was Gary Staley's sign-on bonus when he joined the company in February 2017?",
     "number"),  # the date is a clause: the amount is asked for
    ("What is the percentage of people who do not go online?", "number"),  # "who": a clause
    ("Who is the Chief Justice?", "entity"),
    ("The opinion was written by whom?", "entity"),
    ("When was the plan adopted?", "date"),
    ("What was the revenue in 2019?", "number"),
])
def test_kinds(q, kind):
    assert ask(q).kind == kind


def test_ratio_is_the_later_over_the_earlier():
    assert combine("ratio", [50.0, 200.0]) == 4.0 and combine("ratio", [0.0, 1.0]) is None
