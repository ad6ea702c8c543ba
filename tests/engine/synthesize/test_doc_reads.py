"""Counts of the items a heading lists (listed.py), sums or differences of the numbers
written beside names (namedvalues.py), the entries of a table of contents (contents.py) and
e-mail addresses (contact.py), through the extractive answerer on a real content store."""
from functools import partial

import pytest
from doc_answers import answerer_over, ask_over_units, text_unit

DOC = "manual"
_unit = partial(text_unit, DOC)

UNITS = [_unit("u1", 9, "Forgot the PIN", "title"),
         _unit("u2", 9, "Method 1: open the app. Method 2: reset the watch."),
         _unit("u3", 9, "Customizing the function of the Down button", "title"),
         _unit("u4", 9, "1 Press the Up button and go to Settings > Down button.", "title"),
         _unit("u5", 10, "2 Select an app and customize the function of the Down button."),
         _unit("u6", 10, "After you have finished, press the Down button to open the app."),
         _unit("u7", 10, "Charging", "title"),
         _unit("u8", 10, "1 Connect the cradle. 2 Rest the watch on it. 3 Remove the watch."),
         _unit("u9", 11, "UNIT 7: Designing Structures", "title"),
         _unit("u10", 11, "LEARNING OUTCOMES:", "title"),
         _unit("u11", 11, "What are the forms of structure? Why use teams?"),
         _unit("u12", 11, "UNIT 8: Managing Human Resources", "title"),
         _unit("u13", 11, "LEARNING OUTCOMES:", "title"),
         _unit("u14", 11, "How do firms recruit? How do firms select applicants?"),
         _unit("u15", 12, "What types of training do firms offer? What is a union?"),
         _unit("u16", 12, "Unit 8 Key Assignments:", "title"),
         _unit("u17", 12, "Quiz #4 on Unit 7 and 8."),
         _unit("u18", 13, "Company Tweets Germanwings 24 posting in English (10) and Lufthansa "
                       "12 Airbus 5 (Lufthansa) 30,000 13,000 Mar 20 Mar 25", "image"),
         _unit("u19", 2, "TABLE OF CONTENTS", "title"),
         _unit("u20", 2, "Executive Summary.........1 1. Introduction: Climate and Health......25 "
                      "2. Air Quality Impacts.........69"),
         _unit("u21", 2, "3. Vector-Borne Diseases ........129 4. Food Safety, Nutrition, and "
                      "Distribution.......189 Appendix 1: Glossary ......301"),
         _unit("u22", 14, "Mtre Marianne Ignacz Mtre Laurent Nahmiash mignacz@infavocats.com "
                       "lnahmiash@infavocats.com"),
         _unit("u23", 15, "Telephone: 514-312-0293. Write to office@infavocats.com.")]


@pytest.fixture
def answerer(tmp_path):
    with answerer_over(tmp_path, UNITS) as answerer:
        yield answerer


def _ask(answerer, question: str, orders: list[int]):
    """The answer when retrieval ranked one passage holding the units ``orders``."""
    return ask_over_units(answerer, question, [u for u in UNITS if u.order in orders],
                          "manual.pdf")


def test_numbered_steps_under_the_heading_the_question_names_are_counted(answerer):
    """Step 2 sits on the next page and step 1 is set as a title: both are items of the
    heading, and the Charging steps after the next heading are not."""
    r = _ask(answerer, "How many steps are needed to customize the function of the Down "
                       "Button?", [3, 4])
    assert r.value == "2"
    assert "Customizing the function of the Down button" in r.answer
    assert r.evidence[r.citations[0]].page == 9


def test_the_questions_under_the_heading_of_the_unit_named_are_counted(answerer):
    """Two headings say LEARNING OUTCOMES; the one under UNIT 8 lists four questions (two
    on the next page), the one under UNIT 7 two."""
    r = _ask(answerer, "how many LEARNING OUTCOMES should be ANSWERed in UNIT 8?",
             [9, 10, 11, 12, 13, 14])
    assert r.value == "4"
    r7 = _ask(answerer, "how many LEARNING OUTCOMES should be ANSWERed in UNIT 7?",
              [9, 10, 11, 12, 13, 14])
    assert r7.value == "2"


def test_a_heading_without_a_list_gives_no_count(answerer):
    """"Forgot the PIN" is followed by methods, neither numbered from 1 as items nor
    questions: the count is not made up, the answer comes from the passage's lines."""
    r = _ask(answerer, "How many ways are there to reset a forgotten PIN?", [1, 2])
    assert "listed under" not in r.answer


def test_difference_and_sum_of_the_numbers_beside_the_names(answerer):
    diff = _ask(answerer, "How many more Tweets are attributed to Germanwings than "
                          "Lufthansa?", [18])
    assert diff.value == "12"
    assert "Germanwings 24" in diff.answer and "Lufthansa 12" in diff.answer
    total = _ask(answerer, "How many Tweets are attributed to Germanwings, Lufthansa, and "
                           "Airbus in total?", [18])
    assert total.value == "41"
    assert total.citations == [0]


def test_a_name_without_a_number_beside_it_computes_nothing(answerer):
    r = _ask(answerer, "How many more Tweets are attributed to Germanwings than Boeing?", [18])
    assert "difference of" not in r.answer


def test_the_last_entries_of_the_contents_in_the_documents_order(answerer):
    """Entries run over two units; the unnumbered summary and the appendix are no chapters."""
    r = _ask(answerer, "What are the last 3 chapters listed in the table of contents?", [19])
    assert r.value == ("Air Quality Impacts; Vector-Borne Diseases; Food Safety, Nutrition, "
                       "and Distribution")
    assert {r.evidence[i].page for i in r.citations} == {2}
    first = _ask(answerer, "List the first two chapters in the contents.", [19])
    assert first.value == "Introduction: Climate and Health; Air Quality Impacts"
    more = _ask(answerer, "What are the last 6 chapters listed in the table of contents?", [19])
    assert "Impacts;" not in more.answer  # only four listed: no made-up list


def test_the_address_that_carries_the_name_asked_for(answerer):
    r = _ask(answerer, "what is the email id of the mtre laurent nahmiash ?", [1])
    assert r.value == "lnahmiash@infavocats.com"
    assert r.evidence[r.citations[0]].page == 14


def test_several_addresses_and_no_name_give_no_guess(answerer):
    """Three addresses, none carrying a name the question gives, no page named: the
    question falls through to the passages (which hold none)."""
    r = _ask(answerer, "What is the email address in this document?", [1])
    assert "@" not in r.answer

