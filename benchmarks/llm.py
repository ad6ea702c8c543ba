"""vLLM throughput: the Serve Synthesis stage under concurrent requests, and the Ray Data
describe pass.

Synthesis (``synthesize.answerer: vllm``): the docray Serve app is started over a data dir
with the sample PDFs ingested (``docray ingest`` in a child process joined to this Ray), and
the ``Synthesis`` deployment (Ray's LLMServer hosting a vLLM engine) is called through its
handle by 1, 4 and 16 concurrent workers, each sending ``--per-worker`` requests back to
back, over a fixed list of passages. Two request kinds per level:

* ``chat``: the chat request docray's answerer builds (ChatAnswerer.payload, reply format
  text), sent to the LLMServer's own ``chat`` method, which returns the engine's token
  counts (``usage.completion_tokens``): tokens/s and requests/s;
* ``answer``: docray's ``answer`` method (the Ingress's contract: prompt, engine, citation
  parsing): requests/s only (no token counts cross it).

Plus ``/v1/query`` end to end at concurrency 1 (p50 of a few sample questions).

Describe (``describe.backend: vllm``): two corpus PDFs parsed with the native parser, then
``run_pass`` over their ``DescribeRequests`` rows, twice: once as they are (K items), once
with every request repeated ``--repeat`` times (distinct keys). Each pass starts its own
engine (a ray.data.llm processor per pass), so the difference of the two is steady
generation: ``steady rows/s = (repeat-1)·K / (t2 - t1)``, and ``t1 - K / rate`` is the fixed
cost (engine start, Ray Data plan). The difference holds two engine starts, so their spread
(several seconds on shared cores) is the rate's error: keep the second pass long
(``--repeat``). Repeated prompts may hit vLLM's prefix cache; prefill is a small share of a
reply of up to ``llm.max_tokens`` tokens.

Without ``--config``, the model is the tests' tiny random-weight Llama on vLLM's CPU backend
(tests/tiny_models.py); with ``--config``, that file's ``llm`` section (model, accelerator,
bundles, engine arguments) is used as it is, the rest of the docray config being the
embedded default; ``--serve-config`` likewise (its synthesis stage's max_ongoing_requests
is raised to the highest concurrency, so the level measures the engine, not a queue).
Writes benchmarks/results/llm.json and llm.png.

    python benchmarks/llm.py                                   # CPU, tiny model
    python benchmarks/llm.py --config configs/gpu.yaml --serve-config configs/serve/gpu.yaml
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from _common import CORPUS, RESULTS, ROOT, machine, write_result  # noqa: E402

log = logging.getLogger("bench.llm")
LEVELS = (1, 4, 16)
DOCS = ["ULTABEAUTY_2023Q4_EARNINGS.pdf", "2001.03131.pdf"]
PASSAGES = ["The pump delivers 58.9 litres per minute at full load.",
            "Servo motors drive the valve actuator of the press.",
            "Table 2 lists the torque of each motor and its rated speed."]


def llm_section(args, tmp: Path) -> tuple[dict, str]:
    """The ``llm`` section: the --config file's as it is, or the tiny CPU model's."""
    if args.config:
        from docray.engine.config import load_config

        return load_config(args.config).llm.model_dump(), str(args.config)
    from tiny_models import tiny_llama, vllm_cpu_config

    return vllm_cpu_config(tiny_llama(tmp / "tiny_llama")), "tests/tiny_models.py tiny_llama"


def ingest_samples(root: Path, gcs: str) -> Path:
    """The sample PDFs ingested by ``docray ingest`` in a child joined to this Ray: the
    ingesting process keeps milvus-lite locked, the app's own server opens it after."""
    from docray.engine.samples import write_samples

    data, cfg = root / "data", root / "ingest.yaml"
    root.mkdir(parents=True, exist_ok=True)
    cfg.write_text(yaml.safe_dump({"paths": {"data_dir": str(data)}, "ray": {"address": gcs}}))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("DOCRAY_CONFIG", None)
    out = subprocess.run([sys.executable, "-m", "docray.engine.cli", "ingest",
                          *map(str, write_samples(root / "samples")), "--config", str(cfg),
                          "--json"], capture_output=True, text=True, timeout=600, env=env,
                         cwd=ROOT)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return data


