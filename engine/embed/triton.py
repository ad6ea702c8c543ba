"""Text encoder over a Triton Inference Server model (tritonclient, HTTP protocol).

The model takes ``TEXT`` (BYTES, shape (-1, 1)) and returns ``EMBEDDING`` (FP32, (-1, dim));
each request carries up to ``embed.text.batch_size`` texts, so a batch of n texts costs
ceil(n / batch_size) round trips (the server may merge them further: dynamic batching).
Token vectors are not served: ``encode_with_tokens`` gives each text one "token" (its own
vector), as the OpenAI backend does, so late interaction degrades to dense scoring.
"""
from __future__ import annotations

import socket
from urllib.parse import urlparse

import numpy as np

from docray.engine.config import TextEncoderConfig
from docray.engine.embed.base import RemotePooledEncoder
from docray.engine.errors import ConfigError, Unavailable

class TritonTimeout(Unavailable, TimeoutError):
    """The Triton server did not answer within ``embed.text.timeout_s``."""


def _host_port(url: str) -> str:
    """``http://h:8000`` or ``h:8000`` → ``h:8000`` (tritonclient takes no scheme).

    >>> _host_port("http://127.0.0.1:8000/")
    '127.0.0.1:8000'
    """
    parsed = urlparse(url if "://" in url else f"http://{url}")
    return parsed.netloc


class TritonTextEncoder(RemotePooledEncoder):
    """:class:`~docray.engine.embed.TextEncoder` backed by a Triton-served embedding model."""

    name: str = "triton"

    def __init__(self, config: TextEncoderConfig):
        if not config.url:
            raise ConfigError("embed.text.url is required for the triton text encoder backend")
        import tritonclient.http as httpclient

        super().__init__(config)
        self._http = httpclient
        self.url = _host_port(config.url)
        self.model_name = config.triton_model
        self.client = httpclient.InferenceServerClient(
            self.url, connection_timeout=config.timeout_s, network_timeout=config.timeout_s)
        self.name = f"triton:{self.model_name}"

    def _request(self, batch: list[str]) -> np.ndarray:
        http = self._http
        data = np.array([[t.encode("utf-8")] for t in batch], dtype=np.object_)  # (b, 1)
        inp = http.InferInput("TEXT", list(data.shape), "BYTES")
        inp.set_data_from_numpy(data)
        out = [http.InferRequestedOutput("EMBEDDING", binary_data=True)]
        try:
            res = self.client.infer(self.model_name, [inp], outputs=out)
        except (socket.timeout, TimeoutError) as err:
            raise TritonTimeout(f"Triton server {self.url} model {self.model_name!r} did not "
                                f"answer within embed.text.timeout_s={self.config.timeout_s}"
                                ) from err
        except (ConnectionError, OSError) as err:
            raise Unavailable(f"Triton server {self.url} (embed.text.url) unreachable: "
                              f"{err}") from err
        except Exception as err:  # tritonclient raises InferenceServerException
            if "timed out" in str(err).lower() or "timeout" in type(err).__name__.lower():
                raise TritonTimeout(f"Triton server {self.url} did not answer within "
                                    f"embed.text.timeout_s={self.config.timeout_s}") from err
            raise Unavailable(f"Triton server {self.url} (embed.text.url) model "
                              f"{self.model_name!r} (embed.text.triton_model) failed: "
                              f"{err}") from err
        vecs = np.asarray(res.as_numpy("EMBEDDING"), dtype=np.float32)  # (b, dim)
        return self._checked(vecs, batch, f"Triton model {self.model_name!r}")
