"""A page's multi-vector (text-tokens page encoder) is its chunks' token vectors, capped.

The encoder ships indices into the chunk tokens, not a second copy of the vectors; the
writer (``row_page_tokens``) gathers them. Checked on a parsed PDF against the definition.
"""
from __future__ import annotations

import json

import numpy as np

from docray.engine.ingest.stages.describe_chunk import DescribeChunkFn
from docray.engine.ingest.stages.encode import encode_row, row_page_tokens
from docray.engine.ingest.stages.parse import parse_row
from docray.engine.model import Document, file_doc_id
from ingest_fixtures import make_pdf

LONG = ("Revenue from the northern plant rose as the new kiln line ran at full load. " * 12)


def _expected(chunk_tokens, chunk_offsets, chunks, page: int, cap: int) -> np.ndarray:
    parts = [chunk_tokens[chunk_offsets[i]:chunk_offsets[i + 1]]
             for i, c in enumerate(chunks) if page in c["pages"]]
    mat = np.concatenate(parts) if parts else chunk_tokens[:0]
    if len(mat) > cap:
        mat = mat[np.linspace(0, len(mat) - 1, cap).round().astype(np.int64)]
    return mat


def test_page_tokens_are_the_chunk_tokens_of_the_page_capped(cfg, tmp_path, minilm):
    cap = 40
    cfg = cfg.model_copy(update={"embed": cfg.embed.model_copy(update={
        "page": cfg.embed.page.model_copy(update={"max_tokens": cap})})})
    pdf = make_pdf(tmp_path / "three.pdf", [LONG, "Costs fell sharply.", " "])
    row = {"path": str(pdf), "workspace": "ws", "filename": pdf.name, "doc_id": file_doc_id(pdf)}
    row = encode_row(DescribeChunkFn(cfg.model_dump_json())(parse_row(row, cfg)), cfg, minilm)
    assert not row.get("error"), row.get("error")
    assert "page_tokens" not in row  # no second copy of the vectors travels to the writer
    doc, chunks = Document.model_validate_json(row["doc"]), json.loads(row["chunks"])
    toks, offs = row_page_tokens(row), np.asarray(row["page_offsets"])
    ct, co = np.asarray(row["chunk_tokens"]), np.asarray(row["chunk_tok_offsets"])
    assert list(row["page_nos"]) == [p.page for p in doc.pages] == [1, 2, 3]
    assert toks.dtype == np.float16 and toks.shape[1] == ct.shape[1]
    sizes = []
    for k, page in enumerate(row["page_nos"]):
        got = toks[offs[k]:offs[k + 1]]
        assert np.array_equal(got, _expected(ct, co, chunks, int(page), cap)), page
        sizes.append(len(got))
    assert sizes[0] == cap and 0 < sizes[1] < cap and sizes[2] == 0, sizes


def test_an_image_page_encoders_own_tokens_win():
    own = np.ones((3, 4), np.float16)
    row = {"page_tokens": own, "chunk_tokens": np.zeros((5, 4), np.float16),
           "page_token_index": np.array([0, 1])}
    assert np.array_equal(row_page_tokens(row), own)


def test_encode_chunks_in_slices_matches_one_pass(minilm, monkeypatch):
    """Slices of ``ENCODE_SLICE`` texts (heap trimmed between them) give the vectors and
    token vectors of one pass, laid out by offsets, in float16."""
    from docray.engine.ingest.stages import encode

    texts = ["Revenue rose.", LONG, "Costs fell sharply in the third quarter.", "", "Net cash."]
    whole_vecs, whole_toks = minilm.encode_with_tokens(texts)
    monkeypatch.setattr(encode, "ENCODE_SLICE", 2)
    vecs, offsets, tokens = encode.encode_chunks(minilm, texts)
    assert tokens.dtype == np.float16 and vecs.shape == (5, minilm.dim)
    assert list(np.diff(offsets)) == [len(t) for t in whole_toks] and offsets[-1] == len(tokens)
    assert np.allclose(vecs, whole_vecs, atol=2e-2)
    for i, t in enumerate(whole_toks):
        assert np.allclose(tokens[offsets[i]:offsets[i + 1]], t, atol=3e-2), i
