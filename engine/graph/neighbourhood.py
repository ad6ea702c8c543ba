"""The graph around a few units, bounded: what a person looks at beside an answer.

Seeds are the units' anchor nodes (``unit:<id>`` for tables, figures and equations) and
the entities that name the units; a breadth-first walk of ``hops`` adds neighbours,
heaviest edge first, until ``max_nodes`` are kept. Edges are those the walk crossed
between kept nodes. Everything is read in one workspace: another one's nodes are never
seen.
"""
from __future__ import annotations

from typing import Sequence

from docray.engine.graph.records import ENTITY, Node, anchor_id
from docray.engine.graph.store import GraphStore
from docray.engine.model import doc_of


def seed_nodes(store: GraphStore, unit_ids: Sequence[str], workspace: str) -> list[Node]:
    """The anchors of ``unit_ids`` and the entities whose units include one of them."""
    wanted, docs = set(unit_ids), {doc_of(u) for u in unit_ids}
    seeds = [n for n in (store.get(anchor_id(u), workspace) for u in unit_ids) if n]
    for node in store.iter_nodes(workspace, kind=ENTITY):
        if docs & set(node.attrs.get("doc_ids") or [node.doc_id]) and \
                wanted & set(node.unit_ids()):
            seeds.append(node)
    return seeds


def neighbourhood(store: GraphStore, unit_ids: Sequence[str], workspace: str, hops: int = 1,
                  max_nodes: int = 40) -> tuple[list[tuple[Node, bool]], list[tuple]]:
    """``([(node, is_seed)], [(src, dst, type, weight)])`` around ``unit_ids``.

    Seeds come first and count towards ``max_nodes``; each hop expands the previous
    frontier, heaviest edges first.
    """
    seeds = seed_nodes(store, unit_ids, workspace)[:max_nodes]
    kept: dict[str, tuple[Node, bool]] = {n.id: (n, True) for n in seeds}
    edges: dict[tuple[str, str, str], float] = {}
    frontier = [n.id for n in seeds]
    for _ in range(max(0, hops)):
        nxt: list[str] = []
        for nid in frontier:
            around = sorted(store.neighbors(nid, workspace=workspace), key=lambda t: -t[2])
            for other, etype, weight in around:
                if other.id not in kept:
                    if len(kept) >= max_nodes:
                        continue
                    kept[other.id] = (other, False)
                    nxt.append(other.id)
                a, b = sorted((nid, other.id))
                edges[(a, b, etype)] = max(weight, edges.get((a, b, etype), 0.0))
        frontier = nxt
    return list(kept.values()), [(a, b, t, w) for (a, b, t), w in edges.items()]