def _passages():
    from docray.engine.model import Chunk
    from docray.engine.synthesize import Passage

    return [Passage(Chunk(chunk_id=f"c{i}", doc_id="d", text=t, pages=[i + 1]), [], 1.0,
                    "bench.pdf") for i, t in enumerate(PASSAGES)]


async def _level(call, concurrency: int, per_worker: int) -> dict:
    """``concurrency`` workers, each ``per_worker`` calls back to back: wall time,
    generated tokens (None where the call gives no counts), per-request latencies."""
    lat: list[float] = []

    async def worker() -> int:
        tokens = 0
        for _ in range(per_worker):
            t = time.perf_counter()
            tokens += await call()
            lat.append(time.perf_counter() - t)
        return tokens

    t0 = time.perf_counter()
    tokens = sum(await asyncio.gather(*[worker() for _ in range(concurrency)]))
    wall = time.perf_counter() - t0
    n = concurrency * per_worker
    return {"requests": n, "wall_s": wall, "tokens": tokens, "req_s": n / wall,
            "tok_s": tokens / wall, "p50_ms": 1000 * statistics.median(lat)}


def _median(rounds: list[dict], key: str) -> float:
    return round(statistics.median(r[key] for r in rounds), 3)


async def _drive(cfg, args) -> dict:
    from ray import serve
    from ray.serve.llm.openai_api_models import ChatCompletionRequest

    from docray.engine.synthesize.openai_chat import ChatAnswerer
    from docray.serve_apps.build import APP_NAME

    handle = serve.get_deployment_handle("Synthesis", APP_NAME)
    passages, s = _passages(), cfg.synthesize
    chat = ChatAnswerer(cfg.llm.served_name, budget_tokens=s.max_context_tokens,
                        max_tokens=s.max_tokens, reply_format=s.reply_format)
    payload = chat.payload("What flow does the pump deliver?", passages, stream=False)
    stream = handle.options(stream=True)

    async def chat_call() -> int:
        async for reply in stream.chat.remote(ChatCompletionRequest(**payload)):
            if not getattr(reply, "usage", None):
                raise RuntimeError(f"engine error: {str(reply)[:300]}")
            return reply.usage.completion_tokens
        raise RuntimeError("no reply from the engine")

    async def answer_call() -> int:
        await handle.answer.remote("What flow does the pump deliver?", passages)
        return 0

    await chat_call()  # warm: the first request compiles grammars and warms caches
    await answer_call()
    out: dict = {}
    for c in args.levels:
        kinds = {}
        for kind, call in (("chat", chat_call), ("answer", answer_call)):
            rounds = [await _level(call, c, args.per_worker) for _ in range(args.rounds)]
            kinds[kind] = {"req_s": _median(rounds, "req_s"), "p50_ms": _median(rounds, "p50_ms"),
                           "rounds": [{k: round(v, 3) for k, v in r.items()} for r in rounds]}
            if kind == "chat":
                kinds[kind]["tok_s"] = _median(rounds, "tok_s")
                kinds[kind]["tokens_per_request"] = round(
                    sum(r["tokens"] for r in rounds) / sum(r["requests"] for r in rounds), 1)
        out[str(c)] = kinds
        log.info("concurrency %d: %s", c, {k: (v["req_s"], v.get("tok_s")) for k, v in kinds.items()})
    return out


def _query_p50(url: str, n: int) -> dict:
    import httpx

    from docray.engine.samples import QUESTIONS

    lat, synth = [], []
    for q in (QUESTIONS * n)[:n]:
        t = time.perf_counter()
        r = httpx.post(f"{url}/v1/query", json={"question": q}, timeout=120)
        lat.append(time.perf_counter() - t)
        r.raise_for_status()
        synth.append(r.json()["timings"].get("synthesis", 0.0))
    return {"queries": n, "p50_ms": round(1000 * statistics.median(lat), 1),
            "synthesis_p50_ms": round(1000 * statistics.median(synth), 1)}


