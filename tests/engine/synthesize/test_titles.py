"""The title of a numbered part ("What's the topic of UNIT 14?") read off the line that
labels it (titles.py), through the extractive answerer on a real content store."""
from functools import partial

import pytest
from doc_answers import answerer_over, ask_with_passage, text_unit


DOC = "course"
_unit = partial(text_unit, DOC)

UNITS = [_unit("u1", 1, "UNIT 1: Understanding Economic Systems and Business\n"
                        "Students answer these learning outcomes.", "title"),
         _unit("u2", 2, "Quiz #1: twenty core concepts from Unit 1 and 2."),
         _unit("u3", 3, "UNIT 2: Making Ethical Decisions", "title"),
         _unit("u4", 9, "Quiz #7 - Concepts from Unit 13 & 14."),
         _unit("u5", 10, "Unit 14 — Using Financial Information and Accounting", "title")]


@pytest.fixture
def answerer(tmp_path):
    with answerer_over(tmp_path, UNITS) as answerer:
        yield answerer


def _answer(answerer, question: str):
    return ask_with_passage(answerer, question, DOC, "Quiz #7 - Concepts from Unit 13 & 14.", 9, "course.pdf")


def test_the_title_of_a_numbered_part_not_a_line_that_mentions_it(answerer):
    r = _answer(answerer, "what's the topic of UNIT 14?")
    assert not r.abstained
    assert r.value == "Using Financial Information and Accounting"
    assert r.evidence[r.citations[0]].page == 10  # the labelling line, not the quiz's page


def test_two_parts_named_give_both_titles_in_order(answerer):
    r = _answer(answerer, "What are the names of Unit 1 and Unit 2 in Semester 1?")
    assert r.value == "Understanding Economic Systems and Business; Making Ethical Decisions"
    assert [r.evidence[i].page for i in r.citations] == [1, 3]


def test_a_part_the_document_never_titles_falls_through_to_the_passages(answerer):
    """"Unit 13" is only mentioned ("Concepts from Unit 13 & 14"): no title is made up
    from the mention; the answer is the passage's line, as without titles.py."""
    r = _answer(answerer, "What is the topic of Unit 13?")
    assert r.answer == "Quiz #7 - Concepts from Unit 13 & 14."
    assert "labels Unit" not in (r.reason or "")
