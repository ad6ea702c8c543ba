"""ColPali pages end to end: two corpus PDFs through the Ray Data pipeline with
``embed.page.backend: colpali`` (a tiny random-init checkpoint, tests/tiny_colpali.py), then
queried: the question is encoded by the same model, pages are scored by our MaxSim kernel
over the page store, and the scores equal colpali-engine's ``score_multi_vector``."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest
import torch

from docray.engine.config import config_from_dict
from docray.engine.ingest import ingest
from docray.engine.ingest.stores import Stores
from docray.engine.model import file_doc_id
from docray.kernels.maxsim.colpali_compat import load_score_multi_vector
from tiny_colpali import tiny_colpali

pytestmark = [pytest.mark.corpus, pytest.mark.slow, pytest.mark.usefixtures("ray_cluster")]
DOCS = {"1810.08699.pdf": 6, "2001.03131.pdf": 6}  # the two smallest text-layer papers
QUESTION = "Which model reaches the best accuracy on the benchmark?"


@pytest.fixture(scope="module")
def colpali_run(tmp_path_factory, corpus_dir):
    root = tmp_path_factory.mktemp("colpali_ingest")
    cfg = config_from_dict({
        "paths": {"data_dir": str(root / "data")},
        "parse": {"dpi": 72},
        "embed": {"page": {"backend": "colpali", "model_dir": str(tiny_colpali(root / "tiny")),
                           "dim": 128, "max_tokens": 1030, "dtype": "float16",
                           "batch_size": 4, "device": "cpu"}},
        "ingest": {"parse_concurrency": 1, "page_actors": 1, "page_num_cpus": 0.25},
    })
    summary = ingest([corpus_dir / d for d in DOCS], cfg, "cp")
    return cfg, summary, {file_doc_id(corpus_dir / d): n for d, n in DOCS.items()}


def test_every_page_gets_a_colpali_multi_vector(colpali_run):
    from docray.engine.embed import PageInput, get_page_encoder

    cfg, summary, docs = colpali_run
    assert (summary.ok, summary.failed) == (2, 0), summary.failures
    enc = get_page_encoder(cfg.embed.page)
    per_page = enc.encode_pages([PageInput("x", 1, image=_blank())])[0].shape[0]
    s = Stores.open(cfg)
    try:
        pages = {(r.doc_id, r.page_no): t for r, t in s.pages.pages("cp")}
    finally:
        s.close()
    assert sorted(pages) == sorted((d, p) for d, n in docs.items() for p in range(1, n + 1))
    # ColPali's fixed-size image: the same patch + prompt token count on every page
    assert {tuple(t.shape) for t in pages.values()} == {(per_page, 128)}
    assert all(np.allclose(np.linalg.norm(t.numpy(), axis=1), 1, atol=2e-3)
               for t in pages.values())


def _blank():
    from PIL import Image

    return Image.new("RGB", (60, 80), "white")


def test_query_is_scored_by_our_maxsim_like_colpali_engine(colpali_run):
    from docray.engine.retrieve.engine import QueryEngine
    from docray.engine.retrieve.parts import build_parts

    cfg, _, docs = colpali_run
    s = Stores.open(cfg)
    try:
        parts = build_parts(cfg, s)
        hits = parts.pages.search_query(QUESTION, np.zeros((0, 384), np.float32), "cp", None, 12)
        q = parts.pages.query_encoder(QUESTION)  # (n_q, 128): the page model's query tokens
        stored = dict(s.pages.pages("cp"))
        refs = list(stored)
        theirs = load_score_multi_vector()([torch.from_numpy(q)], [stored[r] for r in refs],
                                           device="cpu")[0] / len(q)  # (12,)
        want = sorted(((r.doc_id, r.page_no), float(v)) for r, v in zip(refs, theirs))
        assert len(hits) == 12 and q.shape[1] == 128
        np.testing.assert_allclose([v for _, v in sorted(hits)], [v for _, v in want],
                                   rtol=1e-4, atol=1e-5)
        assert [h for h, _ in hits] == [p for p, _ in sorted(want, key=lambda kv: -kv[1])]
        result = asyncio.run(QueryEngine(cfg, parts).retrieve(QUESTION, "cp", mode="page-only"))
        assert result.pages and set(result.pages) <= {p for p, _ in want}
    finally:
        s.close()


def test_serve_page_retrieval_encodes_the_question_itself(colpali_run):
    from docray.serve_apps.retrieval.service import PageRetrievalService

    cfg, _, _ = colpali_run
    service = PageRetrievalService(cfg)
    try:
        hits = asyncio.run(service.search(np.zeros((0, 384), np.float32), "cp", None, 5,
                                          QUESTION))
    finally:
        service.store.close()
    assert len(hits) == 5 and all(np.isfinite(v) for _, v in hits)
