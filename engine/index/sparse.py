"""How a dense store's ``sparse`` field is filled and scored: two layouts.

``client`` (the default for new collections): docray writes each row's BM25 vector and
keeps the statistics per workspace (:mod:`.bm25`); Milvus scores sparse vectors by inner
product, so a score depends only on the workspace's rows, never on segments, compaction or
other workspaces. ``server``: Milvus's BM25 function derives the field from ``text`` and
scores it with per-segment statistics; collections created that way keep it (read from
their schema), since switching means re-ingesting.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterator, Sequence

from docray.engine.index.bm25 import Bm25Stats, row_vector, term_counts

log = logging.getLogger(__name__)
EMPTY = {0: 1e-30}  # Milvus refuses a sparse row of no terms; no query term is dimension 0


def uses_bm25_function(client, name: str) -> bool:
    """Whether the existing collection ``name`` derives ``sparse`` by Milvus's BM25."""
    functions = client.describe_collection(name).get("functions") or []
    return any("BM25" in str(f.get("type", "")) or f.get("type") == 1 for f in functions)


class SparseText:
    """The sparse layout of one store's collections (one layout for all of them)."""

    def __init__(self, client, mode: str, stats_path: Path, avgdl: float):
        self.client, self.mode, self.avgdl = client, mode, float(avgdl)
        self.stats = Bm25Stats(stats_path) if mode == "client" else None
        self.metric = "IP" if self.client_side else "BM25"

    @property
    def client_side(self) -> bool:
        return self.stats is not None

    def add_to_schema(self, schema, name: str) -> None:
        from pymilvus import Function, FunctionType

        if not self.client_side:
            schema.add_function(Function(name=f"{name}_bm25", function_type=FunctionType.BM25,
                                         input_field_names=["text"],
                                         output_field_names=["sparse"]))

    def fill(self, coll: str, rows: list[dict[str, Any]]) -> None:
        """Give ``rows`` their sparse vectors and count them (before Milvus holds them: a
        crash in between leaves the document unfinished, and its resume deletes both)."""
        if not self.client_side or not rows:
            return
        counted = []
        for row in rows:
            vec = row_vector(row["text"], self.avgdl)
            row["sparse"] = vec or dict(EMPTY)
            counted.append((row["id"], row["workspace"], row["doc_id"], vec.keys()))
        self.stats.upsert(coll, counted)

    def delete_doc(self, coll: str, workspace: str, doc_id: str) -> None:
        if self.client_side:
            self.stats.delete_doc(coll, workspace, doc_id)

    def query(self, coll: str, workspace: str, text: str) -> Any:
        """What a search sends for ``text``: the text itself for Milvus's BM25, or the
        IDF-weighted query vector (None: no term of it is in the workspace)."""
        if not self.client_side:
            return text if text.strip() else None
        return self.stats.query_vector(coll, workspace, text) or None

    def copy_fields(self, fields: Sequence[str]) -> list[str]:
        """Fields a copy of a collection reads: Milvus derives ``sparse`` itself."""
        return [f for f in fields if f != "sparse" or self.client_side]

    def ensure_counted(self, coll: str, name: str) -> None:
        """Count an existing collection's rows when no stats were kept for it (a stats file
        lost, or a store from before): statistics must cover exactly what Milvus holds."""
        if not self.client_side or self.stats.built(coll):
            return
        n = self.stats.rebuild(coll, self._scan(name))
        log.info("counted BM25 statistics of %s: %d rows", name, n)

    def _scan(self, name: str) -> Iterator[tuple[str, str, str, Any]]:
        it = self.client.query_iterator(name, batch_size=1000, filter="page >= 0",
                                        output_fields=["workspace", "doc_id", "text"])
        try:
            while rows := it.next():
                for r in rows:
                    yield r["id"], r["workspace"], r["doc_id"], term_counts(r["text"]).keys()
        finally:
            it.close()

    def close(self) -> None:
        if self.stats is not None:
            self.stats.close()
