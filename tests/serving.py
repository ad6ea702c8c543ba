"""Helpers for tests that run ``docray serve`` as a child process (tests/ is on sys.path
through its conftest)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

DOCRAY = str(Path(sys.executable).with_name("docray"))  # the console script a user types


def wait_healthy(url: str, proc: subprocess.Popen, log: Path | None = None,
                 timeout_s: float = 240) -> None:
    """Poll ``/healthz`` until it answers 200; fail at once if the server process exits."""
    tail = lambda: log.read_text()[-3000:] if log else ""  # noqa: E731
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, tail()
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"docray serve not healthy in {timeout_s}s: {tail()}")


def serve_configs(tmp: Path, data: Path, api_keys: dict[str, str] | None = None,
                  **limits) -> tuple[Path, Path, dict]:
    """``docray.yaml`` over ``data`` and a ``serve.yaml`` from configs/serve/test.yaml on a
    free Milvus port with ``limits`` changed: (config, serve config, serve settings)."""
    import yaml

    from docray.serve_apps.milvus_server import free_port

    cfg = tmp / "docray.yaml"
    cfg.write_text(yaml.safe_dump({"paths": {"data_dir": str(data)},
                                   **({"serve": {"api_keys": api_keys}} if api_keys else {})}))
    settings = yaml.safe_load(Path("configs/serve/test.yaml").read_text())
    settings.update(milvus_port=free_port(), ray_num_cpus=4)
    settings["limits"].update(limits)
    serve_cfg = tmp / "serve.yaml"
    serve_cfg.write_text(yaml.safe_dump(settings))
    return cfg, serve_cfg, settings


class Server:
    """``docray serve`` in a child process of its own session, its output in ``log``."""

    def __init__(self, cfg: Path, serve_cfg: Path, port: int, log: Path):
        self.url, self.log = f"http://127.0.0.1:{port}", log
        with open(log, "ab") as fh:
            self.proc = subprocess.Popen(
                [DOCRAY, "serve", "--config", str(cfg), "--serve-config", str(serve_cfg),
                 "--host", "127.0.0.1", "--port", str(port)],
                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self) -> None:
        wait_healthy(self.url, self.proc, self.log)

    def kill(self) -> None:
        import psutil

        if self.proc.poll() is None:
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                child.kill()
            self.proc.kill()


def cluster_report(lines: int = 40) -> str:
    """What a failed Serve deploy leaves to read: memory (and the cgroup's cap), the largest
    processes, and the tails of the Serve controller's and the raylet's logs (the memory
    monitor's kills show there)."""
    import glob

    import psutil

    vm = psutil.virtual_memory()
    out = [f"memory: {vm.used >> 20} MiB used, {vm.available >> 20} MiB available of "
           f"{vm.total >> 20} MiB"]
    cap = Path("/sys/fs/cgroup/memory.max")
    if cap.exists():
        out.append(f"cgroup memory.max: {cap.read_text().strip()}")
    procs = sorted(psutil.process_iter(["pid", "name", "memory_info"]),
                   key=lambda p: p.info["memory_info"].rss if p.info["memory_info"] else 0)
    for p in procs[-8:]:
        rss = p.info["memory_info"].rss >> 20 if p.info["memory_info"] else 0
        out.append(f"  pid {p.info['pid']} {p.info['name']}: {rss} MiB")
    logs = sorted(glob.glob("/tmp/ray/session_latest/logs/serve/controller_*.log"),
                  key=os.path.getmtime)
    logs += glob.glob("/tmp/ray/session_latest/logs/raylet.out")
    for log in logs[-3:]:
        tail = Path(log).read_text(errors="replace").splitlines()[-lines:]
        out.append(f"--- {log} (last {len(tail)} lines)")
        out.extend(tail)
    return "\n".join(out)
