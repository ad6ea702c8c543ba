"""Multi-node Ray on this machine: a head and two accelerator-standing nodes on 127.0.0.1.

The ingest driver (``docray ingest``) and the Serve app (``docray serve``) run as
subprocesses joined to that cluster: this pytest process already drives its own local Ray.
Placement is read back from Ray's state API; the indexes are compared with a single-node
run of the same files; the last test kills the node holding the encoder mid-ingest.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from docray.engine.config import config_from_dict
from docray.engine.errors import ConfigError
from docray.engine.index.catalog import Catalog
from docray.engine.ingest.snapshot import comparable, index_snapshot, max_vector_diff
from docray.engine.local_cluster import LocalCluster, cluster_state
from docray.serve_apps.milvus_server import free_port
from docray.serve_apps.settings import ServeSettings
from serving import wait_healthy

REPO = Path(__file__).resolve().parents[2]
WS = "mn"
ACCEL = {"accel": 1}
TOPICS = ["Solar arrays in the Atacama desert", "Grid batteries in South Australia",
          "Offshore wind in the North Sea", "Heat pumps in Scandinavian homes",
          "Hydrogen storage in salt caverns"]
LONG_PAGES = 60


def test_custom_resources_are_validated():
    assert config_from_dict({"ingest": {"encoder_resources": ACCEL}}).ingest.encoder_resources \
        == {"accel": 1.0}
    with pytest.raises(ConfigError, match="'GPU'.*num_gpus"):
        config_from_dict({"ingest": {"encoder_resources": {"GPU": 1}}})
    with pytest.raises(ValueError, match="'accel'.*must be > 0"):
        ServeSettings.model_validate({"stages": {"pages": {"resources": {"accel": 0}}}})
    opts = ServeSettings.model_validate({"stages": {"pages": {"resources": {"accel": 0.5}}}}
                                        ).stage("pages").deployment_options("pages")
    assert opts["ray_actor_options"]["resources"] == {"accel": 0.5}


def _report(path: Path, title: str, n_pages: int) -> Path:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    for p in range(n_pages):
        c.setFont("Helvetica-Bold", 14)
        c.drawString(72, 720, f"{title}, part {p + 1}")
        c.setFont("Helvetica", 11)
        for i in range(14):
            c.drawString(72, 690 - 16 * i, f"{title}: site {p}.{i} delivered {40 + 3 * i + p} "
                         f"megawatts in {2015 + i % 9}, operated by firm {chr(65 + i)}.")
        c.showPage()
    c.save()
    return path


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> list[Path]:
    from docray.engine.samples import write_samples

    root = tmp_path_factory.mktemp("mn_docs")
    extra = [_report(root / f"energy_{i}.pdf", t, 3) for i, t in enumerate(TOPICS)]
    # One long report keeps a parse worker busy well after the short documents are done,
    # so the kill in the last test always lands while the ingest is still running.
    extra.append(_report(root / "energy_long.pdf", "Tidal power in the Bay of Fundy", LONG_PAGES))
    return sorted(write_samples(root)) + extra


def _cfg_dict(data_dir: Path, pinned: bool) -> dict:
    return {"paths": {"data_dir": str(data_dir), "workspace": WS},
            "ingest": {"parse_concurrency": 2, "encoder_actors": 1, "commit_every_docs": 1,
                       "encoder_resources": ACCEL if pinned else {}}}


def _write_cfg(path: Path, data_dir: Path, pinned: bool = True) -> Path:
    path.write_text(yaml.safe_dump(_cfg_dict(data_dir, pinned)))
    return path


@pytest.fixture(scope="module")
def cluster():
    """Head (2 CPUs) + w1, w2 (1 CPU and accel: 1 each); torn down whatever happens."""
    lc = LocalCluster(Path(f"/tmp/docray-mn-{os.getpid()}"))
    try:
        lc.start_head(num_cpus=2)
        lc.add_nodes({"w1": (1, ACCEL), "w2": (1, ACCEL)})
        yield lc
    finally:
        lc.stop()
        shutil.rmtree(lc.root, ignore_errors=True)


def _driver(cluster: LocalCluster, docs: list[Path], cfg_path: Path, log: Path):
    env = cluster.env({**os.environ, "HF_HUB_OFFLINE": "1"})
    env.pop("DOCRAY_CONFIG", None)
    cmd = [sys.executable, "-m", "docray.engine.cli", "ingest", *map(str, docs),
           "--config", str(cfg_path), "--workspace", WS, "--json"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=open(log, "wb"), env=env,
                            text=True, cwd=REPO)


def _summary(proc: subprocess.Popen, log: Path, timeout_s: float = 240) -> dict:
    out, _ = proc.communicate(timeout=timeout_s)
    assert proc.returncode == 0, log.read_text()[-3000:]
    # the summary is the last JSON line: Ray's log monitor may print raylet notes after it
    # (a node is killed in one test)
    return json.loads(next(line for line in reversed(out.strip().splitlines())
                           if line.startswith("{")))


def _names(state: dict) -> dict[str, str]:
    return {n["node_id"]: n["name"] for n in state["nodes"]}


def _encoder_actors(state: dict) -> list[dict]:
    return [a for a in state["actors"] if "EncodeActor" in (a["repr_name"] or "")]


@pytest.fixture(scope="module")
def single_node(ray_cluster, docs, tmp_path_factory):
    """The same files on the session's one-node Ray (encoder not pinned)."""
    from docray.engine.ingest import ingest

    cfg = config_from_dict(_cfg_dict(tmp_path_factory.mktemp("single") / "data", False))
    summary = ingest(docs, cfg, WS)
    assert (summary.ok, summary.failed) == (len(docs), 0)
    return index_snapshot(cfg, WS)


