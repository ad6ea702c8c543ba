"""Serve glue for synthesis (``answer`` and the streaming ``stream``)."""
from __future__ import annotations

from ray import serve

from docray.engine.config import DocrayConfig
from docray.engine.heap import settle_heap


@serve.deployment(name="Synthesis")
class Synthesis:
    def __init__(self, cfg_json: str):
        from docray.serve_apps.synthesis.service import SynthesisService

        self.service = SynthesisService(DocrayConfig.model_validate_json(cfg_json))
        settle_heap("Synthesis")

    async def answer(self, question, passages, qvec=None):
        return await self.service.answer(question, passages, qvec)

    async def stream(self, question, passages, qvec=None):
        async for token in self.service.stream(question, passages, qvec):
            yield token
