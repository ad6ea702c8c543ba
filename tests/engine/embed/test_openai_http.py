"""OpenAIEmbeddingEncoder against a local server speaking the /v1/embeddings protocol."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from docray.engine.config import TextEncoderConfig
from docray.engine.embed import TextEncoder, get_text_encoder
from docray.engine.errors import ConfigError, Unavailable

DIM = 8


def _vector(text: str) -> list[float]:
    rng = np.random.default_rng(sum(text.encode()))
    return (rng.normal(size=DIM) * 3).tolist()  # not normalised: the client must do it


class _Handler(BaseHTTPRequestHandler):
    requests: list = []
    status = 200

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append((self.path, body))
        data = [{"object": "embedding", "index": i, "embedding": _vector(t)}
                for i, t in enumerate(body["input"])][::-1]  # out of order on purpose
        payload = json.dumps({"object": "list", "model": body["model"], "data": data,
                              "usage": {"prompt_tokens": 3, "total_tokens": 3}}).encode()
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.requests, _Handler.status = [], 200
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", _Handler
    httpd.shutdown()
    httpd.server_close()


def _cfg(url, **kw):
    return TextEncoderConfig(backend="openai", url=url, model="emb", dim=DIM, **kw)


def test_encode_batches_orders_and_normalises(server):
    url, handler = server
    enc = get_text_encoder(_cfg(url, batch_size=2))
    assert isinstance(enc, TextEncoder) and enc.dim == DIM
    texts = ["a", "bb", "ccc"]
    v = enc.encode(texts)
    assert [p for p, _ in handler.requests] == ["/v1/embeddings"] * 2
    assert handler.requests[0][1] == {"model": "emb", "input": ["a", "bb"],
                                      "encoding_format": "float"}
    want = np.array([_vector(t) for t in texts], np.float32)
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    assert v.shape == (3, DIM) and np.allclose(v, want, atol=1e-6)
    vecs, toks = enc.encode_with_tokens(texts)
    assert [t.shape for t in toks] == [(1, DIM)] * 3 and np.allclose(toks[2][0], vecs[2])


def test_errors(server):
    url, handler = server
    with pytest.raises(ConfigError, match="dim"):
        get_text_encoder(TextEncoderConfig(backend="openai", url=url, dim=4)).encode(["x"])
    handler.status = 503
    with pytest.raises(Unavailable):
        get_text_encoder(_cfg(url)).encode(["x"])
    with pytest.raises(ConfigError, match="url"):
        get_text_encoder(TextEncoderConfig(backend="openai"))
