"""The Serve app with `retrieve.reranker: cross-encoder`: a tiny random BERT cross-encoder
(sentence-transformers CrossEncoder) runs inside the Rerank deployment."""
from __future__ import annotations

import shutil

import httpx
import numpy as np
import pytest

from docray.engine.model import Chunk
from docray.engine.samples import QUESTIONS

TEXTS = ["The pump delivers 58.9 litres per minute at full load.",
         "Servo motors drive the valve actuator of the press.",
         "Revenue grew in 2021 by ten percent over the prior year.",
         "Figure 3 shows the pressure curve of the hydraulic circuit.",
         "Table 2 lists the torque of each motor and its rated speed."]


@pytest.fixture(scope="module")
def ce_app(sample_data, cross_encoder_dir, tmp_path_factory):
    from docray.engine.config import config_from_dict
    from docray.serve_apps.milvus_server import free_port
    from docray.serve_apps.runner import ServeRunner
    from docray.serve_apps.settings import load_serve_settings

    data = tmp_path_factory.mktemp("ce_app") / "data"
    shutil.copytree(sample_data, data)
    cfg = config_from_dict({"paths": {"data_dir": str(data)}, "serve": {"port": free_port()},
                            "retrieve": {"reranker": "cross-encoder",
                                         "cross_encoder_model": str(cross_encoder_dir),
                                         "cross_encoder_batch_size": 2,
                                         "cross_encoder_max_length": 64}})
    settings = load_serve_settings("configs/serve/test.yaml")
    settings.milvus_port = free_port()
    runner = ServeRunner(cfg, settings)
    url = runner.start()
    yield url, cfg, runner.app_name
    runner.stop()


def test_query_runs_the_cross_encoder_stage(ce_app):
    url, _, _ = ce_app
    r = httpx.post(f"{url}/v1/query", json={"question": QUESTIONS[0]}, timeout=120)
    assert r.status_code == 200, r.text
    body = r.json()
    assert "rerank" in body["timings"] and body["evidence"]


def test_rerank_deployment_orders_by_the_cross_encoder(ce_app, cross_encoder_dir):
    from ray import serve

    from docray.engine.retrieve.engine import rerank_ranked
    from docray.engine.retrieve.rerank import CrossEncoderReranker

    _, cfg, app_name = ce_app
    chunks = {f"c{i}": Chunk(chunk_id=f"c{i}", doc_id="d", text=t) for i, t in enumerate(TEXTS)}
    head = [(f"c{i}", 0.5) for i in range(len(TEXTS))]  # tied fused scores: the model decides
    question = "Which motor has the highest torque?"
    handle = serve.get_deployment_handle("Rerank", app_name=app_name)
    got = handle.rerank.remote(question, np.zeros((0, 384), np.float32), head, chunks,
                               "default").result(timeout_s=120)
    local = CrossEncoderReranker(str(cross_encoder_dir), batch_size=2, max_length=64)
    want = rerank_ranked(lambda ids: local.score(question, [chunks[c].text for c in ids]),
                         head, len(head), cfg.retrieve.rerank_weight)
    assert [c for c, _ in got] == [c for c, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    # the model moved the head (the torque sentence c4 comes first with this seed's
    # checkpoint) and the scores are the model's, not the fused ones
    assert [c for c, _ in got] != [c for c, _ in head]
    assert len({round(s, 6) for _, s in got}) == len(TEXTS)

