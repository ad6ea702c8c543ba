"""Pooled prefilter benchmark: int8 rows against fp32 rows on an ingested corpus.

    python benchmarks/prefilter.py --data .bench/full --workspace bench

Open questions (no document scope) pass through the pooled prefilter before exact MaxSim
(:mod:`docray.engine.index.pages.pooled`). For the first ``--questions`` questions of
qa.jsonl, over the workspace's page index, this times the prefilter per question in both
precisions, alternating the two in blocks in one run (the machine is shared and noisy),
and reports medians and p95, the memory of the pooled rows it scans (``memory_mb``; both
keep the fp32 pooled vectors cached besides), how many of the int8 prefilter's
candidates the fp32 one also picks, and how often the final top 10 (exact
MaxSim over the candidates) equals the exact full scan's. Writes
``benchmarks/results/prefilter.json`` and ``prefilter.png``.
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import numpy as np

from _common import QA, RESULTS, machine, write_result

log = logging.getLogger("prefilter")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path(".bench/full"))
    ap.add_argument("--workspace", default="bench")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--block", type=int, default=25, help="questions per alternation block")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    from docray.engine.config import TextEncoderConfig, config_from_dict
    from docray.engine.embed.minilm import MiniLMEncoder
    from docray.engine.index.pages import PageStore
    from docray.engine.retrieve.pages import page_searcher

    cfg = config_from_dict({"paths": {"data_dir": str(args.data)}})
    path = args.data / "pages"
    variants = {c: page_searcher(cfg, PageStore(path, compute=c)) for c in ("int8", "fp32")}
    exact = PageStore(path)  # the exact stage, the same for both
    encoder = MiniLMEncoder(TextEncoderConfig())
    questions = [json.loads(x)["question"] for x in QA.read_text().splitlines() if x.strip()]
    queries = [encoder.encode_with_tokens([q])[1][0] for q in questions[: args.questions]]
    for s in variants.values():
        s.prefilter.warm()

    times: dict[str, list[float]] = {c: [] for c in variants}
    picked: dict[str, list[set]] = {c: [None] * len(queries) for c in variants}
    for b, start in enumerate(range(0, len(queries), args.block)):
        order = list(variants) if b % 2 == 0 else list(variants)[::-1]
        for c in order:
            for i in range(start, min(start + args.block, len(queries))):
                t0 = time.perf_counter()
                picked[c][i] = variants[c].prefilter.candidates(queries[i], args.workspace, None)
                times[c].append(1000 * (time.perf_counter() - t0))
    same_top10 = {c: [] for c in variants}

    def top10(q, keys) -> list:
        return [h.page for h in exact.search_batch([q], 10, args.workspace, None, keys=keys)[0]]

    for i, q in enumerate(queries):
        want = top10(q, None)  # every page scored exactly
        for c in variants:
            same_top10[c].append(top10(q, picked[c][i]) == want)
    n = variants["int8"].prefilter.n
    result = {"machine": machine(), "questions": len(queries), "candidates": n,
              "pages": len(variants["int8"].prefilter._keys), "variants": {}}
    for c, s in variants.items():
        pf = s.prefilter
        mb = (pf._matrix.nbytes + (pf._scales.nbytes if pf._scales is not None else 0)) / 2**20
        result["variants"][c] = {
            "rows": len(pf._matrix), "memory_mb": round(mb, 1),
            "prefilter_ms_p50": round(float(np.median(times[c])), 1),
            "prefilter_ms_p95": round(float(np.percentile(times[c], 95)), 1),
            "top10_equals_exact": round(float(np.mean(same_top10[c])), 3)}
    result["candidates_shared"] = round(float(np.mean(
        [len(a & b) / n for a, b in zip(picked["int8"], picked["fp32"])])), 4)
    result["speedup_p50"] = round(result["variants"]["fp32"]["prefilter_ms_p50"]
                                  / result["variants"]["int8"]["prefilter_ms_p50"], 2)
    write_result("prefilter", result)
    plot(times, result, RESULTS / "prefilter.png")
    print(json.dumps(result, indent=1))


def plot(times: dict, result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    labels = [f"{c}\n{result['variants'][c]['memory_mb']} MB" for c in times]
    ax.boxplot([times[c] for c in times], tick_labels=labels, showfliers=False)
    ax.set_ylabel("prefilter ms per open question")
    ax.set_title(f"pooled prefilter over {result['pages']} pages "
                 f"({result['questions']} questions, alternating blocks)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
