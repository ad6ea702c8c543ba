"""Ingestion benchmark over the corpus: Ray Data pipeline vs the same stages in-process.

    python benchmarks/ingest.py                 # full corpus (60 PDFs, 2,688 pages)
    python benchmarks/ingest.py --limit 10      # first 10 documents
    python benchmarks/ingest.py --skip-local    # Ray only
    python benchmarks/ingest.py --files 0e94b --files 1705 --name ingest_sub \
        --set ingest.encoder_threads=1           # a subset, a config override, own result

Writes benchmarks/results/<name>.json and <name>.png (default ``ingest``): end-to-end
pages/s, seconds per stage (summed over documents), peak RSS of the process tree, page
coverage of the three indexes (page store, Milvus chunks, graph), and the profile of
benchmarks/_profile.py (CPU seconds per page per stage, text-layer vs OCR pages; how busy
the cores were; peak RSS/PSS per worker kind).
"""
from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CORPUS, RESULTS, machine, write_result  # noqa: E402
from _profile import TreeSampler, profile  # noqa: E402

from docray.engine.config import config_from_dict  # noqa: E402


def coverage(cfg, workspace: str) -> dict:
    from docray.engine.ingest.stores import Stores

    s = Stores.open(cfg)
    try:
        docs = s.catalog.list(workspace, status="done")
        n_pages = sum(d["n_pages"] for d in docs)
        paged = {(r.doc_id, r.page_no) for r, _ in s.pages.pages(workspace)}
        chunk_pages = {(c.doc_id, p) for c in s.content.doc_chunks(workspace) for p in c.pages}
        graph_docs = sum(s.graph.has_doc(workspace, d["doc_id"]) for d in docs)
        unit_pages = {(d["doc_id"], p) for d in docs for p in range(1, d["n_pages"] + 1)
                      if str(p) not in d["stats"].get("skipped_pages", {})}
        return {"documents": len(docs), "pages": n_pages, "pages_in_page_index": len(paged),
                "pages_with_units": len(unit_pages),
                "pages_with_milvus_chunks": len(chunk_pages & unit_pages),
                "documents_in_graph": graph_docs,
                "milvus_chunks": s.dense.count("chunks", workspace=workspace),
                "graph": s.graph.counts(workspace)}
    finally:
        s.close()


def _overrides(pairs: list[str]) -> dict:
    """``["ingest.encoder_threads=1", …]`` → a nested dict (values parsed as YAML)."""
    import yaml

    out: dict = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        *path, leaf = key.split(".")
        node = out
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = yaml.safe_load(value)
    return out


def _merge(base: dict, extra: dict) -> dict:
    for k, v in extra.items():
        base[k] = _merge(dict(base.get(k) or {}), v) if isinstance(v, dict) else v
    return base


def run(kind: str, files: list[Path], data_dir: Path, overrides: dict | None = None) -> dict:
    from docray.engine.ingest import ingest, ingest_local

    cfg = config_from_dict(_merge({"paths": {"data_dir": str(data_dir)},
                                   "ray": {"num_cpus": 2, "object_store_mb": 1024}},
                                  overrides or {}))
    fn = ingest if kind == "ray" else ingest_local
    t0 = time.perf_counter()
    with TreeSampler() as tree:
        summary = fn(files, cfg, "bench")
    wall = time.perf_counter() - t0
    out = summary.to_dict()
    out["profile"] = profile(out, tree, wall, cfg.ray.num_cpus or 2)
    out.pop("documents", None)  # summed up in the profile
    out.update(wall_s=round(wall, 1), pages_per_s=round(summary.pages / wall, 3),
               peak_rss_mb=round(tree.peak_rss / 2**20, 1), coverage=coverage(cfg, "bench"))
    logging.info("%s: %d pages in %.0f s = %.2f pages/s", kind, summary.pages, wall,
                 summary.pages / wall)
    return out


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4))
    runs = [k for k in ("ray", "local") if k in result["runs"]]
    a.bar(runs, [result["runs"][k]["pages_per_s"] for k in runs], color=["#1f77b4", "#aaa"])
    a.axhline(8.0, ls="--", c="r", label="target 8 pages/s")
    a.set_ylabel("pages / s (end to end)")
    a.legend()
    first = result["runs"][runs[0]]
    cpu = first["profile"]["stage_cpu_s"]
    names = sorted(cpu, key=cpu.get)
    b.barh(names, [cpu[k] for k in names])
    b.set_xlabel(f"CPU seconds per stage, summed over documents ({runs[0]} run)")
    fig.suptitle(f"docray ingestion — {first['pages']} pages")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--files", action="append", default=[],
                    help="Only corpus files whose name starts with this (repeatable).")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="Config override, e.g. ingest.encoder_threads=1 (repeatable).")
    ap.add_argument("--name", default="ingest", help="Result file stem under results/.")
    ap.add_argument("--skip-local", action="store_true")
    ap.add_argument("--keep", type=Path, default=None, help="Keep the Ray run's data dir here.")
    ap.add_argument("--local-only", action="store_true",
                    help="Run only the in-process pipeline and add it to the Ray run already "
                         "in results/ingest.json (same files), e.g. after --skip-local.")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    files = [f for f in sorted(CORPUS.glob("*.pdf"))
             if not args.files or f.name.startswith(tuple(args.files))][: args.limit]
    overrides = _overrides(args.set)
    result = {"machine": machine(), "files": len(files), "overrides": args.set, "runs": {}}
    previous = RESULTS / f"{args.name}.json"
    if args.local_only:
        result = json.loads(previous.read_text())
        if result["files"] != len(files) or "ray" not in result["runs"]:
            raise SystemExit(f"{previous} holds no Ray run over these {len(files)} files")
        result["machine_local"] = machine()
    tmp = Path(tempfile.mkdtemp(prefix="docray-bench-"))
    try:
        if not args.local_only:
            ray_dir = args.keep or tmp / "ray"
            if ray_dir.exists():
                shutil.rmtree(ray_dir)
            result["runs"]["ray"] = run("ray", files, ray_dir, overrides)
            import ray

            ray.shutdown()
        if not args.skip_local:
            result["runs"]["local"] = run("local", files, tmp / "local", overrides)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if "local" in result["runs"] and "ray" in result["runs"]:
        result["ray_over_local"] = round(result["runs"]["ray"]["pages_per_s"]
                                         / result["runs"]["local"]["pages_per_s"], 2)
    write_result(args.name, result)
    plot(result, RESULTS / f"{args.name}.png")


if __name__ == "__main__":
    main()