def synthesis_bench(llm: dict, args, tmp: Path, gcs: str) -> dict:
    from docray.engine.config import config_from_dict
    from docray.serve_apps.milvus_server import free_port
    from docray.serve_apps.runner import ServeRunner
    from docray.serve_apps.settings import StageSettings, load_serve_settings

    t = time.perf_counter()
    data = ingest_samples(tmp / "serve", gcs)
    ingest_s = time.perf_counter() - t
    cfg = config_from_dict({
        "paths": {"data_dir": str(data)}, "serve": {"port": free_port()},
        "synthesize": {"answerer": "vllm", "reply_format": "text",
                       "max_tokens": args.max_tokens, "max_context_tokens": 200}, "llm": llm})
    settings = load_serve_settings(args.serve_config)
    settings.milvus_port = free_port()
    stage = settings.stage("synthesis")
    top = max(args.levels)
    settings.stages["synthesis"] = StageSettings.model_validate({
        **stage.model_dump(), "max_ongoing_requests": max(stage.max_ongoing_requests, top),
        "max_queued_requests": max(stage.max_queued_requests, top)})
    runner = ServeRunner(cfg, settings)
    t = time.perf_counter()
    url = runner.start()
    start_s = time.perf_counter() - t
    try:
        levels = asyncio.run(_drive(cfg, args))
        query = _query_p50(url, args.queries) if args.queries else None
    finally:
        runner.stop()
    return {"serve_config": str(args.serve_config), "ingest_samples_s": round(ingest_s, 1),
            "app_start_s": round(start_s, 1), "max_tokens": args.max_tokens,
            "per_worker": args.per_worker, "rounds": args.rounds,
            "synthesis_stage": settings.stages["synthesis"].model_dump(exclude={"llm"}),
            "levels": levels, "query_c1": query}


class Repeated:
    """Each request of ``items`` ``times`` times, under distinct keys."""

    def __init__(self, items, times: int):
        self.items, self.times = items, times

    def __call__(self, row):
        for req in self.items(row):
            for i in range(self.times):
                yield {**req, "key": f"{req['key']}#{i}"}


def describe_bench(llm: dict, args, tmp: Path) -> dict:
    import ray

    from docray.engine.config import config_from_dict
    from docray.engine.describe.vllm_batch import DescribeRequests, describe_schema
    from docray.engine.ingest.stages.llm_pass import run_pass
    from docray.engine.ingest.stages.parse import parse_row
    from docray.engine.model import file_doc_id

    if not args.config:  # the tiny model: the describe test's caps (tests/engine/ingest)
        llm = {**llm, "max_tokens": 320, "batch_size": 32}
    cfg = config_from_dict({"paths": {"data_dir": str(tmp / "describe")},
                            "describe": {"backend": "vllm", "max_description_chars": 48},
                            "llm": llm})
    ctx = ray.data.DataContext.get_current()  # as pipeline.init_ray sets it
    ctx.enable_progress_bars, ctx.op_resource_reservation_enabled = False, False
    paths = [CORPUS / d for d in DOCS]
    t = time.perf_counter()
    rows = [parse_row({"path": str(p), "workspace": "bench", "filename": p.name,
                       "doc_id": file_doc_id(p)}, cfg) for p in paths]
    parse_s = time.perf_counter() - t
    docs = ray.data.from_items(rows).materialize()
    items = DescribeRequests(cfg.model_dump_json())
    schema = describe_schema(cfg.describe.max_description_chars)
    passes = []
    for times in (1, args.repeat):
        t = time.perf_counter()
        replies = run_pass(docs, Repeated(items, times), cfg, schema, "describe")
        wall = time.perf_counter() - t
        passes.append({"repeat": times, "items": len(replies), "wall_s": round(wall, 1),
                       "failed": sum(1 for r in replies.values() if r["error"]),
                       "rows_per_s_wall": round(len(replies) / wall, 3)})
        log.info("describe pass x%d: %s", times, passes[-1])
    (one, many) = passes
    rate = (many["items"] - one["items"]) / max(many["wall_s"] - one["wall_s"], 1e-9)
    return {"docs": DOCS, "parse_s": round(parse_s, 1), "batch_size": cfg.llm.batch_size,
            "max_tokens": cfg.llm.max_tokens, "passes": passes,
            "steady_rows_per_s": round(rate, 3),
            "fixed_s": round(one["wall_s"] - one["items"] / rate, 1)}


