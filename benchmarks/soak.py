"""Soak: `docray serve` (the console script, a key) under bounded mixed load on loopback for
--minutes: closed-loop queries, streamed queries, and upload → done → delete cycles. Every
5 s the server's process tree (Ray, the replicas, milvus-lite) is sampled: RSS and open
file descriptors. Then SIGTERM, and a check that no process of the tree is left.

Pass: no response outside 200/202/429/503, no transport error, and RSS and fds flat: the
median of the last quarter within --rss-bound % and --fd-bound % of the median of the
second quarter (the first quarter is warm-up: replicas load models, caches fill).

    python benchmarks/soak.py --minutes 10     # results/soak.json + soak.png
"""
from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import psutil
import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from _common import machine, write_result  # noqa: E402
from load import ingest_samples  # noqa: E402

KEY = {"X-API-Key": "soak-key"}
OK = {200, 202, 429, 503}


def _tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def sample(pid: int) -> dict:
    rss = fds = 0
    procs = _tree(pid)
    for p in procs:
        try:
            rss += p.memory_info().rss
            fds += p.num_fds()
        except psutil.Error:  # a worker that just exited
            pass
    return {"rss_mb": round(rss / 2**20, 1), "fds": fds, "procs": len(procs)}


class Load:
    """The clients: each loops until ``stop``; outcomes are (kind, status-or-error)."""

    def __init__(self, url: str, questions: list[str]):
        self.url, self.questions = url, questions
        self.stop, self.outcomes = threading.Event(), Counter()
        self.lock = threading.Lock()

    def _note(self, kind: str, code) -> None:
        with self.lock:
            self.outcomes[(kind, code)] += 1

    def _ask(self, kind: str, k: int, send, pause_s: float) -> None:
        """One closed-loop client: ``send(client, body)`` gives the outcome to count."""
        with httpx.Client(timeout=120, headers=KEY) as c:
            while not self.stop.is_set():
                q = {"question": self.questions[k % len(self.questions)]}
                k += 1
                try:
                    self._note(kind, send(c, q))
                except httpx.HTTPError as err:
                    self._note(kind, type(err).__name__)
                self.stop.wait(pause_s)

    def query(self, k: int) -> None:
        self._ask("query", k, lambda c, q: c.post(f"{self.url}/v1/query", json=q).status_code,
                  0.2)

    def stream(self) -> None:
        def send(c: httpx.Client, q: dict):
            with c.stream("POST", f"{self.url}/v1/query/stream", json=q) as r:
                body = "".join(r.iter_text())
            return r.status_code if "event: error" not in body else "stream-error"
        self._ask("stream", 0, send, 0.5)

    def upload_delete(self) -> None:
        with httpx.Client(timeout=120, headers=KEY) as c:
            k = 0
            while not self.stop.is_set():
                note = f"Soak note {k}: the Vireo pump {k} ships from Gdansk.\n".encode()
                k += 1
                try:
                    r = c.post(f"{self.url}/v1/documents",
                               files=[("files", (f"soak{k}.txt", note, "text/plain"))])
                    self._note("upload", r.status_code)
                    if r.status_code == 202:
                        self._finish(c, r.json())
                except httpx.HTTPError as err:
                    self._note("upload", type(err).__name__)
                self.stop.wait(5)

    def _finish(self, c: httpx.Client, job: dict) -> None:
        """Wait for the job (past the end of the soak too, bounded), then delete."""
        deadline = time.monotonic() + 180
        while job["status"] in ("queued", "running") and time.monotonic() < deadline:
            time.sleep(1)
            job = c.get(f"{self.url}/v1/jobs/{job['job_id']}").json()
        if job["status"] == "done":
            doc = job["documents"][0]["doc_id"]
            self._note("delete", c.delete(f"{self.url}/v1/documents/{doc}").status_code)
        else:
            self._note("upload-job", job["status"])

    def start(self) -> list[threading.Thread]:
        threads = [threading.Thread(target=self.query, args=(i,)) for i in range(3)]
        threads += [threading.Thread(target=self.stream),
                    threading.Thread(target=self.upload_delete)]
        for t in threads:
            t.start()
        return threads


