"""``text-tokens`` page encoder: a page's multi-vector is the MiniLM token vectors of its
text (OCR text for scanned pages), encoded in model-length windows (256 word pieces with
[CLS]/[SEP]) and capped at ``embed.page.max_tokens``. Queries are their token vectors."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from docray.engine.config import PageEncoderConfig, TextEncoderConfig
from docray.engine.embed.base import PageInput, document_pages, pack_pages
from docray.engine.errors import ConfigError

if TYPE_CHECKING:
    from docray.engine.embed.base import TextEncoder
    from docray.engine.model import Document

log = logging.getLogger(__name__)


class TextTokensPageEncoder:
    """:class:`~docray.engine.embed.PageEncoder` from a token-level text encoder."""

    name: str = "text-tokens"

    def __init__(self, config: PageEncoderConfig | None = None,
                 text_encoder: "TextEncoder | None" = None):
        self.config = config or PageEncoderConfig()
        if text_encoder is None:
            from docray.engine.embed.minilm import MiniLMEncoder

            text_encoder = MiniLMEncoder(TextEncoderConfig())
        if not hasattr(text_encoder, "encode_token_windows"):
            raise ConfigError(f"embed.page.backend='text-tokens' needs a local token-level text "
                              f"encoder (minilm/sentence_transformers), not {text_encoder.name!r}")
        if self.config.dim != text_encoder.dim:
            raise ConfigError(f"embed.page.dim={self.config.dim} but the text encoder "
                              f"{text_encoder.name!r} gives {text_encoder.dim}-d token vectors")
        self.text = text_encoder
        self.name = f"text-tokens:{text_encoder.name}"

    @property
    def dim(self) -> int:
        return self.text.dim

    def encode_pages(self, pages: list[PageInput]) -> list[np.ndarray]:
        return self.text.encode_token_windows([p.text for p in pages],  # [(n_tok, dim)]
                                              self.config.max_tokens)

    def encode_queries(self, texts: list[str]) -> list[np.ndarray]:
        return self.text.encode_with_tokens(texts)[1]  # [(n_q_tok, dim)]

    def encode_document(self, doc: "Document", artifacts=None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pages = document_pages(doc)
        return pack_pages([p.page for p in pages], self.encode_pages(pages), self.dim)
