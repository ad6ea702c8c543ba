"""Open every store of a data dir at once, and remove a document from all of them.

The stores are single-writer: the ingestion driver owns them while the Ray pipeline
computes rows; :mod:`.stages.write` is the only code that writes.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docray.engine.config import DocrayConfig
from docray.engine.index.artifacts import ArtifactStore
from docray.engine.index.catalog import Catalog
from docray.engine.index.content import ContentStore

log = logging.getLogger(__name__)


@dataclass
class Stores:
    cfg: DocrayConfig
    catalog: Catalog
    dense: Any
    pages: Any
    graph: Any
    content: Any
    chunk_tokens: Any = None
    _artifacts: dict[str, ArtifactStore] = field(default_factory=dict)

    @classmethod
    def open(cls, cfg: DocrayConfig) -> "Stores":
        from docray.engine.graph.store import GraphStore
        from docray.engine.index.dense import MilvusDenseStore
        from docray.engine.index.pages import PageStore

        root = Path(cfg.paths.data_dir)
        root.mkdir(parents=True, exist_ok=True)
        dense = MilvusDenseStore(cfg.milvus, root, dim=cfg.embed.text.dim,
                                 encoder=cfg.embed.text.model)
        pages = PageStore(root / "pages", dim=cfg.embed.page.dim,
                          dtype={"float16": "fp16"}.get(cfg.embed.page.dtype, cfg.embed.page.dtype),
                          encoder=_page_encoder_name(cfg))
        gpath = root / "graph"
        graph = GraphStore.open(gpath) if (gpath / "manifest.json").exists() else GraphStore(gpath)
        content = ContentStore(root / "content.sqlite")
        chunk_tokens = PageStore(root / "chunk_tokens", dim=cfg.embed.text.dim, dtype="int8",
                                 encoder=f"chunk-tokens:{cfg.embed.text.model}")
        return cls(cfg, Catalog(root / "catalog.sqlite"), dense, pages, graph, content,
                   chunk_tokens)

    def artifacts(self, workspace: str) -> ArtifactStore:
        if workspace not in self._artifacts:
            self._artifacts[workspace] = ArtifactStore(
                Path(self.cfg.paths.data_dir) / "artifacts", workspace=workspace,
                max_bytes=int(self.cfg.synthesize.max_artifact_mb * (1 << 20)))
        return self._artifacts[workspace]

    def delete_doc(self, workspace: str, doc_id: str, keep_catalog: bool = False) -> None:
        """Remove every row of a document from every store (idempotent)."""
        self.dense.delete_doc(workspace, doc_id)
        self.pages.delete_doc(workspace, doc_id)
        self.graph.delete_doc(workspace, doc_id)
        self.graph.save()
        self.content.delete_doc(workspace, doc_id)
        if self.chunk_tokens is not None:
            self.chunk_tokens.delete_doc(workspace, doc_id)
        self.artifacts(workspace).delete_doc(doc_id)
        if not keep_catalog:
            self.catalog.delete(workspace, doc_id)
        log.info("deleted %s from workspace %s", doc_id, workspace)

    def close(self) -> None:
        for store in (self.dense, self.pages, self.content, self.chunk_tokens):
            close = getattr(store, "close", None)
            if close:
                close()


def _page_encoder_name(cfg: DocrayConfig) -> str:
    page = cfg.embed.page
    if page.backend == "text-tokens":
        return f"text-tokens:{cfg.embed.text.model}"
    return f"{page.backend}:{page.model_dir}"
