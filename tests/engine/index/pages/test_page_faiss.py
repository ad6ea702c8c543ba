"""faiss candidate index (real faiss-cpu): same top-k as the exhaustive pooled prefilter,
scope and writes respected, GPU choice by faiss's own probes, config errors that name the value."""
from __future__ import annotations

import numpy as np
import pytest
from pages_data import clustered_pages, fill, queries_from
from pydantic import ValidationError

from docray.engine.config import PageIndexConfig, config_from_dict
from docray.engine.errors import ConfigError, Unavailable
from docray.engine.index.pages import PageStore
from docray.engine.index.pages import faiss_index as fi
from docray.engine.index.pages.faiss_index import FaissCandidateIndex, choose_device
from docray.engine.index.pages.pooled import PooledPrefilter
from docray.engine.retrieve.pages import PageSearcher, page_searcher

faiss = pytest.importorskip("faiss")


def random_pages(n_docs: int, pages_per_doc: int, dim: int, seed: int = 0) -> dict:
    """Unstructured pages: i.i.d. Gaussian unit tokens, 4-40 per page."""
    rng = np.random.default_rng(seed)
    docs = {}
    for d in range(n_docs):
        pages = []
        for p in range(pages_per_doc):
            tok = rng.normal(size=(int(rng.integers(4, 40)), dim))
            pages.append((p, (tok / np.linalg.norm(tok, axis=1, keepdims=True)).astype(np.float32)))
        docs[f"doc-{d}"] = pages
    return docs


def _store(tmp_path, docs, dtype="int8"):
    store = PageStore(tmp_path / "pages", dim=32, dtype=dtype)
    fill(store, docs)
    fill(store, {"x-0": docs["doc-0"]}, workspace="other")
    return store


def _pair(store, kind, n=40, **kw):
    exact = PooledPrefilter(store, n=n, threshold=50, n_centroids=8)
    index = FaissCandidateIndex(kind, device="cpu", **kw)
    return exact, PooledPrefilter(store, n=n, threshold=50, n_centroids=8, index=index,
                                  faiss_min_pages=1)


@pytest.mark.parametrize("data", ["random", "clustered"])
@pytest.mark.parametrize("kind", ["faiss-ivf", "faiss-hnsw"])
def test_faiss_top10_equals_exhaustive_two_stage(tmp_path, data, kind):
    make = random_pages if data == "random" else clustered_pages
    docs = make(40, 6, 32, seed=7)  # 240 pages in "ws"
    store = _store(tmp_path, docs, "int8" if data == "random" else "fp16")
    exact, fast = _pair(store, kind, nprobe=10_000, ef_search=512, per_token=256)
    a, b = PageSearcher(store, exact), PageSearcher(store, fast)
    for q in queries_from(docs, 12, n_tok=12, seed=3):
        want, got = a.search_tokens(q, "ws", None, 10), b.search_tokens(q, "ws", None, 10)
        assert [p for p, _ in got] == [p for p, _ in want]
        assert np.allclose([s for _, s in got], [s for _, s in want])
    assert fast.index.index.ntotal == len(fast._row_page) > 0
    if kind == "faiss-ivf":
        assert fast.index.nlist == fi.auto_nlist(fast.index.index.ntotal)


def test_all_rows_reached_gives_the_exhaustive_candidates(tmp_path):
    docs = random_pages(30, 5, 32, seed=2)
    store = _store(tmp_path, docs)
    exact, fast = _pair(store, "faiss-ivf", nprobe=10_000, per_token=2048)
    for q in queries_from(docs, 5, seed=8):
        assert fast.candidates(q, "ws") == exact.candidates(q, "ws")


@pytest.mark.parametrize("kind", ["faiss-ivf", "faiss-hnsw"])
def test_low_effort_is_approximate_but_scoped(tmp_path, kind):
    docs = clustered_pages(40, 5, 32, seed=5)
    store = _store(tmp_path, docs)
    _, fast = _pair(store, kind, n=30, nprobe=1, ef_search=8, per_token=16)
    q = queries_from(docs, 1, seed=4)[0]
    keys = fast.candidates(q, "ws")
    assert 0 < len(keys) <= 30 and all(k.startswith("ws:doc-") for k in keys)
    scoped = fast.candidates(q, "ws", [f"doc-{i}" for i in range(20)])  # 100 pages > 50
    assert scoped and all(int(k.split(":")[1].split("-")[1]) < 20 for k in scoped)


def test_writes_reach_the_index_and_ivf_keeps_its_training(tmp_path):
    docs = clustered_pages(30, 5, 32, seed=11)
    store = _store(tmp_path, docs)
    _, fast = _pair(store, "faiss-ivf", n=20, nprobe=10_000, per_token=256)
    q = queries_from({"doc-3": docs["doc-3"]}, 1, seed=1)[0]  # a page of doc-3
    assert any(k.startswith("ws:doc-3:") for k in fast.candidates(q, "ws"))
    trained = fast.index._cpu
    store.delete_doc("ws", "doc-3")
    keys = fast.candidates(q, "ws")
    assert keys and not any(k.startswith("ws:doc-3:") for k in keys)
    assert fast.index._cpu is trained  # 145 of 150 pages: rows re-added, lists kept
    assert fast.index.index.ntotal == len(fast._row_page)
    fill(store, {"new": docs["doc-3"]})
    assert any(k.startswith("ws:new:") for k in fast.candidates(q, "ws"))
    fill(store, clustered_pages(40, 5, 32, seed=12), workspace="ws2")  # rows more than double
    fast.candidates(q, "ws")
    assert fast.index._cpu is not trained


