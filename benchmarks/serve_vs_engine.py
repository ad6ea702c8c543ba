"""The Serve app against the in-process engine: same questions, same workspace, one run.

(a) the in-process engine (``docray query``'s Session, embedded milvus-lite) at each
concurrency, in a child process (a milvus-lite db has one owner at a time); (b) the Serve
app (``ServeRunner``) at the same concurrency, closed loop, no think time (a client that
gets 503 waits the Retry-After it was sent, as an HTTP client is meant to); (c) the ratio.
Per level: the CPU seconds per answered request of every process by role (psutil
``cpu_times`` deltas: client, proxy, ingress, each stage replica, milvus-lite, Ray's own),
and the replica counts over the run. Before the load, the first ``--check`` questions are
asked both ways and their evidence compared (serving must not change the ranking).
``--settle S``: each level first runs S seconds at its concurrency unmeasured, on both
paths (steady state: the replicas the autoscaler adds for that load are up before the
measured window; their start-up, a process and its imports, is not in it). 0 (default)
measures from the first request of the level.

    python benchmarks/serve_vs_engine.py --data .bench/serve --workspace bench

Writes benchmarks/results/serve_vs_engine.json and serve_vs_engine.png.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from _common import QA, RESULTS, machine, write_result  # noqa: E402
from load import ReplicaPoller, qa_questions  # noqa: E402

ROLES = ("client", "proxy", "Ingress", "GraphWalk", "DenseSearch", "PageRetrieval", "Rerank",
         "Synthesis", "Documents", "controller", "milvus-lite", "ray-system")


def pct(xs: list[float], q: float) -> float | None:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))], 1) if xs else None


SCORE_TOL = 1e-5  # a score's last bits follow the scoring process's BLAS thread count


def evidence_key(answer: dict) -> list:
    """What serving must not change: the evidence in order with its scores, and the answer
    (lists, so that a key that crossed JSON compares equal)."""
    return [answer.get("answer")] + [[e["doc"], e["page"], e.get("unit_id"), e["score"]]
                                     for e in answer["evidence"]]


def same_evidence(a: list, b: list) -> bool:
    """Equal answers and evidence, scores within ``SCORE_TOL``."""
    return (len(a) == len(b) and a[0] == b[0]
            and all(x[:3] == y[:3] and abs(x[3] - y[3]) <= SCORE_TOL
                    for x, y in zip(a[1:], b[1:])))


# --- CPU by role --------------------------------------------------------------------------

def role_of(p: psutil.Process, me: int, milvus: set[int]) -> str:
    if p.pid == me:
        return "client"
    if p.pid in milvus:
        return "milvus-lite"
    try:
        cmd = " ".join(p.cmdline())
    except psutil.Error:
        return "ray-system"
    if "milvus" in cmd:
        return "milvus-lite"
    if "ProxyActor" in cmd:
        return "proxy"
    if "ServeController" in cmd:
        return "controller"
    if "ServeReplica" in cmd:  # ray::ServeReplica:<app>:<Deployment>[.method]
        return cmd.split("ServeReplica:", 1)[1].split()[0].split(":")[-1].split(".")[0]
    return "ray-system"


class CpuByRole:
    """Snapshots of every descendant's cpu_times (user + system), grouped by role."""

    def __init__(self, milvus_pid: int | None = None):
        self.me = psutil.Process()
        self.milvus_pid = milvus_pid

    def snapshot(self) -> dict[int, tuple[str, float]]:
        procs = [self.me, *self.me.children(recursive=True)]
        milvus: set[int] = set()
        if self.milvus_pid:
            try:
                m = psutil.Process(self.milvus_pid)
                milvus = {m.pid, *(c.pid for c in m.children(recursive=True))}
            except psutil.Error:
                pass
        out = {}
        for p in procs:
            try:
                t = p.cpu_times()
                out[p.pid] = (role_of(p, self.me.pid, milvus), t.user + t.system)
            except psutil.Error:
                pass
        return out

    @staticmethod
    def delta(a: dict, b: dict) -> dict[str, float]:
        out: dict[str, float] = {}
        for pid, (role, cpu) in b.items():
            out[role] = out.get(role, 0.0) + cpu - (a[pid][1] if pid in a else 0.0)
        return out


