"""``docray demo``: the main job end to end on generated sample documents."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Optional

import typer

from docray.engine.cli.base import CONFIG_OPTION, app, friendly, load, out


def run_demo(out_dir: Path, cfg) -> None:
    from docray.engine.cli.ingest import print_summary
    from docray.engine.cli.query import Session, print_answer
    from docray.engine.ingest import ingest
    from docray.engine.parse.overlay import write_overlays
    from docray.engine.samples import QUESTIONS, write_samples

    cfg = cfg.model_copy(update={"paths": cfg.paths.model_copy(
        update={"data_dir": out_dir / "data", "workspace": "demo"})})
    pdfs = write_samples(out_dir / "samples")
    out.print(f"[bold]1. ingest[/bold] {len(pdfs)} sample documents into {out_dir / 'data'}")
    print_summary(ingest(pdfs, cfg, "demo").to_dict())
    out.print("[bold]2. answer[/bold] questions with citations (doc, page, bbox)")
    session = Session(cfg=cfg)
    try:
        for q in [*QUESTIONS, "What is the airspeed velocity of an unladen swallow?"]:
            print_answer(q, asyncio.run(session.ask(q, "demo")))
        docs = session.stores.catalog.list("demo", "done")
    finally:
        session.close()
    from docray.engine.model import Document
    from docray.engine.parse import get_parser

    for pdf in pdfs:
        doc: Document = get_parser(cfg.parse).parse(pdf)
        write_overlays(doc, pdf, out_dir / "overlays" / pdf.stem)
    out.print(f"[bold]3. inspect[/bold] overlays of every parsed page in {out_dir / 'overlays'}; "
              f"{len(docs)} documents indexed")


@app.command()
@friendly
def demo(out_dir: Path = typer.Option(Path("out/demo"), "--out", help="Output directory."),
         config: Optional[Path] = CONFIG_OPTION):
    """The README's main job on the embedded default: generate the sample documents,
    ingest them on Ray Data into every index, and answer questions with citations."""
    run_demo(out_dir, load(config))
