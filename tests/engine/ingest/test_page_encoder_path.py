"""The pages stage hands image page encoders (ColPali) the renders of the row's workspace.

The encoder is colpali-engine's ColPali on a tiny random-init checkpoint the test builds
(tests/tiny_colpali.py), wrapped to record which renders it read.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from docray.engine.ingest.stages.describe_chunk import DescribeChunkFn
from docray.engine.ingest.stages.encode import encode_row
from docray.engine.ingest.stages.pages import needs_page_stage, page_vectors_row
from docray.engine.ingest.stages.parse import parse_row
from docray.engine.model import Document, file_doc_id
from ingest_fixtures import make_pdf
from tiny_colpali import tiny_colpali


@pytest.fixture(scope="module")
def colpali(tmp_path_factory):
    from docray.engine.config import PageEncoderConfig
    from docray.engine.embed import get_page_encoder

    path = tiny_colpali(tmp_path_factory.mktemp("colpali") / "tiny")
    return get_page_encoder(PageEncoderConfig(backend="colpali", model_dir=path, dim=128,
                                              device="cpu"))


class Recording:
    """The real encoder, recording the render ids of the documents it was handed."""

    def __init__(self, encoder):
        self.encoder, self.read = encoder, []

    def encode_document(self, doc: Document, artifacts=None):
        self.read.extend((artifacts.workspace, p.render_id) for p in doc.pages)
        return self.encoder.encode_document(doc, artifacts)


def test_pages_stage_reads_renders_from_the_row_workspace(cfg, tmp_path, minilm, colpali):
    cfg = cfg.model_copy(update={"embed": cfg.embed.model_copy(
        update={"page": colpali.config})})
    assert needs_page_stage(cfg)
    pdf = make_pdf(tmp_path / "two.pdf", ["Quarterly revenue rose.", "Costs fell sharply."])
    row = {"path": str(pdf), "workspace": "ws-a", "filename": pdf.name,
           "doc_id": file_doc_id(pdf)}
    row = DescribeChunkFn(cfg.model_dump_json())(parse_row(row, cfg))
    assert not row.get("error"), row.get("error")
    row = encode_row(row, cfg, minilm)  # chunk vectors; the page vectors are left to the stage
    assert "page_tokens" not in row and len(json.loads(row["chunks"])) == len(row["chunk_vecs"])
    pages = Recording(colpali)
    out = page_vectors_row(row, cfg, pages)
    doc = Document.model_validate_json(row["doc"])
    assert pages.read == [("ws-a", p.render_id) for p in doc.pages] and len(pages.read) == 2
    n_tok = len(colpali.processor.process_images([_white()])["input_ids"][0])
    assert list(out["page_nos"]) == [1, 2] and list(out["page_offsets"]) == [0, n_tok, 2 * n_tok]
    assert out["page_tokens"].shape == (2 * n_tok, 128) and out["page_tokens"].dtype == np.float16
    assert page_vectors_row({**row, "status": "failed"}, cfg, pages)["status"] == "failed"
    assert len(pages.read) == 2  # a failed row passes through without encoding


def _white():
    from PIL import Image

    return Image.new("RGB", (40, 50), "white")
