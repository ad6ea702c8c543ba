"""Value spans from text: the amount, date or name that answers, then the sentence as
support; the answer's shape (value first, support, citation)."""
import asyncio

import pytest

from docray.engine.model import Chunk, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.extractive import ExtractiveAnswerer


def _passage(text: str, modality: str = "text", page: int = 3, score: float = 1.0) -> Passage:
    u = Unit(unit_id=f"d:p{page}:u1", doc_id="d", page=page, bbox=(0, 0.4, 1, 0.6),
             modality=modality, text=text)
    ch = Chunk(chunk_id=f"d:c{page}", doc_id="d", text=text, modality=modality, pages=[page],
               unit_ids=[u.unit_id])
    return Passage(ch, [u], score, "r.pdf")


def _answer(q: str, *passages: Passage):
    return asyncio.run(ExtractiveAnswerer(0.05).answer(q, list(passages)))


@pytest.mark.parametrize("q, text, value", [
    ("Who wrote the majority opinion?",
     "The majority opinion was written by Justice Elena Kagan and joined by four others.",
     "Elena Kagan"),
    ("When was the water safety plan adopted by the county?",
     "The county adopted the water safety plan on March 14, 2019 after public comment.",
     "March 14, 2019"),
    ("What percentage of seniors own a tablet computer?",
     "Among 6,010 seniors surveyed, 18% own a tablet computer and 77% own a phone.", "18%"),
    ("How many employees did Northwind have at year end?",
     "At year end Northwind had approximately 12,400 employees in 31 countries.", "12,400"),
])
def test_the_span_that_answers_then_the_sentence(q, text, value):
    a = _answer(q, _passage(text))
    assert a.value == value
    assert a.support == text  # the sentence that says it
    assert a.answer == f"{value} — {text}"  # the value first, then the sentence
    assert a.evidence[a.citations[0]].page == 3


def test_a_question_without_a_value_kind_answers_with_the_sentence():
    text = "The committee oversees the audit process and reviews internal controls annually."
    a = _answer("Describe what the committee oversees.", _passage(text))
    assert a.answer == a.support == text and a.value == text


def test_a_figure_caption_that_states_no_number_gives_way_to_the_text_inside():
    """A figure question answered from the number written inside the figure (its OCR
    line), not the caption that repeats the question's words."""
    proxy = ("Figure: Figure 2: Share of adults who use social media, 2018\n"
             "Text in figure: Adults who use social media 69% of all adults")
    a = _answer("What share of adults use social media according to Figure 2?",
                _passage(proxy, "image"))
    assert a.value == "69%"
    assert a.support == "Adults who use social media 69% of all adults"


def test_a_definition_prefers_the_text_over_a_figure_caption():
    caption = _passage("Figure: Figure 3: Working capital over five years", "image", page=4)
    said = _passage("Working capital is defined as current assets minus current liabilities.",
                    page=5, score=0.95)
    a = _answer("What is working capital defined as?", caption, said)
    assert a.support.startswith("Working capital is defined as")
    assert a.evidence[a.citations[0]].page == 5


def test_a_line_that_says_the_term_is_an_amount_beats_one_that_mentions_it():
    """"Net sales were $93,662" answers "What is the net sales?", over a shorter line
    about a share of net sales that shares more of the question's words."""
    share = _passage("Two major customers accounted for approximately 22% of net sales for the "
                     "year ended December 31, 2019.", page=3, score=1.0)
    said = _passage("Net sales were $93,662 for the year ended December 31, 2019, a decrease "
                    "of $9,688 or 9.4% versus prior year.", page=4, score=1.0)
    a = _answer("What is the net sales for year ended December 31, 2019?", share, said)
    assert a.value == "$93,662" and a.evidence[a.citations[0]].page == 4


@pytest.mark.parametrize("q, value", [
    ("What was total rent charged to operating expense for 2016, 2015 and 2014?",
     "$802 million"),
    ("What was the average rent charged to operating expense for 2016 and 2015?",
     "$246.5 million"),
    ("What was the change in rent charged to operating expense between 2015 and 2016?",
     "-$5 million"),
])
def test_an_operation_over_the_amounts_a_sentence_gives_per_year(q, value):
    text = ("Rent charged to operating expense was $244 million for 2016, $249 million for "
            "2015 and $309 million for 2014.")
    a = _answer(q, _passage(text))
    assert a.value == value and a.support == text


def test_a_day_of_a_date_is_no_year_amount():
    text = ("For the year ended December 31, 2019 and 2018, $288 and $636 were expensed under "
            "the 2017 Plan, respectively.")
    a = _answer("What is the change in plan expense between 2018 and 2019?", _passage(text))
    assert a.value != "-$257"  # 31 (the day) paired with 2019 would give 31 - 288


@pytest.mark.parametrize("sentence", [
    "The plan will be reviewed and revised by January each year.",
    "The board met on Friday and again in Sept to approve the budget.",
    "Results are due by May, then published in the annual report.",
])
def test_a_month_or_weekday_is_no_name(sentence):
    from docray.engine.synthesize.values import name_near

    assert name_near(sentence, "Who revised the plan?") is None


def test_a_name_after_a_month_is_still_found():
    from docray.engine.synthesize.values import name_near

    assert name_near("In March the plan was approved by Celeste Philip.",
                     "Who approved the plan?") == "Celeste Philip"


def test_a_who_question_answered_only_by_a_month_is_less_sure():
    """A date is no answer to "who": the line keeps the no-value discount, so it ranks
    below the same line naming a person."""
    month = _answer("Who revised the water plan?",
                    _passage("The water plan was revised by January each year."))
    person = _answer("Who revised the water plan?",
                     _passage("The water plan was revised by Celeste Philip each year."))
    assert month.value != "January"
    assert person.value == "Celeste Philip"
    assert month.confidence < person.confidence


def test_a_label_number_is_not_a_count():
    """"How many steps ...?" over "... shown in Figure 4" is not answered "4": the numbers
    of figures, tables, sections and cited pages are labels; a count in the text wins."""
    label = "The key steps of causal inference are shown in Figure 4 (cited on page 2, 13)."
    a = _answer("How many key steps does causal inference have?", _passage(label))
    assert a.value == label  # no number fits: the sentence, not "4" or "13"
    listed = "Two ways: 1) updating model parameters, or 2) altering the model's output."
    assert _answer("How many ways are there?", _passage(listed)).value == listed  # not "1"
    said = "Causal inference is divided into 6 key steps, shown in Figure 4."
    a = _answer("How many key steps does causal inference have?", _passage(said))
    assert a.value == "6"
