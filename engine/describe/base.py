"""The :class:`Describer` protocol: fill ``Unit.description`` for table/image/equation units.

A description is the unit's retrieval proxy (RAG-Anything): text units pass through
untouched, the raw artifact stays in the artifact store for answer time.
"""
from __future__ import annotations

from typing import Callable, Protocol, runtime_checkable

from docray.engine.model import MULTIMODAL, Unit


@runtime_checkable
class Describer(Protocol):
    def describe(self, units: list[Unit]) -> list[Unit]:
        """Units in the same order; non-text units carry a ``description``."""
        ...


def describe_missing(units: list[Unit], proxy: Callable[[list[Unit], int], str]) -> list[Unit]:
    """Fill ``description`` of multimodal units that lack one with ``proxy(units, i)``."""
    out = []
    for i, unit in enumerate(units):
        if unit.modality in MULTIMODAL and not unit.description:
            unit = unit.model_copy(update={"description": proxy(units, i)})
        out.append(unit)
    return out
