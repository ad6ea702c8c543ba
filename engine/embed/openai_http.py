"""Text encoder over an OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM, TEI, …).

The API returns pooled vectors only, so ``encode_with_tokens`` gives each text a single
"token" (its own vector): late interaction then degrades to dense scoring (logged once).
"""
from __future__ import annotations

import logging

import httpx
import numpy as np

from docray.engine.config import TextEncoderConfig
from docray.engine.embed.base import l2_normalize
from docray.engine.errors import BadInput, ConfigError, Unavailable

log = logging.getLogger(__name__)


def embeddings_url(base: str) -> str:
    """``{base}/v1/embeddings`` whether or not ``base`` already ends in ``/v1``.

    >>> embeddings_url("http://h:8000/v1")
    'http://h:8000/v1/embeddings'
    """
    base = base.rstrip("/")
    return f"{base}/embeddings" if base.endswith("/v1") else f"{base}/v1/embeddings"


class OpenAIEmbeddingEncoder:
    """:class:`~docray.engine.embed.TextEncoder` backed by a served embedding model."""

    name: str = "openai"

    def __init__(self, config: TextEncoderConfig, client: httpx.Client | None = None,
                 timeout_s: float = 60.0):
        if not config.url:
            raise ConfigError("embed.text.url is required for the openai text encoder backend")
        self.config, self.url = config, embeddings_url(config.url)
        self.client = client or httpx.Client(timeout=timeout_s)
        self.name = f"openai:{config.model}"
        self._warned = False

    @property
    def dim(self) -> int:
        return self.config.dim

    def _post(self, batch: list[str]) -> np.ndarray:
        try:
            resp = self.client.post(self.url, json={"model": self.config.model, "input": batch,
                                                    "encoding_format": "float"})
        except httpx.HTTPError as err:
            raise Unavailable(f"embedding server {self.url} unreachable: {err}") from err
        if resp.status_code >= 500 or resp.status_code == 429:
            raise Unavailable(f"embedding server {self.url} answered {resp.status_code}")
        if resp.status_code >= 400:
            raise BadInput("embed.text", f"{self.url} answered {resp.status_code}: "
                           f"{resp.text[:200]}")
        try:
            data = sorted(resp.json()["data"], key=lambda d: d["index"])
            vecs = np.asarray([d["embedding"] for d in data], dtype=np.float32)  # (b, dim)
        except (KeyError, TypeError, ValueError) as err:
            raise Unavailable(f"embedding server {self.url} sent a malformed reply: {err}") from err
        if vecs.shape != (len(batch), self.dim):
            raise ConfigError(f"embedding server {self.url} returned shape {vecs.shape}, "
                              f"expected ({len(batch)}, {self.dim}); check embed.text.dim")
        return vecs

    def encode(self, texts: list[str]) -> np.ndarray:
        bs = self.config.batch_size
        parts = [self._post(list(texts[s:s + bs])) for s in range(0, len(texts), bs)]
        if not parts:
            return np.zeros((0, self.dim), np.float32)
        return l2_normalize(np.concatenate(parts))  # (n, dim)

    def encode_with_tokens(self, texts: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        if not self._warned:
            log.warning("%s gives no token vectors; using one vector per text", self.name)
            self._warned = True
        vecs = self.encode(texts)
        return vecs, [v[None, :] for v in vecs]  # [(1, dim)]
