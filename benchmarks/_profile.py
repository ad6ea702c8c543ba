"""Ingestion profile: a process-tree sampler (RSS, PSS, CPU per process) and the per-stage
figures benchmarks/ingest.py reports from one run.

The figures:

* ``cpu_s_per_page``: CPU seconds per page of every stage, for text-layer and OCR pages.
  Parse is split page by page (the parser times each page's CPU); the other stages run
  per document, so they are split by document kind (documents whose pages are mostly OCR
  pages vs the rest).
* ``busy``: the share of wall time x cores the process tree spent on CPU at all
  (``tree``), and on the stages' own work (``useful``: stage CPU, writes included); the
  difference is Ray, serialization, thread spinning and idle waits' polling.
* ``workers``: peak RSS/PSS and CPU seconds per process kind (``ray::…`` titles).
"""
from __future__ import annotations

from typing import Any

import psutil

from _common import Sampler

_MB = 2 ** 20


def _label(proc: psutil.Process) -> str:
    try:
        cmd = proc.cmdline()
    except psutil.Error:
        return "?"
    if cmd and cmd[0].startswith("ray::"):  # ray::MapWorker(Map(EncodeActor)).submit
        title = cmd[0].split(" ")[0]
        return title[: title.rindex(")") + 1] if ")" in title else title
    name = proc.name()
    if name.startswith("python") and len(cmd) > 1:
        return "driver" if proc.pid == psutil.Process().pid else f"python {cmd[1].rsplit('/', 1)[-1]}"
    return name


class TreeSampler(Sampler):
    """Samples this process and its descendants every ``every_s``: peak summed RSS (the
    benchmark's historic figure; it counts shared pages, e.g. the object store, once per
    process that maps them), peak summed PSS (shares split), and per process its peak
    RSS/PSS and last CPU seconds."""

    def __init__(self, every_s: float = 0.5):
        self.every_s = every_s
        self.peak_rss = self.peak_pss = 0
        self.procs: dict[int, dict[str, Any]] = {}
        self.cpu0 = sum(psutil.Process().cpu_times()[:2])

    def _sample(self) -> None:
        me = psutil.Process()
        rss = pss = 0
        for proc in [me, *me.children(recursive=True)]:
            try:
                with proc.oneshot():
                    mem = proc.memory_full_info()
                    cpu = sum(proc.cpu_times()[:2])
                rec = self.procs.setdefault(proc.pid, {"label": "?", "rss": 0, "pss": 0,
                                                       "cpu": 0.0})
                label = _label(proc)
                if label not in ("ray::IDLE", "?") or rec["label"] == "?":
                    rec["label"] = label
            except psutil.Error:
                continue
            rec["rss"], rec["pss"] = max(rec["rss"], mem.rss), max(rec["pss"], mem.pss)
            rec["cpu"] = max(rec["cpu"], cpu)
            rss, pss = rss + mem.rss, pss + mem.pss
        self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)

    @property
    def tree_cpu_s(self) -> float:
        mine = psutil.Process().pid
        return sum(r["cpu"] - (self.cpu0 if pid == mine else 0.0) for pid, r in self.procs.items())

    def workers(self) -> dict[str, dict[str, Any]]:
        """Per process kind: how many, the largest peak RSS/PSS (MB), CPU seconds in all."""
        out: dict[str, dict[str, Any]] = {}
        for pid, r in self.procs.items():
            w = out.setdefault(r["label"], {"n": 0, "peak_rss_mb": 0.0, "peak_pss_mb": 0.0,
                                            "cpu_s": 0.0})
            w["n"] += 1
            w["peak_rss_mb"] = round(max(w["peak_rss_mb"], r["rss"] / _MB), 1)
            w["peak_pss_mb"] = round(max(w["peak_pss_mb"], r["pss"] / _MB), 1)
            w["cpu_s"] += r["cpu"] - (self.cpu0 if pid == psutil.Process().pid else 0.0)
        for w in out.values():
            w["cpu_s"] = round(w["cpu_s"], 1)
        return dict(sorted(out.items(), key=lambda kv: -kv[1]["cpu_s"]))


def _per_page(docs: list[dict[str, Any]], stage: str) -> float | None:
    pages = sum(d["pages"] for d in docs)
    if not pages:
        return None
    return round(sum(d["cpu"].get(stage, 0.0) for d in docs) / pages, 4)


def profile(summary: dict[str, Any], sampler: TreeSampler, wall_s: float, cores: int) -> dict:
    """The run's profile from its summary (per-document CPU) and the tree sampler."""
    docs = summary.get("documents") or []
    n_pages = sum(d["pages"] for d in docs)
    n_ocr = sum(d["ocr_pages"] for d in docs)
    ocr_docs = [d for d in docs if d["ocr_pages"] * 2 >= d["pages"]]
    text_docs = [d for d in docs if d["ocr_pages"] * 2 < d["pages"]]
    stages = sorted({k for d in docs for k in d["cpu"]})
    per_page = {"text_layer_docs": {"documents": len(text_docs),
                                    "pages": sum(d["pages"] for d in text_docs)},
                "ocr_docs": {"documents": len(ocr_docs),
                             "pages": sum(d["pages"] for d in ocr_docs)}}
    for s in stages:
        per_page["text_layer_docs"][s] = _per_page(text_docs, s)
        per_page["ocr_docs"][s] = _per_page(ocr_docs, s)
    text_cpu = sum(d["parse_text_cpu"] for d in docs)  # 0 for an engine without profiles
    ocr_cpu = sum(d["parse_ocr_cpu"] for d in docs)
    parts: dict[str, float] = {}
    for d in docs:
        for k, v in d["parse_parts"].items():
            parts[k] = parts.get(k, 0.0) + v
    stage_cpu = summary.get("stage_cpu_seconds") or {}
    useful = sum(stage_cpu.values())
    tree = sampler.tree_cpu_s
    return {
        "parse_cpu_s_per_page": {
            "text_layer": round(text_cpu / max(1, n_pages - n_ocr), 4),
            "ocr": round(ocr_cpu / n_ocr, 4) if n_ocr else None,
            "text_layer_pages": n_pages - n_ocr, "ocr_pages": n_ocr},
        "parse_parts_wall_s": {k: round(v, 1) for k, v in sorted(parts.items(),
                                                                 key=lambda kv: -kv[1])},
        "cpu_s_per_page": per_page,
        "stage_cpu_s": {k: round(v, 1) for k, v in stage_cpu.items()},
        "busy": {"cores": cores, "wall_s": round(wall_s, 1), "tree_cpu_s": round(tree, 1),
                 "useful_cpu_s": round(useful, 1),
                 "tree": round(tree / (wall_s * cores), 3),
                 "useful": round(useful / (wall_s * cores), 3)},
        "peak_pss_mb": round(sampler.peak_pss / _MB, 1),
        "workers": sampler.workers(),
    }
