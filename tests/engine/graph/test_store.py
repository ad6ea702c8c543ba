import json

import pytest

from docray.engine.errors import BadInput, Corrupt
from docray.engine.graph import build_doc_graph
from docray.engine.graph.extract.lexical import LexicalExtractor
from docray.engine.graph.records import CELL, COLUMN_OF, ENTITY, ROW_OF, Edge, Node
from docray.engine.graph.store import GraphStore
from docray.engine.graph.structure import find_cell

from .conftest import cashflow_unit, text_chunk

OTHER_TEXT = "3M opened a plant in Texas. Texas Instruments reported strong PP&E."


def _doc(doc_id, text=None, table=True):
    units = [cashflow_unit(doc_id, unit_id=f"{doc_id}-t1")] if table else []
    chunks = [text_chunk(doc_id, chunk_id=f"{doc_id}-c1", **({"text": text} if text else {}))]
    return build_doc_graph(units, chunks, LexicalExtractor())


@pytest.fixture
def store():
    s = GraphStore()
    s.add(*_doc("d1"), doc_id="d1")
    s.add(*_doc("d2", text=OTHER_TEXT, table=False), doc_id="d2")
    return s


def test_cell_lookup_and_neighbors(store):
    cell = find_cell(store, "Purchases of property, plant and equipment (PP&E)", "2018")
    assert cell is not None and cell.name == "(1,577)" and cell.id == "d1-t1:r3c1"
    nbrs = {(n.id, t) for n, t, _ in store.neighbors(cell.id)}
    assert ("d1-t1:row3", ROW_OF) in nbrs and ("d1-t1:col1", COLUMN_OF) in nbrs
    assert [n.id for n, _, _ in store.neighbors(cell.id, types=[ROW_OF])] == ["d1-t1:row3"]


def test_shared_entity_merged_across_docs(store):
    ent = store.get("ent:3m")
    assert ent.kind == ENTITY and ent.attrs["doc_ids"] == ["d1", "d2"]
    # d2 mentions only "PP&E": mapped onto d1's entity via its alias.
    ppe = store.get("ent:property plant and equipment")
    assert ppe.attrs["doc_ids"] == ["d1", "d2"] and store.get("ent:pp&e") is None


def test_alias_mapping_survives_a_reopen_and_a_delete(store, tmp_path):
    """The entity name/alias index is kept up to date by add() and rebuilt after a load
    or a delete: a later document mentioning only "PP&E" still lands on d1's entity."""
    store.save(tmp_path / "g")
    reopened = GraphStore.open(tmp_path / "g")
    reopened.add(*_doc("d3", text=OTHER_TEXT, table=False), doc_id="d3")
    assert reopened.get("ent:property plant and equipment").attrs["doc_ids"] == ["d1", "d2", "d3"]
    assert reopened.delete_doc("default", "d2") and reopened.get("ent:pp&e") is None
    reopened.add(*_doc("d4", text=OTHER_TEXT, table=False), doc_id="d4")
    assert reopened.get("ent:property plant and equipment").attrs["doc_ids"] == ["d1", "d3", "d4"]
    assert reopened.get("ent:pp&e") is None
    reopened.delete_doc("default", "d1")  # the entity's first document: name gone from index
    reopened.add(*_doc("d5", text=OTHER_TEXT, table=False), doc_id="d5")
    assert "d5" in reopened.get("ent:property plant and equipment").attrs["doc_ids"]


def test_units_by_doc_groups_an_entity_and_follows_writes():
    s = GraphStore()
    ent = lambda doc, uids: Node("ent:acme", ENTITY, "Acme", doc_id=doc,
                                 attrs={"unit_ids": uids, "doc_ids": [doc]})
    s.add([ent("d1", ["d1:p1:u0", "d1:p2:u3"])], [], doc_id="d1")
    s.add([ent("d2", ["d2:p1:u1"])], [], doc_id="d2")
    node = s.get("ent:acme")
    assert s.units_by_doc(node) == {"d1": ["d1:p1:u0", "d1:p2:u3"], "d2": ["d2:p1:u1"]}
    s.delete_doc("default", "d2")
    assert s.units_by_doc(s.get("ent:acme")) == {"d1": ["d1:p1:u0", "d1:p2:u3"]}


