"""A multi-node Ray cluster on this machine's loopback: ``ray start`` head + worker nodes.

For the multi-node test and benchmark, and for trying the cluster profile on one machine.
Every node runs ``ray start --block`` in its own process group, so one node is stopped
(or killed mid-run) by signalling its group, and nobody else's Ray is touched
(``ray stop`` would stop every Ray on the machine).

Loopback only. Ray rewrites ``127.0.0.1`` to the machine's routable address, binds every
port to all interfaces and turns token authentication on, unless
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` ("local mode") is set; in local mode every socket is
bound to 127.0.0.1, but ``ray start --address`` refuses to add a worker node. Worker nodes
therefore start through ``python -m docray.engine.local_cluster start ...``: Ray's own
``ray start`` with that one refusal lifted (:func:`_ray_start_main`). Each cluster gets its
own random auth token (``RAY_AUTH_TOKEN``) in the environment of its nodes and drivers.

Drivers join with :meth:`LocalCluster.env` (``DOCRAY__RAY__ADDRESS`` and the Ray variables
above); one process can be a driver of one cluster only, so they run as subprocesses.
"""
from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docray.engine.errors import Unavailable

log = logging.getLogger(__name__)
HOST = "127.0.0.1"
LABEL = "docray-node"  # node label: the name given to the node here


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


