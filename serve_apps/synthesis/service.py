"""Answer synthesis with citations or abstention, Ray-free."""
from __future__ import annotations

from typing import AsyncIterator

from docray.engine.config import DocrayConfig
from docray.engine.synthesize import Answer, Passage


class SynthesisService:
    def __init__(self, cfg: DocrayConfig, encoder=None, answerer=None):
        from pathlib import Path

        from docray.engine.embed import get_text_encoder
        from docray.engine.index.artifacts import ArtifactStore
        from docray.engine.retrieve.parts import make_answerer

        if answerer is None:
            encoder = encoder or get_text_encoder(cfg.embed.text)
            artifacts = ArtifactStore(Path(cfg.paths.data_dir) / "artifacts",
                                      workspace=cfg.paths.workspace,
                                      max_bytes=int(cfg.synthesize.max_artifact_mb * (1 << 20)))
            answerer = make_answerer(cfg, encoder, artifacts)
        self.answerer = answerer

    async def answer(self, question: str, passages: list[Passage]) -> Answer:
        return await self.answerer.answer(question, passages)

    async def stream(self, question: str, passages: list[Passage]) -> AsyncIterator[str]:
        async for token in self.answerer.stream(question, passages):
            yield token
