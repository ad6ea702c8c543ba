"""The answers read off the whole document or computed, tried before the passages' lines.

Each reader answers one form of question from structure the document holds (its labels,
the items under a heading, its contents page, its addresses, its numbered parts, the
numbers beside names, its financial statements) and returns None for any other question,
so the first that answers wins; a question none of them takes goes on to the passages'
sentences and table cells (extractive.py).
"""
from __future__ import annotations

from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.contact import email_answer
from docray.engine.synthesize.contents import contents_answer
from docray.engine.synthesize.fromstatements import statement_answer
from docray.engine.synthesize.inventory import count_answer
from docray.engine.synthesize.listed import listed_answer
from docray.engine.synthesize.namedvalues import named_answer
from docray.engine.synthesize.titles import title_answer

# readers of the document's content store, in the order they are tried
_FROM_CONTENT = (count_answer, listed_answer, contents_answer, email_answer, title_answer)


def read_document(question: str, passages: list[Passage], tables) -> Answer | None:
    """The first reader's answer to ``question`` (``tables``: the DocTables of the
    workspace), or None."""
    for read in _FROM_CONTENT:
        if (found := read(question, passages, tables.content)) is not None:
            return found
    return named_answer(question, passages) or statement_answer(question, passages, tables)
