"""Crash trials of `docray ingest` (the console script, on Ray Data) over a 6-document
corpus run that includes an OCR-only slide deck:

- driver trials: kill -9 the driver's whole session (the driver and the local Ray it
  started) at a random point, then run the same command again;
- worker trials: kill -9 one Ray worker process (`ray::…`) mid-run, let the run end, then
  run the command again.

After each resume the workspace's index snapshot (catalog rows and states, Milvus ids of
every collection, page-store and chunk-token rows, content counts, graph nodes/edges/docs;
engine/ingest/snapshot.py) must equal a clean run's, with no duplicate id, and no process
of the killed run and no lock file may be left.

    python benchmarks/crash.py --driver-trials 20 --worker-trials 5   # results/reliability.json
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine, write_result  # noqa: E402

CORPUS = HERE.parent.parent / "shared" / "corpus"
DOCS = ["AMCOR_2023Q4_EARNINGS.pdf", "ULTABEAUTY_2023Q4_EARNINGS.pdf", "1810.08699.pdf",
        "2001.03131.pdf", "f8d3a162ab9507e021d83dd109118b60.pdf",
        "0e94b4197b10096b1f4c699701570fbf.pdf"]  # the last: slides with no text layer
DOCRAY = str(Path(sys.executable).with_name("docray"))


def _workdir(root: Path, name: str) -> Path:
    d = root / name
    d.mkdir()
    (d / "docray.yaml").write_text(yaml.safe_dump({"paths": {"data_dir": str(d / "data")}}))
    return d


def _start(d: Path) -> subprocess.Popen:
    log = open(d / "ingest.log", "ab")  # noqa: SIM115 — closed with the process
    return subprocess.Popen([DOCRAY, "ingest", *[str(CORPUS / f) for f in DOCS], "--config",
                             str(d / "docray.yaml"), "--workspace", "crash", "--json"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})


def _snapshot(d: Path) -> dict:
    from docray.engine.config import config_from_dict
    from docray.engine.ingest.snapshot import comparable, index_snapshot

    cfg = config_from_dict({"paths": {"data_dir": str(d / "data")}})
    return json.loads(json.dumps(comparable(index_snapshot(cfg, "crash")), default=list))


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _alive(pids: list[int]) -> list[int]:
    out = []
    for p in pids:
        try:
            if psutil.Process(p).status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.Error:
            pass
    return out


def _locks(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in (d / "data").rglob("*.lock"))


def _resume_and_check(d: Path, clean: dict, pids: list[int], clean_locks: list[str]) -> dict:
    time.sleep(3)
    left = _alive(pids)
    for p in left:  # reported, then removed so the next trial starts clean
        try:
            psutil.Process(p).kill()
        except psutil.Error:
            pass
    t0 = time.monotonic()
    code = _start(d).wait(1800)
    snap = _snapshot(d)
    diff = sorted(k for k in clean if snap.get(k) != clean[k])
    return {"resume_exit": code, "resume_s": round(time.monotonic() - t0, 1),
            "equal": not diff, "differs_in": diff, "duplicates": snap["duplicates"],
            "left_over_processes": len(left), "extra_locks": sorted(set(_locks(d)) -
                                                                   set(clean_locks))}


def driver_trial(d: Path, at_s: float, clean: dict, clean_locks: list[str]) -> dict:
    proc = _start(d)
    time.sleep(at_s)
    pids = [p.pid for p in _tree(proc.pid)]
    finished = proc.poll() is not None
    if not finished:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    done = _done(d)
    return {"kind": "driver", "kill_at_s": round(at_s, 1), "finished_before_kill": finished,
            "docs_done_at_kill": done, **_resume_and_check(d, clean, pids, clean_locks)}


def worker_trial(d: Path, at_s: float, clean: dict, clean_locks: list[str],
                 rng: random.Random) -> dict:
    proc = _start(d)
    time.sleep(at_s)
    workers = [p for p in _tree(proc.pid) if p.name().startswith("ray::") and
               any(w in p.name() for w in ("Map", "Read", "Write", "Encode", "Parse"))]
    victim = rng.choice(workers) if workers else None
    name = victim.name() if victim else None
    if victim is not None:
        victim.kill()
    code = proc.wait(1800)
    pids = [p.pid for p in _tree(proc.pid)]
    return {"kind": "worker", "kill_at_s": round(at_s, 1), "killed": name,
            "run_exit": code, "docs_done_after_run": _done(d),
            **_resume_and_check(d, clean, pids, clean_locks)}


def _done(d: Path) -> int:
    from docray.engine.index.catalog import Catalog

    db = d / "data" / "catalog.sqlite"
    return len(Catalog(db).list("crash", status="done")) if db.exists() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--driver-trials", type=int, default=20)
    ap.add_argument("--worker-trials", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    root = Path(tempfile.mkdtemp(prefix="docray-crash-"))
    d = _workdir(root, "clean")
    t0 = time.monotonic()
    assert _start(d).wait(1800) == 0, (d / "ingest.log").read_text()[-2000:]
    clean_s = time.monotonic() - t0
    clean, clean_locks = _snapshot(d), _locks(d)
    trials: list[dict] = []

    def record(trial: dict) -> None:  # the results file is rewritten after every trial
        trials.append(trial)
        print(json.dumps(trial), flush=True)  # CLI progress
        held = [t["equal"] and not t["duplicates"] and not t["left_over_processes"]
                and not t["extra_locks"] and t["resume_exit"] == 0 for t in trials]
        write_result("reliability", {
            "docs": DOCS, "clean_run_s": round(clean_s, 1), "machine": machine(),
            "planned": {"driver": a.driver_trials, "worker": a.worker_trials},
            "clean": {k: clean[k] for k in ("catalog", "content", "graph")},
            "trials": trials, "held": sum(held), "of": len(trials)})

    for i in range(a.driver_trials):
        record(driver_trial(_workdir(root, f"d{i}"), rng.uniform(2, 0.95 * clean_s),
                            clean, clean_locks))
    for i in range(a.worker_trials):
        record(worker_trial(_workdir(root, f"w{i}"), rng.uniform(8, 0.8 * clean_s),
                            clean, clean_locks, rng))


if __name__ == "__main__":
    main()
