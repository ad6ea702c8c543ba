"""Parsers turn a file into a :class:`~docray.engine.model.Document` of units.

Every backend implements :class:`Parser`; pick one by config key through
:data:`docray.engine.registry.PARSERS`.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from docray.engine.config import ParseConfig
    from docray.engine.index.artifacts import ArtifactStore
    from docray.engine.model import Document


@runtime_checkable
class Parser(Protocol):
    """Parse one file. Raise :class:`~docray.engine.errors.BadInput` (or a subclass)
    naming the file and the cause for anything unreadable; never return a partial
    document silently — pages that yield nothing carry ``Page.skip_reason``."""

    name: str

    def __init__(self, config: "ParseConfig", artifacts: "ArtifactStore | None" = None): ...

    def parse(self, path: Path, doc_id: str | None = None) -> "Document": ...


def get_parser(config: "ParseConfig", artifacts: "ArtifactStore | None" = None) -> Parser:
    from docray.engine.registry import PARSERS

    return PARSERS.create(config.backend, config, artifacts)