def _plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    syn = data.get("synthesis")
    if syn:
        cs = list(syn["levels"])
        xs = range(len(cs))
        a.bar(xs, [syn["levels"][c]["chat"]["tok_s"] for c in cs], color="#9bd", width=0.5,
              label="tokens/s (chat, engine counts)")
        a.set_xticks(list(xs), cs)
        a.set_xlabel("concurrent requests")
        a.set_ylabel("generated tokens/s")
        r = a.twinx()
        for kind, color in (("chat", "#c63"), ("answer", "#393")):
            r.plot(xs, [syn["levels"][c][kind]["req_s"] for c in cs], "s--", color=color,
                   label=f"requests/s ({kind})")
        r.set_ylabel("requests/s")
        lines = a.get_legend_handles_labels(), r.get_legend_handles_labels()
        a.legend(lines[0][0] + lines[1][0], lines[0][1] + lines[1][1], fontsize=8)
        a.set_title(f"Synthesis stage, max_tokens {syn['max_tokens']}")
    des = data.get("describe")
    if des:
        labels = [f"pass x{p['repeat']}\n({p['items']} items)" for p in des["passes"]]
        vals = [p["rows_per_s_wall"] for p in des["passes"]]
        b.bar(labels + ["steady"], vals + [des["steady_rows_per_s"]],
              color=["#888", "#888", "#36c"])
        b.set_ylabel("rows/s")
        b.set_title(f"describe pass (ray.data.llm), fixed cost {des['fixed_s']} s")
    fig.suptitle(data["model"], fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", help="docray config whose llm section to use")
    ap.add_argument("--serve-config", default="configs/serve/test.yaml")
    ap.add_argument("--levels", default=",".join(map(str, LEVELS)))
    ap.add_argument("--per-worker", type=int, default=8, help="requests per worker per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--queries", type=int, default=5, help="/v1/query at concurrency 1")
    ap.add_argument("--repeat", type=int, default=24, help="describe: copies per request")
    ap.add_argument("--only", choices=["synthesis", "describe"])
    ap.add_argument("--num-cpus", type=int, default=4)
    ap.add_argument("--object-store-mb", type=int, default=300)
    args = ap.parse_args()
    args.levels = [int(x) for x in args.levels.split(",")]
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import ray

    from docray.serve_apps.runner import ray_serve_env
    from docray.serve_apps.settings import load_serve_settings

    os.environ.update(ray_serve_env(load_serve_settings(args.serve_config)))
    tmp = Path(tempfile.mkdtemp(prefix="docray-llmb-"))
    llm, model = llm_section(args, tmp)
    data: dict = {"machine": machine(), "model": model, "llm": llm}
    ray.init(num_cpus=args.num_cpus, object_store_memory=args.object_store_mb << 20,
             include_dashboard=False, log_to_driver=False)
    try:
        gcs = ray.get_runtime_context().gcs_address
        if args.only != "describe":
            data["synthesis"] = synthesis_bench(llm, args, tmp, gcs)
        if args.only != "synthesis":
            data["describe"] = describe_bench(llm, args, tmp)
    finally:
        ray.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    name = "llm" if not args.only else f"llm_{args.only}"
    write_result(name, data)
    _plot(data, RESULTS / f"{name}.png")
    print(json.dumps({k: v for k, v in data.items() if k not in ("machine", "llm")}, indent=1))


if __name__ == "__main__":
    main()
