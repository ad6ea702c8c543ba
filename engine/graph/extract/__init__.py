"""Entity/relation extractors: the :class:`Extractor` protocol and a config-driven factory.

Backends (see ``docray.engine.registry.EXTRACTORS``): ``lexical`` (deterministic, offline,
the default) and ``llm`` (OpenAI-compatible structured output, falls back to lexical).
"""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from docray.engine.config import ExtractConfig
from docray.engine.model import Chunk, Entity, Relation, Unit


@runtime_checkable
class Extractor(Protocol):
    def extract(self, items: Sequence[Chunk | Unit]) -> tuple[list[Entity], list[Relation]]:
        """Entities (ids ``ent:{normalised name}``) and relations found in chunks or units."""
        ...


def make_extractor(config: ExtractConfig | None = None) -> Extractor:
    """The extractor named by ``config.backend``, built with its config."""
    from docray.engine.registry import EXTRACTORS

    config = config or ExtractConfig()
    return EXTRACTORS.create(config.backend, config)


__all__ = ["Extractor", "make_extractor"]
