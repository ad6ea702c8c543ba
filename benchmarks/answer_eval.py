"""Answer scoring on qa.jsonl, shared by quality.py and tune.py, and a fast answer-only loop.

    python benchmarks/answer_eval.py --data .bench/answers            # dev half, cached
    python benchmarks/answer_eval.py --data .bench/answers --split all --misses /tmp/m.jsonl

Retrieval (hybrid, closed: within the question's document, top 5) and the scope check run
once per question and are cached in ``<data>/answer_cache.pkl`` (keyed by the index's
catalog and the question), so changes to the answer code are measured in seconds. The
ranking code is not touched by that loop; quality.py measures it.

Scores, per half (dev = md5(id) even, as everywhere here): answer accuracy (the
normalised containment quality.py has always used: a gold number within 1% of a number
in the answer, or the normalised gold string inside the answer), exact match (the answer's
value alone equals the gold value), abstention recall on the unanswerable questions and
false abstentions on the answerable ones, with the confidence threshold calibrated on the
dev half to at most ``MAX_FALSE_ABSTAIN`` false abstentions there; and a per-modality table.

``--answerer openai --url http://host:8000/v1`` scores a generative answerer (a vLLM
OpenAI-compatible server) through the same code, for a GPU run to report beside this one.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import pickle
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import QA  # noqa: E402

WS = "bench"
MAX_FALSE_ABSTAIN = 0.05
log = logging.getLogger(__name__)


def numbers(text: str) -> list[float]:
    out = []
    for m in re.finditer(r"\(?-?\$?\d[\d,]*(?:\.\d+)?", text):
        raw = m.group(0)
        neg = raw.startswith("(") or "-" in raw
        try:
            v = float(re.sub(r"[^\d.]", "", raw))
        except ValueError:
            continue
        out.append(-v if neg else v)
    return out


def norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def correct(answer: str, gold: str) -> bool:
    """Numbers match within 1% (sign-insensitive), or normalised gold ⊂ answer."""
    g_nums = numbers(gold)
    if g_nums:
        a_nums = numbers(answer)
        return any(abs(abs(a) - abs(g)) <= 0.01 * max(abs(g), 1e-9) for a in a_nums
                   for g in g_nums)
    g = norm(gold)
    return bool(g) and g in norm(answer)


_UNIT_WORDS = re.compile(r"\b(thousand|million|billion|millions|usd|percent)\b|[$%]")


def exact(value: str, gold: str) -> bool:
    """The value alone is the gold answer: the same normalised words, or (numeric gold)
    the same numbers, within 1%, in the same count (units and currency signs aside).

    >>> exact("$1,577 million", "$1577.00"), exact("1,577 and 1,373", "1577")
    (True, False)
    """
    g_nums, v_nums = numbers(gold), numbers(value)
    if g_nums:
        return len(v_nums) == len(g_nums) and all(
            abs(abs(a) - abs(g)) <= 0.01 * max(abs(g), 1e-9) for a, g in zip(v_nums, g_nums))
    return bool(norm(gold)) and norm(_UNIT_WORDS.sub(" ", value)) == norm(
        _UNIT_WORDS.sub(" ", gold))


def dev_split(qid: str) -> bool:
    return int(hashlib.md5(qid.encode()).hexdigest(), 16) % 2 == 0


def unanswerable(item: dict) -> bool:
    return item["answer"].strip().lower() == "not answerable"


def row_for(item: dict, answer, latency_s: float = 0.0) -> dict:
    value = getattr(answer, "value", "") or answer.answer
    return {"id": item["id"], "modality": item.get("modality") or "unlabelled",
            "unanswerable": unanswerable(item), "confidence": answer.confidence,
            "answer": answer.answer, "value": value, "gold": item["answer"],
            "correct": correct(answer.answer, item["answer"]),
            "exact": exact(value, item["answer"]),
            "latency_s": latency_s, "dev": dev_split(item["id"])}


def _pct(flags: list) -> float:
    return round(100 * float(np.mean(flags or [0])), 1)


def stats(part: list[dict], t: float) -> dict:
    ans = [r for r in part if not r["unanswerable"]]
    una = [r for r in part if r["unanswerable"]]
    abst = [r for r in part if r["confidence"] < t]
    # an unanswerable question is answered right by abstaining; over all questions
    right = [(r["confidence"] < t) if r["unanswerable"] else
             (r["correct"] and r["confidence"] >= t) for r in part]
    return {"n": len(part), "unanswerable": len(una),
            "answer_accuracy": _pct([r["correct"] and r["confidence"] >= t for r in ans]),
            "exact_match": _pct([r["exact"] and r["confidence"] >= t for r in ans]),
            "answer_accuracy_ignoring_abstention": _pct([r["correct"] for r in ans]),
            "accuracy_all_questions": _pct(right),
            "abstain_recall": _pct([r["confidence"] < t for r in una]),
            "abstain_precision": _pct([r["unanswerable"] for r in abst]),
            "false_abstention_rate": _pct([r["confidence"] < t for r in ans])}


def split_gap(rows: list[dict], t: float, draws: int = 2000, seed: int = 0) -> dict:
    """How far apart two halves' accuracy falls by chance: the dev-test gap of these answers
    (points), beside the absolute gap between two random halves of the same answerable
    questions over ``draws`` halvings (median, 95th percentile, and the share at least as
    large as the dev-test one). A gap inside that spread is no sign of tuning to dev.

    >>> rows = [{"unanswerable": False, "correct": i % 2 == 0, "confidence": 1.0,
    ...          "dev": i < 50} for i in range(100)]
    >>> split_gap(rows, 0.5, draws=200)["dev_minus_test"]
    0.0
    """
    ans = [r for r in rows if not r["unanswerable"]]
    ok = np.array([r["correct"] and r["confidence"] >= t for r in ans], float)
    dev = np.array([r["dev"] for r in ans])
    gap = 100 * (ok[dev].mean() - ok[~dev].mean()) if dev.any() and (~dev).any() else 0.0
    rng = np.random.default_rng(seed)
    half = len(ok) // 2
    gaps = []
    for _ in range(draws):
        order = rng.permutation(len(ok))
        gaps.append(abs(100 * (ok[order[:half]].mean() - ok[order[half:]].mean())))
    gaps = np.array(gaps)
    return {"dev_minus_test": round(float(gap), 1), "draws": draws,
            "random_halves_median": round(float(np.median(gaps)), 1),
            "random_halves_p95": round(float(np.percentile(gaps, 95)), 1),
            "share_at_least_as_large": round(float((gaps >= abs(gap) - 1e-9).mean()), 3)}


def score_answers(rows: list[dict], max_false: float = MAX_FALSE_ABSTAIN) -> dict:
    from docray.engine.synthesize.abstain import calibrate

    dev = [r for r in rows if r["dev"]]
    t = calibrate([r["confidence"] for r in dev if not r["unanswerable"]],
                  [r["confidence"] for r in dev if r["unanswerable"]], max_false)
    by_mod = defaultdict(list)
    for r in rows:
        by_mod[r["modality"]].append(r)
    lat = np.array([r["latency_s"] for r in rows] or [0.0]) * 1000
    return {"threshold": round(float(t), 4), "max_false_abstain_dev": max_false,
            "dev": stats(dev, t), "test": stats([r for r in rows if not r["dev"]], t),
            "all": stats(rows, t), "split_gap": split_gap(rows, t),
            "by_modality": {m: stats(v, t) for m, v in sorted(by_mod.items())},
            "latency_ms": {"p50": round(float(np.percentile(lat, 50)), 1),
                           "p95": round(float(np.percentile(lat, 95)), 1),
                           "mean": round(float(lat.mean()), 1)},
            "samples": rows[:20]}


def answers_markdown(a: dict, title: str = "hybrid, closed, extractive") -> list[str]:
    """Markdown lines: the answer tables of ``score_answers``' result."""
    lines = ["", f"## Answers and abstention ({title})", "",
             "Accuracy: a gold number within 1% of a number in the answer, or the normalised "
             "gold text inside it (answerable questions; an abstention counts wrong). Exact "
             "match: the answer's value alone is the gold value. Abstention = the scope check "
             "(the question names a year, name or code the document never mentions, or a "
             "page, figure or table it does not have) or an evidence score below the "
             f"threshold, {a['threshold']}, calibrated on the dev half (≤ "
             f"{100 * a.get('max_false_abstain_dev', 0.1):.0f}% false abstentions on dev).", "",
             "| split | n | accuracy | exact match | accuracy ignoring abstention | "
             "abstain recall | abstain precision | false abstentions |",
             "|---|---|---|---|---|---|---|---|"]
    for split in ("dev", "test", "all"):
        s = a[split]
        lines.append(f"| {split} | {s['n']} | {s['answer_accuracy']} | "
                     f"{s.get('exact_match', '–')} | "
                     f"{s['answer_accuracy_ignoring_abstention']} | {s['abstain_recall']} | "
                     f"{s['abstain_precision']} | {s['false_abstention_rate']} |")
    g = a.get("split_gap")
    if g:
        lines += ["", f"Dev - test accuracy gap: {g['dev_minus_test']} points. Two random halves "
                  f"of the same answers ({g['draws']} halvings) differ by {g['random_halves_median']}"
                  f" points at the median and {g['random_halves_p95']} at the 95th percentile; "
                  f"{100 * g['share_at_least_as_large']:.1f}% of halvings differ by as much "
                  "as dev and test."]
    lines += ["", "| modality | n | unanswerable | accuracy | exact match | abstain recall | "
              "false abstentions |", "|---|---|---|---|---|---|---|"]
    for mod, m in a["by_modality"].items():
        recall_ = m["abstain_recall"] if m["unanswerable"] else "–"  # none to abstain on
        lines.append(f"| {mod} | {m['n']} | {m['unanswerable']} | {m['answer_accuracy']} "
                     f"| {m.get('exact_match', '–')} | {recall_} | "
                     f"{m['false_abstention_rate']} |")
    return lines


