"""Stage: graph extraction (table/figure/equation structure + text entities).

Input row:  doc, chunks
Output row: + graph (JSON: {"nodes": [...], "edges": [...]})
Ray: a step of ``DocEncodeActor`` (``stages/doc.py``) for ``lexical``; ``llm`` extraction
calls an external server.
"""
from __future__ import annotations

import json
from typing import Any

from docray.engine.config import DocrayConfig
from docray.engine.ingest.stages import failed, note_failures, stage
from docray.engine.model import Chunk, Document


def graph_row(row: dict[str, Any], extractor) -> dict[str, Any]:
    from docray.engine.graph import build_doc_graph

    row = dict(row)
    if failed(row):
        return row
    with stage(row, "graph"):
        doc = Document.model_validate_json(row["doc"])
        chunks = [Chunk.model_validate(c) for c in json.loads(row["chunks"])]
        nodes, edges = build_doc_graph(doc.units, chunks, extractor)
        note_failures(row, extractor)
        row["graph"] = json.dumps({"nodes": [_plain(n) for n in nodes],
                                   "edges": [_plain(e) for e in edges]})
    return row


def _plain(rec: Any) -> dict[str, Any]:
    if hasattr(rec, "model_dump"):
        return rec.model_dump()
    if hasattr(rec, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(rec)
    return dict(rec)


class GraphFn:
    """``replies``: the extraction pass's (``extract.backend: vllm``), by passage key."""

    def __init__(self, cfg_json: str, replies: dict | None = None):
        from docray.engine.graph.extract import make_extractor

        self.cfg = DocrayConfig.model_validate_json(cfg_json)
        if self.cfg.extract.backend == "vllm":
            from docray.engine.graph.extract.vllm_batch import RepliedExtractor

            self.extractor = RepliedExtractor(self.cfg.extract, replies or {})
        else:
            self.extractor = make_extractor(self.cfg.extract)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        return graph_row(row, self.extractor)
