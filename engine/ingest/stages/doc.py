"""Stage: describe + chunk → graph → encode for one parsed document, in one actor.

Input row:  doc (parsed)
Output row: what :class:`EncodeActor` writes (chunks, graph, vectors, token vectors)
Ray: one actor pool. The three stages ran as three pools, so every document's JSON was
serialized, stored and read back twice more between them, and each pool held a process of
its own (~0.7 GB PSS for describe and graph, ``benchmarks/results/ingest_repeat.json``).
On a small machine parsing is the bottleneck, and the three stages, one after the other,
keep up with it. A vLLM extraction pass sits between describe and graph: then describe
runs in its own pool and this actor starts at the graph (``describe=False``).
"""
from __future__ import annotations

from typing import Any


class DocEncodeActor:
    def __init__(self, cfg_json: str, describe_replies: dict | None = None,
                 extract_replies: dict | None = None, describe: bool = True):
        from docray.engine.ingest.stages.describe_chunk import DescribeChunkFn
        from docray.engine.ingest.stages.encode import EncodeActor
        from docray.engine.ingest.stages.graph import GraphFn

        self.steps = [DescribeChunkFn(cfg_json, describe_replies)] if describe else []
        self.steps += [GraphFn(cfg_json, extract_replies), EncodeActor(cfg_json)]

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        for step in self.steps:
            row = step(row)
        return row
