"""VLMDescriber against a local HTTP server replaying a recorded vLLM chat completion."""
import base64
import copy
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from docray.engine.config import DescribeConfig
from docray.engine.describe import get_describer
from docray.engine.describe.structural import StructuralDescriber
from docray.engine.describe.vlm import VLMDescriber
from docray.engine.errors import ConfigError, Unavailable
from docray.engine.index.artifacts import ArtifactStore

from .units import DOC, document

RECORDED = json.loads((Path(__file__).parent / "data" / "chat_completion_vlm.json").read_text())
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24


def _reply(content: str) -> dict:
    body = copy.deepcopy(RECORDED)
    body["choices"][0]["message"]["content"] = content
    return body


class _Handler(BaseHTTPRequestHandler):
    replies: list = []
    requests: list = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append((self.path, body))
        status, payload = type(self).replies.pop(0) if type(self).replies else (200, RECORDED)
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.replies, _Handler.requests = [], []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", _Handler
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def artifacts(tmp_path):
    store = ArtifactStore(tmp_path / "artifacts")
    store.put_bytes(DOC, "fig3.png", PNG)
    return store


def _describer(url, artifacts):
    cfg = DescribeConfig(backend="vlm", vlm_url=url, vlm_model="test-vlm", timeout_s=5)
    d = get_describer(cfg, artifacts)
    assert isinstance(d, VLMDescriber)
    return d


def test_figure_sent_with_image_and_context(server, artifacts):
    url, handler = server
    units = document()
    out = _describer(url, artifacts).describe([units[1], units[8]])
    assert out[0] == units[1]  # text untouched, no request for it
    assert len(handler.requests) == 1
    path, body = handler.requests[0]
    assert path == "/v1/chat/completions" and body["model"] == "test-vlm"
    assert body["response_format"]["type"] == "json_schema"
    text, image = body["messages"][1]["content"]
    assert "Figure 3: Recall versus k." in text["text"]
    assert "As shown in Fig. 3" in text["text"]  # citing sentence as context
    assert image["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert out[1].description.startswith("Line plot of recall against k")
    assert "Entities: recall@k; k" in out[1].description


def test_invalid_json_retried_once_then_ok(server, artifacts):
    url, handler = server
    handler.replies = [(200, _reply("not json")), (200, RECORDED)]
    out = _describer(url, artifacts).describe([document()[8]])
    assert len(handler.requests) == 2 and out[0].description.startswith("Line plot")


def test_two_invalid_replies_fall_back_to_structural(server, artifacts, caplog):
    url, handler = server
    handler.replies = [(200, _reply('{"entities": []}')), (200, _reply("```json\n{}\n```"))]
    units = document()
    with caplog.at_level(logging.WARNING, logger="docray.engine.describe.vlm"):
        out = _describer(url, artifacts).describe(units)[2]  # the table is asked first
    assert len(handler.requests) == 2 + 2  # equation and figure get the recorded reply
    assert out.description == StructuralDescriber(DescribeConfig()).proxy(units, 2)
    assert "docray | Accuracy / test: 90.7" in out.description
    assert "structural proxy" in caplog.text


def test_server_errors_are_unavailable(server, artifacts):
    url, handler = server
    handler.replies = [(503, {"error": "overloaded"})]
    with pytest.raises(Unavailable):
        _describer(url, artifacts).describe([document()[8]])
    with pytest.raises(Unavailable):
        _describer("http://127.0.0.1:9", artifacts).describe([document()[8]])


def test_missing_url_is_a_config_error():
    with pytest.raises(ConfigError, match="vlm_url"):
        get_describer(DescribeConfig(backend="vlm"))
