"""Scope check: a question naming what its document never mentions is not answerable."""
from __future__ import annotations

from docray.engine.model import Chunk
from docray.engine.synthesize.scope import ScopeChecker, Vocabulary, specific_terms


def test_specific_terms_are_names_years_and_codes_not_question_words():
    q = "According to the Pfizer 10-K, what did GPT-4o score in Q2'2023 on Page 3?"
    assert specific_terms(q) == ["pfizer", "10-k", "gpt-4o", "2023"]
    assert specific_terms("WHAT IS THE LAST YEAR PRESENT IN THE TABLE?") == []
    assert specific_terms("How much did Boeing's revenue grow in FY2022?") == ["boeing", "2022"]


def test_vocabulary_matches_words_years_and_phrases():
    v = Vocabulary(["Germanwings flight 9525 (2015): tweets by Airbus, A320-family."])
    assert v.mentions("germanwings") and v.mentions("2015") and v.mentions("a320-family")
    assert not v.mentions("boeing") and not v.mentions("2016")


class _Content:
    def __init__(self, docs):
        self.docs, self.reads = docs, 0

    def doc_chunks(self, workspace, doc_id=None):
        self.reads += 1
        return [Chunk(chunk_id=f"{doc_id}-{i}", doc_id=doc_id, text=t, pages=[1],
                      modality="text", unit_ids=[])
                for i, t in enumerate(self.docs.get((workspace, doc_id), []))]


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
