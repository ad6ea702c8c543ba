"""In-memory pooled prefilter: agrees with exact MaxSim, respects scope, follows writes."""
from __future__ import annotations

import numpy as np
import torch
from pages_data import clustered_pages, fill, queries_from

from docray.engine.index.pages import PageStore
from docray.engine.index.pages.pooled import PooledPrefilter
from docray.engine.retrieve.pages import PageSearcher


def _store(tmp_path, docs):
    store = PageStore(tmp_path / "pages", dim=64, dtype="int8")
    fill(store, docs)
    fill(store, {"x-0": docs["doc-0"]}, workspace="other")
    return store


def test_prefilter_top10_agrees_with_exact_search(tmp_path):
    docs = clustered_pages(60, 5, 64, seed=21)  # 300 pages in "ws"
    store = _store(tmp_path, docs)
    exact, fast = PageSearcher(store), PageSearcher(store, PooledPrefilter(store, 60, 100))
    overlaps = []
    for q in queries_from(docs, 16, n_tok=16, seed=4):
        a = exact.search_tokens(q, "ws", None, 10)
        b = fast.search_tokens(q, "ws", None, 10)
        assert all(page[0].startswith("doc-") for page, _ in b)  # never the other workspace
        overlaps.append(len({p for p, _ in a} & {p for p, _ in b}) / 10)
    assert np.mean(overlaps) >= 0.9, overlaps
    top = fast.search_tokens(queries_from(docs, 1, seed=9)[0], "ws", None, 1)
    assert top and top[0][1] == exact.search_tokens(queries_from(docs, 1, seed=9)[0], "ws",
                                                    None, 1)[0][1]  # exact scores, not pooled


def test_small_selections_scan_exactly_and_scope_holds(tmp_path):
    docs = clustered_pages(30, 5, 64, seed=3)
    store = _store(tmp_path, docs)
    pf = PooledPrefilter(store, n=40, threshold=100)
    q = queries_from(docs, 1, seed=5)[0]
    assert pf.candidates(q, "ws", ["doc-1", "doc-2"]) is None  # 10 pages: exact
    keys = pf.candidates(q, "ws", None)  # 150 pages > threshold: 40 candidates
    assert len(keys) == 40 and all(k.startswith("ws:") for k in keys)


def test_a_long_document_keeps_a_share_of_its_pages_scored_from_its_own_rows(tmp_path):
    """A question scoped to one long document (a 10-K) is prefiltered too: a third of its
    pages go to exact MaxSim, picked from that document's pooled rows alone, and its
    exact top 5 survives."""
    docs = clustered_pages(100, 5, 64, seed=13)
    docs["long"] = clustered_pages(1, 120, 64, seed=14)["doc-0"]
    store = _store(tmp_path, docs)
    pf = PooledPrefilter(store, n=192, threshold=96, share=1 / 3)
    exact, fast = PageSearcher(store), PageSearcher(store, pf)
    long_pages = {"long": docs["long"]}
    scored = []
    real = pf._score_pages
    pf._score_pages = lambda q, pages: scored.append(len(pages)) or real(q, pages)
    agree = []
    for q in queries_from(long_pages, 8, seed=6):
        keys = pf.candidates(q, "ws", ["long"])
        assert len(keys) == 40 and all(k.startswith("ws:long:") for k in keys)
        a = [p for p, _ in exact.search_tokens(q, "ws", ["long"], 5)]
        b = [p for p, _ in fast.search_tokens(q, "ws", ["long"], 5)]
        agree.append(a == b)
    assert scored and set(scored) == {120}  # its own 120 pages' rows, not the store's 625
    assert sum(agree) >= 7, agree
    assert pf.candidates(q, "ws", ["doc-1"]) is None  # 5 pages: exact