def _out_of_scope(bench, item: dict, passages):
    """The scope check's abstention for a question's passages (None: in scope)."""
    doc_id = bench.docs.get(item["doc"])
    return bench.s.engine.p.fuser.out_of_scope(item["question"], WS,
                                                [doc_id] if doc_id else None, passages)


def retrieve_all(bench, qa: list[dict], path: Path) -> dict:
    """{question id: (passages, scope abstention or None)} for hybrid closed top 5, read
    from ``path`` when it was made over the same catalog, written there otherwise. The
    scope check is made again on every read (it is cheap, and the code may have changed
    since the passages were saved)."""
    engine = bench.s.engine
    key = sorted(bench.docs.items())
    if path.exists():
        with path.open("rb") as f:
            saved = pickle.load(f)
        if saved["key"] == key and all(q["id"] in saved["items"] for q in qa):
            return {q["id"]: (saved["items"][q["id"]][0],
                              _out_of_scope(bench, q, saved["items"][q["id"]][0]))
                    for q in qa}
    items = {}
    for n, item in enumerate(qa):
        doc_id = bench.docs.get(item["doc"])
        scope = [doc_id] if doc_id else None
        r = asyncio.run(engine.retrieve(item["question"], WS, scope, "hybrid", 5))
        items[item["id"]] = (r.passages, _out_of_scope(bench, item, r.passages))
        if n % 100 == 0:
            log.info("retrieved %d/%d", n, len(qa))
    with path.open("wb") as f:
        pickle.dump({"key": key, "items": items}, f)
    return items


