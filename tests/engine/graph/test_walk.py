import pytest

from docray.engine.graph.records import Edge, Node
from docray.engine.graph.store import GraphStore
from docray.engine.graph.walk import k_hop, nodes_to_units, structural_importance


@pytest.fixture
def chain():
    """a - b - c - d (path), plus x - y in another workspace."""
    s = GraphStore()
    nodes = [Node(i, "entity", i, doc_id="d", attrs={"unit_ids": [f"u{i}"]}) for i in "abcd"]
    edges = [Edge(s_, d_, "co-occurs", 1.0, "d") for s_, d_ in ("ab", "bc", "cd")]
    s.add(nodes, edges, doc_id="d")
    s.add([Node("a", "entity", "a"), Node("y", "entity", "y")], [Edge("a", "y", "co-occurs")],
          doc_id="d", workspace="other")
    return s


def test_k_hop_reaches_two_hops_not_three(chain):
    scores = k_hop(chain, {"a": 1.0}, hops=2, decay=0.5)
    assert set(scores) == {"a", "b", "c"}
    assert scores["a"] == 1.0
    assert scores["b"] == pytest.approx(0.5)          # a has one edge: all its mass to b
    assert scores["c"] == pytest.approx(0.5 * 0.5 * 0.5)  # b splits between a and c
    assert scores["b"] > scores["c"] > 0
    assert "d" in k_hop(chain, {"a": 1.0}, hops=3)


def test_k_hop_workspace_and_types(chain):
    assert set(k_hop(chain, {"a": 1.0}, hops=2, workspace="other")) == {"a", "y"}
    assert k_hop(chain, {"a": 1.0}, hops=2, edge_types=["belongs_to"]) == {"a": 1.0}
    assert k_hop(chain, {"nope": 1.0}, hops=2) == {}
    raw = k_hop(chain, {"b": 1.0}, hops=1, normalize=False)
    assert raw["a"] == raw["c"] == pytest.approx(0.5)


def test_structural_importance_and_units(chain):
    pr = structural_importance(chain)
    assert set(pr) == set("abcd") and sum(pr.values()) == pytest.approx(1.0)
    assert pr["b"] > pr["a"]
    deg = structural_importance(chain, method="degree")
    assert deg["b"] == 1.0 and deg["a"] == 0.5
    personal = structural_importance(chain, seeds={"d": 1.0})
    assert personal["d"] > personal["a"]
    assert nodes_to_units(chain, {"a": 0.9, "b": 0.2}) == {"ua": 0.9, "ub": 0.2}
