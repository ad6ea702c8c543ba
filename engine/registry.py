"""Lazy string-keyed registries, one per extension point.

A registry maps a config key to ``"module:Class"``; the module is imported on first
use, so optional GPU backends cost nothing until chosen.

>>> r = Registry("demo", {"path": "pathlib:PurePosixPath"})
>>> r.resolve("path").__name__
'PurePosixPath'
"""
from __future__ import annotations

import importlib
from typing import Any

from docray.engine.errors import ConfigError


class Registry:
    def __init__(self, kind: str, entries: dict[str, str], protocol: type | None = None):
        self.kind, self.protocol = kind, protocol
        self._entries = dict(entries)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def register(self, name: str, target: str) -> None:
        if ":" not in target:
            raise ValueError(f"{self.kind} target {target!r} must be 'module:Class'")
        self._entries[name] = target

    def resolve(self, name: str) -> Any:
        try:
            target = self._entries[name]
        except KeyError:
            raise ConfigError(
                f"unknown {self.kind} backend {name!r}; known: {', '.join(self.names())}"
            ) from None
        module, _, attr = target.partition(":")
        return getattr(importlib.import_module(module), attr)

    def create(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self.resolve(name)(*args, **kwargs)


PARSERS = Registry("parser", {
    "native": "docray.engine.parse.native:NativeParser",
    "content_list": "docray.engine.parse.content_list:ContentListParser",
    "mineru": "docray.engine.parse.mineru:MinerUParser",
})

EXTRACTORS = Registry("extractor", {
    "lexical": "docray.engine.graph.extract.lexical:LexicalExtractor",
    "llm": "docray.engine.graph.extract.llm:LLMExtractor",
})


def _protocol(module: str, name: str) -> type | None:
    """The protocol class for a registry (protocol modules import nothing heavy)."""
    return getattr(importlib.import_module(module), name)


DESCRIBERS = Registry("describer", {
    "structural": "docray.engine.describe.structural:StructuralDescriber",
    "vlm": "docray.engine.describe.vlm:VLMDescriber",
}, protocol=_protocol("docray.engine.describe.base", "Describer"))

TEXT_ENCODERS = Registry("text encoder", {
    "minilm": "docray.engine.embed.minilm:MiniLMEncoder",
    "sentence_transformers": "docray.engine.embed.minilm:MiniLMEncoder",
    "openai": "docray.engine.embed.openai_http:OpenAIEmbeddingEncoder",
    "triton": "docray.engine.embed.triton:TritonTextEncoder",
}, protocol=_protocol("docray.engine.embed.base", "TextEncoder"))

PAGE_ENCODERS = Registry("page encoder", {
    "text-tokens": "docray.engine.embed.text_tokens:TextTokensPageEncoder",
    "colpali": "docray.engine.embed.colpali:ColPaliPageEncoder",
}, protocol=_protocol("docray.engine.embed.base", "PageEncoder"))
