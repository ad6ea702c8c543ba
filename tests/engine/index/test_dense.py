"""MilvusDenseStore on milvus-lite files under tmp_path (small dims, hand-made vectors)."""
import json

import numpy as np
import pytest

from docray.engine.config import MilvusConfig
from docray.engine.errors import BadInput, Corrupt
from docray.engine.index.dense import MilvusDenseStore
from docray.engine.index.milvus_rows import truncate_bytes
from docray.engine.model import Chunk

DIM = 8


def _vec(i: int) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i % DIM], v[(i + 3) % DIM] = 1.0, 0.3
    return v / np.linalg.norm(v)


def _chunks(doc: str, ws: str, texts: list[str], modality: str = "text") -> list[Chunk]:
    return [Chunk(chunk_id=f"{doc}:c{i}", doc_id=doc, text=t, modality=modality, pages=[i + 1],
                  unit_ids=[f"{doc}:u{i}"], section=["Intro"], bbox=(0.1, 0.2, 0.3, 0.4),
                  workspace=ws) for i, t in enumerate(texts)]


TEXTS = ["Solar panels convert sunlight into electricity.",
         "The quarterly revenue of Acme grew by 8 percent.",
         "Photosynthesis turns light into chemical energy in leaves."]


@pytest.fixture
def store(tmp_path):
    s = MilvusDenseStore(MilvusConfig(uri="m.db", collection_prefix="t"), tmp_path, dim=DIM,
                         encoder="fake")
    yield s
    s.close()


def _fill(store, doc="docA", ws="w1", texts=TEXTS, base=0):
    chunks = _chunks(doc, ws, texts)
    store.upsert_chunks(chunks, np.stack([_vec(base + i) for i in range(len(chunks))]))
    return chunks


def test_upsert_is_idempotent_and_counts_filter(store):
    _fill(store)
    _fill(store)
    _fill(store, doc="docB", texts=TEXTS[:2])
    assert store.count() == 5
    assert store.count("chunks", workspace="w1", doc_id="docA") == 3
    assert store.count("entities") == 0


def test_same_chunk_id_in_two_workspaces_is_isolated(store):
    _fill(store, ws="w1")
    _fill(store, ws="w2", base=5)
    assert store.count(workspace="w1") == 3 and store.count(workspace="w2") == 3
    hits = store.search_dense(_vec(0), 10, "w2")
    assert {h.workspace for h in hits} == {"w2"} and len(hits) == 3
    assert hits[0].id == "docA:c0" or hits[0].score < 1.0  # w2 has no exact _vec(0)
    assert store.search_sparse("Acme", 5, "w3") == []


def test_delete_doc_removes_only_that_doc_everywhere(store):
    _fill(store, doc="docA")
    _fill(store, doc="docB")
    store.upsert_entities("w1", "docA", ["e1", "e2"], ["Acme", "solar panel"],
                          np.stack([_vec(1), _vec(2)]))
    store.upsert_relations("w1", "docA", ["r1"], ["Acme makes solar panel"], _vec(3)[None])
    store.upsert_entities("w1", "docB", ["e1"], ["Acme"], _vec(1)[None])
    store.delete_doc("w1", "docA")
    assert store.count(doc_id="docA") == 0 and store.count(doc_id="docB") == 3
    assert store.count("entities") == 1 and store.count("relations") == 0
    store.delete_doc("w1", "docA")  # idempotent


def test_bm25_finds_exact_keyword(store):
    _fill(store)
    hits = store.search_sparse("Acme revenue", 3, "w1")
    assert hits[0].id == "docA:c1" and hits[0].score > 0
    assert hits[0].payload["unit_ids"] == ["docA:u1"] and hits[0].page == 2


def test_dense_search_filters_and_payload(store):
    _fill(store)
    store.upsert_chunks(_chunks("docT", "w1", ["Table 1: revenue by year"], "table"),
                        _vec(0)[None])
    hits = store.search_dense(_vec(0), 5, "w1")
    assert {hits[0].id, hits[1].id} == {"docA:c0", "docT:c0"}
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    only = store.search_dense(_vec(0), 5, "w1", modalities=["table"])
    assert [h.id for h in only] == ["docT:c0"] and only[0].modality == "table"
    assert only[0].payload["section"] == ["Intro"] and only[0].payload["bbox"] == [0.1, 0.2,
                                                                                 0.3, 0.4]
    assert [h.doc_id for h in store.search_dense(_vec(0), 5, "w1", doc_ids=["docA"])] == \
        ["docA"] * 3


