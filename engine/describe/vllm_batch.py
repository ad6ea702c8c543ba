"""``describe.backend: vllm``: the requests of the Ray Data describe pass and the describer
that reads its replies (:mod:`docray.engine.ingest.stages.llm_pass`).

The requests are the VLM describer's own (:func:`~docray.engine.describe.vlm.request_body`:
caption, content, neighbouring text, citing sentences, the text of pages ±1, the crop for a
vision model), under a schema with length caps so that even a weak model's reply closes
inside ``llm.max_tokens``. A missing, failed or invalid reply leaves that unit the
structural proxy, and the cause is recorded for the ingest summary.
"""
from __future__ import annotations

import json
from typing import Any, Iterator

from docray.engine.config import DescribeConfig, DocrayConfig
from docray.engine.describe.base import describe_missing
from docray.engine.describe.structural import StructuralDescriber
from docray.engine.describe.vlm import parse_reply, request_body
from docray.engine.ingest.stages import failed
from docray.engine.ingest.stages.llm_pass import failure
from docray.engine.model import MULTIMODAL, Document, Unit


def describe_schema(max_chars: int) -> dict[str, Any]:
    """The VLM reply schema with caps: a description of at most ``max_chars``, at most
    eight entities with short names."""
    short = {"type": "string", "minLength": 1, "maxLength": 64}
    return {"type": "object", "additionalProperties": False,
            "properties": {
                "description": {"type": "string", "minLength": 1, "maxLength": max_chars},
                "entities": {"type": "array", "maxItems": 8, "items": {
                    "type": "object", "additionalProperties": False,
                    "properties": {"name": short, "type": {**short, "maxLength": 24}},
                    "required": ["name", "type"]}}},
            "required": ["description", "entities"]}


def item_key(unit: Unit) -> str:
    return f"{unit.doc_id}/{unit.unit_id}"


class DescribeRequests:
    """``flat_map`` over parsed rows: one request row per multimodal unit to describe."""

    def __init__(self, cfg_json: str):
        from docray.engine.index.artifacts import ArtifactStore

        self.cfg = DocrayConfig.model_validate_json(cfg_json)
        self.structural = StructuralDescriber(self.cfg.describe)
        self.artifacts = (ArtifactStore(self.cfg.paths.data_dir / "artifacts")
                          if self.cfg.llm.vision else None)  # a text model takes no images

    def __call__(self, row: dict[str, Any]) -> Iterator[dict[str, Any]]:
        if failed(row):
            return
        units = Document.model_validate_json(row["doc"]).units
        for i, unit in enumerate(units):
            if unit.modality in MULTIMODAL and not unit.description:
                body = request_body(self.cfg.describe, self.structural, self.artifacts,
                                    units, i, self.cfg.llm.served_name)
                yield {"key": item_key(unit), "messages": json.dumps(body["messages"])}


class RepliedDescriber:
    """A :class:`~docray.engine.describe.Describer` over the pass's replies."""

    def __init__(self, config: DescribeConfig, replies: dict[str, dict[str, str]]):
        self.replies, self.structural = replies, StructuralDescriber(config)
        self.failures: list[dict[str, str]] = []

    def describe(self, units: list[Unit]) -> list[Unit]:
        return describe_missing(units, self.describe_one)

    def take_failures(self) -> list[dict[str, str]]:
        out, self.failures = self.failures, []
        return out

    def describe_one(self, units: list[Unit], i: int) -> str:
        key = item_key(units[i])
        reply = self.replies.get(key)
        if reply is None:
            cause = "no reply from the describe pass"
        elif reply["error"]:
            cause = reply["error"]
        else:
            try:
                return parse_reply(reply["text"]).as_text()
            except ValueError as err:  # JSONDecodeError and pydantic's ValidationError
                cause = f"invalid reply ({str(err).splitlines()[0][:160]}): {reply['text'][:120]!r}"
        self.failures.append(failure(key, "describe", cause))
        return self.structural.proxy(units, i)
