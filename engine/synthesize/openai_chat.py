"""Generative answerers over the OpenAI chat format (a vLLM server, ``ray.serve.llm``).

Sends the context with modality delimiters and, for a VLM, the dereferenced page /
figure / table images as data URLs; streams tokens; parses the model's citation
markers ``[n]`` back into evidence indexes. "Not answerable" from the model becomes an
abstention.
"""
from __future__ import annotations

import base64
import json
import logging
import re
from abc import ABC, abstractmethod
from typing import AsyncIterator

import httpx

from docray.engine.errors import Unavailable
from docray.engine.index.artifacts import media_type
from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.abstain import NOT_ANSWERABLE
from docray.engine.synthesize.citations import to_evidence
from docray.engine.synthesize.context import build_context

log = logging.getLogger(__name__)

SYSTEM = ("Answer the question using only the numbered sources. Cite sources as [n]. "
          f"If the sources do not contain the answer, reply exactly '{NOT_ANSWERABLE}' "
          "followed by one sentence saying why.")


SYSTEM_JSON = ("Answer the question using only the numbered sources. Reply in JSON: the "
               "answer, the numbers of the sources it rests on, and answerable=false (with the "
               "answer saying why) when the sources do not contain it.")


def reply_schema(n_sources: int, max_chars: int) -> dict:
    """``synthesize.reply_format: json``: the answer (at most ``max_chars``), its citations
    (source numbers that exist) and whether it is answerable. With no free whitespace the
    reply has at most ``max_chars`` + ~100 characters, so it closes inside max_tokens when
    max_tokens is that large (a token is at least a character)."""
    return {"type": "object", "additionalProperties": False,
            "properties": {
                "answer": {"type": "string", "maxLength": max_chars},
                "citations": {"type": "array", "maxItems": 4, "items": {
                    "type": "integer", "enum": list(range(1, max(1, n_sources) + 1))}},
                "answerable": {"type": "boolean"}},
            "required": ["answer", "citations", "answerable"]}


def json_answer(text: str, passages: list[Passage]) -> Answer:
    """A JSON reply (:func:`reply_schema`) as an :class:`Answer`; an unparsable one is
    an abstention that says so, never a guess."""
    evidence = to_evidence(passages)
    try:
        reply = json.loads(text, strict=False)  # control characters inside strings pass
        answer, cites = str(reply["answer"]).strip(), [int(n) for n in reply["citations"]]
        answerable = bool(reply["answerable"])
    except (ValueError, KeyError, TypeError) as err:
        log.warning("model reply is not the answer JSON (%s): %r", err, text[:300])
        return Answer(answer=NOT_ANSWERABLE, abstained=True, evidence=evidence,
                      reason=f"model reply unparsable: {type(err).__name__}")
    if not answerable:
        return Answer(answer=NOT_ANSWERABLE, abstained=True, evidence=evidence,
                      reason=answer or "model abstained")
    return Answer(answer=answer, abstained=False, evidence=evidence, confidence=1.0,
                  citations=sorted({n - 1 for n in cites if 0 < n <= len(passages)}))


async def answer_field(tokens: AsyncIterator[str]) -> AsyncIterator[str]:
    """Stream the ``answer`` string of a JSON reply as it is generated (escapes decoded)."""
    buf, start, sent = "", -1, 0
    async for token in tokens:
        buf += token
        if start < 0:
            m = re.search(r'"answer"\s*:\s*"', buf)
            if not m:
                continue
            start = m.end()
        end = _string_end(buf, start)
        text = _decoded_prefix(buf[start:] if end < 0 else buf[start:end])
        if len(text) > sent:
            yield text[sent:]
            sent = len(text)
        if end >= 0:
            return


def _string_end(buf: str, start: int) -> int:
    """Index of the closing quote of the JSON string that starts at ``start`` (-1: open)."""
    i = start
    while i < len(buf):
        if buf[i] == "\\":
            i += 2
        elif buf[i] == '"':
            return i
        else:
            i += 1
    return -1


def _decoded_prefix(body: str) -> str:
    r"""The longest prefix of a JSON string body that decodes (a half escape waits).

    >>> _decoded_prefix(r'caf\u00e9 \u00')
    'café '
    """
    for cut in range(len(body), max(-1, len(body) - 7), -1):
        try:
            return json.loads(f'"{body[:cut]}"')
        except ValueError:
            continue
    return ""


