"""Native parser against MinerU 4 (flash tier) over the shared corpus.

Per document and in total: units per modality, tables and the cells recovered in them,
pages/s, failures. Both parsers turn each PDF into docray units (no artifact writes: page
renders and crops are not stored by either); MinerU runs in its own venv
(``.venv-mineru``, built by ``make setup``) as a child process per document, so its
figures include that start (~1 s). Documents run smallest first, native then MinerU on the
same file, until ``--budget-s`` is spent; documents not reached are listed, not counted
as failures.

Writes benchmarks/results/parsers.json and parsers.png.

    python benchmarks/parsers.py [--corpus ../shared/corpus] [--limit N] [--budget-s S]
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CORPUS, RESULTS, ROOT, machine, write_result  # noqa: E402

from docray.engine.config import ParseConfig  # noqa: E402

log = logging.getLogger("benchmarks.parsers")
PARSERS = ("native", "mineru")


def _parser(name: str):
    from docray.engine.parse import get_parser

    if name == "native":
        return get_parser(ParseConfig())
    return get_parser(ParseConfig(backend="mineru", mineru_tier="flash",
                                  mineru_python=ROOT / ".venv-mineru" / "bin" / "python"))


def _doc_row(doc, seconds: float) -> dict:
    tables = [u for u in doc.units if u.modality == "table" and u.table is not None]
    grids = [u.table.grid() for u in tables]
    return {"pages": doc.n_pages, "seconds": round(seconds, 3),
            "units": dict(Counter(u.modality for u in doc.units)),
            "tables": len(tables),
            "tables_with_grid": sum(1 for g in grids if len(g) >= 2 and max(map(len, g)) >= 2),
            "cells": sum(1 for g in grids for row in g for c in row if c.strip()),
            "skipped_pages": sum(1 for p in doc.pages if p.skip_reason)}


def _page_count(path: Path) -> int:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return len(pdf)
    finally:
        pdf.close()


def run(corpus: Path, limit: int | None, budget_s: float) -> dict:
    parsers = {name: _parser(name) for name in PARSERS}
    files = sorted(corpus.glob("*.pdf"), key=lambda f: (_page_count(f), f.name))[:limit]
    docs, not_run, t_all = [], [], time.perf_counter()
    for f in files:
        if time.perf_counter() - t_all > budget_s:
            not_run.append(f.name)
            continue
        row = {"file": f.name}
        for name, parser in parsers.items():
            t0 = time.perf_counter()
            try:
                row[name] = _doc_row(parser.parse(f), time.perf_counter() - t0)
            except Exception as err:  # noqa: BLE001 - a failure is a result here
                row[name] = {"error": f"{type(err).__name__}: {err}"[:300],
                             "seconds": round(time.perf_counter() - t0, 3)}
        docs.append(row)
        log.info("%s: %s", f.name, {n: row[n].get("seconds") for n in PARSERS})
    return {"machine": machine(), "corpus": str(corpus), "documents": len(files), "run": len(docs),
            "not_run": not_run, "budget_s": budget_s,
            "wall_seconds": round(time.perf_counter() - t_all, 1),
            "totals": {name: totals(docs, name) for name in PARSERS},
            "totals_both_ok": both_ok(docs), "docs": docs}


def both_ok(docs: list[dict]) -> dict:
    """Totals over only the documents every parser parsed: like for like."""
    same = [d for d in docs if all("error" not in d[n] for n in PARSERS)]
    return {"documents": len(same), **{n: totals(same, n) for n in PARSERS}}


def totals(docs: list[dict], name: str) -> dict:
    ok = [d[name] for d in docs if "error" not in d[name]]
    units: Counter = Counter()
    for d in ok:
        units.update(d["units"])
    pages, secs = sum(d["pages"] for d in ok), sum(d["seconds"] for d in ok)
    pps = [d["pages"] / d["seconds"] for d in ok if d["seconds"] > 0]
    return {"documents_ok": len(ok),
            "failures": [{"file": d["file"], "error": d[name]["error"]}
                         for d in docs if "error" in d[name]],
            "pages": pages, "seconds": round(secs, 1),
            "aggregate_pps": round(pages / secs, 3) if secs else None,
            "median_pps": round(statistics.median(pps), 3) if pps else None,
            "units": dict(units.most_common()),
            "tables": sum(d["tables"] for d in ok),
            "tables_with_grid": sum(d["tables_with_grid"] for d in ok),
            "cells": sum(d["cells"] for d in ok),
            "skipped_pages": sum(d["skipped_pages"] for d in ok)}


def plot(result: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    t = result["totals"]
    kinds = sorted(set(t["native"]["units"]) | set(t["mineru"]["units"]))
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 5))
    x = np.arange(len(kinds))
    for i, name in enumerate(PARSERS):
        a.bar(x + 0.4 * i, [t[name]["units"].get(k, 0) for k in kinds], 0.4, label=name)
    a.set_xticks(x + 0.2, kinds, rotation=45, fontsize=8)
    a.set_yscale("log")
    a.set_title(f"units per modality ({result['run']} documents)", fontsize=9)
    a.legend(fontsize=8)
    stats = ["aggregate_pps", "median_pps", "tables_with_grid"]
    for i, name in enumerate(PARSERS):
        b.bar(np.arange(3) + 0.4 * i, [t[name][s] or 0 for s in stats], 0.4, label=name)
    b.set_xticks(np.arange(3) + 0.2, ["pages/s (all)", "pages/s (median doc)",
                                      "tables with a grid"], fontsize=8)
    b.set_yscale("log")
    b.set_title(f"failures: native {len(t['native']['failures'])}, "
                f"mineru {len(t['mineru']['failures'])}", fontsize=9)
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--budget-s", type=float, default=3600.0)
    ap.add_argument("--retotal", action="store_true",
                    help="Recompute the totals of results/parsers.json from its per-document "
                         "rows (no parsing)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.retotal:
        result = json.loads((RESULTS / "parsers.json").read_text())
        result["totals"] = {name: totals(result["docs"], name) for name in PARSERS}
        result["totals_both_ok"] = both_ok(result["docs"])
    else:
        result = run(args.corpus, args.limit, args.budget_s)
    write_result("parsers", result)
    plot(result, RESULTS / "parsers.png")
    log.info("%s", json.dumps(result["totals"]))


if __name__ == "__main__":
    main()
