"""``docray query``: one question or a JSONL batch, answers with citations."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from docray.engine.cli.base import CONFIG_OPTION, app, friendly, load, out


class Session:
    """Opens stores and models once; answers many questions (batch mode, benchmarks)."""

    def __init__(self, config: Optional[Path] = None, cfg=None):
        from docray.engine.ingest.stores import Stores
        from docray.engine.retrieve.engine import QueryEngine
        from docray.engine.retrieve.parts import build_parts

        self.cfg = cfg or load(config)
        self.stores = Stores.open(self.cfg)
        self.engine = QueryEngine(self.cfg, build_parts(self.cfg, self.stores))

    def warm(self, workspace: Optional[str] = None) -> int:
        """Read the workspace's statements (every table row under a year column, per
        document) now, before a batch's first question, as the Serve Synthesis replica does
        at start; otherwise each document's first question pays it (17 ms median, 190 ms
        for a 230-page 10-K). The graph's name index likewise (the first question paid
        5.8 s for it on the qa.jsonl corpus). Returns how many documents were read."""
        ws = workspace or self.cfg.paths.workspace
        self.engine.p.graph.warm(ws)  # the graph's name index, as the GraphWalk replica
        tables = getattr(self.engine.p.answerer, "tables", None)
        return tables.warm(ws) if tables is not None else 0

    def resolve_doc(self, workspace: str, ref: Optional[str]) -> Optional[list[str]]:
        from docray.engine.errors import BadInput

        if not ref:
            return None
        row = self.stores.catalog.find(workspace, ref)
        if row is None:
            raise BadInput("doc", f"no document {ref!r} in workspace {workspace!r}")
        return [row["doc_id"]]

    async def ask(self, question: str, workspace: Optional[str] = None, doc: Optional[str] = None,
                  mode: str = "hybrid", top_k: int = 5) -> dict[str, Any]:
        ws = workspace or self.cfg.paths.workspace
        result = await self.engine.query(question, ws, self.resolve_doc(ws, doc), mode, top_k)
        return to_json(result)

    def close(self) -> None:
        self.stores.close()


def to_json(result) -> dict[str, Any]:
    a = result.answer
    return {"answer": a.answer, "abstained": a.abstained, "reason": a.reason,
            "value": getattr(a, "value", "") if not a.abstained else "",
            "support": getattr(a, "support", "") if not a.abstained else "",
            "evidence": [e.model_dump(exclude={"chunk_id"}) for e in a.evidence],
            "timings": result.timings}


def run_query(question: Optional[str], questions: Optional[Path], config: Optional[Path],
              workspace: Optional[str], doc: Optional[str], mode: str, top_k: int,
              as_json: bool) -> None:
    from docray.engine.errors import BadInput

    if bool(question) == bool(questions):
        raise BadInput("question", "give either a QUESTION or --questions FILE.jsonl")
    session = Session(config)
    try:
        if questions:
            asyncio.run(_batch(session, questions, workspace, mode, top_k))
            return
        res = asyncio.run(session.ask(question, workspace, doc, mode, top_k))
        typer.echo(json.dumps(res)) if as_json else print_answer(question, res)
    finally:
        session.close()


async def _batch(session: Session, path: Path, workspace, mode: str, top_k: int) -> None:
    from docray.engine.errors import BadInput

    session.warm(workspace)
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            q = item["question"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise BadInput(f"{path}:{n}", "each line must be a JSON object with a 'question'")
        res = await session.ask(q, workspace, item.get("doc"), mode, top_k)
        typer.echo(json.dumps({"id": item.get("id"), **res}))


def print_answer(question: str, res: dict) -> None:
    out.print(f"[bold]Q:[/bold] {question}", highlight=False)
    if res["abstained"]:
        out.print(f"[yellow]A: Not answerable[/yellow] — {res['reason']}", highlight=False)
    else:
        out.print(f"[green]A:[/green] {res['answer']}", highlight=False)
        if res.get("support") and res["support"] not in res["answer"]:
            out.print(f"   [dim]{res['support'][:300]}[/dim]", highlight=False)
    t = Table(show_lines=False)
    for col in ("#", "doc", "page", "modality", "score", "text"):
        t.add_column(col)
    for i, e in enumerate(res["evidence"], 1):
        t.add_row(str(i), e["doc"], str(e["page"]), e["modality"], f"{e['score']:.3f}",
                  e["text"][:90].replace("\n", " "))
    out.print(t)


@app.command()
@friendly
def query(question: Optional[str] = typer.Argument(None, help="The question."),
          questions: Optional[Path] = typer.Option(None, "--questions",
                                                   help="JSONL of {id, question, doc?}."),
          workspace: Optional[str] = typer.Option(None, "--workspace", "-w"),
          doc: Optional[str] = typer.Option(None, "--doc", help="Restrict to one document."),
          mode: str = typer.Option("hybrid", "--mode",
                                   help="hybrid, chunk-only, graph-only, page-only, no-rerank"),
          top_k: int = typer.Option(5, "--top-k", min=1, max=50),
          config: Optional[Path] = CONFIG_OPTION,
          as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """Answer a question (or a JSONL batch) with citations, or abstain."""
    run_query(question, questions, config, workspace, doc, mode, top_k, as_json)
