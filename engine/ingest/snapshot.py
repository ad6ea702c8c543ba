"""What an ingestion run left in every store, as plain comparable data.

Two runs over the same files (one node or several, with or without a node lost midway)
must leave equal snapshots: the same catalog rows, Milvus ids, page-store rows, content
counts and graph counts. Duplicates show up as repeated ids (``duplicates``), missing rows
as ids one side lacks. Open it only when no other process holds the stores (a milvus-lite
db file has one owner).
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from docray.engine.config import DocrayConfig
from docray.engine.index.dense import COLLECTIONS
from docray.engine.ingest.stores import Stores

MAX_ROWS = 16_384  # milvus-lite caps one query at this many rows


def _milvus_rows(stores: Stores, workspace: str) -> tuple[dict[str, list[str]],
                                                         dict[str, np.ndarray]]:
    ids, vecs = {}, {}
    for coll in COLLECTIONS:
        rows = stores.dense.client.query(stores.dense.names[coll],
                                         filter=f'workspace == "{workspace}"',
                                         output_fields=["id", "dense"], limit=MAX_ROWS)
        rows = sorted(rows, key=lambda r: r["id"])
        ids[coll] = [r["id"] for r in rows]
        vecs[coll] = (np.asarray([r["dense"] for r in rows], np.float32) if rows
                      else np.zeros((0, stores.dense.dim), np.float32))  # (n_rows, dim)
    return ids, vecs


def index_snapshot(cfg: DocrayConfig, workspace: str) -> dict[str, Any]:
    """Catalog, Milvus ids (and their dense vectors under ``_vectors``), page-store rows,
    chunk-token rows, content and graph counts of one workspace."""
    stores = Stores.open(cfg)
    try:
        catalog = sorted((r["doc_id"], r["filename"], r["status"], r["n_pages"], r["n_units"])
                         for r in stores.catalog.list(workspace))
        ids, vecs = _milvus_rows(stores, workspace)
        pages = sorted((ref.doc_id, ref.page_no, int(tok.shape[0]))
                       for ref, tok in stores.pages.pages(workspace))
        chunk_rows = sorted((ref.doc_id, ref.page_no, int(tok.shape[0]))
                            for ref, tok in stores.chunk_tokens.pages(workspace))
        snap = {"catalog": catalog, "milvus": ids, "pages": pages, "chunk_tokens": chunk_rows,
                "content": stores.content.count(workspace), "graph": stores.graph.counts(workspace)}
    finally:
        stores.close()
    snap["duplicates"] = duplicates(snap)
    snap["_vectors"] = vecs
    return snap


def duplicates(snap: dict[str, Any]) -> dict[str, list]:
    """Keys that occur more than once in a store: Milvus ids, (doc, page) rows."""
    out: dict[str, list] = {}
    for coll, ids in snap["milvus"].items():
        out[coll] = sorted(k for k, n in Counter(ids).items() if n > 1)
    for store in ("pages", "chunk_tokens"):
        out[store] = sorted(k for k, n in Counter((d, p) for d, p, _ in snap[store]).items()
                            if n > 1)
    return {k: v for k, v in out.items() if v}


def comparable(snap: dict[str, Any]) -> dict[str, Any]:
    """The snapshot without its vectors (what equal runs must match exactly)."""
    return {k: v for k, v in snap.items() if not k.startswith("_")}


def max_vector_diff(a: dict[str, Any], b: dict[str, Any]) -> float:
    """Largest absolute difference between the dense vectors of equal ids."""
    worst = 0.0
    for coll in COLLECTIONS:
        va, vb = a["_vectors"][coll], b["_vectors"][coll]
        if va.shape != vb.shape:
            return float("inf")
        if va.size:
            worst = max(worst, float(np.abs(va - vb).max()))
    return worst
