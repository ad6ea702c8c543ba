"""``docray ingest`` and ``docray delete``: rich progress and summary tables."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from docray.engine.cli.base import CONFIG_OPTION, app, friendly, load, out


def run_ingest(paths: list[Path], config: Optional[Path], workspace: Optional[str],
               as_json: bool, local: bool = False) -> dict:
    from docray.engine.ingest import ingest, ingest_local
    from docray.engine.ingest.plan import expand

    cfg = load(config)
    total = len(expand(list(paths)))
    t0 = time.perf_counter()
    done = {"docs": 0, "pages": 0, "units": 0}
    bar = Progress(TextColumn("[bold]ingest"), BarColumn(), TextColumn("{task.description}"),
                   TimeElapsedColumn(), console=Console(stderr=True), disable=as_json)
    task = bar.add_task("", total=total)

    def on_row(row: dict) -> None:
        done["docs"] += 1
        done["pages"] += int(row.get("n_pages") or 0)
        done["units"] += len(json.loads(row["doc"])["units"]) if row.get("doc") else 0
        dt = max(time.perf_counter() - t0, 1e-6)
        bar.update(task, advance=1, description=(
            f"{done['docs']}/{total} docs  {done['pages'] / dt:.2f} pages/s  "
            f"{done['units'] / dt:.1f} units/s"))

    with bar:
        run = ingest_local if local else ingest
        summary = run(paths, cfg, workspace, progress=on_row)
    result = summary.to_dict()
    if as_json:
        typer.echo(json.dumps(result))
    else:
        print_summary(result)
    return result


def print_summary(s: dict) -> None:
    t = Table(title=f"ingest summary — workspace {s['workspace']}")
    t.add_column("what")
    t.add_column("value", justify="right")
    rows = [("documents ok", s["ok"]), ("documents failed", s["failed"]),
            ("documents skipped (already ingested)", s["skipped"]), ("pages", s["pages"]),
            ("chunks", s["chunks"])]
    rows += [(f"units: {k}", v) for k, v in sorted(s["units"].items())]
    rows += [(f"graph {k}", v) for k, v in sorted(s["graph"].items())]
    rows += [("time (s)", f"{s['seconds']:.1f}"), ("pages/s", f"{s['pages_per_s']:.2f}")]
    for k, v in rows:
        t.add_row(k, str(v))
    out.print(t)
    for f in s["failures"]:
        out.print(f"[red]failed[/red] {f['file']}: {f['error']}", highlight=False)


def run_delete(ref: str, config: Optional[Path], workspace: Optional[str]) -> None:
    from docray.engine.errors import NotFound
    from docray.engine.ingest.stores import Stores

    cfg = load(config)
    ws = workspace or cfg.paths.workspace
    stores = Stores.open(cfg)
    try:
        row = stores.catalog.find(ws, ref)
        if row is None:
            raise NotFound(f"no document {ref!r} in workspace {ws!r}")
        stores.delete_doc(ws, row["doc_id"])
    finally:
        stores.close()
    out.print(f"deleted {row['filename']} ({row['doc_id']}) from workspace {ws}")


@app.command()
@friendly
def ingest(paths: list[Path] = typer.Argument(..., help="Files or directories."),
           workspace: Optional[str] = typer.Option(None, "--workspace", "-w"),
           config: Optional[Path] = CONFIG_OPTION,
           as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
           local: bool = typer.Option(False, "--local", help="Run in-process, without Ray.")):
    """Ingest documents into every index (resumable; re-ingesting is a no-op)."""
    result = run_ingest(paths, config, workspace, as_json, local)
    if result["ok"] == 0 and result["failed"]:
        raise typer.Exit(1)


@app.command()
@friendly
def delete(doc: str = typer.Argument(..., help="doc_id, doc_id prefix or file name."),
           workspace: Optional[str] = typer.Option(None, "--workspace", "-w"),
           config: Optional[Path] = CONFIG_OPTION):
    """Remove a document from every store; the graph is updated incrementally."""
    run_delete(doc, config, workspace)