# --- (a) the in-process engine, in a child process -------------------------------------------

async def _engine_level(session, ws: str, questions: list[dict], clients: int,
                        seconds: float, cursor: list[int]) -> dict:
    lat: list[float] = []
    stop = time.perf_counter() + seconds

    async def client():
        while time.perf_counter() < stop:
            q = questions[cursor[0] % len(questions)]
            cursor[0] += 1
            s = time.perf_counter()
            await session.ask(q["question"], ws, q["doc"])
            lat.append((time.perf_counter() - s) * 1000)

    me = psutil.Process()
    c0, t0 = me.cpu_times(), time.perf_counter()
    kids0 = {p.pid: p.cpu_times() for p in me.children(recursive=True)}
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - t0
    c1 = me.cpu_times()
    kids = 0.0
    for p in me.children(recursive=True):
        t = p.cpu_times()
        t0k = kids0.get(p.pid)
        kids += t.user + t.system - ((t0k.user + t0k.system) if t0k else 0.0)
    cpu = {"engine": c1.user + c1.system - c0.user - c0.system, "milvus-lite": kids}
    return {"clients": clients, "ok": len(lat), "seconds": round(wall, 2),
            "ok_qps": round(len(lat) / wall, 2), "p50_ms": pct(lat, .5), "p95_ms": pct(lat, .95),
            "max_ms": round(max(lat), 1) if lat else None,
            "cpu_ms_per_request": {k: round(v * 1000 / max(1, len(lat)), 1)
                                   for k, v in cpu.items()}}


async def engine_phase(args) -> dict:
    from docray.engine.cli.query import Session
    from docray.engine.config import config_from_dict

    cfg = config_from_dict({"paths": {"data_dir": str(args.data), "workspace": args.workspace},
                            **args.engine_config})
    session = Session(cfg=cfg)
    session.warm()  # as the served Synthesis replica does at start
    questions = qa_questions(args.questions, args.n_questions)
    try:
        check = [evidence_key(await session.ask(q["question"], args.workspace, q["doc"]))
                 for q in questions[:args.check]]
        for q in questions[:args.warmup]:
            await session.ask(q["question"], args.workspace, q["doc"])
        levels, cursor = [], [0]
        for n in args.levels:
            if args.settle:
                await _engine_level(session, args.workspace, questions, n, args.settle, cursor)
            levels.append(await _engine_level(session, args.workspace, questions, n,
                                              args.seconds, cursor))
            print(json.dumps({"engine": levels[-1]}), file=sys.stderr, flush=True)
    finally:
        session.close()
    return {"levels": levels, "check": check}


# --- (b) the Serve app -----------------------------------------------------------------------

async def _served_level(url: str, questions: list[dict], clients: int, seconds: float,
                        cursor: list[int], timeout_s: float) -> dict:
    import aiohttp

    ok, rej, other = [], [], {}
    retry_after_missing = 0
    stop = time.perf_counter() + seconds

    async def client(http):
        nonlocal retry_after_missing
        while time.perf_counter() < stop:
            q = questions[cursor[0] % len(questions)]
            cursor[0] += 1
            s = time.perf_counter()
            try:
                async with http.post(url + "/v1/query", json={"question": q["question"],
                                                              "doc": q["doc"], "top_k": 5}) as r:
                    await r.read()
                    ms = (time.perf_counter() - s) * 1000
                    status, retry = r.status, r.headers.get("Retry-After")
            except asyncio.TimeoutError:
                other["timeout"] = other.get("timeout", 0) + 1
                continue
            if status == 200:
                ok.append(ms)
            elif status == 503:
                rej.append(ms)
                retry_after_missing += retry is None
                await asyncio.sleep(float(retry or 1) * random.uniform(0.5, 1.5))
            else:
                other[str(status)] = other.get(str(status), 0) + 1

    conn = aiohttp.TCPConnector(limit=0)
    tmo = aiohttp.ClientTimeout(total=timeout_s)
    t0 = time.perf_counter()
    async with aiohttp.ClientSession(connector=conn, timeout=tmo) as http:
        await asyncio.gather(*(client(http) for _ in range(clients)))
    wall = time.perf_counter() - t0
    return {"clients": clients, "ok": len(ok), "seconds": round(wall, 2),
            "ok_qps": round(len(ok) / wall, 2), "p50_ms": pct(ok, .5), "p95_ms": pct(ok, .95),
            "max_ms": round(max(ok), 1) if ok else None, "rejected_503": len(rej),
            "p50_503_ms": pct(rej, .5), "p95_503_ms": pct(rej, .95),
            "max_503_ms": round(max(rej), 1) if rej else None,
            "503_without_retry_after": retry_after_missing, "other": other}


