"""Shared helpers for the benchmarks: paths, RSS sampling, result writing."""
from __future__ import annotations

import json
import platform
import threading
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CORPUS = ROOT.parent / "shared" / "corpus"
QA = ROOT.parent / "shared" / "eval" / "qa.jsonl"


class Sampler:
    """A background thread that calls ``_sample()`` every ``every_s`` while the ``with``
    block runs, and once more at its end."""

    every_s = 0.5

    def _sample(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            time.sleep(self.every_s)

    def __enter__(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._sample()
        self._stop.set()
        self._thread.join()


class PeakRSS(Sampler):
    """Samples the RSS of this process and all its descendants (Ray workers included)."""

    def __init__(self, every_s: float = 0.5):
        self.every_s, self.peak = every_s, 0

    def _sample(self) -> None:
        me = psutil.Process()
        total = me.memory_info().rss
        for child in me.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                pass
        self.peak = max(self.peak, total)

    @property
    def peak_mb(self) -> float:
        return round(self.peak / 2**20, 1)


def machine() -> dict[str, Any]:
    return {"cpus": psutil.cpu_count(), "ram_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "python": platform.python_version(), "when": time.strftime("%Y-%m-%d %H:%M:%S")}


def write_result(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=1))
    return path
