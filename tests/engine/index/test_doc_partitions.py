"""The chunk collection's copy split by document: scoped searches read it, writes and
deletes reach it, and an existing collection gets it (or loses it) on open."""
import json

import numpy as np
import pytest

from docray.engine.config import MilvusConfig
from docray.engine.index.dense import MilvusDenseStore
from docray.engine.index.doc_partitions import bucket
from docray.engine.index.tenancy import workspace_tag
from docray.engine.model import Chunk

DIM = 8
TEXTS = ["Solar panels convert sunlight into electricity.",
         "The quarterly revenue of Acme grew by 8 percent.",
         "Photosynthesis turns light into chemical energy in leaves."]


def _vec(i: int) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i % DIM], v[(i + 3) % DIM] = 1.0, 0.3
    return v / np.linalg.norm(v)


def _open(tmp_path, n: int) -> MilvusDenseStore:
    return MilvusDenseStore(MilvusConfig(uri="m.db", collection_prefix="t", doc_partitions=n),
                            tmp_path, dim=DIM, encoder="fake")


def _fill(store, doc: str, base: int = 0, ws: str = "w1") -> None:
    chunks = [Chunk(chunk_id=f"{doc}:c{i}", doc_id=doc, text=t, pages=[i + 1],
                    unit_ids=[f"{doc}:u{i}"], workspace=ws) for i, t in enumerate(TEXTS)]
    store.upsert_chunks(chunks, np.stack([_vec(base + i) for i in range(len(chunks))]))


def _copy_rows(store) -> int:
    res = store.client.query(store.by_doc.name, filter="page >= 0", output_fields=["count(*)"])
    return int(res[0]["count(*)"])


@pytest.fixture
def store(tmp_path):
    s = _open(tmp_path, 4)
    for i, doc in enumerate(["docA", "docB", "docC", "docD"]):
        _fill(s, doc, base=i)
    yield s
    s.close()


def test_scoped_searches_read_only_their_documents_partitions(store):
    calls = []
    search = store.client.search

    def spy(name, *args, **kwargs):
        calls.append((name, kwargs.get("partition_names")))
        return search(name, *args, **kwargs)

    store.client.search = spy
    dense = store.search_dense(_vec(1), 10, "w1", ["docB"])
    sparse = store.search_sparse("Acme revenue", 10, "w1", ["docB"])
    unscoped = {h.id: h.score for h in store.search_dense(_vec(1), 12, "w1")}
    w1 = workspace_tag("w1")  # each workspace reads its own partitions only
    assert calls == [("t_chunks_by_doc", [f"{w1}_{bucket('docB', 4)}"])] * 2 + [("t_chunks", [w1])]
    assert {h.id for h in dense} == {"docB:c0", "docB:c1", "docB:c2"}
    assert all(h.score == pytest.approx(unscoped[h.id], abs=1e-6) for h in dense)
    assert sparse[0].id == "docB:c1" and {h.doc_id for h in sparse} == {"docB"}
    hybrid = store.search_hybrid("Acme revenue", _vec(1), 5, "w1", ["docB", "docC"])
    assert {h.doc_id for h in hybrid} <= {"docB", "docC"} and hybrid


def test_writes_and_deletes_reach_the_copy(store):
    assert _copy_rows(store) == store.count() == 12
    _fill(store, "docA", base=5)  # re-ingest: an upsert, no duplicates
    assert _copy_rows(store) == 12
    assert store.search_dense(_vec(5), 1, "w1", ["docA"])[0].score == pytest.approx(1.0)
    store.delete_doc("w1", "docA")
    assert _copy_rows(store) == store.count() == 9
    assert store.search_dense(_vec(5), 5, "w1", ["docA"]) == []
    _fill(store, "docA", ws="w2")  # the copy filters by workspace too
    assert {h.workspace for h in store.search_sparse("Acme", 5, "w2", ["docA"])} == {"w2"}
    assert store.search_sparse("Acme", 5, "w1", ["docA"]) == []


def test_an_existing_collection_gets_its_copy_on_open_and_loses_it_with_zero(tmp_path):
    s = _open(tmp_path, 0)
    _fill(s, "docA")
    _fill(s, "docB", base=3)
    assert not s.client.has_collection("t_chunks_by_doc")
    s.close()
    s = _open(tmp_path, 4)
    assert _copy_rows(s) == 6 and s.by_doc.active
    assert json.loads((tmp_path / "m.db.manifest.json").read_text())["doc_partitions"] == 4
    assert s.search_sparse("Acme", 1, "w1", ["docB"])[0].id == "docB:c1"
    s.close()
    s = _open(tmp_path, 2)  # another split: built again
    assert _copy_rows(s) == 6 and s.by_doc.route("w1", ["docA"])[1] == [
        f"{workspace_tag('w1')}_{bucket('docA', 2)}"]
    s.close()
    s = _open(tmp_path, 0)
    assert not s.client.has_collection("t_chunks_by_doc") and s.by_doc.route("w1", ["docA"]) is None
    assert s.search_sparse("Acme", 1, "w1", ["docB"])[0].id == "docB:c1"
    s.close()


def test_a_copy_the_manifest_does_not_record_complete_is_built_again(tmp_path):
    s = _open(tmp_path, 4)
    _fill(s, "docA")
    s.client.delete(s.by_doc.name, filter='doc_id == "docA" and page > 1')  # a build cut short
    s.client.flush(s.by_doc.name)
    assert _copy_rows(s) == 1
    s.close()
    manifest = tmp_path / "m.db.manifest.json"
    body = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**body, "doc_partitions": 0}))
    s = _open(tmp_path, 4)
    assert _copy_rows(s) == 3
    assert len(s.search_dense(_vec(0), 5, "w1", ["docA"])) == 3
    s.close()
