"""docray's own BM25 (engine/index/bm25.py, sparse.py): scores are BM25 over the
workspace's rows, whatever the segment layout, and the statistics stay exact through
re-upserts, deletes, a lost stats file and a crash between the stats and Milvus.

The contrast test shows why: Milvus's BM25 function (milvus-lite) scores each segment with
its own statistics, so the same rows written in one flush or one flush per document rank
differently."""
import math
import re
from collections import Counter

import numpy as np
import pytest

from docray.engine.config import MilvusConfig
from docray.engine.index.bm25 import Bm25Stats, term_id
from docray.engine.index.dense import MilvusDenseStore
from docray.engine.model import Chunk

DIM = 8
DOCS = {
    "d1": ["Acme revenue grew 8 percent in the fourth quarter.",
           "Operating margin of Acme improved on lower costs.",
           "The board declared a quarterly dividend."],
    "d2": ["Solar revenue doubled as panel prices fell.",
           "Revenue revenue revenue: a heading that repeats itself.",
           "Cash flow from operations funded the buyback."],
    "d3": ["Photosynthesis turns light into chemical energy.",
           "Leaves hold chlorophyll, which absorbs light.",
           ""],
}
QUERIES = ["Acme revenue", "revenue light energy", "quarterly dividend cash", "chlorophyll"]
AVGDL = 9.0


def _vec(i: int) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i % DIM] = 1.0
    return v


def _chunks(ws: str, doc: str, texts: list[str]) -> list[Chunk]:
    return [Chunk(chunk_id=f"{doc}:c{i}", doc_id=doc, text=t, pages=[i + 1], workspace=ws)
            for i, t in enumerate(texts)]


def _open(tmp_path, bm25: str = "client", **kw) -> MilvusDenseStore:
    cfg = MilvusConfig(uri="m.db", collection_prefix="t", doc_partitions=kw.pop("parts", 4),
                       bm25=bm25, bm25_avgdl=AVGDL, **kw)
    return MilvusDenseStore(cfg, tmp_path, dim=DIM, encoder="fake")


def _write(store, ws: str, docs: dict, one_flush: bool = False) -> None:
    if one_flush:  # every document in one upsert: one segment
        chunks = [c for d, t in docs.items() for c in _chunks(ws, d, t)]
        store.upsert_chunks(chunks, np.stack([_vec(i) for i in range(len(chunks))]))
        return
    for doc, texts in docs.items():  # one flush per document: a segment each
        store.upsert_chunks(_chunks(ws, doc, texts), np.stack([_vec(i) for i in range(len(texts))]))


def _reference(docs: dict, query: str, k1=1.5, b=0.75) -> dict[str, float]:
    """Textbook BM25 over every row of ``docs`` with the fixed average length."""
    rows = {f"{d}:c{i}": re.findall(r"\w+", t.lower())
            for d, ts in docs.items() for i, t in enumerate(ts)}
    n = len(rows)
    df = Counter(w for toks in rows.values() for w in set(toks))
    out = {}
    for rid, toks in rows.items():
        tf, score = Counter(toks), 0.0
        for w in re.findall(r"\w+", query.lower()):
            if tf[w]:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                score += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(toks) / AVGDL))
        if score:
            out[rid] = score
    return out


def _scores(store, ws: str = "A") -> list:
    return [[(h.id, round(h.score, 5)) for h in store.search_sparse(q, 20, ws, doc_ids=scope)]
            for q in QUERIES for scope in (None, ["d2"])]


def test_scores_are_bm25_over_the_workspace_rows(tmp_path):
    s = _open(tmp_path)
    try:
        _write(s, "A", DOCS)
        for q in QUERIES:
            want = _reference(DOCS, q)
            got = {h.id: h.score for h in s.search_sparse(q, 20, "A")}
            assert set(got) == set(want) and want
            for rid, score in want.items():
                assert got[rid] == pytest.approx(score, rel=1e-5), (q, rid)
            scoped = {h.id: h.score for h in s.search_sparse(q, 20, "A", ["d2"])}
            assert scoped == {r: v for r, v in got.items() if r.startswith("d2:")}
        assert s.search_sparse("zebra unicorn", 5, "A") == []  # no term of it is held
        assert s.search_sparse("   ", 5, "A") == []
    finally:
        s.close()


