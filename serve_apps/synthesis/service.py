"""Answer synthesis with citations or abstention, Ray-free."""
from __future__ import annotations

import threading
from typing import AsyncIterator

from docray.engine.config import DocrayConfig
from docray.engine.synthesize import Answer, Passage


class SynthesisService:
    def __init__(self, cfg: DocrayConfig, encoder=None, answerer=None):
        from pathlib import Path

        from docray.engine.embed import get_text_encoder
        from docray.engine.index.artifacts import ArtifactStore
        from docray.engine.index.content import ContentStore
        from docray.engine.index.pages import PageStore
        from docray.engine.retrieve.parts import make_answerer

        if answerer is None:
            root = Path(cfg.paths.data_dir)
            encoder = encoder or get_text_encoder(cfg.embed.text)
            artifacts = ArtifactStore(root / "artifacts", workspace=cfg.paths.workspace,
                                      max_bytes=int(cfg.synthesize.max_artifact_mb * (1 << 20)))
            # Without stored chunk tokens (nothing ingested yet) sentences are encoded.
            tokens = PageStore.open_existing(root / "chunk_tokens")
            content = ContentStore(root / "content.sqlite") if tokens else None
            answerer = make_answerer(cfg, encoder, artifacts, tokens, content)
        self.answerer = answerer
        tables = getattr(answerer, "tables", None)
        if tables is not None:  # the statements' rows, read before the first question
            threading.Thread(target=tables.warm, args=(cfg.paths.workspace,), daemon=True,
                             name="statements-warm").start()

    async def answer(self, question: str, passages: list[Passage], qvec=None) -> Answer:
        return await self.answerer.answer(question, passages, qvec)

    async def stream(self, question: str, passages: list[Passage],
                     qvec=None) -> AsyncIterator[str]:
        async for token in self.answerer.stream(question, passages, qvec):
            yield token
