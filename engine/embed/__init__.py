"""Encoders: :class:`TextEncoder` (dense + token vectors) and :class:`PageEncoder`
(page multi-vectors). Backends are chosen by ``embed.text.backend`` / ``embed.page.backend``
through the registries in :mod:`docray.engine.registry`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from docray.engine.config import PageEncoderConfig, TextEncoderConfig
from docray.engine.embed.base import PageEncoder, PageInput, TextEncoder, l2_normalize

if TYPE_CHECKING:
    from docray.engine.index.artifacts import ArtifactStore

__all__ = ["PageEncoder", "PageInput", "TextEncoder", "get_page_encoder", "get_text_encoder",
           "l2_normalize"]


def get_text_encoder(config: TextEncoderConfig) -> TextEncoder:
    from docray.engine.registry import TEXT_ENCODERS

    return TEXT_ENCODERS.create(config.backend, config)


def get_page_encoder(config: PageEncoderConfig, text_encoder: TextEncoder | None = None,
                     artifacts: "ArtifactStore | None" = None) -> PageEncoder:
    """The page encoder of ``config.backend``; ``text-tokens`` reuses ``text_encoder``,
    ``colpali`` reads page renders from ``artifacts``."""
    from docray.engine.registry import PAGE_ENCODERS

    cls = PAGE_ENCODERS.resolve(config.backend)
    if config.backend == "text-tokens":
        return cls(config, text_encoder)
    return cls(config, text_encoder, artifacts=artifacts)
