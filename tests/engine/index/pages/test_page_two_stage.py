"""Two-stage search (pooled vectors in milvus-lite, exact MaxSim on candidates) against exact."""
from __future__ import annotations

import logging
import os
import shutil
import tempfile

import numpy as np
import pytest
import torch
from pages_data import clustered_pages, fill, queries_from

from docray.engine.index.pages import PageStore
from docray.engine.index.pages.two_stage import pool_page

pytest.importorskip("milvus_lite", reason="milvus-lite is not installed")
logger = logging.getLogger(__name__)


def test_pool_page_shapes():
    assert pool_page(torch.randn(50, 8), n_centroids=4).shape == (5, 8)
    assert pool_page(torch.randn(2, 8), n_centroids=4).shape == (3, 8)
    assert pool_page(torch.zeros(0, 8)).shape == (0, 8)
    assert torch.allclose(pool_page(torch.randn(9, 8)).norm(dim=1), torch.ones(5))


@pytest.mark.slow
def test_two_stage_recall_at_10(tmp_path):
    from pymilvus import MilvusClient

    from docray.engine.index.pages import PooledPageIndex

    docs = clustered_pages(80, 5, 64, seed=21)
    store = PageStore(tmp_path / "pages", dim=64, dtype="fp16")
    fill(store, docs)
    fill(store, {"x-0": docs["doc-0"]}, workspace="other")
    short = tempfile.mkdtemp(prefix="mv")  # milvus-lite's socket path must stay short; tmp_path is long
    client = MilvusClient(uri=os.path.join(short, "pooled.db"))
    try:
        index = PooledPageIndex(client, dim=64, n_centroids=4, index_type="FLAT")
        assert index.index_store(store) == 5 * 405
        assert index.index_store(store) == 5 * 405  # upsert: no duplicates
        recalls = []
        for q in queries_from(docs, 12, n_tok=16, seed=4):
            exact = {h.page for h in store.search(q, 10, workspace="ws")}
            approx = index.search(store, q, k=10, per_token=40, workspace="ws")
            recalls.append(len(exact & {h.page for h in approx}) / 10)
            assert all(h.page.workspace == "ws" for h in approx)
        recall = float(np.mean(recalls))
        logger.info("two-stage recall@10 vs exact: %.3f over %d queries", recall, len(recalls))
        print(f"two-stage recall@10 = {recall:.3f}")
        assert recall >= 0.9, recalls
        index.delete_doc("ws", "doc-0")
        assert not any(k.startswith("ws:doc-0:") for k in index.candidates(docs["doc-0"][0][1], 50))
    finally:
        client.close()
        shutil.rmtree(short, ignore_errors=True)
