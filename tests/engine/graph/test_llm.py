"""LLMExtractor against a local server replaying a recorded OpenAI-compatible response."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from docray.engine.config import ExtractConfig
from docray.engine.errors import Unavailable
from docray.engine.graph.extract.llm import LLMExtractor
from docray.engine.model import Chunk

from .conftest import text_chunk

RECORDED = json.loads((Path(__file__).parent / "data" / "chat_completion_3m.json").read_text())


class _Handler(BaseHTTPRequestHandler):
    replies: list = []
    requests: list = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append((self.path, body))
        status, payload = type(self).replies.pop(0)
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
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", _Handler
    httpd.shutdown()
    httpd.server_close()


def _extractor(url):
    return LLMExtractor(ExtractConfig(backend="llm", llm_url=url, llm_model="test-model"),
                        timeout_s=5)


def test_recorded_response_parsed(server):
    url, handler = server
    handler.replies = [(200, RECORDED)]
    entities, rels = _extractor(url).extract([text_chunk()])
    path, body = handler.requests[0]
    assert path == "/v1/chat/completions" and body["model"] == "test-model"
    assert body["response_format"]["type"] == "json_schema"
    assert "3M spent" in body["messages"][-1]["content"]
    by_name = {e.name: e for e in entities}
    assert by_name["3M"].type == "organization" and by_name["3M"].doc_ids == ["doc3m"]
    ppe = by_name["Property, plant and equipment"]
    assert ppe.entity_id == "ent:property plant and equipment" and ppe.aliases == ["PP&E"]
    types = {(r.src, r.dst): (r.type, r.weight) for r in rels}
    assert types[("ent:3m", ppe.entity_id)] == ("invests_in", 8.0)
    assert types[(ppe.entity_id, "ent:$1577 million")] == ("amount", 9.0)


def test_invalid_reply_falls_back_to_lexical(server, caplog):
    url, handler = server
    bad = json.loads(json.dumps(RECORDED))
    bad["choices"][0]["message"]["content"] = '{"entities": [{"type": "x"}]}'
    not_json = json.loads(json.dumps(RECORDED))
    not_json["choices"][0]["message"]["content"] = "Sure! Here are the entities: 3M"
    handler.replies = [(200, bad), (200, not_json)]
    other = Chunk(chunk_id="c2", doc_id="doc3m", text="Acme Corp grew 12.5% in 2018.")
    entities, _ = _extractor(url).extract([text_chunk(), other])
    names = {n for e in entities for n in (e.name, *e.aliases)}
    assert {"3M", "PP&E", "Acme Corp", "12.5%"} <= names
    assert sum("lexical fallback" in r.message for r in caplog.records) == 2


def test_server_error_is_unavailable(server):
    url, handler = server
    handler.replies = [(503, {"error": "overloaded"})]
    with pytest.raises(Unavailable):
        _extractor(url).extract([text_chunk()])
