"""Load benchmark of the Serve app: Locust (headless, child process) step load plus an
overload phase; replicas per deployment polled from serve.status().

    python benchmarks/load.py                       # sample corpus, short steps
    python benchmarks/load.py --data .bench/corpus --workspace bench --step-seconds 60

Writes benchmarks/results/load.json and load.png.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def ingest_samples(root: Path) -> Path:
    from docray.engine.samples import write_samples

    data = root / "data"
    if (data / "catalog.sqlite").exists():
        return data
    pdfs = write_samples(root / "samples")
    cfg = root / "docray.yaml"
    cfg.write_text(yaml.safe_dump({"paths": {"data_dir": str(data)}}))
    subprocess.run([sys.executable, "-m", "docray.engine.cli", "ingest", *map(str, pdfs),
                    "--config", str(cfg), "--json"], check=True, capture_output=True)
    return data


class ReplicaPoller(threading.Thread):
    def __init__(self, app: str, t0: float, every: float = 1.0):
        super().__init__(daemon=True)
        self.app, self.t0, self.every, self.rows = app, t0, every, []
        self._stop = threading.Event()

    def run(self) -> None:
        from docray.serve_apps.metrics import serve_replicas

        while not self._stop.is_set():
            try:
                self.rows.append({"t": round(time.time() - self.t0, 2),
                                  **serve_replicas(self.app)})
            except Exception:  # noqa: BLE001 — keep polling through controller hiccups
                pass
            self._stop.wait(self.every)

    def stop(self) -> None:
        self._stop.set()


def run_locust(url: str, users: int, seconds: int, questions: list[str], key: str,
               tmp: Path) -> dict:
    prefix, log = tmp / f"u{users}", tmp / f"u{users}.log"
    env = dict(os.environ, DOCRAY_BENCH_QUESTIONS=json.dumps(questions),
               DOCRAY_BENCH_KEY=key, DOCRAY_BENCH_LOG=str(log))
    t0 = time.time()
    subprocess.run(["locust", "-f", str(HERE / "locustfile.py"), "--headless", "-u", str(users),
                    "-r", str(users), "-t", f"{seconds}s", "--host", url, "--csv", str(prefix),
                    "--only-summary", "--stop-timeout", "5"], env=env, check=False,
                   capture_output=True)
    rows = [r for r in csv.DictReader(open(f"{prefix}_stats.csv")) if r["Name"] == "/v1/query"]
    r = rows[0] if rows else {}
    n, fails = int(r.get("Request Count", 0)), int(r.get("Failure Count", 0))
    codes: dict[str, list[float]] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        code, ms = line.split()
        codes.setdefault(code, []).append(float(ms))
    ok = sorted(codes.get("200", []))
    rej = sorted(codes.get("503", []))
    pct = lambda xs, q: round(xs[min(len(xs) - 1, int(q * len(xs)))], 1) if xs else None  # noqa
    return {"users": users, "start_s": t0, "seconds": seconds, "requests": n,
            "throughput_rps": round(n / seconds, 2), "error_rate": round(fails / n, 4) if n else 0,
            "p50_ms": pct(ok, .5), "p95_ms": pct(ok, .95), "p99_ms": pct(ok, .99),
            "status_counts": {c: len(v) for c, v in codes.items()},
            "p50_503_ms": pct(rej, .5), "p95_503_ms": pct(rej, .95)}


def plot(result: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    steps = result["steps"] + [result["overload"]]
    xs = [s["t_end"] for s in steps]
    for key in ("p50_ms", "p95_ms", "p99_ms"):
        a1.plot(xs, [s[key] or 0 for s in steps], marker="o", label=key)
    for s in steps:
        a1.annotate(f"{s['users']}u", (s["t_end"], s["p95_ms"] or 0), fontsize=7)
    a1.set_ylabel("latency of 200s (ms)")
    a1.legend()
    names = sorted({k for r in result["replicas"] for k in r if k != "t"})
    for name in names:
        a2.step([r["t"] for r in result["replicas"]], [r.get(name, 0) for r in result["replicas"]],
                where="post", label=name)
    a2.set_ylabel("running replicas")
    a2.set_xlabel("time (s)")
    a2.legend(fontsize=7)
    fig.suptitle(f"docray load: {result['workspace']} ({result['serve_config']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, help="already-ingested data dir (default: samples)")
    ap.add_argument("--workspace", default="default")
    ap.add_argument("--serve-config", default=str(REPO / "configs/serve/local.yaml"))
    ap.add_argument("--steps", default="1,2,4,8,16,32")
    ap.add_argument("--step-seconds", type=int, default=10)
    ap.add_argument("--overload-factor", type=int, default=10)
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args()

    from docray.engine.config import config_from_dict
    from docray.engine.samples import QUESTIONS
    from docray.serve_apps.runner import ServeRunner
    from docray.serve_apps.settings import load_serve_settings

    tmp = Path(tempfile.mkdtemp(prefix="docray-load-"))
    data = args.data or ingest_samples(REPO / ".bench" / "samples")
    settings = load_serve_settings(args.serve_config)
    cfg = config_from_dict({"paths": {"data_dir": str(data), "workspace": args.workspace},
                            "serve": {"port": args.port}})
    runner = ServeRunner(cfg, settings)
    url = runner.start()
    t0 = time.time()
    poller = ReplicaPoller(runner.app_name, t0)
    poller.start()
    steps = []
    try:
        for users in [int(u) for u in args.steps.split(",")]:
            s = run_locust(url, users, args.step_seconds, QUESTIONS, "", tmp)
            s["t_end"] = round(time.time() - t0, 2)
            steps.append(s)
            print(json.dumps({k: s[k] for k in ("users", "p50_ms", "p95_ms", "throughput_rps",
                                                 "error_rate")}), flush=True)
        capacity = settings.limits.max_inflight
        over = run_locust(url, capacity * args.overload_factor, args.step_seconds, QUESTIONS, "",
                          tmp)
        over["t_end"] = round(time.time() - t0, 2)
        print(json.dumps(over), flush=True)
    finally:
        poller.stop()
        runner.stop()
    result = {"data": str(data), "workspace": args.workspace, "serve_config": args.serve_config,
              "step_seconds": args.step_seconds, "steps": steps, "overload": over,
              "replicas": poller.rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "load.json").write_text(json.dumps(result, indent=1))
    plot(result, args.out / "load.png")
    print(f"wrote {args.out / 'load.json'} and load.png")


if __name__ == "__main__":
    main()