def test_small_selections_keep_the_exact_scan(tmp_path, monkeypatch):
    docs = clustered_pages(30, 5, 32, seed=3)
    store = _store(tmp_path, docs)
    index = FaissCandidateIndex("faiss-ivf", device="cpu")
    pf = PooledPrefilter(store, n=20, threshold=50, n_centroids=8, index=index, faiss_min_pages=120)
    called = []
    monkeypatch.setattr(index, "search", lambda *a: called.append(1) or np.zeros(0, np.int64))
    q = queries_from(docs, 1, seed=5)[0]
    assert len(pf.candidates(q, "ws", [f"doc-{i}" for i in range(20)])) == 20  # 100 < 120
    assert not called
    pf.candidates(q, "ws")  # 150 pages ≥ 120: faiss
    assert called


def _fake_gpu(monkeypatch, n_gpus):
    moved = []
    monkeypatch.setattr(faiss, "get_num_gpus", lambda: n_gpus)
    monkeypatch.setattr(faiss, "StandardGpuResources", object, raising=False)
    monkeypatch.setattr(faiss, "index_cpu_to_all_gpus", lambda idx: moved.append(idx) or idx,
                        raising=False)
    return moved


def test_gpu_choice_follows_faiss_probes(monkeypatch):
    if not fi.faiss_has_gpu(faiss):  # faiss-cpu, or no CUDA device
        assert choose_device("faiss-ivf", "auto", faiss) == "cpu"
        with pytest.raises(Unavailable, match="faiss-gpu"):
            choose_device("faiss-ivf", "gpu", faiss)
    _fake_gpu(monkeypatch, 0)  # GPU build, no CUDA device
    assert choose_device("faiss-ivf", "auto", faiss) == "cpu"
    _fake_gpu(monkeypatch, 2)
    assert choose_device("faiss-ivf", "auto", faiss) == "gpu"
    assert choose_device("faiss-hnsw", "auto", faiss) == "cpu"  # no GPU HNSW
    assert choose_device("faiss-ivf", "cpu", faiss) == "cpu"
    with pytest.raises(ConfigError, match="no GPU HNSW"):
        choose_device("faiss-hnsw", "gpu", faiss)
    with pytest.raises(ConfigError, match="'tpu'"):
        choose_device("faiss-ivf", "tpu", faiss)


def test_gpu_path_moves_the_index_and_filters_without_a_selector(tmp_path, monkeypatch):
    moved = _fake_gpu(monkeypatch, 1)
    docs = clustered_pages(30, 5, 32, seed=9)
    store = _store(tmp_path, docs)
    exact = PooledPrefilter(store, n=20, threshold=50, n_centroids=8)
    index = FaissCandidateIndex("faiss-ivf", nprobe=10_000, per_token=512)
    assert index.device == "gpu"
    fast = PooledPrefilter(store, n=20, threshold=50, n_centroids=8, index=index, faiss_min_pages=1)
    monkeypatch.setattr(index, "_params", lambda mask: pytest.fail("GPU search took a selector"))
    q = queries_from(docs, 1, seed=2)[0]
    scope = [f"doc-{i}" for i in range(15)]  # 75 of the 155 pages
    assert fast.candidates(q, "ws", scope) == exact.candidates(q, "ws", scope)
    assert moved and moved[-1] is index._cpu


def test_config_selects_the_index_and_rejects_bad_values(tmp_path):
    docs = clustered_pages(4, 2, 32, seed=1)
    store = _store(tmp_path, docs)
    cfg = config_from_dict({"pages": {"candidate_index": "faiss-hnsw", "faiss_ef_search": 64,
                                      "faiss_min_pages": 5000}})
    pf = page_searcher(cfg, store).prefilter
    assert pf.index.kind == "faiss-hnsw" and pf.index.ef_search == 64 and pf.faiss_min_pages == 5000
    assert page_searcher(config_from_dict({}), store).prefilter.index is None  # exact by default
    with pytest.raises(ValidationError, match="faiss-ivf"):
        PageIndexConfig(candidate_index="faiss-flat")
    with pytest.raises(ValidationError, match="no GPU HNSW"):
        PageIndexConfig(candidate_index="faiss-hnsw", faiss_device="gpu")
    with pytest.raises(ValidationError, match="faiss_per_token"):
        PageIndexConfig(faiss_per_token=0)
    with pytest.raises(ConfigError, match="'ivf'"):
        FaissCandidateIndex("ivf")
