"""Stage: describe + chunk.

Input row:  doc
Output row: doc (units now carry ``description``), chunks (Chunk JSON list)
Ray: a step of ``DocEncodeActor`` (its own pool before a vLLM extraction pass); the
structural describer is pure CPU. The ``vlm`` describer calls an external server, so its
concurrency is bounded by the pool size.
"""
from __future__ import annotations

import json
from typing import Any

from docray.engine.config import DocrayConfig
from docray.engine.ingest.stages import failed, note_failures, stage
from docray.engine.model import Document


def describe_chunk_row(row: dict[str, Any], cfg: DocrayConfig, describer) -> dict[str, Any]:
    from docray.engine.ingest.chunking import chunk_units

    row = dict(row)
    if failed(row):
        return row
    with stage(row, "describe"):
        doc = Document.model_validate_json(row["doc"])
        units = describer.describe(doc.units)
        doc = doc.model_copy(update={"units": units})
        note_failures(row, describer)
        row["doc"] = doc.model_dump_json()
    if failed(row):
        return row
    with stage(row, "chunk"):
        chunks = chunk_units(doc.units, cfg.chunk, row["workspace"])
        row["chunks"] = json.dumps([c.model_dump() for c in chunks])
    return row


class DescribeChunkFn:
    """``replies``: the describe pass's (``describe.backend: vllm``), by item key."""

    def __init__(self, cfg_json: str, replies: dict | None = None):
        from docray.engine.describe import get_describer
        from docray.engine.index.artifacts import ArtifactStore

        self.cfg = DocrayConfig.model_validate_json(cfg_json)
        if self.cfg.describe.backend == "vllm":
            from docray.engine.describe.vllm_batch import RepliedDescriber

            self.describer = RepliedDescriber(self.cfg.describe, replies or {})
        else:
            self.describer = get_describer(self.cfg.describe,
                                           ArtifactStore(self.cfg.paths.data_dir / "artifacts"))

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        return describe_chunk_row(row, self.cfg, self.describer)
