"""An extractive answerer over a real content store holding one document's units, for the
tests of answers read from the whole document (inventory.py, titles.py)."""
from __future__ import annotations

import asyncio
from contextlib import contextmanager

from docray.engine.index.content import ContentStore
from docray.engine.model import Chunk, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.extractive import ExtractiveAnswerer
from docray.engine.synthesize.statements import DocTables

WS = "ws"


@contextmanager
def answerer_over(path, units: list[Unit]):
    store = ContentStore(path / "content.sqlite")
    store.add_doc(WS, units, [])
    try:
        yield ExtractiveAnswerer(threshold=0.1, tables=DocTables(store))
    finally:
        store.close()


def ask_with_passage(answerer, question: str, doc: str, text: str, page: int, filename: str):
    """The answer to ``question`` when retrieval ranked one passage of ``doc``."""
    passage = Passage(chunk=Chunk(chunk_id="c1", doc_id=doc, text=text, pages=[page],
                                  workspace=WS), units=[], score=1.0, filename=filename)
    return asyncio.run(answerer.answer(question, [passage]))
