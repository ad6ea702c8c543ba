"""The Serve app with ``synthesize.answerer: vllm``: the Synthesis stage hosts a real vLLM V1
engine (vllm-cpu) through ``ray.serve.llm``, on a tiny random-weight Llama.

The model's text is noise, so these tests assert structure: the reply format is ``json``
(schema-constrained), which makes citations valid source numbers even for noise; tokens
stream; a paused engine runs the stage past its time limit (504); a killed engine gives 502
naming the stage. One engine start for the module (~50 s on 2 cores).
"""
from __future__ import annotations

import json
import os
import signal

import httpx
import psutil
import pytest

from docray.engine.samples import QUESTIONS

pytest.importorskip("vllm")
pytestmark = [pytest.mark.slow, pytest.mark.own_process]


@pytest.fixture(scope="module")
def vllm_app(sample_data, tiny_llm_dir):
    from tiny_models import vllm_cpu_config

    from docray.engine.config import config_from_dict
    from docray.serve_apps.milvus_server import free_port
    from docray.serve_apps.runner import ServeRunner
    from docray.serve_apps.settings import load_serve_settings

    cfg = config_from_dict({
        "paths": {"data_dir": str(sample_data)}, "serve": {"port": free_port()},
        "synthesize": {"backend": "vllm", "reply_format": "json", "max_tokens": 160,
                       "max_answer_chars": 24,
                       "max_context_tokens": 200},
        "llm": vllm_cpu_config(tiny_llm_dir)})
    settings = load_serve_settings("configs/serve/test.yaml")
    settings.milvus_port = free_port()
    settings.limits.stage_timeout_s = 15
    runner = ServeRunner(cfg, settings)
    try:
        url = runner.start()
    except Exception as err:  # say why the deploy failed, not only that it did
        from serving import cluster_report

        raise AssertionError(f"the Serve app with a vLLM Synthesis did not deploy: "
                             f"{err!r}\n{cluster_report()}") from err
    yield url
    runner.stop()


def _synthesis_handle():
    from ray import serve

    from docray.serve_apps.build import APP_NAME

    return serve.get_deployment_handle("Synthesis", APP_NAME)


def test_synthesis_stage_is_a_vllm_llmserver(vllm_app):
    from ray import serve
    from ray.serve.llm import LLMServer

    from docray.serve_apps.build import APP_NAME

    status = serve.status().applications[APP_NAME].deployments["Synthesis"]
    assert status.status == "HEALTHY"
    config = _synthesis_handle().llm_config.remote().result(timeout_s=30)
    assert config.model_loading_config.model_id == "docray-llm"
    assert config.accelerator_config.kind == "cpu"
    from docray.serve_apps.synthesis.llm import LLMSynthesis

    assert issubclass(LLMSynthesis, LLMServer)
    assert _engine_cores(), "no vLLM EngineCore process is running"


def test_query_answers_with_valid_citations(vllm_app):
    r = httpx.post(f"{vllm_app}/v1/query", json={"question": QUESTIONS[0]}, timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"answer", "abstained", "reason", "evidence", "timings"}
    assert body["evidence"] and all(e["page"] >= 1 and e["doc"].endswith(".pdf")
                                    for e in body["evidence"])
    assert body["timings"]["synthesis"] > 0
    if body["abstained"]:  # answerable=false from the noise model: the reason is its text
        assert body["answer"] == "Not answerable" and body["reason"]
    else:
        assert body["answer"].strip()


def test_engine_reply_parses_into_citations(vllm_app):
    """Through the stage itself: the constrained reply always parses, and every citation
    indexes a source that was sent."""
    from docray.engine.model import Chunk
    from docray.engine.synthesize import Passage

    passages = [Passage(Chunk(chunk_id=f"c{i}", doc_id="d", text=t, pages=[i + 1]), [],
                        1.0, "r.pdf") for i, t in enumerate(["Pump 58.9 l/min.", "Servo."])]
    answer = _synthesis_handle().answer.remote("Flow?", passages).result(timeout_s=60)
    assert answer.reason != "model reply unparsable: JSONDecodeError", answer
    assert all(0 <= c < len(passages) for c in answer.citations)
    assert len(answer.evidence) == 2 and answer.evidence[1].page == 2


def test_stream_and_openai_sdk(vllm_app):
    with httpx.stream("POST", f"{vllm_app}/v1/query/stream",
                      json={"question": QUESTIONS[1]}, timeout=60) as r:
        assert r.status_code == 200
        lines = list(r.iter_lines())
    events = [line.split(": ", 1)[1] for line in lines if line.startswith("event:")]
    assert events[-1] == "evidence" and events.count("evidence") == 1
    evidence = json.loads([ln for ln in lines if ln.startswith("data:")][-1][5:])
    assert evidence
    from openai import OpenAI

    client = OpenAI(base_url=f"{vllm_app}/v1", api_key="none")
    msgs = [{"role": "user", "content": QUESTIONS[2]}]
    out = client.chat.completions.create(model="docray", messages=msgs)
    assert out.choices[0].message.content is not None
    assert out.model_extra["evidence"][0]["doc"].endswith(".pdf")
    chunks = list(client.chat.completions.create(model="docray", messages=msgs, stream=True))
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].model_extra["evidence"]


def test_paused_engine_runs_past_the_stage_limit_504(vllm_app):
    handle = _synthesis_handle()
    handle.pause.remote(mode="keep").result(timeout_s=30)
    try:
        r = httpx.post(f"{vllm_app}/v1/query", json={"question": QUESTIONS[0]}, timeout=60)
    finally:
        handle.resume.remote().result(timeout_s=30)
    assert r.status_code == 504, r.text
    assert "synthesis" in r.text


def _engine_cores() -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter(["name", "cmdline"]):
        text = " ".join([p.info["name"] or "", *(p.info["cmdline"] or [])])
        if "EngineCore" in text and p.pid != os.getpid():
            out.append(p)
    return out


def test_dead_engine_gives_502_naming_the_stage(vllm_app):
    """Last in the module: Serve replaces the replica afterwards, the module's app goes."""
    cores = _engine_cores()
    assert cores
    for p in cores:
        p.send_signal(signal.SIGKILL)
    psutil.wait_procs(cores, timeout=10)
    r = httpx.post(f"{vllm_app}/v1/query", json={"question": QUESTIONS[0]}, timeout=60)
    assert r.status_code == 502, r.text
    assert "stage synthesis failed" in r.json()["error"], r.text