@pytest.fixture(scope="module")
def clean_run(cluster, docs, tmp_path_factory):
    root = tmp_path_factory.mktemp("multi")
    cfg_path = _write_cfg(root / "docray.yaml", root / "data")
    summary = _summary(_driver(cluster, docs, cfg_path, root / "driver.log"), root / "driver.log")
    state = cluster_state(cluster.env())
    cfg = config_from_dict(yaml.safe_load(cfg_path.read_text()))
    return {"summary": summary, "state": state, "snapshot": index_snapshot(cfg, WS),
            "cfg_path": cfg_path}


def test_ingest_runs_on_both_nodes_and_matches_one_node(clean_run, single_node, docs):
    assert (clean_run["summary"]["ok"], clean_run["summary"]["failed"]) == (len(docs), 0)
    state, names = clean_run["state"], _names(clean_run["state"])
    encoders = _encoder_actors(state)
    assert encoders and {names[a["node_id"]] for a in encoders} <= {"w1", "w2"}
    assert all(a["resources"].get("accel") == 1 for a in encoders)
    ran = {names.get(t["node_id"]) for t in state["tasks"]
           if t["state"] == "FINISHED" and t["node_id"]}
    assert "head" in ran and ran & {"w1", "w2"}, ran
    multi = clean_run["snapshot"]
    assert multi["duplicates"] == {}
    assert comparable(multi) == comparable(single_node)
    assert len(multi["catalog"]) == len(docs) and multi["milvus"]["chunks"]
    assert max_vector_diff(multi, single_node) < 1e-2


@pytest.fixture()
def serve_cfg(clean_run, tmp_path) -> tuple[Path, Path, int]:
    settings = yaml.safe_load((REPO / "configs/serve/multinode.yaml").read_text())
    settings["milvus_port"] = free_port()
    path = tmp_path / "serve.yaml"
    path.write_text(yaml.safe_dump(settings))
    # A copy: this process opened the clean run's milvus-lite db and holds its lock.
    data = tmp_path / "data"
    shutil.copytree(clean_run["cfg_path"].parent / "data", data)
    return _write_cfg(tmp_path / "docray.yaml", data), path, free_port()


