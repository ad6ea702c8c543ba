"""Scope check: a question naming what its document never mentions is not answerable."""
from __future__ import annotations

from docray.engine.model import Unit
from docray.engine.synthesize.scope import ScopeChecker, Vocabulary, specific_terms, unsupported


def test_specific_terms_are_names_years_and_codes_not_question_words():
    q = "According to the Pfizer 10-K, what did GPT-4o score in Q2'2023 on Page 3?"
    assert specific_terms(q) == ["pfizer", "10-k", "gpt-4o", "2023"]
    assert specific_terms("WHAT IS THE LAST YEAR PRESENT IN THE TABLE?") == []
    assert specific_terms("How much did Boeing's revenue grow in FY2022?") == ["boeing", "2022"]
    # format examples and stressed words are not names
    assert specific_terms("List the Boeing years as ['2006', '2011']") == ["boeing"]
    assert specific_terms("How many OUTCOMES should be ANSWERed in UNIT 8?") == ["outcomes", "unit"]
    assert specific_terms("How many GPUs did they use?") == ["gpus"]  # an acronym's plural


def test_unsupported_terms_of_one_passage_leave_out_the_file_name():
    q = "How much did Costco pay Boeing in FY2021?"
    assert unsupported(q, "Costco paid $5 million in 2021.") == (["boeing"], 3)
    # the filing's own name and year are not asked of each of its passages
    assert unsupported(q, "It paid $5 million.", "COSTCO_2021_10K.pdf") == (["boeing"], 1)
    assert unsupported(q, "Boeing was paid.", "COSTCO_2021_10K.pdf") == ([], 1)
    assert unsupported("What was the revenue?", "Anything.") == ([], 0)


def test_vocabulary_matches_words_years_and_phrases():
    v = Vocabulary(["Germanwings flight 9525 (2015): tweets by Airbus, A320-family."])
    assert v.mentions("germanwings") and v.mentions("2015") and v.mentions("a320-family")
    assert not v.mentions("boeing") and not v.mentions("2016")


class _Content:
    def __init__(self, docs, labels=None):
        self.docs, self.labels, self.reads = docs, labels or {}, 0

    def doc_units(self, workspace, doc_id, modality):
        assert modality == "page_number"
        return [Unit(unit_id=f"{doc_id}:n{i}", doc_id=doc_id, page=i + 1, bbox=(0, 0, 1, 1),
                     modality="page_number", text=t)
                for i, t in enumerate(self.labels.get((workspace, doc_id), []))]

    def doc_texts(self, workspace, doc_id):
        self.reads += 1
        texts = self.docs.get((workspace, doc_id), [])
        return texts, len(texts) or None  # one page per text


def test_checker_scopes_to_documents_and_caches_their_vocabulary():
    content = _Content({("w", "a"): ["Airbus delivered 735 aircraft in 2023."],
                        ("w", "b"): ["Boeing delivered 528 aircraft in 2023."]})
    chk = ScopeChecker(content, max_docs=1)
    q = "How many aircraft did Boeing deliver in 2023?"
    assert chk.unmentioned(q, "w", ["a"]) == ["boeing"]
    assert chk.unmentioned(q, "w", ["a"]) == ["boeing"] and content.reads == 1
    assert chk.unmentioned(q, "w", ["a", "b"]) == []
    assert chk.unmentioned(q, "w", None) == []  # unscoped: absence proves nothing
    assert chk.unmentioned(q, "other", ["a"]) == ["boeing", "2023"]  # workspaces are separate


def test_pages_beyond_the_document_and_unlabelled_figures_are_out_of_scope():
    content = _Content({("w", "p"): ["Figure 1: the pipeline. Fig. 2 shows recall.",
                                     "Table 3 lists 100 datasets."]}, {("w", "p"): ["6985"]})
    chk = ScopeChecker(content)
    assert chk.unmentioned("How many figures are in pages 100-120?", "w", ["p"]) == ["page 100"]
    assert chk.unmentioned("What is on page one?", "w", ["p"]) == []
    assert chk.unmentioned("What does page 6985 show?", "w", ["p"]) == []  # a printed number
    assert chk.unmentioned("What does page 6986 show?", "w", ["p"]) == ["page 6986"]
    assert chk.unmentioned("In Figure 2 and Figure 7, which is higher?", "w", ["p"]) == \
        ["figure 7"]
    assert chk.unmentioned("Which row of Table 3 is largest? And table 4?", "w", ["p"]) == \
        ["table 4"]


def test_metric_names_defined_acronyms_placeholders_and_typos_are_not_missing_names():
    content = _Content({("w", "n"): ["Netflix, Inc. reported after tax income and current "
                                     "liabilities for 2015. Activision is not mentioned. "
                                     "Dividend per share: 3 rupee."]})
    chk = ScopeChecker(content)
    for q in ["What is the FY2015 EBITDA margin of Netflix?",
              "What is Netflix's days payable outstanding (DPO) in FY2015?",
              "Format the date as YYYY-MM-DD.",
              "What is the after-tax income of Neflix in 2015?",  # typo, hyphen variant
              "What were the current Liabilitiesfor Netfilx in FY 2015?",
              "What dividend did Netflix pay (Rupees) in 2015?"]:  # plural of a word it has
        assert chk.unmentioned(q, "w", ["n"]) == [], q
    assert chk.unmentioned("How much did Boeing earn in 2015?", "w", ["n"]) == ["boeing"]
    assert chk.unmentioned("What did Nexflux earn?", "w", ["n"]) == ["nexflux"]  # two edits
    assert chk.unmentioned("How many Tweets did Netflix send?", "w", ["n"]) == ["tweets"]
