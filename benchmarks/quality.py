"""Quality benchmark on ../shared/eval/qa.jsonl over the ingested corpus.

    python benchmarks/ingest.py --keep .bench/corpus --skip-local   # ingest once
    python benchmarks/quality.py --data .bench/corpus               # evaluate

Reports, for every mode and for the BM25 / dense / RRF page baselines computed in this
same run: page recall@1/5/10 closed (within the question's document) and open (all
pages), per modality; answer accuracy (normalised number/string match) and exact match for
answerable questions, per half and per modality; abstention precision/recall on the
unanswerable ones with the threshold calibrated on the dev half (ids hashed even; at most
5% false abstentions there) and reported on the test half (benchmarks/answer_eval.py: the
scoring, and a cached answer-only loop for tuning on dev); p50/p95
in-process latency (retrieval + extractive answer). Writes results/quality.json,
results/quality.md and results/quality.png (``--name STEM``: results/STEM.* instead, for an
index built another way).

    python benchmarks/quality.py --answerer openai --url http://gpu:8000/v1 --model M

scores a generative answerer (a vLLM OpenAI-compatible server) on the same retrieval by
the same code, beside the extractive answers (``answers_other`` in the results).

    python benchmarks/quality.py --parser mineru --docs 10   # and --parser native

``--parser`` first ingests (in-process) the ``--docs`` smallest qa documents with that
parser (mineru: the flash tier in ``.venv-mineru``) into ``.bench/quality-<parser>`` and
evaluates there, writing results/quality_<parser>.{json,md,png}: the same questions over
the same documents with each parser.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CORPUS, QA, RESULTS, ROOT, machine, write_result  # noqa: E402
from answer_eval import (answer_cached, answerer_config, answers_markdown,  # noqa: E402
                         correct, dev_split, retrieve_all, row_for, score_answers)
from baselines import BM25Pages, DenseWindowPages, rrf_pages  # noqa: E402

from docray.engine.config import config_from_dict  # noqa: E402

MODES = ["hybrid", "chunk-only", "graph-only", "page-only", "no-rerank"]
KS = (1, 5, 10)
WS = "bench"
ABLATION = "hybrid less graph and page"


def recall(pages: list, gold: set, k: int) -> float:
    return float(any(p in gold for p in pages[:k]))


class Bench:
    def __init__(self, data: Path, synthesize: dict | None = None):
        from docray.engine.cli.query import Session

        cfg = config_from_dict({"paths": {"data_dir": str(data), "workspace": WS},
                                "synthesize": synthesize or {"abstain_threshold": 0.0}})
        self.s = Session(cfg=cfg)
        self.docs = {r["filename"]: r["doc_id"] for r in self.s.stores.catalog.list(WS, "done")}

    def page_texts(self) -> dict:
        texts: dict = defaultdict(list)
        for ch in self.s.stores.content.doc_chunks(WS):
            texts[(ch.doc_id, ch.pages[0])].append(ch.text)
        return {k: "\n".join(v) for k, v in texts.items()}

    async def pages(self, q: str, doc_ids, mode: str) -> list:
        r = await self.s.engine.retrieve(q, WS, doc_ids, mode, 10)
        return r.pages

    def without_graph_and_pages(self, q: str, doc_ids) -> list:
        """Pages of the chunk generators' outputs ranked as hybrid ranks them (modality
        preference and cues on): hybrid less the graph walk and the page index."""
        from docray.engine.retrieve.query import analyze

        engine = self.s.engine
        plan = analyze(q, doc_ids)
        qvec, qtok = engine.p.encode_query(q)
        results = {"dense": engine.p.dense.search(plan, qvec, WS, doc_ids,
                                                  engine.cfg.retrieve.candidates)}
        return engine.rank(q, plan, qtok, WS, results, "hybrid", 10)[2]

    async def answer(self, q: str, doc_ids):
        t0 = time.perf_counter()
        res = await self.s.engine.query(q, WS, doc_ids, "hybrid", 5)
        return res, time.perf_counter() - t0


def summarise(hits: dict) -> dict:
    """hits[(system, setting, modality)] -> list of dicts {k: 0/1} → recall percentages."""
    out: dict = {}
    for (system, setting, modality), rows in hits.items():
        out.setdefault(system, {}).setdefault(setting, {})[modality] = {
            f"R@{k}": round(100 * float(np.mean([r[k] for r in rows])), 1) for k in KS} | {
            "n": len(rows)}
    return out


async def evaluate(bench: Bench, qa: list[dict], baselines: dict, modes: list[str]) -> dict:
    hits: dict = defaultdict(list)
    for n, item in enumerate(qa):
        doc_id = bench.docs.get(item["doc"])
        if doc_id is None or not item.get("evidence_pages"):
            continue
        gold = {(doc_id, p) for p in item["evidence_pages"]}
        mods = ["all", item.get("modality") or "unlabelled"]
        for setting, scope in (("closed", [doc_id]), ("open", None)):
            systems = {m: await bench.pages(item["question"], scope, m) for m in modes}
            systems[ABLATION] = bench.without_graph_and_pages(item["question"], scope)
            sd = doc_id if scope else None
            b = {name: fn.rank(item["question"], sd, 10) for name, fn in baselines.items()}
            if baselines:
                b["rrf(bm25,dense)"] = rrf_pages(b["bm25"], b["dense-windows"])
            for name, pages in {**systems, **b}.items():
                for mod in mods:
                    hits[(name, setting, mod)].append({k: recall(pages, gold, k) for k in KS})
        if n % 50 == 0:
            logging.info("recall: %d/%d questions", n, len(qa))
    return summarise(hits)


async def answers(bench: Bench, qa: list[dict]) -> dict:
    rows = []
    for item in qa:
        doc_id = bench.docs.get(item["doc"])
        res, dt = await bench.answer(item["question"], [doc_id] if doc_id else None)
        rows.append(row_for(item, res.answer, dt))
    return score_answers(rows)


def markdown(result: dict) -> str:
    lines = ["# docray quality on qa.jsonl", "",
             f"Index: {result['documents']} documents, {result['pages_indexed']} pages with "
             f"text. {result['questions_with_evidence']} questions with evidence pages; page recall "
             "(%) — closed = within the question's document, open = across all pages. "
             "chunk-only is text chunk retrieval (dense + BM25, year/number cues, rerank) "
             f"without the multimodal signals; {ABLATION} adds to it the preference for the "
             "modality the question asks for (tables, figures, ...).", "",
             "| system | closed R@1 | closed R@5 | closed R@10 | open R@1 | open R@5 | open R@10 |",
             "|---|---|---|---|---|---|---|"]
    for system, settings in result["recall"].items():
        c, o = settings["closed"]["all"], settings["open"]["all"]
        lines.append(f"| {system} | {c['R@1']} | {c['R@5']} | {c['R@10']} | {o['R@1']} | "
                     f"{o['R@5']} | {o['R@10']} |")
    lines += by_modality(result)
    a = result["answers"]
    lines += answers_markdown(a)
    for name, other in result.get("answers_other", {}).items():
        lines += answers_markdown(other, f"hybrid, closed, {name}")
    lines += ["", f"Latency (retrieval + answer, in-process, closed): p50 "
              f"{a['latency_ms']['p50']} ms, p95 {a['latency_ms']['p95']} ms.",
              f"Latency (hybrid retrieval + answer, open, whole corpus, "
              f"{result['open_latency_ms']['n']} questions): p50 "
              f"{result['open_latency_ms']['p50']} ms, p95 {result['open_latency_ms']['p95']} ms."]
    return "\n".join(lines) + "\n"


def by_modality(result: dict) -> list[str]:
    """Markdown lines: R@5 closed / open per system and question modality."""
    mods = [m for m in result["recall"]["hybrid"]["closed"] if m != "all"]
    n = {m: result["recall"]["hybrid"]["closed"][m]["n"] for m in mods}
    lines = ["", "## Page recall@5 by question modality (closed / open)", "",
             "| system | " + " | ".join(f"{m} (n={n[m]})" for m in mods) + " |",
             "|---|" + "---|" * len(mods)]
    for system, settings in result["recall"].items():
        lines.append(f"| {system} | " + " | ".join(
            f"{settings['closed'][m]['R@5']} / {settings['open'][m]['R@5']}" for m in mods)
            + " |")
    return lines


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = list(result["recall"])
    bars = [("closed", "R@1"), ("closed", "R@5"), ("open", "R@5")]
    answers = result.get("answers")
    fig, axes = plt.subplots(1, 2 if answers else 1, figsize=(18 if answers else 12, 4.5),
                             gridspec_kw={"width_ratios": [2, 1]} if answers else None)
    ax = axes[0] if answers else axes
    width = 0.8 / len(bars)
    for j, (setting, k) in enumerate(bars):
        vals = [result["recall"][s][setting]["all"][k] for s in systems]
        ax.bar(np.arange(len(systems)) + j * width, vals, width, label=f"{setting} {k}")
    ax.set_xticks(np.arange(len(systems)) + width, systems, rotation=20)
    ax.set_ylabel("page recall (%)")
    ax.legend()
    ax.set_title("docray modes vs baselines on qa.jsonl (same run)")
    if answers:
        _plot_answers(axes[1], answers)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _plot_answers(ax, answers: dict) -> None:
    """Extractive answer accuracy and exact match: dev, test, all, then each modality."""
    groups = [("dev", answers["dev"]), ("test", answers["test"]), ("all", answers["all"])] + \
        sorted(answers["by_modality"].items())
    x = np.arange(len(groups))
    for j, (key, label) in enumerate([("answer_accuracy", "accuracy"),
                                      ("exact_match", "exact match")]):
        ax.bar(x + j * 0.4, [g.get(key, 0.0) for _, g in groups], 0.4, label=label)
    ax.set_xticks(x + 0.2, [name for name, _ in groups], rotation=20)
    ax.set_ylabel("% of answerable questions")
    ax.set_title("extractive answers (hybrid, closed)")
    ax.legend()


async def timed_open(bench: Bench, qa: list[dict], n: int | None = None) -> dict:
    """Open query + answer latency over the first ``n`` questions (all by default: on this
    shared machine the p95 of 100 moved from 251 to 320 ms between runs an hour apart)."""
    lat = []
    for item in qa[:n]:
        t0 = time.perf_counter()
        await bench.s.engine.query(item["question"], WS, None, "hybrid", 5)
        lat.append((time.perf_counter() - t0) * 1000)
    return {"p50": round(float(np.percentile(lat, 50)), 1),
            "p95": round(float(np.percentile(lat, 95)), 1), "n": len(lat)}


def generative(bench: Bench, qa: list[dict], args) -> dict:
    """{answerer name: scored answers} for ``--answerer``, over the same retrieval (hybrid,
    closed, top 5) and scope check as the extractive answers, scored by the same code."""
    if not args.answerer:
        return {}
    from docray.engine.retrieve.parts import make_answerer

    cfg = bench.s.cfg.model_copy(update={"synthesize": bench.s.cfg.synthesize.model_copy(
        update=answerer_config(args.answerer, args.url, args.model))})
    answerer = make_answerer(cfg, artifacts=bench.s.stores.artifacts(WS))
    items = retrieve_all(bench, qa, args.data / "answer_cache.pkl")
    rows = asyncio.run(answer_cached(answerer, bench.s.engine, qa, items))
    return {f"{args.answerer} ({args.model or cfg.synthesize.model})": score_answers(rows)}


def parse_config(parser: str) -> dict:
    if parser == "native":
        return {"backend": "native"}
    return {"backend": "mineru", "mineru_tier": "flash",
            "mineru_python": str(ROOT / ".venv-mineru" / "bin" / "python")}


def smallest_qa_docs(qa: list[dict], n: int | None) -> list[Path]:
    """The ``n`` qa documents with the fewest pages (ties by name), leaving out those MinerU
    flash could not parse offline in results/parsers.json (pages without a text layer make
    it fetch its ONNX OCR models), so both parsers answer over the same documents."""
    import pypdfium2 as pdfium

    runs = RESULTS / "parsers.json"
    failed = {f["file"] for f in json.loads(runs.read_text())["totals"]["mineru"]["failures"]
              } if runs.exists() else set()

    def pages(f: Path) -> int:
        pdf = pdfium.PdfDocument(str(f))
        try:
            return len(pdf)
        finally:
            pdf.close()
    files = [CORPUS / d for d in sorted({q["doc"] for q in qa} - failed)
             if (CORPUS / d).exists()]
    return sorted(files, key=lambda f: (pages(f), f.name))[:n]


def ingest_with(parser: str, files: list[Path]) -> tuple[Path, dict]:
    """Ingest ``files`` with ``parser`` into its own data dir (resumable: done documents
    are skipped); the summary says which documents failed."""
    from docray.engine.ingest import ingest_local

    data = ROOT / ".bench" / f"quality-{parser}"
    cfg = config_from_dict({"paths": {"data_dir": str(data)}, "parse": parse_config(parser)})
    t0 = time.perf_counter()
    summary = ingest_local(files, cfg, WS).to_dict()
    summary["wall_s"] = round(time.perf_counter() - t0, 1)
    return data, summary


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--parser", choices=("native", "mineru"), default=None,
                    help="Ingest the --docs smallest qa documents with this parser first")
    ap.add_argument("--docs", type=int, default=None, help="With --parser: how many")
    ap.add_argument("--data", type=Path, default=Path(".bench/corpus"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--name", default=None,
                    help="Result file stem under results/ (default quality, or quality_<parser>)")
    ap.add_argument("--no-baselines", action="store_true",
                    help="Skip the BM25 / dense-window page baselines (most of the run's time)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--answerer", choices=("openai",), default=None,
                    help="Also score this generative answerer (a vLLM OpenAI-compatible "
                         "server at --url) on the same retrieval, beside the extractive one")
    ap.add_argument("--url", default=None, help="--answerer: the server's /v1 URL")
    ap.add_argument("--model", default=None, help="--answerer: the served model id")
    ap.add_argument("--answers-only", action="store_true",
                    help="Re-run only the answer/abstention part and both latencies "
                         "(retrieval unchanged) and replace them in results/quality.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    qa = [json.loads(line) for line in QA.read_text().splitlines() if line.strip()]
    name, extra = "quality", {}
    if args.parser:
        files = smallest_qa_docs(qa, args.docs)
        args.data, summary = ingest_with(args.parser, files)
        name = f"quality_{args.parser}"
        extra = {"parser": args.parser, "parse": parse_config(args.parser),
                 "subset": f"the {len(files)} qa documents with the fewest pages that MinerU "
                           "flash parsed offline (results/parsers.json)",
                 "files": [f.name for f in files], "ingest": summary}
    name = args.name or name
    bench = Bench(args.data)
    qa = [q for q in qa if q["doc"] in bench.docs][: args.limit]
    t0 = time.perf_counter()
    if args.answers_only:
        result = json.loads((RESULTS / f"{name}.json").read_text())
        asyncio.run(bench.answer("warm up", None))
        result["open_latency_ms"] = asyncio.run(timed_open(bench, qa))
        result["answers"] = asyncio.run(answers(bench, qa))
        result["answers_other"] = generative(bench, qa, args)
        result["machine_answers"] = machine()
        write_result(name, result)
        (RESULTS / f"{name}.md").write_text(markdown(result))
        plot(result, RESULTS / f"{name}.png")
        print(markdown(result))
        return
    pages = bench.page_texts()
    encoder = bench.s.engine.p.answerer.encoder
    baselines = {} if args.no_baselines else {
        "bm25": BM25Pages(pages), "dense-windows": DenseWindowPages(pages, encoder)}
    logging.info("baselines built over %d pages in %.0f s", len(pages), time.perf_counter() - t0)
    asyncio.run(bench.answer("warm up", None))
    result = {"machine": machine(), **extra, "questions": len(qa),
              "questions_with_evidence": sum(bool(q.get("evidence_pages")) for q in qa),
              "documents": len(bench.docs), "pages_indexed": len(pages)}
    result["open_latency_ms"] = asyncio.run(timed_open(bench, qa))
    result["answers"] = asyncio.run(answers(bench, qa))
    result["answers_other"] = generative(bench, qa, args)
    result["recall"] = asyncio.run(evaluate(bench, qa, baselines, args.modes.split(",")))
    result["seconds"] = round(time.perf_counter() - t0, 1)
    write_result(name, result)
    (RESULTS / f"{name}.md").write_text(markdown(result))
    plot(result, RESULTS / f"{name}.png")
    print(markdown(result))


if __name__ == "__main__":
    main()
