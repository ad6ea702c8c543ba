"""Text encoder over an OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM, TEI, …).

The API returns pooled vectors only, so ``encode_with_tokens`` gives each text a single
"token" (its own vector): late interaction then degrades to dense scoring (logged once).
"""
from __future__ import annotations


import httpx
import numpy as np

from docray.engine.config import TextEncoderConfig
from docray.engine.embed.base import RemotePooledEncoder
from docray.engine.errors import BadInput, ConfigError, Unavailable

def embeddings_url(base: str) -> str:
    """``{base}/v1/embeddings`` whether or not ``base`` already ends in ``/v1``.

    >>> embeddings_url("http://h:8000/v1")
    'http://h:8000/v1/embeddings'
    """
    base = base.rstrip("/")
    return f"{base}/embeddings" if base.endswith("/v1") else f"{base}/v1/embeddings"


class OpenAIEmbeddingEncoder(RemotePooledEncoder):
    """:class:`~docray.engine.embed.TextEncoder` backed by a served embedding model."""

    name: str = "openai"

    def __init__(self, config: TextEncoderConfig, client: httpx.Client | None = None,
                 timeout_s: float = 60.0):
        if not config.url:
            raise ConfigError("embed.text.url is required for the openai text encoder backend")
        super().__init__(config)
        self.url = embeddings_url(config.url)
        self.client = client or httpx.Client(timeout=timeout_s)
        self.name = f"openai:{config.model}"

    def _request(self, batch: list[str]) -> np.ndarray:
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
        return self._checked(vecs, batch, f"embedding server {self.url}")
