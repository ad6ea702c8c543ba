"""VLM describer over an OpenAI-compatible ``/v1/chat/completions`` (e.g. vLLM + Qwen2.5-VL).

Each table/figure/equation is sent with a context-aware prompt (``prompts/*.txt``: the
caption, the unit's own text and the same-page ±δ context) and, when it has a crop in the
artifact store, the crop as a base64 ``data:`` URL. The reply must be JSON
``{"description": str, "entities": [{"name", "type"}]}``, validated with pydantic. An
invalid reply is retried once, then the unit falls back to the structural proxy (logged).
An unreachable server, a 5xx or a 429 raises :class:`~docray.engine.errors.Unavailable`.
"""
from __future__ import annotations

import base64
import json
import logging
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from docray.engine.config import DescribeConfig
from docray.engine.describe.base import describe_missing
from docray.engine.describe.structural import StructuralDescriber, take_budget
from docray.engine.errors import ConfigError, DocrayError, Unavailable
from docray.engine.model import Unit
from pydantic import BaseModel, ConfigDict, Field, ValidationError

if TYPE_CHECKING:
    from docray.engine.index.artifacts import ArtifactStore

log = logging.getLogger(__name__)
PROMPTS = Path(__file__).parent / "prompts"
MAX_CONTENT_WORDS = 1500
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {"type": "string"},
        "entities": {"type": "array", "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "type": {"type": "string"}},
            "required": ["name", "type"]}},
    },
    "required": ["description", "entities"],
}


class VLMEntity(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1)
    type: str = "concept"


class VLMDescription(BaseModel):
    model_config = ConfigDict(extra="ignore")
    description: str = Field(min_length=1)
    entities: list[VLMEntity] = Field(default_factory=list)

    def as_text(self) -> str:
        names = "; ".join(dict.fromkeys(e.name.strip() for e in self.entities if e.name.strip()))
        return self.description.strip() + (f"\nEntities: {names}" if names else "")


@lru_cache(maxsize=None)
def prompt(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8").strip()


def completions_url(base: str) -> str:
    """``{base}/v1/chat/completions`` whether or not ``base`` already ends in ``/v1``.

    >>> completions_url("http://127.0.0.1:8000/v1/")
    'http://127.0.0.1:8000/v1/chat/completions'
    """
    base = base.rstrip("/")
    return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"


def _mime(data: bytes) -> str:
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    return "image/webp" if data[8:12] == b"WEBP" else "application/octet-stream"


def page_context(units: list[Unit], i: int, pages: int = 1) -> list[str]:
    """Sentences of the text on the pages around ``units[i]`` (its page first, then ±1, …)."""
    from docray.engine.describe.structural import CONTEXT_MODALITIES, sentences

    page, found = units[i].page, []
    for d in range(pages + 1):
        for p in sorted({page - d, page + d}):
            for j, u in enumerate(units):
                if j != i and u.page == p and u.modality in CONTEXT_MODALITIES:
                    found.extend(sentences(u.text))
    return list(dict.fromkeys(found))


def request_body(config: DescribeConfig, structural: StructuralDescriber, artifacts,
                 units: list[Unit], i: int, model: str | None = None) -> dict[str, Any]:
    """The chat request for ``units[i]`` (RAG-Anything's context: its caption, the unit's
    own content, the neighbouring text, sentences that cite it, then the text of the pages
    around it), with its crop as an image part when there is one."""
    unit = units[i]
    context = take_budget(structural.context(units, i) + structural.references(units, i)
                          + page_context(units, i, config.context_pages),
                          config.context_tokens)
    content = unit.display_text() if unit.modality == "table" else unit.text
    text = prompt(unit.modality).format(
        caption=unit.caption or "(none)",
        content=" ".join(content.split()[:MAX_CONTENT_WORDS]) if unit.modality != "table"
        else "\n".join(content.splitlines()[:200]) or "(none)",
        context=" ".join(dict.fromkeys(context)) or "(none)")
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    image = image_url(artifacts, unit)
    if image:
        parts.append({"type": "image_url", "image_url": {"url": image}})
    return {
        "model": model or config.vlm_model,
        "temperature": 0.0,
        "messages": [{"role": "system", "content": prompt("system")},
                     {"role": "user", "content": parts}],
        "response_format": {"type": "json_schema", "json_schema": {
            "name": "unit_description", "schema": SCHEMA, "strict": True}},
    }


def image_url(artifacts, unit: Unit) -> str | None:
    """The unit's crop as a ``data:`` URL (None without one, or when it is unreadable)."""
    if not unit.artifact_id or artifacts is None:
        return None
    try:
        data = artifacts.read(unit.artifact_id)
    except DocrayError as err:
        log.warning("crop %s of unit %s unreadable (%s); describing from text only",
                    unit.artifact_id, unit.unit_id, err)
        return None
    return f"data:{_mime(data)};base64,{base64.b64encode(data).decode('ascii')}"


def parse_reply(content: str) -> VLMDescription:
    """A reply's JSON as a :class:`VLMDescription` (raises ValueError / ValidationError)."""
    return VLMDescription.model_validate(json.loads(_strip_fence(content), strict=False))


class VLMDescriber:
    """:class:`~docray.engine.describe.Describer` backed by a served VLM."""

    def __init__(self, config: DescribeConfig, artifacts: "ArtifactStore | None" = None,
                 client: httpx.Client | None = None):
        if not config.vlm_url:
            raise ConfigError("describe.vlm_url is required for the vlm describer backend")
        self.config, self.url, self.artifacts = config, completions_url(config.vlm_url), artifacts
        self.client = client or httpx.Client(timeout=config.timeout_s)
        self.fallback = StructuralDescriber(config)

    def describe(self, units: list[Unit]) -> list[Unit]:
        return describe_missing(units, self.describe_one)

    def describe_one(self, units: list[Unit], i: int) -> str:
        body = self.request_body(units, i)
        for attempt in (1, 2):
            reply = self._ask(body)
            if reply is not None:
                return reply.as_text()
            log.warning("VLM reply for unit %s invalid (attempt %d/2)", units[i].unit_id, attempt)
        log.warning("VLM gave no valid description for unit %s; using the structural proxy",
                    units[i].unit_id)
        return self.fallback.proxy(units, i)

    def request_body(self, units: list[Unit], i: int) -> dict[str, Any]:
        return request_body(self.config, self.fallback, self.artifacts, units, i)

    def _ask(self, body: dict[str, Any]) -> VLMDescription | None:
        """The validated reply, or None when it is unusable (invalid JSON, 4xx)."""
        try:
            resp = self.client.post(self.url, json=body)
        except httpx.HTTPError as err:
            raise Unavailable(f"VLM at {self.url} unreachable: {err}") from err
        if resp.status_code >= 500 or resp.status_code == 429:
            raise Unavailable(f"VLM at {self.url} answered {resp.status_code}")
        if resp.status_code >= 400:
            log.warning("VLM at %s answered %s", self.url, resp.status_code)
            return None
        try:
            return parse_reply(resp.json()["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError, ValueError, ValidationError) as err:
            log.warning("VLM reply invalid: %s", str(err).splitlines()[0][:200])
            return None


def _strip_fence(content: str) -> str:
    """Models sometimes wrap JSON in a Markdown code fence; drop it.

    >>> _strip_fence('```json\\n{"a": 1}\\n```')
    '{"a": 1}'
    """
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text.strip()
