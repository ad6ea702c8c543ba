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


class LazyTextEncoder:
    """A :class:`TextEncoder` that loads on first use: a stage that needs the model only as
    a fallback (rerank over stored chunk tokens) starts without importing it (~4 s of CPU,
    paid by every replica the autoscaler adds)."""

    def __init__(self, config: TextEncoderConfig):
        import threading

        self._config, self._encoder, self._lock = config, None, threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._encoder is not None

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        with self._lock:
            if self._encoder is None:
                self._encoder = get_text_encoder(self._config)
        return getattr(self._encoder, name)
