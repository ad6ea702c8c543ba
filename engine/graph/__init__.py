"""The dual knowledge graph: cross-modal structure graphs + text entity–relation graph.

:func:`build_doc_graph` is the pure per-document core the ingestion stage calls; the
:class:`~docray.engine.graph.store.GraphStore` (node/edge tables + CSR adjacency) and
:func:`~docray.engine.graph.walk.k_hop` serve retrieval. Importing this package does not
import scipy; :mod:`.store` and :mod:`.walk` do.
"""
from __future__ import annotations

import logging
from typing import Sequence

from docray.engine.graph.align import merge_entities, normalize
from docray.engine.graph.extract import Extractor
from docray.engine.graph.records import (
    APPEARS_IN, COLUMN, ENTITY, ROW, Edge, Node, anchor_id)
from docray.engine.graph.structure import find_cell, unit_graph
from docray.engine.model import MULTIMODAL, Chunk, Entity, Relation, Unit

log = logging.getLogger(__name__)


def entity_node(e: Entity) -> Node:
    return Node(id=e.entity_id, kind=ENTITY, name=e.name,
                doc_id=e.doc_ids[0] if e.doc_ids else None,
                attrs={"type": e.type, "aliases": list(e.aliases), "description": e.description,
                       "unit_ids": list(e.unit_ids), "doc_ids": list(e.doc_ids)})


def extract_items(units: Sequence[Unit], chunks: Sequence[Chunk]) -> list[Chunk | Unit]:
    """Chunks, plus multimodal units no chunk covers (so every table/figure is read)."""
    covered = {u for c in chunks for u in c.unit_ids}
    return [*chunks, *(u for u in units if u.modality in MULTIMODAL and u.unit_id not in covered)]


def _relation_edges(relations: Sequence[Relation], id_map: dict[str, str], node_ids: set[str],
                    doc_id: str) -> list[Edge]:
    agg: dict[tuple[str, str, str], float] = {}
    for r in relations:
        src, dst = id_map.get(r.src, r.src), id_map.get(r.dst, r.dst)
        if src == dst or src not in node_ids or dst not in node_ids:
            if src != dst:
                log.debug("dropping relation %s -> %s: endpoint not in this document", src, dst)
            continue
        if r.type != "belongs_to" and src > dst:  # undirected relation types: one key per pair
            src, dst = dst, src
        agg[(src, dst, r.type)] = agg.get((src, dst, r.type), 0.0) + r.weight
    return [Edge(s, d, t, w, doc_id) for (s, d, t), w in agg.items()]


def _appears_in(entities: Sequence[Entity], struct_nodes: Sequence[Node], doc_id: str) -> list[Edge]:
    """``appears-in`` from an entity to the table rows/columns whose label mentions it."""
    edges = []
    labels = [(n, f" {normalize(n.attrs.get('label', n.name))} ") for n in struct_nodes
              if n.kind in (ROW, COLUMN)]
    for e in entities:
        keys = [f" {k} " for k in {normalize(e.name), *(normalize(a) for a in e.aliases)} if k]
        units = set(e.unit_ids)
        for n, label in labels:
            if n.unit_id in units and any(k in label for k in keys):
                edges.append(Edge(e.entity_id, n.id, APPEARS_IN, 1.0, doc_id))
    return edges


def build_doc_graph(units: Sequence[Unit], chunks: Sequence[Chunk], extractor: Extractor
                    ) -> tuple[list[Node], list[Edge]]:
    """Nodes and edges of one document: structure graphs, aligned entities, their relations,
    ``belongs_to`` edges to multimodal anchors and ``appears-in`` edges to table rows/columns.
    Pure: no I/O beyond what ``extractor`` does."""
    doc_ids = {u.doc_id for u in units} | {c.doc_id for c in chunks}
    if len(doc_ids) > 1:
        raise ValueError(f"build_doc_graph takes one document, got {sorted(doc_ids)}")
    doc_id = doc_ids.pop() if doc_ids else ""
    nodes: list[Node] = []
    edges: list[Edge] = []
    for u in units:
        n, e = unit_graph(u)
        nodes += n
        edges += e
    entities, relations = extractor.extract(extract_items(units, chunks))
    merged, id_map = merge_entities(entities)
    struct_ids = {n.id for n in nodes}
    merged = [e for e in merged if e.entity_id not in struct_ids]
    ent_nodes = [entity_node(e) for e in merged]
    node_ids = struct_ids | {n.id for n in ent_nodes}
    edges += _relation_edges(relations, id_map, node_ids, doc_id)
    edges += _appears_in(merged, nodes, doc_id)
    return nodes + ent_nodes, edges


__all__ = ["Edge", "Node", "anchor_id", "build_doc_graph", "entity_node", "find_cell"]
