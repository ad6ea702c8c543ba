"""The encode stage hands image page encoders (ColPali) the document's artifact store.

ColPali weights cannot be loaded here, so the page encoder is a double with the
PageEncoder interface that embeds the page renders it reads through that store.
"""
from __future__ import annotations

import io
import json

import numpy as np
import pytest

from docray.engine.embed.base import pack_pages
from docray.engine.ingest.stages.describe_chunk import DescribeChunkFn
from docray.engine.ingest.stages.encode import encode_row
from docray.engine.ingest.stages.parse import parse_row
from docray.engine.model import Document, file_doc_id
from ingest_fixtures import make_pdf


@pytest.fixture(scope="module")
def minilm_encoder():
    from docray.engine.config import TextEncoderConfig
    from docray.engine.embed import get_text_encoder

    return get_text_encoder(TextEncoderConfig())


class RenderPageEncoder:
    """Page multi-vector = a few pixel statistics of the render, one row per image band."""

    name, dim = "render-double", 4

    def __init__(self):
        self.read: list[str] = []

    def encode_document(self, doc: Document, artifacts=None):
        from PIL import Image

        mats = []
        for p in doc.pages:
            self.read.append(p.render_id)
            img = np.asarray(Image.open(io.BytesIO(artifacts.read(p.render_id))).convert("L"),
                             np.float32)  # (h, w)
            bands = np.array_split(img, 3)
            mats.append(np.stack([[b.mean(), b.std(), b.min(), b.max()] for b in bands]))
        return pack_pages([p.page for p in doc.pages], mats, self.dim)


def test_encode_stage_reads_renders_from_the_row_workspace(cfg, tmp_path, minilm_encoder):
    pdf = make_pdf(tmp_path / "two.pdf", ["Quarterly revenue rose.", "Costs fell sharply."])
    row = {"path": str(pdf), "workspace": "ws-a", "filename": pdf.name,
           "doc_id": file_doc_id(pdf)}
    row = DescribeChunkFn(cfg.model_dump_json())(parse_row(row, cfg))
    assert not row.get("error"), row.get("error")
    pages = RenderPageEncoder()
    out = encode_row(row, cfg, minilm_encoder, pages)
    doc = Document.model_validate_json(row["doc"])
    assert pages.read == [p.render_id for p in doc.pages] and len(pages.read) == 2
    assert list(out["page_nos"]) == [1, 2] and out["page_tokens"].shape == (6, 4)
    assert len(json.loads(row["chunks"])) == out["chunk_vecs"].shape[0] >= 1
