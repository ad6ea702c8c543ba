"""What an ingestion run did, for the CLI table and ``--json``."""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator


@dataclass
class Summary:
    workspace: str
    ok: int = 0
    failed: int = 0
    skipped: int = 0
    pages: int = 0
    units: dict[str, int] = field(default_factory=dict)
    chunks: int = 0
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    stage_cpu_seconds: dict[str, float] = field(default_factory=dict, metadata={
        "doc": "CPU seconds per stage, summed over documents (the worker's threads)"})
    graph: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)
    llm_failures: list[dict[str, str]] = field(default_factory=list, metadata={
        "doc": "items a vLLM describe/extract pass could not serve (the deterministic "
               "backend stood in): file, stage, item, error"})
    documents: list[dict[str, Any]] = field(default_factory=list, metadata={
        "doc": "per document: pages, OCR pages, stage wall/CPU seconds (the profile's input)"})

    def add(self, result: dict[str, Any]) -> None:
        if result["status"] == "failed":
            self.failed += 1
            self.failures.append({"file": result["filename"], "error": result["error"]})
            return
        self.ok += 1
        self.llm_failures.extend(result.get("llm_failures") or [])
        self.pages += result["pages"]
        self.chunks += result["chunks"]
        for k, v in result["units"].items():
            self.units[k] = self.units.get(k, 0) + v
        for k, v in result["timings"].items():
            self.stage_seconds[k] = self.stage_seconds.get(k, 0.0) + v
        profile = result.get("profile")
        if profile:
            self.documents.append(profile)
            for k, v in profile["cpu"].items():
                self.stage_cpu_seconds[k] = self.stage_cpu_seconds.get(k, 0.0) + v

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Add the wall and CPU seconds (this thread's) of a driver-side step, e.g. the
        writes, to the stage totals."""
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            for acc, spent in ((self.stage_seconds, time.perf_counter() - t0),
                               (self.stage_cpu_seconds, time.thread_time() - c0)):
                acc[name] = acc.get(name, 0.0) + spent

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pages_per_s"] = round(self.pages_per_s, 3)
        return d
