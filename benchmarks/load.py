"""Load benchmark of the Serve app: Locust (headless, child process) step load plus an
overload phase; replicas per deployment polled from serve.status().

The steps are one Locust run with a step shape: the users of a step stay on for the next
one and the new ones arrive within a second, as in a ramp. Per-step numbers are of the
requests that started within the step.

    python benchmarks/load.py                       # sample corpus, short steps
    python benchmarks/load.py --data .bench/full --workspace bench \
        --serve-config configs/serve/load.yaml --step-seconds 30 --wait 0.5,1.5

With --data, the questions are those of ../shared/eval/qa.jsonl, each asked within its
document (``doc``), as a user of a document-QA app asks them. After the steps, the app
idles for --cooldown-seconds while replicas are still polled, to show the scale-down.

Writes benchmarks/results/load.json and load.png.
"""
from __future__ import annotations

import argparse
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
sys.path.insert(0, str(HERE))
from _common import machine  # noqa: E402


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


def qa_questions(path: Path, n: int) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [{"question": r["question"], "doc": r["doc"]} for r in (rows[:n] if n else rows)]


def autoscale_summary(rows: list[dict], steps: list[dict], t0: float,
                      cooldown_start: float) -> dict:
    """For the busiest deployment — the first to go above its starting replicas: seconds
    from the start of the load step during which it scaled up, and how long after the
    load ended it was back to its starting replicas."""
    names = sorted({k for r in rows for k in r if k != "t"})
    if not rows or not names:
        return {}

    def first_up(name: str):
        return next((r for r in rows if r.get(name, 0) > rows[0].get(name, 0)), None)

    scaled = [n for n in names if first_up(n)]
    name = min(scaled, key=lambda n: first_up(n)["t"]) if scaled else names[0]
    start, up = rows[0].get(name, 0), first_up(name)
    out = {"deployment": name, "start_replicas": start,
           "max_replicas": max(r.get(name, 0) for r in rows),
           "scaled": {n: max(r.get(n, 0) for r in rows) for n in scaled}}
    if up:
        step = max((s for s in steps if s["start_s"] - t0 <= up["t"]),
                   key=lambda s: s["start_s"], default=steps[0])
        out.update(scaled_up_at_s=up["t"], during_step_users=step["users"],
                   seconds_after_step_start=round(up["t"] - (step["start_s"] - t0), 1))
    after = [r for r in rows if r["t"] >= cooldown_start - t0]
    down = next((r for r in after if r.get(name, 0) <= start), None)
    out["scaled_down_after_load_s"] = (round(down["t"] - (cooldown_start - t0), 1)
                                       if down and up else None)
    return out


def _locust(url: str, env_extra: dict, args: list[str], questions: list, key: str,
            log: Path, wait: str, csv_prefix: Path) -> list[tuple[int, float, float]]:
    """Run Locust headless in its own process → (status, latency_ms, start_unix_s) per
    request, and the test's start time as the first record's (0, 0, start)."""
    env = dict(os.environ, DOCRAY_BENCH_QUESTIONS=json.dumps(questions),
               DOCRAY_BENCH_KEY=key, DOCRAY_BENCH_LOG=str(log), DOCRAY_BENCH_WAIT=wait,
               **env_extra)
    subprocess.run(["locust", "-f", str(HERE / "locustfile.py"), "--headless", *args,
                    "--host", url, "--csv", str(csv_prefix), "--only-summary",
                    "--stop-timeout", "5"], env=env, check=False, capture_output=True)
    out = []
    for line in log.read_text().splitlines() if log.exists() else []:
        a, b = line.split(maxsplit=1)
        out.append((0, 0.0, float(b)) if a == "start" else
                   (int(a), float(b.split()[0]), float(b.split()[1])))
    return out


def window_stats(users: int, start: float, seconds: float,
                 records: list[tuple[int, float, float]]) -> dict:
    """Stats of the requests that started in [start, start + seconds)."""
    rows = [(c, ms) for c, ms, t in records if c and start <= t < start + seconds]
    ok = sorted(ms for c, ms in rows if c == 200)
    rej = sorted(ms for c, ms in rows if c == 503)
    codes: dict[str, int] = {}
    for c, _ in rows:
        codes[str(c)] = codes.get(str(c), 0) + 1
    pct = lambda xs, q: round(xs[min(len(xs) - 1, int(q * len(xs)))], 1) if xs else None  # noqa
    n = len(rows)
    return {"users": users, "start_s": start, "seconds": seconds, "requests": n,
            "throughput_rps": round(n / seconds, 2),
            "error_rate": round((n - len(ok)) / n, 4) if n else 0,
            "p50_ms": pct(ok, .5), "p95_ms": pct(ok, .95), "p99_ms": pct(ok, .99),
            "status_counts": codes, "p50_503_ms": pct(rej, .5), "p95_503_ms": pct(rej, .95)}


