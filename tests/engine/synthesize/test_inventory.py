"""Counts of a document's tables, figures and appendices from the labels it gives them
(inventory.py), through the extractive answerer on a real content store."""
from functools import partial

import pytest
from doc_answers import answerer_over, ask_with_passage, text_unit

from docray.engine.synthesize.inventory import inventory_ask

DOC = "paper"
_unit = partial(text_unit, DOC)

UNITS = [_unit("u1", 1, "Table 1: Sites surveyed by county."),
         _unit("u2", 2, "As Table 1 shows, most sites are farms; see also Figure 2."),
         _unit("u3", 3, "Table 2. Sites by period of construction."),
         _unit("u4", 4, "", "image", caption="Figure 1: A farmstead."),
         _unit("u5", 5, "Figure 2: A barn, as in Table 2."),
         _unit("u6", 6, "Table 3 lists the districts."),
         _unit("u7", 7, "Appendix A. Forms"), _unit("u8", 8, "Appendix B. Maps"),
         _unit("u9", 9, "Appendix C. Sources, and the tables of Appendix B."),
         _unit("u10", 10, "Chart of the districts, without a label.")]


@pytest.fixture
def answerer(tmp_path):
    with answerer_over(tmp_path, UNITS) as answerer:
        yield answerer


def _answer(answerer, question: str):
    return ask_with_passage(answerer, question, DOC, "Sites are mostly farms.", 2, "survey.pdf")


@pytest.mark.parametrize("question,value,answer", [
    ("how many tables are included in the document?", "3",
     "3 tables, labelled Table 1 to Table 3"),
    ("How many figures are there in total in the article?", "2",
     "2 figures, labelled Figure 1 to Figure 2"),
    ("How many appendices appear in the document?", "3",
     "3 appendices, labelled Appendix A to Appendix C"),
    # on the pages named, only what is set there: a caption or a line that opens with it
    ("How many tables are in this report from page 2 to page 6?", "2", "2 tables on pages 2-6"),
])
def test_counts_the_documents_labels(answerer, question, value, answer):
    r = _answer(answerer, question)
    assert not r.abstained and r.value == value and r.answer == answer
    cited = {r.evidence[i].unit_id for i in r.citations}
    assert cited and cited <= {u.unit_id for u in UNITS}
    assert "Table 1" in r.support or "Figure 1" in r.support or "Appendix A" in r.support \
        or "Table 2" in r.support


def test_a_noun_the_document_never_numbers_is_not_counted(answerer):
    """No "Chart 1" anywhere: no count, the other answers take the question."""
    r = _answer(answerer, "How many charts are there in the document?")
    assert "chart" not in r.answer.split(" — ")[0].lower() or r.abstained
    assert not r.answer.startswith("0")


@pytest.mark.parametrize("question,noun", [
    ("How many pie charts are there in the paper?", "chart"),
    ("How many quizzes are there in the entire course?", "quiz"),
    ("How many Exhibits are mentioned in the document?", "exhibit"),
    ("How many figures does this paper have?", "figure"),
    ("How many datasets are used for experiments of this paper?", None),
    ("How many prompts examples are shown in the paper's main body?", None),
    ("How many steps are needed to customize the function of the Down Button?", None),
])
def test_only_whole_document_counts_are_asked(question, noun):
    assert inventory_ask(question) == noun
