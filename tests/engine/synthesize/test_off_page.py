"""A question that points at a page, answered from another page: an abstention that says
so (extractive.py, the pages as counted or as printed, scope.py)."""
import asyncio

import pytest

from docray.engine.index.content import ContentStore
from docray.engine.model import Chunk, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.extractive import ExtractiveAnswerer
from docray.engine.synthesize.statements import DocTables

WS, DOC = "ws", "plan"
GOVERNOR = "Rick Scott, Governor of Florida, signed the plan in 2016."


def _unit(uid: str, page: int, text: str, modality: str = "text") -> Unit:
    return Unit(unit_id=uid, doc_id=DOC, page=page, order=0, modality=modality,
                bbox=(0.1, 0.1, 0.9, 0.2), text=text)


@pytest.fixture
def answerer(tmp_path):
    store = ContentStore(tmp_path / "content.sqlite")
    # page 3 prints "1" as its page number; page 12 is the last
    store.add_doc(WS, [_unit("u1", 1, GOVERNOR), _unit("u3", 3, "1", "page_number"),
                       _unit("u12", 12, "Contact the department for copies.")], [])
    yield ExtractiveAnswerer(threshold=0.05, tables=DocTables(store))
    store.close()


def _ask(answerer, question: str, page: int):
    u = _unit(f"u{page}", page, GOVERNOR)
    p = Passage(Chunk(chunk_id="c1", doc_id=DOC, text=GOVERNOR, pages=[page],
                      unit_ids=[u.unit_id], workspace=WS), [u], 1.0, "plan.pdf")
    return asyncio.run(answerer.answer(question, [p]))


def test_an_answer_from_another_page_abstains(answerer):
    a = _ask(answerer, "Who is the governor mentioned on the last page of the document?", 1)
    assert a.abstained and "page 12" in a.reason and "page 1" in a.reason


def test_an_answer_from_the_page_asked_stands(answerer):
    a = _ask(answerer, "Who is the governor mentioned on the first page?", 1)
    assert not a.abstained and "Rick Scott" in a.answer


def test_a_printed_page_number_counts(answerer):
    """'page 1' is the first page, or the page that prints 1 (page 3)."""
    assert not _ask(answerer, "Who is the governor mentioned on page 1?", 3).abstained
    assert _ask(answerer, "Who is the governor mentioned on page 2?", 3).abstained
