"""A passage that leads into a table it does not hold: the answerer reads the table of its
page from the content store (leadin.py)."""
import asyncio

import pytest

from docray.engine.index.content import ContentStore
from docray.engine.model import Cell, Chunk, TableContent, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.extractive import ExtractiveAnswerer
from docray.engine.synthesize.statements import DocTables

WS, DOC = "ws", "gs"
LEAD = "The table below presents future minimum rental payments, net of sublease rentals."
ROWS = [["$ in millions", "As of December 2016"], ["2017", "290"], ["2018", "282"],
        ["2019", "238"], ["Total", "1,941"]]


def _units() -> list[Unit]:
    table = TableContent(rows=[[Cell(text=t, is_header=i == 0) for t in r]
                               for i, r in enumerate(ROWS)], header_rows=1)
    return [Unit(unit_id="gs:p183:u1", doc_id=DOC, page=183, order=1, modality="text",
                 bbox=(0.5, 0.3, 0.9, 0.35), text=LEAD),
            Unit(unit_id="gs:p183:u2", doc_id=DOC, page=183, order=2, modality="table",
                 bbox=(0.5, 0.36, 0.9, 0.5), table=table),
            Unit(unit_id="gs:p90:u1", doc_id=DOC, page=90, order=1, modality="table",
                 bbox=(0.1, 0.1, 0.9, 0.5), table=table)]


@pytest.fixture
def answerer(tmp_path):
    store = ContentStore(tmp_path / "content.sqlite")
    store.add_doc(WS, _units(), [])
    yield ExtractiveAnswerer(threshold=0.05, tables=DocTables(store))
    store.close()


def _lead_passage(text: str = LEAD) -> Passage:
    unit = _units()[0]
    return Passage(Chunk(chunk_id="gs:c1", doc_id=DOC, text=text, pages=[183],
                         unit_ids=[unit.unit_id], workspace=WS), [unit], 1.0, "GS_2016.pdf")


def test_the_lead_in_brings_its_table(answerer):
    a = asyncio.run(answerer.answer(
        "What percentage of future minimum rental payments are due in 2018?",
        [_lead_passage()]))
    assert a.value == "14.53%" and "2018: 282; Total: 1,941" in a.answer
    assert a.evidence[a.citations[0]].page == 183


def test_no_lead_in_no_table(answerer):
    """Text that does not lead into a table reads no table of its page."""
    a = asyncio.run(answerer.answer(
        "What percentage of future minimum rental payments are due in 2018?",
        [_lead_passage("The firm pays future minimum rental payments on its offices.")]))
    assert "282" not in a.answer