async def answer_cached(answerer, engine, qa: list[dict], items: dict) -> list[dict]:
    rows = []
    for item in qa:
        passages, out = items[item["id"]]
        t0 = time.perf_counter()
        if out is None:
            qvec = engine.p.encode_query(item["question"])[0]
            out = await answerer.answer(item["question"], passages, qvec)
        rows.append(row_for(item, out, time.perf_counter() - t0))
    return rows


def answerer_config(answerer: str, url: str | None, model: str | None) -> dict:
    """The synthesize section for ``--answerer`` (extractive never abstains itself: the
    threshold is calibrated here)."""
    s: dict = {"abstain_threshold": 0.0}
    if answerer != "extractive":
        s |= {"answerer": answerer, "url": url} | ({"model": model} if model else {})
    return s


def main() -> None:
    from quality import Bench

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path(".bench/answers"))
    ap.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    ap.add_argument("--answerer", choices=("extractive", "openai"), default="extractive")
    ap.add_argument("--url", default=None, help="--answerer openai: the server's /v1 URL")
    ap.add_argument("--model", default=None)
    ap.add_argument("--rows", type=Path, default=None,
                    help="write every scored answer here (JSONL, with the question)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    bench = Bench(args.data, answerer_config(args.answerer, args.url, args.model))
    qa = [json.loads(line) for line in QA.read_text().splitlines() if line.strip()]
    qa = [q for q in qa if q["doc"] in bench.docs]
    items = retrieve_all(bench, qa, args.data / "answer_cache.pkl")
    if args.split != "all":
        qa = [q for q in qa if dev_split(q["id"]) == (args.split == "dev")]
    rows = asyncio.run(answer_cached(bench.s.engine.p.answerer, bench.s.engine, qa, items))
    scored = score_answers(rows)
    print("\n".join(answers_markdown(scored, f"{args.answerer}, {args.split}")))
    if args.rows:
        with args.rows.open("w") as f:
            for r, item in zip(rows, qa):
                f.write(json.dumps({**r, "question": item["question"],
                                    "source": item["source"].split("/")[0]}) + "\n")


if __name__ == "__main__":
    main()