def test_scores_do_not_depend_on_the_segment_layout(tmp_path):
    """Same rows, one segment or three: the same scores. Milvus's BM25 function differs."""
    got = {}
    for bm25 in ("client", "server"):
        for one_flush in (True, False):
            s = _open(tmp_path / f"{bm25}-{one_flush}", bm25)
            try:
                _write(s, "A", DOCS, one_flush)
                got[bm25, one_flush] = _scores(s)
            finally:
                s.close()
    assert got["client", True] == got["client", False]
    assert got["server", True] != got["server", False], "milvus-lite scored one IDF per store"


def test_reupserts_deletes_and_other_workspaces_keep_the_statistics_exact(tmp_path):
    s = _open(tmp_path)
    try:
        _write(s, "A", DOCS)
        before = _scores(s)
        _write(s, "A", DOCS)  # idempotent: nothing counted twice
        _write(s, "B", {"d1": ["Acme revenue revenue revenue light"] * 4})
        assert _scores(s) == before
        s.delete_doc("A", "d3")
        rest = {d: t for d, t in DOCS.items() if d != "d3"}
        want = _reference(rest, "revenue light energy")
        got = {h.id: h.score for h in s.search_sparse("revenue light energy", 20, "A")}
        assert got == pytest.approx(want, rel=1e-5)
        changed = {**rest, "d2": ["Energy, light and revenue, all three."]}
        s.upsert_chunks(_chunks("A", "d2", changed["d2"]), np.stack([_vec(0)]))
        s.delete_doc("A", "d2")  # the stale d2:c1, d2:c2 go with it
        _write(s, "A", {"d2": changed["d2"]})
        got = {h.id: h.score for h in s.search_sparse("revenue light energy", 20, "A")}
        assert got == pytest.approx(_reference(changed, "revenue light energy"), rel=1e-5)
        assert s.sparse.stats.rows("chunks", "A") == 4 and s.count(workspace="A") == 4
    finally:
        s.close()


def test_lost_statistics_are_counted_again_from_milvus(tmp_path):
    s = _open(tmp_path)
    try:
        _write(s, "A", DOCS)
        before = _scores(s)
        stats = s.sparse.stats.path
    finally:
        s.close()
    for suffix in ("", "-wal", "-shm"):
        stats.with_name(stats.name + suffix).unlink(missing_ok=True)
    s = _open(tmp_path)
    try:
        assert _scores(s) == before
    finally:
        s.close()


def test_counted_but_not_written_rows_go_with_the_resume_delete(tmp_path):
    """A crash after the stats counted a document and before Milvus held it: the resume
    deletes the document, and the statistics are as if it never came."""
    s = _open(tmp_path)
    try:
        _write(s, "A", {d: DOCS[d] for d in ("d1", "d2")})
        before = _scores(s)
        s.sparse.fill("chunks", [{"id": "A/d3:c0", "workspace": "A", "doc_id": "d3",
                                  "text": "revenue light energy acme"}])
        assert _scores(s) != before  # counted, not written: IDFs moved
        s.delete_doc("A", "d3")
        assert _scores(s) == before
    finally:
        s.close()


def test_stats_alone(tmp_path):
    st = Bm25Stats(tmp_path / "s.sqlite")
    try:
        t = [term_id(w) for w in ("acme", "revenue", "light")]
        st.upsert("chunks", [("r1", "A", "d1", t[:2]), ("r2", "A", "d1", t[1:]),
                             ("r1", "A", "d1", t[:2])])
        q = st.query_vector("chunks", "A", "Acme revenue revenue zebra")
        assert set(q) == set(t[:2]) and q[t[1]] == pytest.approx(
            2 * math.log(1 + 0.5 / 2.5))  # df 2 of n 2, counted twice in the query
        st.delete_doc("chunks", "A", "d1")
        assert st.rows("chunks", "A") == 0 and st.query_vector("chunks", "A", "acme") == {}
    finally:
        st.close()


def test_doctests_of_the_index_modules():
    import doctest

    from docray.engine.index import artifacts, bm25, doc_partitions, milvus_rows, tenancy

    for mod in (artifacts, bm25, doc_partitions, milvus_rows, tenancy):
        result = doctest.testmod(mod)
        assert result.attempted and not result.failed, mod.__name__
