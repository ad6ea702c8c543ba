"""Citations: every evidence item names its document, page and box."""
from __future__ import annotations

from docray.engine.model import Evidence
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
