"""Serve glue for the reranker."""
from __future__ import annotations

from ray import serve

from docray.engine.config import DocrayConfig
from docray.engine.heap import settle_heap


@serve.deployment(name="Rerank")
class Rerank:
    def __init__(self, cfg_json: str):
        from docray.serve_apps.rerank.service import RerankService

        self.service = RerankService(DocrayConfig.model_validate_json(cfg_json))
        settle_heap("Rerank")

    async def rerank(self, question, qtok, head, chunks, workspace="default"):
        return await self.service.rerank(question, qtok, head, chunks, workspace)
