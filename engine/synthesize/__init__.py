"""Synthesis: context building, artifact dereference, answerers, abstention, citations."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import AsyncIterator, Protocol, runtime_checkable

import numpy as np

from docray.engine.model import Chunk, Evidence, Unit


@dataclass
class Passage:
    """One retrieved chunk with the units it came from and its final score."""

    chunk: Chunk
    units: list[Unit]
    score: float
    filename: str = ""


@dataclass
class Answer:
    answer: str
    abstained: bool
    evidence: list[Evidence] = field(default_factory=list)
    reason: str = ""
    confidence: float = 0.0
    citations: list[int] = field(default_factory=list, metadata={"doc": "indexes into evidence"})
    value: str = field(default="", metadata={"doc": "the bare value (a cell, an amount, a "
                                             "date, a name); '' when the answer is a passage"})
    support: str = field(default="", metadata={"doc": "the sentence or table line that "
                                               "states the answer"})


@runtime_checkable
class Answerer(Protocol):
    """``qvec``: the question's text vector (dim,) when the caller already has it (the
    query path encodes the question once); answerers that need it encode it otherwise."""

    name: str

    async def answer(self, question: str, passages: list[Passage],
                     qvec: np.ndarray | None = None) -> Answer: ...

    def stream(self, question: str, passages: list[Passage],
               qvec: np.ndarray | None = None) -> AsyncIterator[str]: ...
