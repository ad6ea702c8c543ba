"""The ``docray`` command. User-facing output (rich) lives here and only here.

Every command turns :class:`~docray.engine.errors.DocrayError` into a one-line message
on stderr and a non-zero exit code — no tracebacks for bad input.
"""
from __future__ import annotations

import json
import logging
import sys
from functools import wraps
from pathlib import Path
from typing import Callable, Optional

import typer
from rich.console import Console
from rich.table import Table

from docray.engine.errors import DocrayError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="docray: multimodal document RAG on Ray.")
out = Console()
err = Console(stderr=True)


def _friendly(fn: Callable) -> Callable:
    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except DocrayError as e:
            err.print(f"[red]error:[/red] {e}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
    return wrapper


def _config(path: Optional[Path]):
    from docray.engine.config import load_config

    return load_config(path)


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging.")):
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


@app.command()
@_friendly
def parse(file: Path = typer.Argument(..., help="PDF, image or text file."),
          out_dir: Path = typer.Option(..., "--out", help="Output directory."),
          config: Optional[Path] = typer.Option(None, "--config", help="YAML config."),
          overlays: bool = typer.Option(True, help="Write one overlay PNG per page.")):
    """Parse FILE into content_list.json, crops and per-page overlay PNGs."""
    from docray.engine.index.artifacts import ArtifactStore
    from docray.engine.parse import get_parser
    from docray.engine.parse.content_list import export_content_list
    from docray.engine.parse.overlay import write_overlays

    cfg = _config(config)
    out_dir.mkdir(parents=True, exist_ok=True)
    artifacts = ArtifactStore(out_dir / "artifacts")
    doc = get_parser(cfg.parse, artifacts).parse(file)
    (out_dir / "content_list.json").write_text(
        json.dumps(export_content_list(doc), indent=1, ensure_ascii=False))
    (out_dir / "document.json").write_text(doc.model_dump_json(indent=1))
    if overlays:
        write_overlays(doc, file, out_dir / "overlays")
    counts: dict[str, int] = {}
    for u in doc.units:
        counts[u.modality] = counts.get(u.modality, 0) + 1
    out.print(f"[bold]{doc.filename}[/bold] ({doc.doc_id})", highlight=False)
    table = Table()
    table.add_column("modality")
    table.add_column("units", justify="right")
    for k in sorted(counts):
        table.add_row(k, str(counts[k]))
    table.add_row("[bold]pages", str(doc.n_pages))
    ocr = sum(p.ocr for p in doc.pages)
    if ocr:
        table.add_row("[bold]OCR pages", str(ocr))
    out.print(table)
    out.print(f"wrote {out_dir / 'content_list.json'}")


@app.command()
@_friendly
def ingest(paths: list[Path] = typer.Argument(..., help="Files or directories."),
           workspace: Optional[str] = typer.Option(None, "--workspace", "-w"),
           config: Optional[Path] = typer.Option(None, "--config", help="YAML config."),
           as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
           local: bool = typer.Option(False, "--local", help="Run in-process, without Ray.")):
    """Ingest documents into every index (resumable; re-ingesting is a no-op)."""
    from docray.engine.cli_ingest import run_ingest

    result = run_ingest(paths, config, workspace, as_json, local)
    if result["ok"] == 0 and result["failed"]:
        raise typer.Exit(1)


@app.command()
@_friendly
def delete(doc: str = typer.Argument(..., help="doc_id, doc_id prefix or file name."),
           workspace: Optional[str] = typer.Option(None, "--workspace", "-w"),
           config: Optional[Path] = typer.Option(None, "--config", help="YAML config.")):
    """Remove a document from every store; the graph is updated incrementally."""
    from docray.engine.cli_ingest import run_delete

    run_delete(doc, config, workspace)


@app.command()
@_friendly
def query(question: Optional[str] = typer.Argument(None, help="The question."),
          questions: Optional[Path] = typer.Option(None, "--questions",
                                                   help="JSONL of {id, question, doc?}."),
          workspace: Optional[str] = typer.Option(None, "--workspace", "-w"),
          doc: Optional[str] = typer.Option(None, "--doc", help="Restrict to one document."),
          mode: str = typer.Option("hybrid", "--mode",
                                   help="hybrid, chunk-only, graph-only, page-only, no-rerank"),
          top_k: int = typer.Option(5, "--top-k", min=1, max=50),
          config: Optional[Path] = typer.Option(None, "--config", help="YAML config."),
          as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """Answer a question (or a JSONL batch) with citations, or abstain."""
    from docray.engine.cli_query import run_query

    run_query(question, questions, config, workspace, doc, mode, top_k, as_json)


@app.command()
@_friendly
def demo(out_dir: Path = typer.Option(Path("out/demo"), "--out", help="Output directory."),
         config: Optional[Path] = typer.Option(None, "--config", help="YAML config.")):
    """The README's main job on the embedded default: generate the sample documents,
    ingest them on Ray Data into every index, and answer questions with citations."""
    from docray.engine.cli_demo import run_demo

    run_demo(out_dir, _config(config))


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
