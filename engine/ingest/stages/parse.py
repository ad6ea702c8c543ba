"""Stage: parse.

Input row:  path, workspace, doc_id
Output row: + doc (Document JSON), n_pages; or status=failed + error
Ray: a task per document (CPU), concurrency from ``ingest.parse_concurrency``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from docray.engine.config import DocrayConfig
from docray.engine.ingest.stages import failed, stage


def parse_row(row: dict[str, Any], cfg: DocrayConfig) -> dict[str, Any]:
    from docray.engine.index.artifacts import ArtifactStore
    from docray.engine.parse import get_parser

    row = dict(row)
    if failed(row):
        return row
    with stage(row, "parse"):
        artifacts = ArtifactStore(cfg.paths.data_dir / "artifacts", workspace=row["workspace"])
        doc = get_parser(cfg.parse, artifacts).parse(Path(row["path"]), doc_id=row["doc_id"])
        row["doc"] = doc.model_dump_json()
        row["n_pages"] = doc.n_pages
    return row


class ParseFn:
    """Ray wrapper: the config travels once per worker, not once per row."""

    def __init__(self, cfg_json: str):
        self.cfg = DocrayConfig.model_validate_json(cfg_json)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        return parse_row(row, self.cfg)