def test_hybrid_returns_the_right_chunk(store):
    _fill(store)
    # dense points at chunk 2 (photosynthesis), BM25 too: both agree
    hits = store.search_hybrid("photosynthesis leaves", _vec(2), 3, "w1")
    assert hits[0].id == "docA:c2" and hits[0].text == TEXTS[2]
    # dense is ambiguous (a vector near nothing); the keyword decides
    hits = store.search_hybrid("Acme quarterly revenue", np.ones(DIM, np.float32), 3, "w1")
    assert hits[0].id == "docA:c1"
    weighted = store.search_hybrid("Acme", _vec(1), 2, "w1", weights=(0.5, 0.5))
    assert weighted[0].id == "docA:c1"
    assert store.search_hybrid("", _vec(0), 1, "w1")[0].id == "docA:c0"


def test_bad_vectors_and_long_text(store):
    with pytest.raises(BadInput):
        store.upsert_chunks(_chunks("d", "w1", ["x"]), np.zeros((1, DIM + 1)))
    long = "é" * 40000  # 80000 bytes
    store.upsert_chunks(_chunks("d", "w1", [long]), _vec(0)[None])
    (hit,) = store.search_dense(_vec(0), 1, "w1")
    assert len(hit.text.encode()) <= 65535
    assert truncate_bytes("aé", 2) == "a"


def test_reopen_and_manifest_mismatch(tmp_path):
    cfg = MilvusConfig(uri="m.db")
    s = MilvusDenseStore(cfg, tmp_path, dim=DIM, encoder="fake")
    _fill(s)
    s.close()
    manifest = json.loads((tmp_path / "m.db.manifest.json").read_text())
    assert manifest["dim"] == DIM and manifest["encoder"] == "fake"
    s = MilvusDenseStore(cfg, tmp_path, dim=DIM, encoder="fake")
    assert s.count() == 3 and s.search_sparse("Acme", 1, "w1")[0].id == "docA:c1"
    s.close()
    with pytest.raises(Corrupt, match="m.db.manifest.json"):
        MilvusDenseStore(cfg, tmp_path, dim=DIM * 2, encoder="fake")
    with pytest.raises(Corrupt, match="encoder"):
        MilvusDenseStore(cfg, tmp_path, dim=DIM, encoder="other")
    (tmp_path / "m.db.manifest.json").write_text("{not json")
    with pytest.raises(Corrupt):
        MilvusDenseStore(cfg, tmp_path, dim=DIM, encoder="fake")


def test_searcher_runs_dense_and_bm25_and_reports_logical_ids(store):
    from docray.engine.retrieve.dense import DenseSearcher
    from docray.engine.retrieve.query import analyze

    from pymilvus.client.utils import SciPyHelper

    _fill(store)
    _fill(store, doc="docB", ws="w2", texts=TEXTS)  # another tenant, same texts
    SciPyHelper._checked = False  # as in a fresh replica: the lazy import is still to come
    searcher = DenseSearcher(MilvusDenseStore(store.config, store.manifest_path.parent,
                                              dim=DIM, encoder="fake"))
    assert SciPyHelper._checked  # done on this thread, before two searches race for it
    out = searcher.search(analyze("What was the revenue of Acme?"), _vec(2), "w1",
                                      None, 3)
    assert out["dense"][0][0] == "docA:c2" and len(out["dense"]) == 3
    assert out["sparse"][0][0] == "docA:c1" and out["sparse"][0][1] > 0
    assert {c for c, _ in out["dense"] + out["sparse"]} <= {f"docA:c{i}" for i in range(3)}
    # a question of function words only has no keywords: no BM25 list at all
    assert "sparse" not in DenseSearcher(store).search(analyze("What is it?"), _vec(0), "w1",
                                                       None, 3)


def test_fields_limit_what_a_hit_carries(store):
    _fill(store)
    (hit,) = store.search_sparse("Acme", 1, "w1", fields=["payload"])
    assert hit.id == "docA:c1" and hit.text == "" and hit.payload["pages"] == [2]