def run_steps(url: str, steps: list[int], seconds: int, questions: list, key: str,
              tmp: Path, wait: str = "0") -> list[dict]:
    """The step load as ONE Locust run (a LoadTestShape): users of a step stay for the
    next, as in a ramp, instead of every step starting from a cold burst of users."""
    records = _locust(url, {"DOCRAY_BENCH_STEPS": ",".join(map(str, steps)),
                            "DOCRAY_BENCH_STEP_S": str(seconds)}, [], questions, key,
                      tmp / "steps.log", wait, tmp / "steps")
    t0 = next((t for c, _, t in records if c == 0), time.time())
    return [window_stats(u, t0 + i * seconds, seconds, records) for i, u in enumerate(steps)]


def run_locust(url: str, users: int, seconds: int, questions: list, key: str,
               tmp: Path, wait: str = "0", spawn_rate: float | None = None) -> dict:
    """One load of ``users``, arriving ``spawn_rate`` per second (default: all at once)."""
    rate = spawn_rate or users
    records = _locust(url, {}, ["-u", str(users), "-r", f"{rate:g}", "-t", f"{seconds}s"],
                      questions, key, tmp / f"u{users}.log", wait, tmp / f"u{users}")
    t0 = next((t for c, _, t in records if c == 0), time.time())
    return window_stats(users, t0, seconds, records)


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
    ap.add_argument("--overload-spawn-rate", type=float, default=20,
                    help="overload users arriving per second (60 users: all in 3 s); the "
                         "stats cover the ramp too")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--wait", default="0", help='think time per user: "0" or "LOW,HIGH" s')
    ap.add_argument("--questions", type=Path, default=REPO.parent / "shared/eval/qa.jsonl",
                    help="QA file used with --data")
    ap.add_argument("--n-questions", type=int, default=0,
                    help="the first N questions of --questions (0: all 550, so few repeat and "
                         "the servers' caches of parsed records help little)")
    ap.add_argument("--cooldown-seconds", type=int, default=40)
    args = ap.parse_args()

    from docray.engine.config import config_from_dict
    from docray.engine.samples import QUESTIONS
    from docray.serve_apps.runner import ServeRunner
    from docray.serve_apps.settings import load_serve_settings

    tmp = Path(tempfile.mkdtemp(prefix="docray-load-"))
    data = args.data or ingest_samples(REPO / ".bench" / "samples")
    questions = qa_questions(args.questions, args.n_questions) if args.data else QUESTIONS
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
        steps = run_steps(url, [int(u) for u in args.steps.split(",")], args.step_seconds,
                          questions, "", tmp, args.wait)
        for s in steps:
            s["t_end"] = round(s["start_s"] + s["seconds"] - t0, 2)
            print(json.dumps({k: s[k] for k in ("users", "p50_ms", "p95_ms", "throughput_rps",
                                                 "error_rate")}), flush=True)
        capacity = settings.limits.max_inflight
        cooldown_start = time.time()
        time.sleep(args.cooldown_seconds)
        over = run_locust(url, capacity * args.overload_factor, args.step_seconds, questions, "",
                          tmp, args.wait, args.overload_spawn_rate)
        over["spawn_rate"] = args.overload_spawn_rate
        over["t_end"] = round(time.time() - t0, 2)
        print(json.dumps(over), flush=True)
    finally:
        poller.stop()
        runner.stop()
    result = {"data": str(data), "workspace": args.workspace, "serve_config": args.serve_config,
              "step_seconds": args.step_seconds, "wait_s": args.wait,
              "questions": len(questions), "machine": machine(), "steps": steps,
              "overload": over,
              "autoscaling": autoscale_summary(poller.rows, steps, t0, cooldown_start),
              "replicas": poller.rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "load.json").write_text(json.dumps(result, indent=1))
    plot(result, args.out / "load.png")
    print(f"wrote {args.out / 'load.json'} and load.png")


if __name__ == "__main__":
    main()
