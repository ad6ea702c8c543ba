"""Node and edge records of the dual knowledge graph.

Every graph builder in :mod:`docray.engine.graph` returns plain ``(list[Node], list[Edge])``;
the store tags them with a workspace and persists them. Ids are deterministic so that
re-ingesting a document produces the same graph.

Node id conventions:

* ``unit:{unit_id}`` — anchor of a table / figure / equation unit (kind = modality).
* ``{unit_id}:row{r}``, ``{unit_id}:col{c}``, ``{unit_id}:r{r}c{c}`` — table row, column, cell.
* ``{unit_id}:h{r}c{c}`` — a multi-level (spanning) column header; ``{unit_id}:g{r}`` a row group.
* ``ent:{normalised name}`` — an extracted entity, merged across chunks and documents.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Node kinds.
TABLE, IMAGE, EQUATION = "table", "image", "equation"
ROW, COLUMN, CELL, HEADER, ROW_GROUP = "table_row", "table_column", "table_cell", "table_header", \
    "table_row_group"
CAPTION, PANEL, FIGURE_LABEL, EQUATION_NUMBER = "caption", "panel", "figure_label", "equation_number"
ENTITY = "entity"

# Edge types.
ROW_OF, COLUMN_OF, HEADER_APPLIES_TO, UNIT_OF = "row-of", "column-of", "header-applies-to", "unit-of"
BELONGS_TO, CO_OCCURS, APPEARS_IN = "belongs_to", "co-occurs", "appears-in"


def anchor_id(unit_id: str) -> str:
    """Id of the anchor node of a multimodal unit.

    >>> anchor_id("u7")
    'unit:u7'
    """
    return f"unit:{unit_id}"


@dataclass
class Node:
    """One graph node. ``attrs`` holds kind-specific fields (labels, aliases, unit_ids …)."""

    id: str
    kind: str
    name: str
    doc_id: str | None = None
    unit_id: str | None = None
    page: int | None = None
    attrs: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Node":
        return cls(id=d["id"], kind=d["kind"], name=d["name"], doc_id=d.get("doc_id"),
                   unit_id=d.get("unit_id"), page=d.get("page"), attrs=dict(d.get("attrs") or {}))

    def unit_ids(self) -> list[str]:
        """Units this node points into: its own unit, or an entity's ``attrs['unit_ids']``."""
        ids = list(self.attrs.get("unit_ids") or [])
        if self.unit_id and self.unit_id not in ids:
            ids.insert(0, self.unit_id)
        return ids


@dataclass
class Edge:
    """A directed, typed, weighted edge; walks treat the graph as undirected."""

    src: str
    dst: str
    type: str
    weight: float = 1.0
    doc_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
