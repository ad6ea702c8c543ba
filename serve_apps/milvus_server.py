"""Start and stop a ``milvus-lite server`` so several processes share one milvus-lite db.

A milvus-lite db folder can be opened by one process only; the Serve deployments and the
upload ingestion each need a client, so docray runs the db behind ``milvus-lite server``
bound to 127.0.0.1 (its default, 0.0.0.0, would expose it) and hands everyone
``http://127.0.0.1:PORT``. The db stays where it was, in ``data_dir``.
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

from docray.engine.config import DocrayConfig
from docray.engine.errors import Unavailable

log = logging.getLogger(__name__)
HOST = "127.0.0.1"
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _libc_prctl():
    """libc's ``prctl``, looked up here in the parent: after a fork in a threaded process
    the child should run as little as possible (no dlopen) before it execs."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with_parent(prctl, parent: int) -> None:
    """In the child, before exec: the kernel sends SIGTERM when the process that started us
    dies, however it dies (a driver aborted by Ray's GCS, a SIGKILL), so no orphan keeps
    the db locked for the next start."""
    prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:  # it died between the fork and the prctl
        os._exit(1)


def is_file_uri(uri: str) -> bool:
    return not uri.startswith(("http://", "https://", "tcp://", "unix:"))


def db_path(cfg: DocrayConfig) -> Path:
    uri = Path(cfg.milvus.uri)
    return uri if uri.is_absolute() else Path(cfg.paths.data_dir) / uri


def port_open(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class MilvusLiteServer:
    """One ``milvus-lite server`` child process; a context manager."""

    def __init__(self, db: str | Path, port: int, log_file: str | Path | None = None,
                 threads: int = 1):
        self.db, self.port, self.threads = Path(db), int(port), int(threads)
        self.log_file = Path(log_file) if log_file else self.db.with_name("milvus-server.log")
        self.proc: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"http://{HOST}:{self.port}"

    def _command(self) -> list[str]:
        exe = shutil.which("milvus-lite") or str(Path(sys.executable).with_name("milvus-lite"))
        return [exe, "server", "--data-dir", str(self.db), "--host", HOST,
                "--port", str(self.port)]

    def _env(self) -> dict[str, str]:
        """Threads per search inside the server (its faiss and OpenBLAS use OpenMP).
        Requests from several replicas already run side by side; more threads per search
        only add pool threads that spin between calls."""
        n = str(self.threads)
        return {**os.environ, "OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n}

    def start(self, timeout_s: float = 30.0) -> str:
        if port_open(self.port):
            raise Unavailable(f"port {self.port} on {HOST} is already in use; "
                              "set milvus_port in the serve config")
        self.db.parent.mkdir(parents=True, exist_ok=True)
        # The parent-death signal follows the thread that forks, not the process: only the
        # main thread, which lives as long as the process, may ask for it
        prctl = (_libc_prctl() if sys.platform == "linux"
                 and threading.current_thread() is threading.main_thread() else None)
        on_parent_death = partial(_die_with_parent, prctl, os.getpid()) if prctl else None
        with open(self.log_file, "ab") as fh:
            self.proc = subprocess.Popen(self._command(), stdout=fh, stderr=subprocess.STDOUT,
                                         start_new_session=True, env=self._env(),
                                         preexec_fn=on_parent_death)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Unavailable(f"milvus-lite server exited with {self.proc.returncode}; "
                                  f"see {self.log_file}")
            if port_open(self.port):
                log.info("milvus-lite server for %s on %s (pid %d)", self.db, self.uri,
                         self.proc.pid)
                return self.uri
            time.sleep(0.1)
        self.stop()
        raise Unavailable(f"milvus-lite server did not listen on {self.uri} in {timeout_s}s")

    def stop(self, timeout_s: float = 10.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout_s)
        log.info("milvus-lite server on port %d stopped", self.port)

    def __enter__(self) -> "MilvusLiteServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def shared_milvus(cfg: DocrayConfig, port: int,
                  threads: int = 1) -> tuple[DocrayConfig, MilvusLiteServer | None]:
    """The config every process should use, plus the server to start (None when the
    config already names a Milvus server URI)."""
    if not is_file_uri(cfg.milvus.uri):
        return cfg, None
    server = MilvusLiteServer(db_path(cfg), port or free_port(), threads=threads)
    shared = cfg.model_copy(deep=True)
    shared.milvus.uri = server.uri
    return shared, server
