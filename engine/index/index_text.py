"""What a chunk is indexed as: the document label and heading, then the chunk text.

The dense vector, the BM25 text and the stored chunk token vectors all come from this
string, so the answer path rebuilds it (:func:`index_head`) to find a sentence's tokens.
"""
from __future__ import annotations

import re

from docray.engine.model import Chunk, Document

_HASHY = re.compile(r"^[0-9a-f]{16,}$")


def doc_label(doc: Document) -> str:
    """Words that name the document (file stem unless it is a hash, plus its first title):
    questions name companies and reports that the chunks themselves rarely repeat.

    >>> from docray.engine.model import Document
    >>> doc_label(Document(doc_id="d", source="x", filename="3M_2018_10K.pdf"))
    '3M 2018 10K'
    """
    stem = re.sub(r"[_\-]+", " ", doc.filename.rsplit(".", 1)[0]).strip()
    parts = [] if _HASHY.match(stem.replace(" ", "").lower()) else [stem]
    title = next((u.text for u in doc.units if u.modality == "title" and u.text.strip()), "")
    if title and title.lower() not in stem.lower():
        parts.append(title.strip()[:120])
    return " — ".join(parts)


def index_head(label: str, section: list[str]) -> str:
    """What precedes the chunk text in its index text: label and heading, then a newline
    ("" when there is neither).

    >>> index_head("3M 2018 10K", ["Results"]), index_head("", [])
    ('3M 2018 10K / Results\\n', '')
    """
    head = " / ".join([label, *section[-1:]]).strip(" /")
    return f"{head}\n" if head else ""


def index_text(label: str, chunk: Chunk) -> str:
    """What gets embedded and BM25-indexed: document label and heading, then the text."""
    return index_head(label, chunk.section) + chunk.text
