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


def test_a_sparse_frontier_walks_like_the_whole_operator():
    """Few seeds in a large graph take the column-slice path; it must score every node as
    the full matrix product does (weighted edges, a hub, several seeds, three hops)."""
    import numpy as np

    from docray.engine.graph.walk import _step

    rng = np.random.default_rng(7)
    s = GraphStore()
    names = [f"n{i}" for i in range(400)]
    edges = {(int(a), int(b)) for a, b in rng.integers(0, 400, (900, 2)) if a != b}
    edges |= {(0, j) for j in range(1, 60)}  # a hub
    s.add([Node(n, "entity", n, doc_id="d") for n in names],
          [Edge(names[a], names[b], "co-occurs", float(1 + (a * b) % 3), "d") for a, b in edges],
          doc_id="d")
    seeds = {"n5": 1.0, "n17": 0.6}
    step = _step(s, None, True).toarray()  # (n, n)
    x = np.zeros(len(names))
    for n, v in seeds.items():
        x[s.index_of(n, "default")] = v
    best, frontier = x.copy(), x
    for _ in range(3):
        frontier = 0.5 * step @ frontier
        best = np.maximum(best, frontier)
    want = {s.key_at(i)[1]: best[i] for i in np.flatnonzero(best > 0)}
    got = k_hop(s, seeds, hops=3, decay=0.5)
    assert len(want) > 20 and set(got) == set(want)
    assert all(got[n] == pytest.approx(want[n], rel=1e-12) for n in want)
