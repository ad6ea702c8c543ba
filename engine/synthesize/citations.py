"""Citations: every evidence item names its document, page and box."""
from __future__ import annotations

from docray.engine.model import Evidence, Unit
from docray.engine.synthesize import Passage


def to_evidence(passages: list[Passage], max_chars: int = 600) -> list[Evidence]:
    out = []
    for p in passages:
        ch = p.chunk
        bbox = ch.bbox
        page = ch.pages[0] if ch.pages else 1
        unit = p.units[0] if p.units else None
        if unit is not None and bbox is None:
            bbox = unit.bbox
        out.append(Evidence(doc=p.filename or ch.doc_id, doc_id=ch.doc_id, page=page,
                            bbox=bbox, modality=ch.modality, score=round(p.score, 6),
                            text=ch.text[:max_chars], chunk_id=ch.chunk_id,
                            unit_id=unit.unit_id if unit else None))
    return out


def cite_units(passages: list[Passage], units: list[Unit]) -> tuple[list[Evidence], list[int]]:
    """The passages' evidence, plus an item for each of ``units`` (of the first passage's
    document) none of them holds, and the indexes of ``units``' items, in order, once each."""
    evidence, cites = to_evidence(passages), []
    top = passages[0]
    for u in units:
        idx = next((i for i, e in enumerate(evidence) if e.unit_id == u.unit_id), None)
        if idx is None:
            evidence.append(Evidence(doc=top.filename or top.chunk.doc_id, doc_id=u.doc_id,
                                     page=u.page, bbox=u.bbox, modality=u.modality,
                                     text=(u.caption or u.text)[:600], unit_id=u.unit_id))
            idx = len(evidence) - 1
        if idx not in cites:
            cites.append(idx)
    return evidence, cites