@dataclass
class Node:
    name: str
    proc: subprocess.Popen
    log_file: Path
    num_cpus: int
    resources: dict[str, float]

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass
class LocalCluster:
    """``root`` is the cluster's own ``--temp-dir`` (keep it short: Ray puts socket paths
    under it, and those are limited to 107 bytes)."""

    root: Path
    object_store_mb: int = 96
    nodes: dict[str, Node] = field(default_factory=dict)
    port: int = 0
    _token: str = field(default_factory=lambda: secrets.token_hex(32))

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """Environment for a node or a driver of this cluster."""
        env = dict(os.environ if base is None else base)
        for key in ("RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH"):
            env.pop(key, None)
        env.update({"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token",
                    "RAY_AUTH_TOKEN": self._token, "RAY_USAGE_STATS_ENABLED": "0",
                    "DOCRAY__RAY__ADDRESS": self.address})
        return env

    def start_head(self, num_cpus: int, resources: dict[str, float] | None = None,
                   timeout_s: float = 90.0) -> str:
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        args = ["--head", f"--node-ip-address={HOST}", f"--port={self.port}",
                f"--temp-dir={self.root}", "--include-dashboard=true",
                f"--dashboard-host={HOST}", f"--dashboard-port={_free_port()}",
                f"--ray-client-server-port={_free_port()}"]
        env = self.env()
        # The dashboard process serves Ray's state API (ray.util.state, `ray list`), which
        # the tests read; its UI is not used. It and the autoscaler monitor export metrics
        # on fixed default ports; give this cluster its own.
        env.update(AUTOSCALER_METRIC_PORT=str(_free_port()),
                   DASHBOARD_METRIC_PORT=str(_free_port()))
        self._start("head", args, num_cpus, resources or {}, env, timeout_s)
        return self.address

    def add_nodes(self, specs: dict[str, tuple[int, dict[str, float]]],
                  timeout_s: float = 120.0) -> list[Node]:
        """Worker nodes ``{name: (num_cpus, resources)}``, one after the other (joining
        side by side timed out against a busy GCS on 2 cores); a node that fails to join
        is started once more."""
        if not self.port:
            raise ValueError("start the head node first")
        args = [f"--address={self.address}", f"--node-ip-address={HOST}"]
        nodes = []
        for name, (cpus, res) in specs.items():
            try:
                nodes.append(self._start(name, args, cpus, res, self.env(), timeout_s))
            except Unavailable as err:
                log.warning("ray node %s did not join (%s); starting it again", name, err)
                self.kill(name)
                del self.nodes[name]
                nodes.append(self._start(name, args, cpus, res, self.env(), timeout_s))
        return nodes

    def _start(self, name: str, args: list[str], num_cpus: int, resources: dict[str, float],
               env: dict[str, str], timeout_s: float) -> Node:
        node = self._spawn(name, args, num_cpus, resources, env)
        self._wait_started(node, timeout_s)
        return node

    def _spawn(self, name: str, args: list[str], num_cpus: int, resources: dict[str, float],
               env: dict[str, str]) -> Node:
        """``ray start --block`` in a new session: the node is one process group. The node
        carries the label ``docray-node=<name>`` so state readers can tell nodes apart."""
        if name in self.nodes:
            raise ValueError(f"node {name!r} already exists")
        cmd = [sys.executable, "-m", "docray.engine.local_cluster", "start", *args,
               f"--num-cpus={num_cpus}", f"--resources={json.dumps(resources)}",
               f"--labels={LABEL}={name}",
               f"--object-store-memory={self.object_store_mb << 20}",
               f"--dashboard-agent-listen-port={_free_port()}",
               f"--runtime-env-agent-port={_free_port()}",
               f"--metrics-export-port={_free_port()}", "--disable-usage-stats", "--block"]
        log_file = self.root / f"{name}.log"
        with open(log_file, "ab") as fh:
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True)
        node = self.nodes[name] = Node(name, proc, log_file, num_cpus, resources)
        log.info("ray node %s starting (pid %d, %s)", name, proc.pid, resources)
        return node

    def _wait_started(self, node: Node, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text = node.log_file.read_text(errors="replace")
            if "Ray runtime started" in text:
                return
            if not node.alive:
                raise Unavailable(f"ray node {node.name} exited with {node.proc.returncode}: "
                                  f"{text[-2000:]}")
            time.sleep(0.25)
        self.kill(node.name)
        raise Unavailable(f"ray node {node.name} did not start in {timeout_s}s; "
                          f"see {node.log_file}")

    def kill(self, name: str, sig: int = signal.SIGKILL, timeout_s: float = 15.0) -> None:
        """Signal the node's whole process group (its raylet, workers, agents)."""
        node = self.nodes[name]
        try:
            os.killpg(node.proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            node.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(node.proc.pid, signal.SIGKILL)
            node.proc.wait(timeout_s)
        _reap_group(node.proc.pid)

    def stop(self) -> None:
        """Stop every node (workers first), then remove nothing: logs stay in ``root``."""
        for name in sorted(self.nodes, key=lambda n: n == "head"):
            if self.nodes[name].alive or _group_alive(self.nodes[name].proc.pid):
                self.kill(name, signal.SIGTERM, timeout_s=10.0)

    def __enter__(self) -> "LocalCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _reap_group(pgid: int, timeout_s: float = 10.0) -> None:
    """Children of the node leader that outlived it (re-parented) get SIGKILL."""
    deadline = time.monotonic() + timeout_s
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _group_alive(pgid):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _ray_start_main(argv: list[str]) -> None:
    """``ray start`` in local mode, allowed to join a head (see the module docstring)."""
    import types

    import ray._private.ray_constants as constants
    import ray.scripts.scripts as scripts

    view = types.ModuleType(constants.__name__)
    view.__dict__.update(constants.__dict__)
    view.ENABLE_RAY_CLUSTER = True  # only the CLI's refusal reads this view
    scripts.ray_constants = view
    sys.argv = [shutil.which("ray") or "ray", *argv]
    scripts.main()


def cluster_state(env: dict[str, str], timeout_s: float = 120.0) -> dict[str, Any]:
    """Nodes, actors and tasks of the cluster in ``env``, read by a subprocess that joins
    it (Ray's state API, :mod:`ray.util.state`)."""
    out = subprocess.run([sys.executable, "-m", "docray.engine.local_cluster", "state"],
                         env=env, capture_output=True, text=True, timeout=timeout_s)
    if out.returncode != 0:
        raise Unavailable(f"cluster state probe failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _state_main() -> None:
    import ray
    from ray.util import state

    address = os.environ["DOCRAY__RAY__ADDRESS"]
    ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
    nodes = [{"node_id": n["NodeID"], "alive": n["Alive"], "resources": n["Resources"],
              "name": (n.get("Labels") or {}).get(LABEL)} for n in ray.nodes()]
    actors = [{"actor_id": a.actor_id, "class_name": a.class_name, "name": a.name,
               "repr_name": a.repr_name, "state": a.state, "node_id": a.node_id,
               "num_restarts": a.num_restarts, "resources": a.required_resources}
              for a in state.list_actors(address=address, detail=True, limit=10_000, raise_on_missing_output=False)]
    tasks = [{"name": t.name, "state": t.state, "node_id": t.node_id, "type": t.type,
              "attempt": t.attempt_number, "actor_id": t.actor_id}
             for t in state.list_tasks(address=address, detail=True, limit=10_000, raise_on_missing_output=False)]
    sys.stdout.write(json.dumps({"nodes": nodes, "actors": actors, "tasks": tasks}) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["state"]:
        _state_main()
    else:
        _ray_start_main(sys.argv[1:])
