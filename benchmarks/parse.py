"""Native parser throughput over the shared corpus.

Writes benchmarks/results/parse.json and parse.png: pages/s for text-layer and OCR pages
(median over documents and aggregate), seconds per stage, peak RSS.

    python benchmarks/parse.py [--corpus ../shared/corpus] [--limit N] [--max-ocr-pages N]
"""
from __future__ import annotations

import argparse
import json
import logging
import platform
import resource
import statistics
import time
from pathlib import Path

from docray.engine.config import ParseConfig
from docray.engine.parse.native import NativeParser

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("benchmarks.parse")


def _rate(pages: int, seconds: float) -> float | None:
    return round(pages / seconds, 3) if pages and seconds > 0 else None


def run(corpus: Path, limit: int | None, max_ocr_pages: int | None) -> dict:
    parser = NativeParser(ParseConfig())
    docs, stages = [], {}
    files = sorted(corpus.glob("*.pdf"))[:limit]
    t_all = time.perf_counter()
    for f in files:
        t0 = time.perf_counter()
        try:
            doc = parser.parse(f, max_ocr_pages=max_ocr_pages)
        except Exception as err:  # noqa: BLE001 - record and go on
            docs.append({"file": f.name, "error": f"{type(err).__name__}: {err}"})
            continue
        secs = time.perf_counter() - t0
        ps = doc.meta["page_seconds"]
        text_s = sum(s for p, s in zip(doc.pages, ps) if not p.ocr and not p.skip_reason)
        ocr_s = sum(s for p, s in zip(doc.pages, ps) if p.ocr)
        n_text = sum(1 for p in doc.pages if not p.ocr and not p.skip_reason)
        n_ocr = sum(1 for p in doc.pages if p.ocr)
        fig_ocr_s = doc.meta["timings"].get("figure_ocr", 0.0)
        for k, v in doc.meta["timings"].items():
            stages[k] = stages.get(k, 0.0) + v
        docs.append({"file": f.name, "pages": doc.n_pages, "units": len(doc.units),
                     "text_pages": n_text, "ocr_pages": n_ocr, "seconds": round(secs, 3),
                     "text_seconds": round(text_s, 3), "ocr_seconds": round(ocr_s, 3),
                     "figure_ocr_seconds": round(fig_ocr_s, 3),
                     "text_pps": _rate(n_text, text_s), "ocr_pps": _rate(n_ocr, ocr_s),
                     "text_pps_no_figure_ocr": _rate(n_text, text_s - fig_ocr_s),
                     "skipped": sum(1 for p in doc.pages if p.skip_reason)})
        log.info("%s: %d pages in %.1fs", f.name, doc.n_pages, secs)
    ok = [d for d in docs if "error" not in d]
    tp = [d["text_pps"] for d in ok if d["text_pps"]]
    tpn = [d["text_pps_no_figure_ocr"] for d in ok if d["text_pps_no_figure_ocr"]]
    op = [d["ocr_pps"] for d in ok if d["ocr_pps"]]
    return {
        "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
        "corpus": str(corpus), "documents": len(files), "errors": len(docs) - len(ok),
        "pages": sum(d["pages"] for d in ok), "wall_seconds": round(time.perf_counter() - t_all, 1),
        "max_ocr_pages": max_ocr_pages,
        "text_layer": {"pages": sum(d["text_pages"] for d in ok),
                       "median_pps": round(statistics.median(tp), 2) if tp else None,
                       "aggregate_pps": _rate(sum(d["text_pages"] for d in ok),
                                              sum(d["text_seconds"] for d in ok)),
                       "figure_ocr_seconds": round(sum(d["figure_ocr_seconds"] for d in ok), 1),
                       "median_pps_without_figure_ocr": round(statistics.median(tpn), 2) if tpn else None,
                       "aggregate_pps_without_figure_ocr": _rate(
                           sum(d["text_pages"] for d in ok),
                           sum(d["text_seconds"] - d["figure_ocr_seconds"] for d in ok))},
        "ocr": {"pages": sum(d["ocr_pages"] for d in ok),
                "median_pps": round(statistics.median(op), 3) if op else None,
                "aggregate_pps": _rate(sum(d["ocr_pages"] for d in ok),
                                       sum(d["ocr_seconds"] for d in ok))},
        "stage_seconds": {k: round(v, 2) for k, v in sorted(stages.items(), key=lambda kv: -kv[1])},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "docs": docs,
    }


def plot(result: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [d for d in result["docs"] if "error" not in d]
    fig, (a, b) = plt.subplots(1, 2, figsize=(14, 6))
    names = [d["file"][:18] for d in ok]
    a.barh(names, [d["text_pps"] or 0 for d in ok], label="text-layer pages/s")
    a.barh(names, [d["ocr_pps"] or 0 for d in ok], label="OCR pages/s", alpha=0.8)
    a.axvline(5, color="k", ls="--", lw=0.8)
    a.axvline(0.4, color="r", ls=":", lw=0.8)
    a.set_xscale("log")
    a.tick_params(axis="y", labelsize=6)
    a.set_title(f"pages/s per document (text median {result['text_layer']['median_pps']}, "
                f"OCR median {result['ocr']['median_pps']})", fontsize=9)
    a.legend(fontsize=7)
    st = result["stage_seconds"]
    b.bar(list(st), list(st.values()))
    b.set_title(f"seconds per stage (total wall {result['wall_seconds']} s, "
                f"peak RSS {result['peak_rss_mb']} MB)", fontsize=9)
    b.tick_params(axis="x", rotation=45, labelsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--max-ocr-pages", type=int, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "parse.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    result = run(args.corpus, args.limit, args.max_ocr_pages)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    plot(result, args.out.with_suffix(".png"))
    summary = {k: result[k] for k in ("pages", "errors", "wall_seconds", "text_layer", "ocr",
                                      "stage_seconds", "peak_rss_mb")}
    log.info("%s", json.dumps(summary))


if __name__ == "__main__":
    main()