def test_reopening_with_another_index_type_rebuilds_the_index(tmp_path):
    s = MilvusDenseStore(MilvusConfig(uri="m.db", collection_prefix="t", index_type="FLAT"),
                         tmp_path, dim=DIM, encoder="fake")
    _fill(s)
    name = s.names["chunks"]
    assert s.client.describe_index(name, "dense")["index_type"] == "FLAT"
    s.close()
    s = MilvusDenseStore(MilvusConfig(uri="m.db", collection_prefix="t", index_type="HNSW"),
                         tmp_path, dim=DIM, encoder="fake")
    try:
        assert s.client.describe_index(name, "dense")["index_type"] == "HNSW"
        assert s.count() == 3 and s.search_dense(_vec(1), 1, "w1")[0].id == "docA:c1"
        assert json.loads(s.manifest_path.read_text())["index_type"] == "HNSW"
    finally:
        s.close()


def test_vectors_are_stored_at_unit_length_and_scored_by_inner_product(store):
    raw = np.stack([_vec(i) * (i + 2.0) for i in range(3)])  # not unit length
    store.upsert_chunks(_chunks("docA", "w1", TEXTS), raw)
    name = store.names["chunks"]
    assert store.client.describe_index(name, "dense")["metric_type"] == "IP"
    hits = store.search_dense(_vec(1) * 5.0, 3, "w1")  # the query is normalised too
    assert hits[0].id == "docA:c1" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    want = float(_vec(1) @ _vec(0))  # cosine, whatever the lengths were
    assert {h.id: h.score for h in hits}["docA:c0"] == pytest.approx(want, abs=1e-5)
    with pytest.raises(BadInput, match="vectors"):
        store.upsert_chunks(_chunks("docB", "w1", TEXTS[:1]), np.full((1, DIM), np.nan))


def _cosine_collection(tmp_path, vectors):
    """A collection as an older docray wrote it: workspace partition key, Milvus's BM25,
    COSINE index, vectors as given, no copy by document."""
    s = MilvusDenseStore(MilvusConfig(uri="m.db", collection_prefix="t", doc_partitions=0,
                                      tenancy="partition_key", bm25="server"),
                         tmp_path, dim=DIM, encoder="fake")
    name = s.names["chunks"]
    s.client.release_collection(name)
    s.client.drop_index(name, "dense")
    idx = s.client.prepare_index_params()
    idx.add_index("dense", index_type="FLAT", metric_type="COSINE", params={})
    s.client.create_index(name, idx)
    s.client.load_collection(name)
    s.client.upsert(name, [{"id": f"w1/docA:c{i}", "workspace": "w1", "doc_id": "docA",
                            "modality": "text", "page": i + 1, "text": t,
                            "payload": {"chunk_id": f"docA:c{i}"}, "dense": v.tolist()}
                           for i, (t, v) in enumerate(zip(TEXTS, vectors))])
    s.client.flush(name)
    s.close()
    return name


def test_an_older_cosine_collection_of_unit_vectors_is_rebuilt_as_inner_product(tmp_path):
    name = _cosine_collection(tmp_path, [_vec(i) for i in range(3)])
    s = MilvusDenseStore(MilvusConfig(uri="m.db", collection_prefix="t"), tmp_path, dim=DIM,
                         encoder="fake")
    try:
        assert s.client.describe_index(name, "dense")["metric_type"] == "IP"
        hit = s.search_dense(_vec(2), 1, "w1")[0]
        assert hit.id == "docA:c2" and hit.score == pytest.approx(1.0, abs=1e-5)
    finally:
        s.close()


def test_an_older_cosine_collection_of_other_lengths_keeps_cosine(tmp_path):
    name = _cosine_collection(tmp_path, [_vec(i) * 3.0 for i in range(3)])
    s = MilvusDenseStore(MilvusConfig(uri="m.db", collection_prefix="t"), tmp_path, dim=DIM,
                         encoder="fake")
    try:
        assert s.client.describe_index(name, "dense")["metric_type"] == "COSINE"
        hit = s.search_dense(_vec(2), 1, "w1")[0]  # searched with the metric it has
        assert hit.id == "docA:c2" and hit.score == pytest.approx(1.0, abs=1e-5)
        scoped = s.search_dense(_vec(2), 1, "w1", ["docA"])[0]  # the copy scores alike
        assert scoped.id == "docA:c2" and scoped.score == pytest.approx(1.0, abs=1e-5)
    finally:
        s.close()
