"""Helpers for tests that run ``docray serve`` as a child process (tests/ is on sys.path
through its conftest)."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx


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
