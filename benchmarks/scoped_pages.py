"""Questions scoped to one document: the pooled prefilter on long documents, against the
exact scan of every page, in one run.

    python benchmarks/scoped_pages.py --data .bench/corpus5 --workspace bench

Every qa.jsonl question asked of its own document through the in-process engine
(``QueryEngine.query``: retrieval, rerank, answer), after one pass that touches every
document. Then passes alternate between the two settings (the machine is shared and
noisy): ``exact`` (a selection of up to 1,024 pages is scanned exactly: the old default)
and ``prefilter`` (past ``pages.two_stage_threshold`` pages, ``pages.prefilter_share`` of
them go to exact MaxSim, picked by the pooled vectors). Reports per setting the median
and p95 of each stage (stages run in parallel threads, so they do not add up) and of the
whole question; closed page R@5 of hybrid and page-only retrieval on the questions with
evidence pages; and how many top-5 page lists are equal between the two settings.
Writes ``benchmarks/results/scoped_pages.json`` and ``scoped_pages.png``.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from pathlib import Path

from _common import QA, RESULTS, machine, write_result

OLD = (1024, 1.0)  # (two_stage_threshold, prefilter_share) before the scoped prefilter


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(1000 * xs[min(len(xs) - 1, int(q * len(xs)))], 1)


async def one_pass(session, ws: str, qa: list[dict]) -> tuple[dict, dict]:
    """Stage timings of every question, and the top-5 pages of each (hybrid)."""
    stages: dict[str, list[float]] = {}
    tops = {}
    for q in qa:
        t = time.perf_counter()
        r = await session.engine.query(q["question"], ws, session.resolve_doc(ws, q["doc"]),
                                       "hybrid", 5)
        for k, v in {**r.timings, "wall": time.perf_counter() - t}.items():
            stages.setdefault(k, []).append(v)
        tops[q["id"]] = [page for _, page in r.pages[:5]]
    return stages, tops


async def page_only(session, ws: str, qa: list[dict]) -> dict:
    out = {}
    for q in qa:
        r = await session.engine.retrieve(q["question"], ws, session.resolve_doc(ws, q["doc"]),
                                          "page-only", 5)
        out[q["id"]] = [page for _, page in r.pages[:5]]
    return out


def recall(tops: dict, qa: list[dict]) -> float:
    ev = [q for q in qa if q.get("evidence_pages")]
    return round(100 * sum(any(p in q["evidence_pages"] for p in tops[q["id"]])
                           for q in ev) / len(ev), 1)


async def run(args) -> dict:
    from docray.engine.cli.query import Session
    from docray.engine.config import config_from_dict

    cfg = config_from_dict({"paths": {"data_dir": str(args.data), "workspace": args.workspace}})
    session = Session(cfg=cfg)
    session.warm()
    pf = session.engine.p.pages.prefilter
    settings = {"exact": OLD, "prefilter": (pf.threshold, pf.share)}  # new: the config's
    docs = {r["filename"] for r in session.stores.catalog.list(args.workspace, "done")}
    qa = [json.loads(line) for line in QA.read_text().splitlines() if line.strip()]
    qa = [q for q in qa if q["doc"] in docs][: args.limit]
    try:
        await one_pass(session, args.workspace, qa)
        runs: dict[str, list] = {name: [] for name in settings}
        for _ in range(args.rounds):
            for name, (threshold, share) in settings.items():
                pf.threshold, pf.share = threshold, share
                runs[name].append(await one_pass(session, args.workspace, qa))
                logging.info("%s pass done", name)
        result = {"machine": machine(), "questions": len(qa), "rounds": args.rounds,
                  "settings": {k: {"two_stage_threshold": t, "prefilter_share": s}
                               for k, (t, s) in settings.items()}, "passes": {}}
        for name, passes in runs.items():
            pf.threshold, pf.share = settings[name]
            result["passes"][name] = [
                {k: {"p50_ms": pct(v, .5), "p95_ms": pct(v, .95)} for k, v in stages.items()}
                for stages, _ in passes]
            result[name] = {"hybrid_closed_r5": recall(passes[0][1], qa),
                            "page_only_closed_r5": recall(await page_only(
                                session, args.workspace, qa), qa)}
        a, b = runs["exact"][0][1], runs["prefilter"][0][1]
        result["top5_equal"] = sum(a[k] == b[k] for k in a)
        return result
    finally:
        session.close()


def plot(result: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    stages = ["page", "dense", "graph", "synthesize", "total"]
    for i, name in enumerate(result["passes"]):
        for j, p in enumerate(result["passes"][name]):
            ax.scatter([s for s in range(len(stages))], [p[s]["p95_ms"] for s in stages],
                       marker="o" if name == "exact" else "s", color=f"C{i}",
                       label=name if j == 0 else None)
    ax.set_xticks(range(len(stages)), stages)
    ax.set_ylabel("p95 ms per question (each pass)")
    ax.set_title(f"scoped questions ({result['questions']}), exact scan vs prefilter")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path(".bench/corpus5"))
    ap.add_argument("--workspace", default="bench")
    ap.add_argument("--rounds", type=int, default=2, help="alternating passes per setting")
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    result = asyncio.run(run(args))
    write_result("scoped_pages", result)
    plot(result, RESULTS / "scoped_pages.png")
    print(json.dumps({k: v for k, v in result.items() if k != "passes"}, indent=1))
    for name, passes in result["passes"].items():
        for p in passes:
            print(name, {k: (v["p50_ms"], v["p95_ms"]) for k, v in p.items()})


if __name__ == "__main__":
    main()
