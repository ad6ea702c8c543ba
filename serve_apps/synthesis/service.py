"""Answer synthesis with citations or abstention, Ray-free."""
from __future__ import annotations

from typing import AsyncIterator

from docray.engine.config import DocrayConfig
from docray.engine.synthesize import Answer, Passage


def _stored_tokens(root):
    """(chunk token store, content store) of the data dir, or (None, None) before any
    ingest wrote them: the extractive answerer then encodes its candidate sentences."""
    from docray.engine.index.content import ContentStore
    from docray.engine.index.pages import PageStore

    if not (root / "chunk_tokens" / "manifest.json").exists():
        return None, None
    return PageStore(root / "chunk_tokens"), ContentStore(root / "content.sqlite")


class SynthesisService:
    def __init__(self, cfg: DocrayConfig, encoder=None, answerer=None):
        from pathlib import Path

        from docray.engine.embed import get_text_encoder
        from docray.engine.index.artifacts import ArtifactStore
        from docray.engine.retrieve.parts import make_answerer

        if answerer is None:
            root = Path(cfg.paths.data_dir)
            encoder = encoder or get_text_encoder(cfg.embed.text)
            artifacts = ArtifactStore(root / "artifacts", workspace=cfg.paths.workspace,
                                      max_bytes=int(cfg.synthesize.max_artifact_mb * (1 << 20)))
            answerer = make_answerer(cfg, encoder, artifacts, *_stored_tokens(root))
        self.answerer = answerer

    async def answer(self, question: str, passages: list[Passage]) -> Answer:
        return await self.answerer.answer(question, passages)

    async def stream(self, question: str, passages: list[Passage]) -> AsyncIterator[str]:
        async for token in self.answerer.stream(question, passages):
            yield token
