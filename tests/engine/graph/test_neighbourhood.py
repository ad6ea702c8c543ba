"""engine/graph/neighbourhood.py: the bounded graph around units that the web page draws."""
from docray.engine.graph import build_doc_graph
from docray.engine.graph.extract.lexical import LexicalExtractor
from docray.engine.graph.neighbourhood import neighbourhood, seed_nodes
from docray.engine.graph.records import Edge, Node
from docray.engine.graph.store import GraphStore

from .conftest import cashflow_unit, text_chunk


def _store() -> GraphStore:
    s = GraphStore()
    for ws in ("alpha", "beta"):
        units = [cashflow_unit("d1", unit_id="d1:t1")]
        chunk = text_chunk("d1", chunk_id="d1:c1").model_copy(update={"unit_ids": ["d1:u1"]})
        s.add(*build_doc_graph(units, [chunk], LexicalExtractor()), doc_id="d1", workspace=ws)
    return s


def test_seeds_are_the_anchor_and_the_entities_naming_the_unit():
    s = _store()
    seeds = seed_nodes(s, ["d1:t1"], "alpha")
    assert seeds[0].id == "unit:d1:t1" and seeds[0].kind == "table"
    text_seeds = seed_nodes(s, ["d1:u1"], "alpha")  # a text unit: only entities name it
    assert text_seeds and all(n.kind == "entity" and "d1:u1" in n.unit_ids()
                              for n in text_seeds)
    assert seed_nodes(s, ["d1:t1"], "gamma") == []


def _chain() -> GraphStore:
    """unit:d1:t1 — row0 — cell0 — col0, plus four more rows on the anchor (lighter)."""
    nodes = [Node("unit:d1:t1", "table", "T", "d1", "d1:t1"),
             Node("d1:t1:row0", "table_row", "r0", "d1", "d1:t1"),
             Node("d1:t1:r0c0", "table_cell", "c0", "d1", "d1:t1"),
             Node("d1:t1:col0", "table_column", "k0", "d1", "d1:t1")]
    edges = [Edge("d1:t1:row0", "unit:d1:t1", "unit-of", 2.0),
             Edge("d1:t1:r0c0", "d1:t1:row0", "row-of"),
             Edge("d1:t1:r0c0", "d1:t1:col0", "column-of")]
    for r in range(1, 5):
        nodes.append(Node(f"d1:t1:row{r}", "table_row", f"r{r}", "d1", "d1:t1"))
        edges.append(Edge(f"d1:t1:row{r}", "unit:d1:t1", "unit-of", 1.0))
    s = GraphStore()
    s.add(nodes, edges, doc_id="d1", workspace="alpha")
    return s


def test_hops_expand_heaviest_edges_first_within_the_bound():
    s = _chain()
    nodes, edges = neighbourhood(s, ["d1:t1"], "alpha", hops=1, max_nodes=3)
    assert [(n.id, seed) for n, seed in nodes] == [
        ("unit:d1:t1", True), ("d1:t1:row0", False), ("d1:t1:row1", False)]
    ids = {n.id for n, _ in nodes}
    assert all(a in ids and b in ids for a, b, _, _ in edges) and len(edges) == 2
    one = {n.id for n, _ in neighbourhood(s, ["d1:t1"], "alpha", hops=1)[0]}
    two = {n.id for n, _ in neighbourhood(s, ["d1:t1"], "alpha", hops=2)[0]}
    assert "d1:t1:r0c0" not in one and "d1:t1:r0c0" in two and "d1:t1:col0" not in two
    only_seed, no_edges = neighbourhood(s, ["d1:t1"], "alpha", hops=0)
    assert [n.id for n, _ in only_seed] == ["unit:d1:t1"] and no_edges == []
    assert neighbourhood(s, ["d1:t1"], "beta") == ([], [])
