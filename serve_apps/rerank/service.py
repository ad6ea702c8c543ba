"""Rerank the head of the fused list (late-interaction or cross-encoder), Ray-free."""
from __future__ import annotations

import asyncio

from docray.engine.config import DocrayConfig


class RerankService:
    def __init__(self, cfg: DocrayConfig, encoder=None):
        from docray.engine.embed import get_text_encoder
        from docray.engine.retrieve.parts import make_reranker

        self.cfg = cfg
        self.reranker = make_reranker(cfg, encoder or get_text_encoder(cfg.embed.text))

    def _rerank(self, question: str, head: list[tuple[str, float]], chunks: dict):
        from docray.engine.retrieve.engine import rerank_ranked

        return rerank_ranked(self.reranker, question, head, chunks, len(head))

    async def rerank(self, question: str, head: list[tuple[str, float]],
                     chunks: dict) -> list[tuple[str, float]]:
        """``head``: fused (chunk_id, score); ``chunks``: chunk_id → Chunk for the head."""
        if not head or self.reranker is None:
            return head
        return await asyncio.to_thread(self._rerank, question, head, chunks)
