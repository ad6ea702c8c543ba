"""The ``milvus-lite server`` that ``docray serve`` starts dies with the process that
started it, however that process dies: an orphan would hold the db lock and the next
``docray serve`` on the same data dir would fail to start."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from docray.serve_apps.milvus_server import MilvusLiteServer, free_port, port_open

PARENT = """
import json, sys, time
from docray.serve_apps.milvus_server import MilvusLiteServer
server = MilvusLiteServer(sys.argv[1], int(sys.argv[2]))
server.start()
print(json.dumps({"pid": server.proc.pid}), flush=True)
time.sleep(600)
"""


def _gone(pid: int, timeout_s: float) -> bool:
    try:
        psutil.Process(pid).wait(timeout_s)
    except psutil.NoSuchProcess:
        return True
    except psutil.TimeoutExpired:
        return False
    return True


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGABRT], ids=["SIGKILL", "SIGABRT"])
def test_the_server_dies_when_its_parent_is_killed(tmp_path, how):
    port = free_port()
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path / "m.db"), str(port)],
                              stdout=subprocess.PIPE, text=True)
    server_pid = None
    try:
        server_pid = json.loads(parent.stdout.readline())["pid"]
        assert psutil.pid_exists(server_pid) and port_open(port)
        os.kill(parent.pid, how)  # no finally, no atexit: only the kernel can clean up
        parent.wait(10)
        assert _gone(server_pid, 15), "milvus-lite server outlived the process that started it"
        deadline = time.monotonic() + 5
        while port_open(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not port_open(port)
        # the db is free again: a new server on it starts
        with MilvusLiteServer(tmp_path / "m.db", free_port()) as again:
            assert port_open(again.port)
    finally:
        parent.kill()
        parent.wait(10)
        if server_pid is not None and psutil.pid_exists(server_pid):
            psutil.Process(server_pid).kill()  # an orphan of a failed run: not left behind
