"""LLM entity/relation extractor over an OpenAI-compatible ``/v1/chat/completions``.

Each passage is sent with a ``response_format`` JSON schema (vLLM structured output); the
reply is validated with pydantic. A reply that is not valid JSON of that shape (or a 4xx)
is logged and that passage falls back to the lexical extractor. An unreachable server or a
5xx raises :class:`~docray.engine.errors.Unavailable` so the pipeline can retry.
"""
from __future__ import annotations

import json
import logging
from typing import Any, Sequence

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from docray.engine.config import ExtractConfig
from docray.engine.errors import ConfigError, Unavailable
from docray.engine.graph.align import split_definition
from docray.engine.graph.extract.base import Accumulator, Passage, entity_id, passages
from docray.engine.graph.extract.lexical import LexicalExtractor
from docray.engine.model import Chunk, Entity, Relation, Unit

log = logging.getLogger(__name__)


class LLMEntity(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1)
    type: str = "concept"
    description: str = ""


class LLMRelation(BaseModel):
    model_config = ConfigDict(extra="ignore")
    src: str = Field(min_length=1)
    dst: str = Field(min_length=1)
    type: str = "related_to"
    description: str = ""
    weight: float = Field(1.0, ge=0)


class LLMGraph(BaseModel):
    model_config = ConfigDict(extra="ignore")
    entities: list[LLMEntity]
    relations: list[LLMRelation] = Field(default_factory=list)


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {"type": "array", "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "type": {"type": "string"},
                           "description": {"type": "string"}},
            "required": ["name", "type", "description"]}},
        "relations": {"type": "array", "items": {
            "type": "object",
            "properties": {"src": {"type": "string"}, "dst": {"type": "string"},
                           "type": {"type": "string"}, "description": {"type": "string"},
                           "weight": {"type": "number"}},
            "required": ["src", "dst", "type", "description", "weight"]}},
    },
    "required": ["entities", "relations"],
}

SYSTEM = ("You extract a knowledge graph from document text. Return JSON only. Entities are "
          "named things, concepts, metrics and quantities with units; use the surface form from "
          "the text as the name. Relations link two entity names from your entity list; weight "
          "is 1-10 for how strongly the text supports the relation.")


def completions_url(base: str) -> str:
    """``{base}/v1/chat/completions`` whether or not ``base`` already ends in ``/v1``.

    >>> completions_url("http://127.0.0.1:8000/v1/")
    'http://127.0.0.1:8000/v1/chat/completions'
    """
    base = base.rstrip("/")
    return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"


class LLMExtractor:
    """:class:`~docray.engine.graph.extract.Extractor` backed by a served LLM."""

    def __init__(self, config: ExtractConfig, client: httpx.Client | None = None,
                 timeout_s: float = 60.0):
        if not config.llm_url:
            raise ConfigError("extract.llm_url is required for the llm extractor backend")
        self.config, self.url = config, completions_url(config.llm_url)
        self.client = client or httpx.Client(timeout=timeout_s)
        self.fallback = LexicalExtractor(config)

    def request_body(self, text: str) -> dict[str, Any]:
        return {
            "model": self.config.llm_model,
            "temperature": 0.0,
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": f"Text:\n{text}"}],
            "response_format": {"type": "json_schema", "json_schema": {
                "name": "knowledge_graph", "schema": SCHEMA, "strict": True}},
        }

    def extract(self, items: Sequence[Chunk | Unit]) -> tuple[list[Entity], list[Relation]]:
        acc = Accumulator()
        for p in passages(items):
            graph = self._ask(p.text) if p.text.strip() else None
            if graph is None:
                self.fallback.extract_passage(p, acc)
            else:
                add_graph(graph, p, acc, self.config.max_entities_per_chunk)
        return acc.result()

    def _ask(self, text: str) -> LLMGraph | None:
        """The validated graph for one passage, or None when the reply is unusable."""
        try:
            resp = self.client.post(self.url, json=self.request_body(text))
        except httpx.HTTPError as err:
            raise Unavailable(f"LLM extractor at {self.url} unreachable: {err}") from err
        if resp.status_code >= 500 or resp.status_code == 429:
            raise Unavailable(f"LLM extractor at {self.url} answered {resp.status_code}")
        if resp.status_code >= 400:
            log.warning("LLM extractor %s answered %s; using lexical fallback",
                        self.url, resp.status_code)
            return None
        try:
            return parse_graph(resp.json()["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError, ValueError, ValidationError) as err:
            log.warning("LLM extractor reply invalid (%s); using lexical fallback",
                        str(err).splitlines()[0][:200])
            return None


def parse_graph(content: str) -> LLMGraph:
    """A reply's JSON as an :class:`LLMGraph` (raises ValueError / ValidationError)."""
    return LLMGraph.model_validate(json.loads(content, strict=False))


def add_graph(graph: LLMGraph, p: Passage, acc: Accumulator, max_entities: int) -> None:
    """Merge one passage's extracted graph into ``acc``, as the lexical extractor does."""
    ids: dict[str, str] = {}
    for e in graph.entities[:max_entities]:
        name, aliases = split_definition(e.name)
        eid = acc.entity(name, e.type.lower(), p, aliases, description=e.description)
        if eid:
            ids[entity_id(e.name)] = ids[entity_id(name)] = eid
    for r in graph.relations:
        src = ids.get(entity_id(r.src)) or acc.entity(r.src, "concept", p)
        dst = ids.get(entity_id(r.dst)) or acc.entity(r.dst, "concept", p)
        if src and dst:
            acc.relation(src, dst, r.type.lower().replace(" ", "_"), r.weight, p)
    acc.belongs_to(list(dict.fromkeys(ids.values())), p)
