"""The web page's routes over FastAPI's TestClient (no Ray, no models): the page itself
and its files, the page view (render size + unit boxes), the graph around units, and
workspace isolation: another workspace's data answers exactly as absent data does."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from docray.engine.graph.records import Edge, Node
from docray.engine.model import Unit
from docray.serve_apps.ingress.web import WEB

DOC = "d1"
TABLE = Unit(unit_id="d1:p1:u0", doc_id=DOC, page=1, bbox=(0.1, 0.2, 0.9, 0.5),
             modality="table", order=1, caption="Table 1")
TITLE = Unit(unit_id="d1:p1:u1", doc_id=DOC, page=1, bbox=(0.1, 0.05, 0.6, 0.1),
             modality="title", order=0, text="Annual report")


def _seed(cfg) -> None:
    from pathlib import Path

    from docray.engine.graph.store import GraphStore
    from docray.engine.index.artifacts import ArtifactStore
    from docray.engine.index.catalog import Catalog
    from docray.engine.index.content import ContentStore

    root = Path(cfg.paths.data_dir)
    Catalog(root / "catalog.sqlite").upsert("alpha", DOC, "/x/report.pdf", "report.pdf", "done",
                                            n_pages=1, n_units=2)
    content = ContentStore(root / "content.sqlite")
    content.add_doc("alpha", [TABLE, TITLE], [])
    content.close()
    ArtifactStore(root / "artifacts", "alpha").put_image(DOC, "page-0001.png",
                                                         Image.new("RGB", (306, 396), "white"))
    graph = GraphStore(root / "graph")
    graph.add([Node("unit:d1:p1:u0", "table", "Table 1", DOC, TABLE.unit_id, 1),
               Node("d1:p1:u0:row0", "table_row", "Revenue", DOC, TABLE.unit_id, 1)],
              [Edge("d1:p1:u0:row0", "unit:d1:p1:u0", "unit-of")], doc_id=DOC,
              workspace="alpha")
    graph.save()


class _ZeroEncoder:
    """A TextEncoder that maps every text to zeros: enough for graph-only retrieval."""

    dim = 384

    def encode_with_tokens(self, texts):
        import numpy as np

        return np.zeros((len(texts), self.dim)), [np.zeros((2, self.dim)) for _ in texts]


class _Says:
    """A synthesis stage whose answerer streams ``text`` word by word."""

    text = "Not answerable: the passages never name Boeing."

    async def stream(self, question, passages, qvec=None):
        for word in self.text.split(" "):
            yield word + " "


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from docray.engine.config import config_from_dict
    from docray.serve_apps.ingress.app import create_app
    from docray.serve_apps.ingress.context import IngressContext
    from docray.serve_apps.ingress.stages import LocalStages
    from docray.serve_apps.retrieval.service import GraphWalkService
    from docray.serve_apps.settings import Limits

    data = tmp_path_factory.mktemp("web") / "data"
    cfg = config_from_dict({"paths": {"data_dir": str(data)},
                            "serve": {"api_keys": {"ka": "alpha", "kb": "beta"}}})
    _seed(cfg)
    stages = LocalStages(GraphWalkService(cfg), None, None, None, _Says())
    ctx = IngressContext.build(cfg, Limits(), stages, encoder=_ZeroEncoder())
    return TestClient(create_app(ctx), raise_server_exceptions=False)


A, B = {"Authorization": "Bearer ka"}, {"Authorization": "Bearer kb"}


def test_the_page_and_its_files_are_served_without_a_key(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/ui/app.js">' in page.text
    for name in ("app.js", "api.js", "answer.js", "documents.js", "draw.js", "graph.js",
                 "style.css"):
        got = client.get(f"/ui/{name}")
        assert got.status_code == 200 and got.text == (WEB / name).read_text(), name
        assert "http://" not in got.text.replace("http://www.w3.org/2000/svg", ""), name
    assert client.get("/ui/nope.js").status_code == 404
    assert client.get("/v1/documents").status_code == 401  # the API still wants the key


def test_page_view_gives_the_render_size_and_every_unit_box(client):
    r = client.get("/v1/documents/report.pdf/pages/1", headers=A)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["doc_id"], body["page"], body["n_pages"]) == (DOC, 1, 1)
    assert (body["width"], body["height"], body["dpi"]) == (306, 396, 144)
    assert (body["page_width_pt"], body["page_height_pt"]) == (153.0, 198.0)
    assert [u["unit_id"] for u in body["units"]] == [TITLE.unit_id, TABLE.unit_id]  # order
    assert body["units"][1]["bbox"] == list(TABLE.bbox)
    image = client.get(body["image_url"], headers=A)
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    bad = client.get("/v1/documents/report.pdf/pages/2", headers=A)
    assert bad.status_code == 404 and bad.json()["field"] == "page"
    zero = client.get("/v1/documents/report.pdf/pages/0", headers=A)
    assert zero.status_code == 422 and zero.json()["field"] == "path.page"


def test_graph_route_returns_the_neighbourhood_of_a_unit(client):
    r = client.get("/v1/graph", params={"unit": TABLE.unit_id, "hops": 1}, headers=A)
    assert r.status_code == 200, r.text
    nodes = {n["id"]: n for n in r.json()["nodes"]}
    assert nodes["unit:d1:p1:u0"]["seed"] and not nodes["d1:p1:u0:row0"]["seed"]
    assert r.json()["edges"] == [{"src": "d1:p1:u0:row0", "dst": "unit:d1:p1:u0",
                                  "type": "unit-of", "weight": 1.0}]
    few = client.get("/v1/graph", params={"unit": TABLE.unit_id, "limit": 1}, headers=A)
    assert len(few.json()["nodes"]) == 1
    assert client.get("/v1/graph", params={"hops": 9, "unit": "x"},
                      headers=A).json()["field"] == "query.hops"
    assert client.get("/v1/graph", headers=A).json()["field"] == "query.unit"
    gone = client.get("/v1/graph", params={"unit": "d1:p9:u9"}, headers=A)
    assert gone.status_code == 404 and gone.json()["field"] == "unit"


@pytest.mark.parametrize("path", [
    "/v1/documents/report.pdf/pages/1", f"/v1/documents/{DOC}/pages/1",
    f"/v1/graph?unit={TABLE.unit_id}", f"/v1/artifacts/alpha/{DOC}/page-0001.png"])
def test_another_workspace_cannot_tell_its_data_from_absent_data(client, path):
    swap = lambda t: (t.replace("report.pdf", "gone.pdf").replace(DOC, "d9")  # noqa: E731
                      .replace("alpha/", "beta/"))
    theirs = client.get(path, headers=B)
    absent = client.get(swap(path), headers=B)
    assert theirs.status_code == absent.status_code == 404
    assert swap(theirs.text) == absent.text  # the same words, field and flags
    assert client.get(path, headers={"Authorization": "Bearer nope"}).status_code == 401


def _last_event(client, **req) -> dict:
    import json

    r = client.post("/v1/query/stream", json={"mode": "graph-only", **req}, headers=A)
    assert r.status_code == 200, r.text
    blocks = [b for b in r.text.split("\n\n") if b.strip()]
    name, data = (line.split(": ", 1)[1] for line in blocks[-1].splitlines())
    assert name == "evidence"
    return json.loads(data)


def test_the_stream_says_when_it_abstains_and_why(client):
    """The page shows an abstention as such: the stream's last event carries it."""
    refused = _last_event(client, question="What did Boeing pay?", doc="report.pdf")
    assert refused["abstained"] and "boeing" in refused["reason"].lower()  # the scope check
    answered = _last_event(client, question="What did Boeing pay?")  # the answerer's words
    assert answered["abstained"] and answered["reason"] == "the passages never name Boeing"
    _Says.text = "Revenue was 4.2 [1]."
    try:
        plain = _last_event(client, question="What was revenue?")
    finally:
        _Says.text = "Not answerable: the passages never name Boeing."
    assert not plain["abstained"] and plain["reason"] == ""