async def _ask(url: str, q: dict) -> dict:
    import aiohttp

    async with aiohttp.ClientSession() as http:
        async with http.post(url + "/v1/query", json={"question": q["question"],
                                                      "doc": q["doc"], "top_k": 5}) as r:
            return await r.json()


def served_phase(args) -> dict:
    from docray.engine.config import config_from_dict
    from docray.serve_apps.runner import ServeRunner
    from docray.serve_apps.settings import load_serve_settings

    questions = qa_questions(args.questions, args.n_questions)
    cfg = config_from_dict({"paths": {"data_dir": str(args.data), "workspace": args.workspace},
                            "serve": {"port": args.port}, **args.engine_config})
    runner = ServeRunner(cfg, load_serve_settings(args.serve_config))
    url = runner.start()
    t0 = time.time()
    poller = ReplicaPoller(runner.app_name, t0)
    poller.start()
    cpu = CpuByRole(runner.milvus.proc.pid if runner.milvus and runner.milvus.proc else None)
    levels = []
    try:
        check = [evidence_key(asyncio.run(_ask(url, q))) for q in questions[:args.check]]
        for q in questions[:args.warmup]:
            asyncio.run(_ask(url, q))
        cursor = [0]
        for n in args.levels:
            if args.settle:
                asyncio.run(_served_level(url, questions, n, args.settle, cursor,
                                          args.client_timeout))
            a = cpu.snapshot()
            start = time.time() - t0
            lv = asyncio.run(_served_level(url, questions, n, args.seconds, cursor,
                                           args.client_timeout))
            d = cpu.delta(a, cpu.snapshot())
            lv["t_start"], lv["t_end"] = round(start, 2), round(time.time() - t0, 2)
            lv["cpu_ms_per_request"] = {r: round(d.get(r, 0.0) * 1000 / max(1, lv["ok"]), 1)
                                        for r in ROLES if r in d}
            lv["cpu_ms_per_request_total"] = round(sum(d.values()) * 1000 / max(1, lv["ok"]), 1)
            levels.append(lv)
            print(json.dumps({"served": lv}), file=sys.stderr, flush=True)
            time.sleep(args.pause)
    finally:
        poller.stop()
        runner.stop()
    return {"levels": levels, "check": check, "replicas": poller.rows}


# --- report -----------------------------------------------------------------------------------

