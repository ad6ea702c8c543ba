"""Stage: page multi-vectors from the page renders (image page encoders: ColPali / ColQwen2.5).

Input row:  doc (Document JSON; every page has a ``render_id`` from the parse stage),
            workspace
Output row: + page_nos (n_pages,) int32, page_offsets (n_pages + 1,) int64,
            page_tokens (total_tokens, page_dim) float16
Ray: an actor pool of ``ingest.page_actors`` actors with ``ingest.page_num_cpus`` CPUs and
``ingest.page_num_gpus`` GPUs each, so the model loads once per actor (on its GPU).

Only in the plan when ``embed.page.backend`` is not ``text-tokens``; the text-tokens page
vectors come out of the encode stage's text forward pass instead.
"""
from __future__ import annotations

from typing import Any

from docray.engine.config import DocrayConfig
from docray.engine.ingest.stages import failed, stage
from docray.engine.model import Document


def needs_page_stage(cfg: DocrayConfig) -> bool:
    """True when page vectors come from page images rather than the text forward pass."""
    return cfg.embed.page.backend != "text-tokens"


def page_vectors_row(row: dict[str, Any], cfg: DocrayConfig, encoder) -> dict[str, Any]:
    """Embed the document's page renders with ``encoder`` (a PageEncoder)."""
    from docray.engine.index.artifacts import ArtifactStore

    row = dict(row)
    if failed(row):
        return row
    with stage(row, "page_vectors"):
        doc = Document.model_validate_json(row["doc"])
        artifacts = ArtifactStore(cfg.paths.data_dir / "artifacts", workspace=row["workspace"])
        nos, offs, toks = encoder.encode_document(doc, artifacts)
        row["page_nos"], row["page_offsets"], row["page_tokens"] = nos, offs, toks
    return row


class PageEncodeActor:
    """Ray actor-pool wrapper: loads the page encoder once per actor."""

    def __init__(self, cfg_json: str):
        import torch

        from docray.engine.embed import get_page_encoder

        self.cfg = DocrayConfig.model_validate_json(cfg_json)
        torch.set_num_threads(self.cfg.ingest.encoder_threads)
        self.encoder = get_page_encoder(self.cfg.embed.page)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        return page_vectors_row(row, self.cfg, self.encoder)
