"""The :class:`Describer` protocol: fill ``Unit.description`` for table/image/equation units.

A description is the unit's retrieval proxy (RAG-Anything): text units pass through
untouched, the raw artifact stays in the artifact store for answer time.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from docray.engine.model import Unit


@runtime_checkable
class Describer(Protocol):
    def describe(self, units: list[Unit]) -> list[Unit]:
        """Units in the same order; non-text units carry a ``description``."""
        ...