def plot(result: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    eng, srv = result["engine"]["levels"], result["served"]["levels"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    x = np.arange(len(eng))
    labels = [str(lv["clients"]) for lv in eng]
    a = axes[0][0]
    a.bar(x - 0.2, [lv["ok_qps"] for lv in eng], 0.4, label="in-process")
    a.bar(x + 0.2, [lv["ok_qps"] for lv in srv], 0.4, label="served")
    a.set_xticks(x, labels), a.set_xlabel("closed-loop clients"), a.set_ylabel("answered q/s")
    a.legend()
    a = axes[0][1]
    for key, style in (("p50_ms", "o-"), ("p95_ms", "s--")):
        a.plot(labels, [lv[key] for lv in eng], style, label=f"in-process {key[:3]}")
        a.plot(labels, [lv[key] for lv in srv], style, label=f"served {key[:3]}")
    a.set_xlabel("closed-loop clients"), a.set_ylabel("latency of 200s (ms)"), a.legend(fontsize=7)
    a = axes[1][0]
    roles = [r for r in ROLES if any(r in lv["cpu_ms_per_request"] for lv in srv)]
    bottom = np.zeros(len(srv))
    for i, r in enumerate(roles):
        v = np.array([lv["cpu_ms_per_request"].get(r, 0.0) for lv in srv])
        a.bar(labels, v, bottom=bottom, label=r, color=plt.cm.tab20(i))
        bottom += v
    a.plot(labels, [sum(lv["cpu_ms_per_request"].values()) for lv in eng], "k*", ms=12,
           label="in-process total")
    a.set_xlabel("closed-loop clients"), a.set_ylabel("CPU ms per answered request")
    a.legend(fontsize=6, ncol=2)
    a = axes[1][1]
    rows = result["served"]["replicas"]
    for name in sorted({k for r in rows for k in r if k != "t"}):
        a.step([r["t"] for r in rows], [r.get(name, 0) for r in rows], where="post", label=name)
    for lv in srv:
        a.axvspan(lv["t_start"], lv["t_end"], alpha=0.08)
        a.annotate(f"{lv['clients']}c", (lv["t_start"], 0.2), fontsize=7)
    a.set_xlabel("time (s)"), a.set_ylabel("running replicas"), a.legend(fontsize=6)
    fig.suptitle(f"docray: served vs in-process ({result['workspace']}, {result['serve_config']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=REPO / ".bench" / "serve")
    ap.add_argument("--workspace", default="bench")
    ap.add_argument("--serve-config", default="configs/serve/load.yaml")
    ap.add_argument("--levels", default="1,8,32", type=lambda s: [int(x) for x in s.split(",")])
    ap.add_argument("--seconds", type=float, default=20.0, help="closed loop per level")
    ap.add_argument("--settle", type=float, default=0.0,
                    help="seconds of unmeasured load at each level before it is measured")
    ap.add_argument("--pause", type=float, default=3.0, help="idle between served levels")
    ap.add_argument("--warmup", type=int, default=20, help="questions asked before the load")
    ap.add_argument("--check", type=int, default=10, help="questions compared both ways")
    ap.add_argument("--questions", type=Path, default=QA)
    ap.add_argument("--n-questions", type=int, default=0, help="0: all")
    ap.add_argument("--port", type=int, default=8766)
    ap.add_argument("--client-timeout", type=float, default=30.0, help="a hang, past this")
    ap.add_argument("--name", default="serve_vs_engine", help="results file stem")
    ap.add_argument("--engine-config", type=json.loads, default={},
                    help='engine config sections for both paths, as JSON, e.g. '
                         '\'{"pages": {"two_stage_threshold": 1024}}\' (an A/B of one setting)')
    ap.add_argument("--phase", choices=["engine"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase == "engine":
        print(json.dumps(asyncio.run(engine_phase(args))))
        return
    child = [sys.executable, __file__, "--phase", "engine", *sys.argv[1:]]
    out = subprocess.run(child, stdout=subprocess.PIPE, check=True, text=True)
    engine = json.loads(out.stdout.strip().splitlines()[-1])
    served = served_phase(args)
    ratio = [{"clients": e["clients"],
              "throughput": round(s["ok_qps"] / e["ok_qps"], 3) if e["ok_qps"] else None,
              "p50": round(s["p50_ms"] / e["p50_ms"], 2) if s["p50_ms"] and e["p50_ms"] else None,
              "p95": round(s["p95_ms"] / e["p95_ms"], 2) if s["p95_ms"] and e["p95_ms"] else None}
             for e, s in zip(engine["levels"], served["levels"])]
    pairs = list(zip(engine.pop("check"), served.pop("check")))
    same = [same_evidence(a, b) for a, b in pairs]
    differ = [{"engine": a, "served": b} for (a, b), ok in zip(pairs, same) if not ok][:3]
    result = {"data": str(args.data), "workspace": args.workspace,
              "serve_config": args.serve_config, "seconds": args.seconds,
              "settle": args.settle, "engine_config": args.engine_config,
              "questions": len(qa_questions(args.questions, args.n_questions)),
              "machine": machine(), "engine": engine, "served": served, "ratio": ratio,
              "evidence_equal": {"checked": len(same), "equal": sum(same), "differ": differ}}
    path = write_result(args.name, result)
    plot(result, RESULTS / f"{args.name}.png")
    print(json.dumps({"ratio": ratio, "evidence_equal": result["evidence_equal"]})[:3000])
    print(f"wrote {path} and {args.name}.png")


if __name__ == "__main__":
    main()
