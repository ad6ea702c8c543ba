import doctest

import pytest

from docray.engine.synthesize import units
from docray.engine.synthesize.units import asked_unit, in_asked_unit


def test_doctests():
    assert doctest.testmod(units).failed == 0


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
