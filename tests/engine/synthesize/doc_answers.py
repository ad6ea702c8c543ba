"""An extractive answerer over a real content store holding one document's units, for the
tests of answers read from the whole document (inventory.py, titles.py, readers.py)."""
from __future__ import annotations

import asyncio
from contextlib import contextmanager

from docray.engine.index.content import ContentStore
from docray.engine.model import Chunk, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.extractive import ExtractiveAnswerer
from docray.engine.synthesize.statements import DocTables

WS = "ws"


def text_unit(doc: str, uid: str, page: int, text: str, modality: str = "text",
              caption: str = "") -> Unit:
    """A unit of ``doc``; its reading order is the number in ``uid`` ("u12" → 12)."""
    return Unit(unit_id=uid, doc_id=doc, page=page, order=int(uid[1:]), modality=modality,
                bbox=(0.1, 0.1, 0.9, 0.2), text=text, caption=caption)


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


def ask_over_units(answerer, question: str, units: list[Unit], filename: str):
    """The answer to ``question`` when retrieval ranked one passage holding ``units``."""
    passage = Passage(chunk=Chunk(chunk_id="c1", doc_id=units[0].doc_id, workspace=WS,
                                  text="\n".join(u.text for u in units),
                                  pages=sorted({u.page for u in units})),
                      units=units, score=1.0, filename=filename)
    return asyncio.run(answerer.answer(question, [passage]))
