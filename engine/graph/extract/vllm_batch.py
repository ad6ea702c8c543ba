"""``extract.backend: vllm``: the requests of the Ray Data extraction pass and the extractor
that reads its replies (:mod:`docray.engine.ingest.stages.llm_pass`).

One request per passage (the chunks and multimodal units the graph builder gives any
extractor), with the LLM extractor's prompt under a schema whose caps let a weak model's
reply close inside ``llm.max_tokens``. Replies merge into the graph exactly as the HTTP
LLM extractor's do (:func:`~docray.engine.graph.extract.llm.add_graph`); a passage without
a usable reply gets the lexical extractor, and the cause is recorded.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Iterator, Sequence

from docray.engine.config import DocrayConfig, ExtractConfig
from docray.engine.graph.extract.base import Accumulator, Passage, passages
from docray.engine.graph.extract.lexical import LexicalExtractor
from docray.engine.graph.extract.llm import SYSTEM, add_graph, parse_graph
from docray.engine.ingest.stages import failed
from docray.engine.ingest.stages.llm_pass import failure
from docray.engine.model import Chunk, Document, Entity, Relation, Unit

MAX_WORDS = 400


def extract_schema(max_entities: int) -> dict[str, Any]:
    """The graph schema with caps: one to ``max_entities`` entities with short names,
    relation weights 1-10 (a passage always has something to name)."""
    name = {"type": "string", "minLength": 1, "maxLength": 64}
    text = {"type": "string", "maxLength": 120}
    return {"type": "object", "additionalProperties": False,
            "properties": {
                "entities": {"type": "array", "minItems": 1, "maxItems": max_entities, "items": {
                    "type": "object", "additionalProperties": False,
                    "properties": {"name": name, "type": {**name, "maxLength": 24},
                                   "description": text},
                    "required": ["name", "type", "description"]}},
                "relations": {"type": "array", "maxItems": max_entities, "items": {
                    "type": "object", "additionalProperties": False,
                    "properties": {"src": name, "dst": name, "type": {**name, "maxLength": 32},
                                   "description": text,
                                   "weight": {"type": "integer", "enum": list(range(1, 11))}},
                    "required": ["src", "dst", "type", "description", "weight"]}}},
            "required": ["entities", "relations"]}


def passage_key(p: Passage) -> str:
    return f"{p.doc_id}/{hashlib.sha1(p.text.encode()).hexdigest()[:16]}"


def messages(text: str) -> list[dict[str, Any]]:
    words = text.split()
    body = " ".join(words[:MAX_WORDS])
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Text:\n{body}"}]


class ExtractRequests:
    """``flat_map`` over described + chunked rows: one request row per passage."""

    def __init__(self, cfg_json: str):
        self.cfg = DocrayConfig.model_validate_json(cfg_json)

    def __call__(self, row: dict[str, Any]) -> Iterator[dict[str, Any]]:
        from docray.engine.graph import extract_items

        if failed(row):
            return
        units = Document.model_validate_json(row["doc"]).units
        chunks = [Chunk.model_validate(c) for c in json.loads(row["chunks"])]
        for p in passages(extract_items(units, chunks)):
            if p.text.strip():
                yield {"key": passage_key(p), "messages": json.dumps(messages(p.text))}


class RepliedExtractor:
    """An :class:`~docray.engine.graph.extract.Extractor` over the pass's replies."""

    def __init__(self, config: ExtractConfig, replies: dict[str, dict[str, str]]):
        self.config, self.replies = config, replies
        self.fallback = LexicalExtractor(config)
        self.failures: list[dict[str, str]] = []

    def take_failures(self) -> list[dict[str, str]]:
        out, self.failures = self.failures, []
        return out

    def extract(self, items: Sequence[Chunk | Unit]) -> tuple[list[Entity], list[Relation]]:
        acc = Accumulator()
        for p in passages(items):
            if not p.text.strip():
                continue
            key = passage_key(p)
            reply = self.replies.get(key)
            cause = ("no reply from the extraction pass" if reply is None
                     else reply["error"])
            if not cause:
                try:
                    add_graph(parse_graph(reply["text"]), p, acc,
                              self.config.max_entities_per_chunk)
                    continue
                except ValueError as err:
                    cause = (f"invalid reply ({str(err).splitlines()[0][:160]}): "
                             f"{reply['text'][:120]!r}")
            self.failures.append(failure(key, "extract", cause))
            self.fallback.extract_passage(p, acc)
        return acc.result()