def _flat(series: list[dict], key: str) -> dict:
    n = len(series)
    warm = [s[key] for s in series[n // 4: n // 2]] or [series[0][key]]
    last = [s[key] for s in series[3 * n // 4:]] or [series[-1][key]]
    a, b = statistics.median(warm), statistics.median(last)
    return {"second_quarter_median": a, "last_quarter_median": b,
            "change_pct": round(100 * (b - a) / a, 2) if a else 0.0}


def plot(res: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s["t"] / 60 for s in res["samples"]]
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))
    ax[0].plot(t, [s["rss_mb"] for s in res["samples"]])
    ax[0].set(xlabel="minutes", ylabel="RSS of the server tree (MB)", title="memory")
    ax[1].plot(t, [s["fds"] for s in res["samples"]], color="tab:orange")
    ax[1].set(xlabel="minutes", ylabel="open file descriptors", title="fds")
    fig.suptitle(f"soak: {res['requests']} requests in {res['minutes']} min, "
                 f"{res['bad']} outside 200/202/429/503")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--rss-bound", type=float, default=10.0)
    ap.add_argument("--fd-bound", type=float, default=10.0)
    a = ap.parse_args()
    from docray.engine.samples import QUESTIONS
    from docray.serve_apps.milvus_server import free_port

    tmp = Path(tempfile.mkdtemp(prefix="docray-soak-"))
    data = tmp / "data"
    shutil.copytree(ingest_samples(REPO / ".bench" / "samples"), data)
    cfg, serve_cfg = tmp / "docray.yaml", tmp / "serve.yaml"
    cfg.write_text(yaml.safe_dump({"paths": {"data_dir": str(data)},
                                   "serve": {"api_keys": {"soak-key": "default"}}}))
    settings = yaml.safe_load((REPO / "configs/serve/local.yaml").read_text())
    serve_cfg.write_text(yaml.safe_dump(settings))
    port = free_port()
    url, log = f"http://127.0.0.1:{port}", tmp / "serve.log"
    docray = Path(sys.executable).with_name("docray")
    with open(log, "ab") as fh:
        proc = subprocess.Popen([str(docray), "serve", "--config", str(cfg), "--serve-config",
                                 str(serve_cfg), "--host", "127.0.0.1", "--port", str(port)],
                                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 300
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(1)
    load, samples, t0 = Load(url, list(QUESTIONS)), [], time.monotonic()
    threads = load.start()
    try:
        while time.monotonic() - t0 < a.minutes * 60:
            samples.append({"t": round(time.monotonic() - t0, 1), **sample(proc.pid)})
            time.sleep(5)
    finally:
        load.stop.set()
        for t in threads:
            t.join(180)
    pids = [p.pid for p in _tree(proc.pid)]
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(240)
    time.sleep(2)
    left = [p for p in pids if psutil.pid_exists(p) and
            psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    outcomes = {f"{k} {c}": n for (k, c), n in sorted(load.outcomes.items(), key=str)}
    bad = sum(n for (k, c), n in load.outcomes.items() if c not in OK)
    res = {"minutes": a.minutes, "machine": machine(), "requests": sum(load.outcomes.values()),
           "outcomes": outcomes, "bad": bad, "exit_code": code, "left_over": left,
           "rss": _flat(samples, "rss_mb"), "fds": _flat(samples, "fds"),
           "bounds_pct": {"rss": a.rss_bound, "fds": a.fd_bound}, "samples": samples}
    res["held"] = (bad == 0 and code == 0 and not left
                   and abs(res["rss"]["change_pct"]) <= a.rss_bound
                   and abs(res["fds"]["change_pct"]) <= a.fd_bound)
    path = write_result("soak", res)
    plot(res, path.with_suffix(".png"))
    print({k: res[k] for k in ("requests", "bad", "held", "rss", "fds", "left_over")})


if __name__ == "__main__":
    main()
