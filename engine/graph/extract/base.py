"""Helpers shared by extractors: passages from chunks/units, entity/relation accumulation."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from docray.engine.graph.align import normalize
from docray.engine.graph.records import BELONGS_TO, anchor_id
from docray.engine.model import MULTIMODAL, Chunk, Entity, Relation, Unit


@dataclass
class Passage:
    """The text of one chunk or unit, with where it came from."""

    text: str
    doc_id: str
    unit_ids: list[str]
    anchors: list[str] = field(default_factory=list)  # multimodal unit ids it describes


def passages(items: Sequence[Chunk | Unit]) -> list[Passage]:
    """One :class:`Passage` per chunk or unit; multimodal ones name their anchor units."""
    out = []
    for it in items:
        if isinstance(it, Unit):
            text = "\n".join(t for t in (it.display_text(), it.description) if t)
            anchors = [it.unit_id] if it.modality in MULTIMODAL else []
            out.append(Passage(text, it.doc_id, [it.unit_id], anchors))
        else:
            anchors = list(it.unit_ids) if it.modality in MULTIMODAL else []
            out.append(Passage(it.text, it.doc_id, list(it.unit_ids), anchors))
    return out


def entity_id(name: str) -> str:
    """``ent:{normalised name}``.

    >>> entity_id("Apples")
    'ent:apple'
    """
    return f"ent:{normalize(name)}"


class Accumulator:
    """Collects entities (merged by id) and relations (weights summed) across passages."""

    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.relations: dict[tuple[str, str, str, str], Relation] = {}
        self.alias_of: dict[str, str] = {}  # "ent:{alias}" -> id of the entity defining it

    def entity(self, name: str, etype: str, p: Passage, aliases: Sequence[str] = (),
               description: str = "") -> str | None:
        eid = entity_id(name)
        if eid == "ent:":
            return None
        if eid in self.alias_of and eid not in self.entities:
            aliases, eid = [*aliases, name], self.alias_of[eid]
        e = self.entities.get(eid)
        if e is None:
            e = self.entities[eid] = Entity(entity_id=eid, name=name.strip(), type=etype,
                                            description=description)
        e.aliases = sorted({*e.aliases, *(a for a in aliases if entity_id(a) != eid)})
        for a in aliases:
            self.alias_of.setdefault(entity_id(a), eid)
        e.unit_ids = sorted({*e.unit_ids, *p.unit_ids})
        e.doc_ids = sorted({*e.doc_ids, p.doc_id})
        if description and not e.description:
            e.description = description
        return eid

    def relation(self, src: str, dst: str, rtype: str, weight: float, p: Passage,
                 unit_id: str | None = None) -> None:
        if src == dst:
            return
        key = (src, dst, rtype, p.doc_id)
        rel = self.relations.get(key)
        if rel is None:
            uid = unit_id or (p.unit_ids[0] if p.unit_ids else None)
            self.relations[key] = Relation(src=src, dst=dst, type=rtype, weight=weight,
                                           doc_id=p.doc_id, unit_id=uid)
        else:
            rel.weight += weight

    def belongs_to(self, eids: Sequence[str], p: Passage) -> None:
        """``belongs_to`` from each entity to the anchor of each multimodal unit of ``p``."""
        for uid in p.anchors:
            for eid in eids:
                self.relation(eid, anchor_id(uid), BELONGS_TO, 1.0, p, unit_id=uid)

    def result(self) -> tuple[list[Entity], list[Relation]]:
        return list(self.entities.values()), list(self.relations.values())
