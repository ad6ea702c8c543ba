"""Rerank the head of the fused list (late-interaction or cross-encoder), Ray-free.

Late interaction scores against the chunk token vectors stored at ingest time when the
data dir has them, using the query token vectors the ingress computed; without stored
tokens it re-encodes the chunk texts.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from docray.engine.config import DocrayConfig


class RerankService:
    def __init__(self, cfg: DocrayConfig, encoder=None):
        from docray.engine.embed import LazyTextEncoder
        from docray.engine.index.pages import PageStore
        from docray.engine.retrieve.parts import make_reranker

        self.cfg = cfg
        # With stored chunk tokens only the fallback re-encodes: load the model then.
        self.encoder = encoder or LazyTextEncoder(cfg.embed.text)
        chunk_tokens = PageStore.open_existing(Path(cfg.paths.data_dir) / "chunk_tokens")
        self.reranker = make_reranker(cfg, self.encoder, chunk_tokens)

    def _rerank(self, question: str, qtok: np.ndarray, head: list[tuple[str, float]],
                chunks: dict, workspace: str):
        from docray.engine.retrieve.engine import rerank_ranked, rerank_scorer

        scorer = rerank_scorer(self.reranker, question, np.asarray(qtok, np.float32),
                               workspace, chunks)
        return rerank_ranked(scorer, head, len(head), self.cfg.retrieve.rerank_weight)

    async def rerank(self, question: str, qtok: np.ndarray, head: list[tuple[str, float]],
                     chunks: dict, workspace: str = "default") -> list[tuple[str, float]]:
        """``qtok``: query token vectors (n_q, dim); ``head``: fused (chunk_id, score);
        ``chunks``: chunk_id → Chunk for the head."""
        if not head or self.reranker is None:
            return head
        return await asyncio.to_thread(self._rerank, question, qtok, head, chunks, workspace)
