"""Fusion of retrieval signals into one ranking of chunks.

Each generator returns a ranked list. Fusion is weighted reciprocal-rank fusion
(robust to the generators' incomparable score scales) plus a modality-preference
bonus; page-level signals (MaxSim) reach every chunk on the page.
"""
from __future__ import annotations

from dataclasses import dataclass, field

RRF_K = 60


@dataclass
class Candidate:
    chunk_id: str
    doc_id: str
    pages: list[int]
    modality: str = "text"
    text: str = ""
    unit_ids: list[str] = field(default_factory=list)
    bbox: tuple[float, float, float, float] | None = None
    signals: dict[str, float] = field(default_factory=dict)
    score: float = 0.0


def rrf(ranked: list[str], weight: float = 1.0, k: int = RRF_K) -> dict[str, float]:
    """Weighted reciprocal-rank scores for one ranked list (first = best).

    >>> {k: round(v, 4) for k, v in rrf(["a", "b"], weight=2.0).items()}
    {'a': 0.0328, 'b': 0.0323}
    """
    return {key: weight / (k + i + 1) for i, key in enumerate(dict.fromkeys(ranked))}


def fuse(chunk_lists: dict[str, list[str]], page_lists: dict[str, list[tuple[str, int]]],
         chunk_pages: dict[str, list[tuple[str, int]]], weights: dict[str, float],
         chunk_modality: dict[str, str], preferred: list[str],
         modality_weight: float) -> list[tuple[str, float]]:
    """Fuse chunk rankings, page rankings and modality preference.

    ``chunk_pages`` maps a chunk to its (doc_id, page) pairs; a page signal adds to
    each chunk on that page its best page score.

    >>> fuse({"dense": ["c1", "c2"]}, {"page": [("d", 2)]},
    ...      {"c1": [("d", 1)], "c2": [("d", 2)]}, {"dense": 1, "page": 1},
    ...      {"c1": "text", "c2": "table"}, ["table"], 0.01)[0][0]
    'c2'
    """
    total: dict[str, float] = {}
    for name, ranked in chunk_lists.items():
        for key, s in rrf(ranked, weights.get(name, 1.0)).items():
            total[key] = total.get(key, 0.0) + s
    for name, ranked_pages in page_lists.items():
        page_score = rrf([f"{d}#{p}" for d, p in ranked_pages], weights.get(name, 1.0))
        for chunk, pages in chunk_pages.items():
            best = max((page_score.get(f"{d}#{p}", 0.0) for d, p in pages), default=0.0)
            if best:
                total[chunk] = total.get(chunk, 0.0) + best
    if preferred:
        for chunk in total:
            if chunk_modality.get(chunk) in preferred:
                total[chunk] += modality_weight
    return sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))


def page_ranking(ranked_chunks: list[tuple[str, float]],
                 chunk_pages: dict[str, list[tuple[str, int]]]) -> list[tuple[str, int]]:
    """Pages in the order their best chunk appears.

    >>> page_ranking([("c2", .9), ("c1", .5)], {"c1": [("d", 1)], "c2": [("d", 3), ("d", 1)]})
    [('d', 3), ('d', 1)]
    """
    seen: dict[tuple[str, int], None] = {}
    for chunk, _ in ranked_chunks:
        for page in chunk_pages.get(chunk, []):
            seen.setdefault(page, None)
    return list(seen)
