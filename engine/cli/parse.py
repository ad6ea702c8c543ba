"""``docray parse``: one file to content_list.json, document.json, crops and overlays."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from docray.engine.cli.base import CONFIG_OPTION, app, friendly, load, out


@app.command()
@friendly
def parse(file: Path = typer.Argument(..., help="PDF, image or text file."),
          out_dir: Path = typer.Option(..., "--out", help="Output directory."),
          config: Optional[Path] = CONFIG_OPTION,
          overlays: bool = typer.Option(True, help="Write one overlay PNG per page.")):
    """Parse FILE into content_list.json, crops and per-page overlay PNGs."""
    from docray.engine.index.artifacts import ArtifactStore
    from docray.engine.parse import get_parser
    from docray.engine.parse.content_list import export_content_list
    from docray.engine.parse.overlay import write_overlays

    cfg = load(config)
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
