"""Multi-node ingestion on one machine: one Ray node against two, then a node lost midway.

A head node (``ray start --head`` on 127.0.0.1, engine/local_cluster.py) ingests the docs
alone (encoder unpinned); then a worker node with ``accel: 1`` joins and the same docs are
ingested with the encoder pinned to it (``ingest.encoder_resources``); then a second accel
node joins, and the node holding the encoder is SIGKILLed once the first document is
written. Each run is ``docray ingest`` in a subprocess joined to the cluster. Writes
benchmarks/results/multinode.json and multinode.png.

    python benchmarks/multinode.py [--corpus N]   # N small corpus PDFs besides the samples
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CORPUS, RESULTS, ROOT, machine, write_result  # noqa: E402

from docray.engine.config import config_from_dict  # noqa: E402
from docray.engine.index.catalog import Catalog  # noqa: E402
from docray.engine.ingest.snapshot import comparable, index_snapshot  # noqa: E402
from docray.engine.local_cluster import LocalCluster, cluster_state  # noqa: E402

WS = "bench"
ACCEL = {"accel": 1}


def _docs(tmp: Path, n_corpus: int) -> list[Path]:
    from docray.engine.samples import write_samples

    small = sorted(CORPUS.glob("*.pdf"), key=lambda p: p.stat().st_size)[:n_corpus] \
        if CORPUS.is_dir() else []
    return sorted(write_samples(tmp / "samples")) + small


def _cfg(path: Path, pinned: bool) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({
        "paths": {"data_dir": str(path.parent / "data"), "workspace": WS},
        "ingest": {"parse_concurrency": 2, "encoder_actors": 1, "commit_every_docs": 1,
                   "encoder_resources": ACCEL if pinned else {}}}))
    return path


def _driver(cluster: LocalCluster, docs: list[Path], cfg: Path) -> subprocess.Popen:
    env = cluster.env({**os.environ, "HF_HUB_OFFLINE": "1"})
    env.pop("DOCRAY_CONFIG", None)
    return subprocess.Popen([sys.executable, "-m", "docray.engine.cli", "ingest",
                             *map(str, docs), "--config", str(cfg), "--workspace", WS,
                             "--json"], stdout=subprocess.PIPE,
                            stderr=open(cfg.with_suffix(".log"), "wb"), env=env, text=True,
                            cwd=ROOT)


def _finish(proc: subprocess.Popen, cfg: Path, t0: float) -> dict:
    out, _ = proc.communicate(timeout=900)
    if proc.returncode:
        raise RuntimeError(cfg.with_suffix(".log").read_text()[-3000:])
    s = json.loads(out.strip().splitlines()[-1])
    wall = time.perf_counter() - t0
    return {"ok": s["ok"], "failed": s["failed"], "pages": s["pages"], "chunks": s["chunks"],
            "wall_s": round(wall, 1), "pages_per_s_wall": round(s["pages"] / wall, 3),
            "pipeline_s": round(s["seconds"], 1), "pages_per_s": round(s["pages_per_s"], 3)}


def _tasks_per_node(cluster: LocalCluster, seen: set[str]) -> dict[str, dict[str, int]]:
    """Finished tasks of this run (ids not seen before) per node and per operator."""
    state = cluster_state(cluster.env())
    names = {n["node_id"]: n["name"] for n in state["nodes"]}
    out: dict[str, Counter] = {}
    for t in state["tasks"]:
        key = (t["name"], t["node_id"], t["attempt"], t["actor_id"], t["state"])
        if key in seen or not t["node_id"]:
            continue
        seen.add(key)
        out.setdefault(names.get(t["node_id"], "?"), Counter())[t["name"].split("(")[0]] += 1
    encoders = [{"node": names.get(a["node_id"]), "state": a["state"],
                 "num_restarts": a["num_restarts"]}
                for a in state["actors"] if "EncodeActor" in (a["repr_name"] or "")]
    return {"tasks": {k: dict(v) for k, v in out.items()}, "encoder_actors": encoders}


def _run(cluster, docs, cfg: Path, seen: set) -> dict:
    t0 = time.perf_counter()
    result = _finish(_driver(cluster, docs, cfg), cfg, t0)
    result.update(_tasks_per_node(cluster, seen))
    return result


def _kill_trial(cluster: LocalCluster, docs: list[Path], cfg: Path, seen: set) -> dict:
    t0 = time.perf_counter()
    proc = _driver(cluster, docs, cfg)
    victim = None
    while victim is None and proc.poll() is None:
        state = cluster_state(cluster.env())
        names = {n["node_id"]: n["name"] for n in state["nodes"]}
        live = [a for a in state["actors"] if "EncodeActor" in (a["repr_name"] or "")
                and a["state"] == "ALIVE"]
        victim = names[live[0]["node_id"]] if live else None
    catalog = Catalog(cfg.parent / "data" / "catalog.sqlite")
    while proc.poll() is None and not catalog.list(WS, status="done"):
        time.sleep(0.1)
    done = len(catalog.list(WS, status="done"))
    killed_at = time.perf_counter() - t0
    cluster.kill(victim)
    result = _finish(proc, cfg, t0)
    result.update(_tasks_per_node(cluster, seen))
    result.update(killed_node=victim, killed_at_s=round(killed_at, 1),
                  docs_done_at_kill=done, docs=len(docs))
    return result


def _plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = ["one_node", "two_nodes", "worker_killed"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.bar(runs, [data[r]["pages_per_s_wall"] for r in runs], color=["#888", "#36c", "#c63"])
    a.set_ylabel("pages/s (driver wall clock)")
    a.set_title("Ingest throughput")
    nodes = ["head", "w1", "w2"]
    bottom = [0] * len(runs)
    for node in nodes:
        vals = [sum(data[r]["tasks"].get(node, {}).values()) for r in runs]
        b.bar(runs, vals, bottom=bottom, label=node)
        bottom = [x + y for x, y in zip(bottom, vals)]
    b.set_ylabel("finished Ray tasks")
    b.set_title("Where the work ran")
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=int, default=2, help="small corpus PDFs to add")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="docray-mnb-"))
    docs = _docs(tmp, args.corpus)
    cluster, seen = LocalCluster(Path(f"/tmp/docray-mnb-{os.getpid()}")), set()
    data: dict = {"machine": machine(), "docs": [d.name for d in docs]}
    try:
        cluster.start_head(num_cpus=2)
        data["one_node"] = _run(cluster, docs, _cfg(tmp / "one" / "c.yaml", False), seen)
        cluster.add_nodes({"w1": (1, ACCEL)})
        data["two_nodes"] = _run(cluster, docs, _cfg(tmp / "two" / "c.yaml", True), seen)
        cluster.add_nodes({"w2": (1, ACCEL)})
        data["worker_killed"] = _kill_trial(cluster, docs, _cfg(tmp / "kill" / "c.yaml", True),
                                            seen)
    finally:
        cluster.stop()
        shutil.rmtree(cluster.root, ignore_errors=True)
    snaps = {r: comparable(index_snapshot(config_from_dict(yaml.safe_load(
        (tmp / d / "c.yaml").read_text())), WS)) for r, d in
        (("one_node", "one"), ("two_nodes", "two"), ("worker_killed", "kill"))}
    data["indexes_equal_one_node"] = {r: snaps[r] == snaps["one_node"] for r in snaps}
    data["duplicates"] = {r: snaps[r]["duplicates"] for r in snaps}
    write_result("multinode", data)
    _plot(data, RESULTS / "multinode.png")
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({k: v for k, v in data.items() if k != "machine"}, indent=1))


if __name__ == "__main__":
    main()