def test_find_nodes_alias_and_overlap(store):
    hits = store.find_nodes("PP&E")
    assert hits[0][0].id == "ent:property plant and equipment" and hits[0][1] == 1.0
    fuzzy = store.find_nodes("purchases of equipment", kind="table_row")
    assert fuzzy and fuzzy[0][0].id == "d1-t1:row3" and 0 < fuzzy[0][1] < 1
    assert store.find_nodes("3m", workspace="other") == []


def test_delete_doc_is_incremental(store):
    before = store.counts()
    assert store.delete_doc("default", "d2")
    assert not store.has_doc("default", "d2") and store.has_doc("default", "d1")
    ent = store.get("ent:3m")
    assert ent is not None and ent.attrs["doc_ids"] == ["d1"]
    assert store.get("ent:texas instrument") is None
    after = store.counts()
    assert after["nodes"] < before["nodes"] and after["edges"] < before["edges"]
    assert find_cell(store, "Purchases of property", "2018").name == "(1,577)"
    assert not store.delete_doc("default", "d2")
    store.delete_doc("default", "d1")
    assert store.counts() == {"nodes": 0, "edges": 0, "docs": 0}


def test_readd_is_idempotent(store):
    before = store.counts()
    store.add(*_doc("d1"), doc_id="d1")
    store.add(*_doc("d1"), doc_id="d1")
    assert store.counts() == before
    assert store.get("ent:3m").attrs["doc_ids"] == ["d1", "d2"]


def test_workspaces_isolated(store):
    store.add(*_doc("d1"), doc_id="d1", workspace="tenant-b")
    assert store.counts("tenant-b")["docs"] == 1
    assert store.get("ent:3m", "tenant-b").attrs["doc_ids"] == ["d1"]
    store.delete_doc("tenant-b", "d1")
    assert store.counts("tenant-b") == {"nodes": 0, "edges": 0, "docs": 0}
    assert store.get("ent:3m").attrs["doc_ids"] == ["d1", "d2"]
    assert not list(store.iter_nodes("tenant-b"))


def test_persist_and_reopen(store, tmp_path):
    store.save(tmp_path / "g")
    again = GraphStore.open(tmp_path / "g")
    assert again.counts() == store.counts()
    assert again.get("ent:3m") == store.get("ent:3m")
    assert (again.adjacency() != store.adjacency()).nnz == 0
    assert find_cell(again, "Purchases of property", "2018").kind == CELL
    again.delete_doc("default", "d2")
    again.save()
    assert GraphStore.open(tmp_path / "g").counts() == again.counts()


def test_manifest_mismatch_is_corrupt(store, tmp_path):
    path = store.save(tmp_path / "g")
    manifest = json.loads((path / "manifest.json").read_text())
    (path / "manifest.json").write_text(json.dumps({**manifest, "n_edges": 1}))
    with pytest.raises(Corrupt, match="n_edges"):
        GraphStore.open(path)
    (path / "manifest.json").write_text(json.dumps({**manifest, "schema_version": 99}))
    with pytest.raises(Corrupt) as err:
        GraphStore.open(path)
    assert err.value.path == str(path)
    with pytest.raises(Corrupt):
        GraphStore.open(tmp_path / "missing")


def test_edge_to_unknown_node_rejected():
    s = GraphStore()
    with pytest.raises(BadInput):
        s.add([Node("a", ENTITY, "a")], [Edge("a", "b", "co-occurs")], doc_id="d")


def test_saves_after_writes_equal_a_fresh_save(store, tmp_path):
    """Saves reuse the JSON lines of contributions they wrote before: after adds, a
    re-add and deletes, the files are the ones a store that never saved would write."""
    store.save(tmp_path / "g")
    store.add(*_doc("d3", text=OTHER_TEXT), doc_id="d3")
    store.add(*_doc("d1", text=OTHER_TEXT, table=False), doc_id="d1")  # d1 replaced
    store.delete_doc("default", "d2")
    store.save()
    fresh = GraphStore()
    fresh.add(*_doc("d3", text=OTHER_TEXT), doc_id="d3")
    fresh.add(*_doc("d1", text=OTHER_TEXT, table=False), doc_id="d1")
    fresh.save(tmp_path / "fresh")
    reopened = GraphStore.open(tmp_path / "g")
    lines = sorted((tmp_path / "g" / "nodes.jsonl").read_text().splitlines())
    assert lines == sorted((tmp_path / "fresh" / "nodes.jsonl").read_text().splitlines())
    assert reopened.counts() == fresh.counts() and reopened.get("ent:3m") == fresh.get("ent:3m")
    assert sum(map(len, store._contrib)) == len(lines)  # nothing kept for deleted contributions
