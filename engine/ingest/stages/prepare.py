"""Stage: prepare = parse → describe + chunk → graph, back to back in one worker.

Input row:  path, workspace, doc_id
Output row: + doc, n_pages (parse), chunks (describe_chunk), graph (graph)
Ray: an actor pool of ``ingest.parse_concurrency`` actors of ``ingest.parse_num_cpus`` CPUs,
so the parser's OCR/layout engines, the describer and the extractor load once per actor.

Used when neither describe nor extract is a ``vllm`` pass (those passes are barriers
between the stages, so the stages then stay apart). The three are CPU work over the same
Document; one worker doing them in a row saves two processes (memory) and two trips of
the document through the object store, and keeps one busy thread per CPU it asked for.
"""
from __future__ import annotations

from typing import Any

from docray.engine.config import DocrayConfig
from docray.engine.ingest.threads import set_worker_threads


def fused(cfg: DocrayConfig) -> bool:
    """True when parse, describe+chunk and graph can run as one prepare stage."""
    return "vllm" not in (cfg.describe.backend, cfg.extract.backend)


class PrepareFn:
    """Ray actor-pool wrapper: the parse, describe+chunk and graph stages in one worker."""

    def __init__(self, cfg_json: str):
        from docray.engine.ingest.stages.describe_chunk import DescribeChunkFn
        from docray.engine.ingest.stages.graph import GraphFn

        self.cfg = DocrayConfig.model_validate_json(cfg_json)
        set_worker_threads(0, self.cfg.ingest.parse_threads)
        self.describe, self.graph = DescribeChunkFn(cfg_json), GraphFn(cfg_json)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        from docray.engine.ingest.stages.parse import parse_row

        return self.graph(self.describe(parse_row(row, self.cfg)))
