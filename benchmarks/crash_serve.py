"""Crash trials of the server's upload path: `docray serve` (the console script), one upload
of the 6 documents of benchmarks/crash.py (an OCR-only slide deck among them), and kill -9
of the Documents replica (`ray::ServeReplica:docray:Documents`) at a random point of the
job. Serve restarts the replica; the new one takes the job up again (its record still says
running) and the ingest resumes from the catalog.

Each trial then waits for the job to end, stops the server with SIGTERM, and compares the
workspace's index snapshot (engine/ingest/snapshot.py) with a clean server run's: equal,
no duplicate id, no process of the server left, no extra lock file. Results are added
under ``serve_trials`` in results/reliability.json (the driver and worker trials of
benchmarks/crash.py stay as they are).

    python benchmarks/crash_serve.py --trials 5
"""
from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import RESULTS, machine, write_result  # noqa: E402
from crash import CORPUS, DOCS, _alive, _locks  # noqa: E402

DOCRAY = str(Path(sys.executable).with_name("docray"))
WS = "default"  # no keys: uploads land in the default workspace


def _serve(d: Path) -> tuple[subprocess.Popen, str]:
    from docray.serve_apps.milvus_server import free_port

    d.mkdir()
    (d / "docray.yaml").write_text(yaml.safe_dump({"paths": {"data_dir": str(d / "data")}}))
    settings = yaml.safe_load((HERE.parent / "configs/serve/local.yaml").read_text())
    settings["milvus_port"] = free_port()
    (d / "serve.yaml").write_text(yaml.safe_dump(settings))
    port = free_port()
    with open(d / "serve.log", "ab") as fh:
        proc = subprocess.Popen([DOCRAY, "serve", "--config", str(d / "docray.yaml"),
                                 "--serve-config", str(d / "serve.yaml"), "--host", "127.0.0.1",
                                 "--port", str(port)], stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 300
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, \
            (d / "serve.log").read_text()[-3000:]
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(1)


def _upload(url: str) -> str:
    files = [("files", (f, (CORPUS / f).read_bytes(), "application/pdf")) for f in DOCS]
    r = httpx.post(f"{url}/v1/documents", files=files, timeout=120)
    assert r.status_code == 202, r.text
    return r.json()["job_id"]


def _wait_job(url: str, job_id: str, limit_s: float = 900) -> tuple[str, int]:
    """(final status, non-200 answers while polling: the replica restarting)."""
    deadline, errors = time.monotonic() + limit_s, 0
    while time.monotonic() < deadline:
        try:
            r = httpx.get(f"{url}/v1/jobs/{job_id}", timeout=30)
            if r.status_code == 200 and r.json()["status"] in ("done", "failed"):
                return r.json()["status"], errors
            errors += r.status_code != 200
        except httpx.HTTPError:
            errors += 1
        time.sleep(1)
    return "timeout", errors


def _stop(proc: subprocess.Popen) -> tuple[int, list[int]]:
    pids = [proc.pid, *(c.pid for c in psutil.Process(proc.pid).children(recursive=True))]
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(300)
    time.sleep(3)
    return code, _alive(pids)


def _snapshot(d: Path) -> dict:
    from docray.engine.config import config_from_dict
    from docray.engine.ingest.snapshot import comparable, index_snapshot

    cfg = config_from_dict({"paths": {"data_dir": str(d / "data")}})
    return json.loads(json.dumps(comparable(index_snapshot(cfg, WS)), default=list))


def _replica(proc: subprocess.Popen) -> psutil.Process | None:
    for p in psutil.Process(proc.pid).children(recursive=True):
        try:
            if "ServeReplica" in p.name() + " ".join(p.cmdline()) and \
                    "Documents" in p.name() + " ".join(p.cmdline()):
                return p
        except psutil.Error:
            continue
    return None


def trial(d: Path, at_s: float, clean: dict, clean_locks: list[str]) -> dict:
    proc, url = _serve(d)
    job_id, t0 = _upload(url), time.monotonic()
    time.sleep(at_s)
    victim = _replica(proc)
    if victim is not None:
        victim.kill()
    status, errors = _wait_job(url, job_id)
    job_s = time.monotonic() - t0
    code, left = _stop(proc)
    snap = _snapshot(d)
    diff = sorted(k for k in clean if snap.get(k) != clean[k])
    return {"kind": "documents_replica", "kill_at_s": round(at_s, 1),
            "killed": victim is not None, "job_status": status, "job_s": round(job_s, 1),
            "poll_errors": errors, "server_exit": code, "equal": not diff, "differs_in": diff,
            "duplicates": snap["duplicates"], "left_over_processes": len(left),
            "extra_locks": sorted(set(_locks(d)) - set(clean_locks))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng, root = random.Random(a.seed), Path(tempfile.mkdtemp(prefix="docray-crash-serve-"))
    proc, url = _serve(root / "clean")
    t0 = time.monotonic()
    status, _ = _wait_job(url, _upload(url))
    clean_s = time.monotonic() - t0
    assert status == "done" and _stop(proc)[0] == 0, (root / "clean" / "serve.log")
    clean, clean_locks = _snapshot(root / "clean"), _locks(root / "clean")
    path = RESULTS / "reliability.json"
    res = json.loads(path.read_text()) if path.exists() else {}
    trials: list[dict] = []
    for i in range(a.trials):
        trials.append(trial(root / f"s{i}", rng.uniform(3, 0.9 * clean_s), clean, clean_locks))
        print(json.dumps(trials[-1]), flush=True)  # CLI progress
        held = [t["killed"] and t["job_status"] == "done" and t["equal"] and not t["duplicates"]
                and not t["left_over_processes"] and not t["extra_locks"]
                and t["server_exit"] == 0 for t in trials]
        res["serve_trials"] = {"clean_job_s": round(clean_s, 1), "machine": machine(),
                               "planned": a.trials, "trials": trials, "held": sum(held),
                               "of": len(trials)}
        write_result("reliability", res)


if __name__ == "__main__":
    main()