def test_prefilter_sees_pages_written_and_deleted_after_it_was_built(tmp_path):
    docs = clustered_pages(30, 5, 64, seed=8)
    store = _store(tmp_path, docs)
    pf = PooledPrefilter(store, n=20, threshold=50)
    pf.warm()
    new = clustered_pages(1, 3, 64, seed=99)["doc-0"]
    store.add_pages("ws", "late", new)
    q = new[1][1][:12]  # tokens of the new page itself
    assert any(k.startswith("ws:late:") for k in pf.candidates(q, "ws", None))
    store.delete_doc("ws", "late")
    assert not any(k.startswith("ws:late:") for k in pf.candidates(q, "ws", None))


def test_a_new_process_loads_the_saved_pooled_vectors(tmp_path, monkeypatch):
    import docray.engine.index.pages.pooled as pooled_mod

    docs = clustered_pages(30, 5, 64, seed=12)
    store = _store(tmp_path, docs)
    first = PooledPrefilter(store, n=20, threshold=50)
    q = queries_from(docs, 1, seed=2)[0]
    want = first.candidates(q, "ws", None)
    assert first.cache_path.exists()
    calls = []
    real = pooled_mod.pool_page
    monkeypatch.setattr(pooled_mod, "pool_page", lambda t, c: calls.append(1) or real(t, c))
    second = PooledPrefilter(PageStore(tmp_path / "pages"), n=20, threshold=50)
    assert second.candidates(q, "ws", None) == want and calls == []  # nothing pooled again
    store.add_pages("ws", "late", clustered_pages(1, 3, 64, seed=99)["doc-0"])
    third = PooledPrefilter(PageStore(tmp_path / "pages"), n=20, threshold=50)
    third.warm()
    assert len(calls) == 3  # only the three new pages
    store.delete_doc("ws", "late")
    third.warm()  # the deletion is saved too
    with np.load(third.cache_path) as z:
        assert not any(k.startswith("ws:late:") for k in z["keys"].tolist())


def test_a_damaged_pooled_cache_is_rebuilt(tmp_path):
    docs = clustered_pages(20, 5, 64, seed=13)
    store = _store(tmp_path, docs)
    pf = PooledPrefilter(store, n=20, threshold=50)
    pf.cache_path.write_bytes(b"not an npz")
    q = queries_from(docs, 1, seed=3)[0]
    assert len(pf.candidates(q, "ws", None)) == 20
    with np.load(pf.cache_path) as z:
        assert len(z["keys"]) == 105  # 100 pages in "ws" + 5 in "other", saved afresh


def test_an_int8_store_prefilters_on_int8_rows_with_the_same_candidates(tmp_path):
    docs = clustered_pages(60, 5, 64, seed=31)
    _store(tmp_path, docs)
    int8 = PooledPrefilter(PageStore(tmp_path / "pages", compute="int8"), n=30, threshold=100)
    fp32 = PooledPrefilter(PageStore(tmp_path / "fp16", dim=64, dtype="fp16"), n=30,
                           threshold=100)
    fill(fp32.store, docs)
    fill(fp32.store, {"x-0": docs["doc-0"]}, workspace="other")
    overlaps = []
    for q in queries_from(docs, 8, n_tok=16, seed=6):
        a, b = int8.candidates(q, "ws", None), fp32.candidates(q, "ws", None)
        overlaps.append(len(a & b) / 30)
    assert int8._matrix.dtype == torch.int8 and fp32._matrix.dtype == torch.float32
    # int8 storage keeps int8 pooled rows whatever the compute (fp32 tiles without VNNI)
    tiles = PooledPrefilter(PageStore(tmp_path / "pages", compute="fp32"), n=30, threshold=100)
    assert tiles.candidates(q, "ws", None) and tiles._matrix.dtype == torch.int8
    assert int8._matrix.nbytes * 4 == fp32._matrix.nbytes  # a quarter of the memory
    assert np.mean(overlaps) >= 0.95 and min(overlaps) >= 0.85, overlaps