class ChatAnswerer(ABC):
    """The prompt, the image parts and the reply parsing of a chat-model answerer; the
    transport (``_complete``, ``_stream``) is the subclass's: HTTP here, an in-process
    vLLM engine in :mod:`docray.serve_apps.synthesis.llm`."""

    name = "chat"

    def __init__(self, model: str, artifacts=None, max_images: int = 4,
                 budget_tokens: int = 3000, max_tokens: int = 512, reply_format: str = "text",
                 max_chars: int = 1200):
        self.model, self.artifacts, self.max_images, self.max_chars = (model, artifacts,
                                                                       max_images, max_chars)
        self.budget, self.max_tokens, self.json = budget_tokens, max_tokens, reply_format == "json"

    def _images(self, passages: list[Passage]) -> list[dict]:
        out: list[dict] = []
        for p in passages:
            for u in p.units:
                if u.artifact_id and self.artifacts is not None and len(out) < self.max_images:
                    data = base64.b64encode(self.artifacts.read(u.artifact_id)).decode()
                    out.append({"type": "image_url",
                                "image_url": {"url": f"data:{media_type(u.artifact_id)};"
                                                             f"base64,{data}"}})
        return out

    def payload(self, question: str, passages: list[Passage], stream: bool) -> dict:
        """The chat request: sources with modality delimiters, then the question and the
        dereferenced crops as image parts (at most ``max_images``)."""
        context = build_context(passages, self.budget)
        content = [{"type": "text", "text": f"Sources:\n{context}\n\nQuestion: {question}"},
                   *self._images(passages)]
        body = {"model": self.model, "stream": stream, "temperature": 0,
                "max_tokens": self.max_tokens,
                "messages": [{"role": "system", "content": SYSTEM_JSON if self.json else SYSTEM},
                             {"role": "user", "content": content}]}
        if self.json:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "answer", "schema": reply_schema(len(passages), self.max_chars),
                "strict": True}}
        return body

    @abstractmethod
    async def _complete(self, payload: dict) -> str:
        """The reply's text for a non-streaming ``payload``."""

    @abstractmethod
    def _stream(self, payload: dict) -> AsyncIterator[str]:
        """The reply's text pieces for a streaming ``payload``."""

    async def answer(self, question: str, passages: list[Passage], qvec=None) -> Answer:
        text = await self._complete(self.payload(question, passages, False))
        return json_answer(text, passages) if self.json else to_answer(text, passages)

    async def stream(self, question: str, passages: list[Passage],
                     qvec=None) -> AsyncIterator[str]:
        tokens = self._stream(self.payload(question, passages, True))
        async for token in (answer_field(tokens) if self.json else tokens):
            yield token


def to_answer(text: str, passages: list[Passage]) -> Answer:
    """A model's reply as an :class:`Answer`: ``[n]`` markers become citations (indexes
    into the evidence), a reply that starts with "Not answerable" an abstention."""
    evidence = to_evidence(passages)
    cites = sorted({int(n) - 1 for n in re.findall(r"\[(\d+)\]", text)
                    if 0 < int(n) <= len(passages)})
    if text.strip().lower().startswith(NOT_ANSWERABLE.lower()):
        reason = text.strip()[len(NOT_ANSWERABLE):].strip(" .:-") or "model abstained"
        return Answer(answer=NOT_ANSWERABLE, abstained=True, evidence=evidence, reason=reason)
    return Answer(answer=text.strip(), abstained=False, evidence=evidence, citations=cites,
                  confidence=1.0)


def delta_text(line: str) -> str:
    """The content of one ``data: {chunk}`` server-sent line ('' for other lines)."""
    line = line.strip()
    if not line.startswith("data:") or line == "data: [DONE]":
        return ""
    chunk = json.loads(line[5:])
    if "error" in chunk:
        raise Unavailable(f"model stream failed: {chunk['error']}")
    choices = chunk.get("choices") or [{}]
    return choices[0].get("delta", {}).get("content") or ""


class OpenAIChatAnswerer(ChatAnswerer):
    name = "openai"

    def __init__(self, url: str, model: str, artifacts=None, max_images: int = 4,
                 budget_tokens: int = 3000, timeout_s: float = 120.0, api_key: str = "EMPTY",
                 max_tokens: int = 512, reply_format: str = "text", max_chars: int = 1200):
        if not url:
            raise Unavailable("synthesize.url is required for the openai answerer")
        super().__init__(model, artifacts, max_images, budget_tokens, max_tokens, reply_format,
                         max_chars)
        self.url, self.timeout, self.api_key = url.rstrip("/"), timeout_s, api_key

    def _headers(self) -> dict:
        return {"Authorization": f"Bearer {self.api_key}"}

    async def _complete(self, payload: dict) -> str:
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                r = await client.post(f"{self.url}/chat/completions", headers=self._headers(),
                                      json=payload)
                r.raise_for_status()
        except httpx.HTTPError as err:
            raise Unavailable(f"answerer at {self.url} failed: {err}") from None
        return r.json()["choices"][0]["message"]["content"] or ""

    async def _stream(self, payload: dict) -> AsyncIterator[str]:
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                async with client.stream("POST", f"{self.url}/chat/completions",
                                         headers=self._headers(), json=payload) as r:
                    r.raise_for_status()
                    async for line in r.aiter_lines():
                        text = delta_text(line)
                        if text:
                            yield text
        except httpx.HTTPError as err:
            raise Unavailable(f"answerer at {self.url} failed: {err}") from None
