"""Generative answerer over an OpenAI-compatible chat API (vLLM, ``ray.serve.llm``, …).

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
from typing import AsyncIterator

import httpx

from docray.engine.errors import Unavailable
from docray.engine.synthesize import Answer, Passage
from docray.engine.synthesize.abstain import NOT_ANSWERABLE
from docray.engine.synthesize.citations import to_evidence
from docray.engine.synthesize.context import build_context

log = logging.getLogger(__name__)

SYSTEM = ("Answer the question using only the numbered sources. Cite sources as [n]. "
          f"If the sources do not contain the answer, reply exactly '{NOT_ANSWERABLE}' "
          "followed by one sentence saying why.")


class OpenAIChatAnswerer:
    name = "openai"

    def __init__(self, url: str, model: str, artifacts=None, max_images: int = 4,
                 budget_tokens: int = 3000, timeout_s: float = 120.0, api_key: str = "EMPTY"):
        if not url:
            raise Unavailable("synthesize.url is required for the openai answerer")
        self.url, self.model = url.rstrip("/"), model
        self.artifacts, self.max_images, self.budget = artifacts, max_images, budget_tokens
        self.timeout, self.api_key = timeout_s, api_key

    def _images(self, passages: list[Passage]) -> list[dict]:
        out = []
        for p in passages:
            for u in p.units:
                if u.artifact_id and self.artifacts is not None and len(out) < self.max_images:
                    data = base64.b64encode(self.artifacts.read(u.artifact_id)).decode()
                    out.append({"type": "image_url",
                                "image_url": {"url": f"data:image/png;base64,{data}"}})
        return out

    def _payload(self, question: str, passages: list[Passage], stream: bool) -> dict:
        context = build_context(passages, self.budget)
        content = [{"type": "text", "text": f"Sources:\n{context}\n\nQuestion: {question}"},
                   *self._images(passages)]
        return {"model": self.model, "stream": stream, "temperature": 0,
                "messages": [{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": content}]}

    def _headers(self) -> dict:
        return {"Authorization": f"Bearer {self.api_key}"}

    async def answer(self, question: str, passages: list[Passage], qvec=None) -> Answer:
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                r = await client.post(f"{self.url}/chat/completions", headers=self._headers(),
                                      json=self._payload(question, passages, False))
                r.raise_for_status()
        except httpx.HTTPError as err:
            raise Unavailable(f"answerer at {self.url} failed: {err}") from None
        text = r.json()["choices"][0]["message"]["content"] or ""
        return self._to_answer(text, passages)

    def _to_answer(self, text: str, passages: list[Passage]) -> Answer:
        evidence = to_evidence(passages)
        cites = sorted({int(n) - 1 for n in re.findall(r"\[(\d+)\]", text)
                        if 0 < int(n) <= len(passages)})
        if text.strip().lower().startswith(NOT_ANSWERABLE.lower()):
            reason = text.strip()[len(NOT_ANSWERABLE):].strip(" .:-") or "model abstained"
            return Answer(answer=NOT_ANSWERABLE, abstained=True, evidence=evidence,
                          reason=reason)
        return Answer(answer=text.strip(), abstained=False, evidence=evidence, citations=cites,
                      confidence=1.0)

    async def stream(self, question: str, passages: list[Passage],
                     qvec=None) -> AsyncIterator[str]:
        payload = self._payload(question, passages, True)
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                async with client.stream("POST", f"{self.url}/chat/completions",
                                         headers=self._headers(), json=payload) as r:
                    r.raise_for_status()
                    async for line in r.aiter_lines():
                        if not line.startswith("data:") or line.strip() == "data: [DONE]":
                            continue
                        delta = json.loads(line[5:])["choices"][0].get("delta", {})
                        if delta.get("content"):
                            yield delta["content"]
        except httpx.HTTPError as err:
            raise Unavailable(f"answerer at {self.url} failed: {err}") from None