def test_serve_replicas_on_both_nodes(cluster, serve_cfg, tmp_path):
    from docray.engine.samples import QUESTIONS

    cfg_path, serve_path, port = serve_cfg
    env = cluster.env({**os.environ, "HF_HUB_OFFLINE": "1"})
    log = tmp_path / "serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "docray.engine.cli", "serve", "--config",
                             str(cfg_path), "--serve-config", str(serve_path), "--port",
                             str(port)], stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                            env=env, cwd=REPO, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, log, timeout_s=180)
        r = httpx.post(f"{url}/v1/query", json={"question": QUESTIONS[0]}, timeout=120)
        assert r.status_code == 200, r.text
        body = r.json()
        assert not body["abstained"] and "58.9" in body["answer"]
        assert any("northwind" in e["doc"].lower() for e in body["evidence"]), body["evidence"]
        state = cluster_state(cluster.env())
    finally:
        proc.terminate()
        try:
            proc.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(10)
    names = _names(state)
    replicas = [a for a in state["actors"] if a["class_name"].startswith("ServeReplica:docray")
                and a["state"] == "ALIVE"]
    where = {a["class_name"].rsplit(":", 1)[1]: names[a["node_id"]] for a in replicas}
    assert where["PageRetrieval"] in {"w1", "w2"} and where["Rerank"] in {"w1", "w2"}, where
    assert where["Ingress"] == "head" and where["DenseSearch"] == "head", where


def test_worker_killed_mid_ingest_finishes_on_what_is_left(cluster, docs, single_node,
                                                           tmp_path):
    """The encoder's node is SIGKILLed once a first document is written; its actor
    restarts on the other accel node and the run ends with the single-node indexes."""
    cfg_path = _write_cfg(tmp_path / "docray.yaml", tmp_path / "data")
    log = tmp_path / "driver.log"
    proc = _driver(cluster, docs, cfg_path, log)
    victim = _encoder_node(cluster, proc, log)
    catalog = Catalog(tmp_path / "data" / "catalog.sqlite")
    deadline = time.monotonic() + 180
    while not catalog.list(WS, status="done") and time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        time.sleep(0.1)
    done_at_kill = len(catalog.list(WS, status="done"))
    cluster.kill(victim)
    assert 1 <= done_at_kill < len(docs), "the ingest was not in progress at the kill"
    summary = _summary(proc, log)
    assert (summary["ok"], summary["failed"]) == (len(docs), 0)
    state = cluster_state(cluster.env())
    names = _names(state)
    alive = {n["name"] for n in state["nodes"] if n["alive"]}
    assert victim not in alive and {"head"} < alive
    restarted = [a for a in _encoder_actors(state) if a["num_restarts"] >= 1]
    assert restarted and all(names[a["node_id"]] != victim for a in restarted), restarted
    snap = index_snapshot(config_from_dict(yaml.safe_load(cfg_path.read_text())), WS)
    assert snap["duplicates"] == {}
    assert comparable(snap) == comparable(single_node)


def _encoder_node(cluster: LocalCluster, proc: subprocess.Popen, log: Path,
                  timeout_s: float = 180) -> str:
    """The node name of the (pinned) encoder actor of the running ingest: the node whose
    ``ray start`` process is an ancestor of the worker titled after the actor. Read from the process table
    (milliseconds), not Ray's state API: a state probe joins the cluster from a new
    process (seconds on 2 busy cores), and the whole ingest takes about 14 s."""
    import psutil

    groups = {n.proc.pid: name for name, n in cluster.nodes.items()}
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        for p in psutil.process_iter(["pid", "cmdline"]):
            try:
                if "DocEncodeActor" in " ".join(p.info["cmdline"] or []):
                    # a worker is its own process group; its raylet's parent is the node
                    name = next((groups[a.pid] for a in p.parents() if a.pid in groups), None)
                    if name:
                        return name
            except psutil.Error:
                continue
        time.sleep(0.05)
    raise AssertionError("no encoder actor came up")
