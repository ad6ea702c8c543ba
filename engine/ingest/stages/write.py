"""Stage: write (runs in the driver, the single owner of the stores).

Input row:  every key produced upstream
Effect:     Milvus chunks/entities/relations, page store, graph store, catalog.
Order: stores first, catalog ``done`` last — a crash in between leaves the document
``running`` and the next run deletes its partial rows before redoing it.
Returns a small result dict for the run summary.
"""
from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np

from docray.engine.graph.records import Edge, Node
from docray.engine.ingest.stages import failed
from docray.engine.ingest.stages.encode import row_page_tokens
from docray.engine.model import Chunk, Document

log = logging.getLogger(__name__)


def chunk_index(chunk_id: str) -> int:
    """``"<doc_id>:c12"`` → 12 (the chunk's slot in the chunk-token store).

    >>> chunk_index("ab12:c7")
    7
    """
    return int(chunk_id.rsplit(":c", 1)[1])


def _fail(row: dict[str, Any], stores) -> dict[str, Any]:
    ws, doc_id = row["workspace"], row["doc_id"]
    stores.delete_doc(ws, doc_id, keep_catalog=True)
    stores.catalog.upsert(ws, doc_id, row["path"], row.get("filename") or row["path"],
                          "failed", error=row.get("error") or "unknown error")
    return {"status": "failed", "filename": row.get("filename") or row["path"],
            "error": row.get("error")}


def write_row(row: dict[str, Any], stores, commit: bool = True) -> dict[str, Any]:
    """Write one document to every store. With ``commit=False`` the graph is not saved
    and the catalog not marked done: the caller batches that with :func:`commit_rows`
    (saving a large graph after every document would cost O(documents²))."""
    if failed(row):
        return _fail(row, stores)
    ws, doc_id = row["workspace"], row["doc_id"]
    try:
        doc = Document.model_validate_json(row["doc"])
        chunks = [Chunk.model_validate(c) for c in json.loads(row["chunks"])]
        graph = json.loads(row["graph"])
        indexed = [c.model_copy(update={"text": t})
                   for c, t in zip(chunks, row.get("index_texts") or [c.text for c in chunks])]
        stores.dense.upsert_chunks(indexed, np.asarray(row["chunk_vecs"], np.float32))
        for kind, upsert in (("entity", stores.dense.upsert_entities),
                             ("relation", stores.dense.upsert_relations)):
            ids = list(row.get(f"{kind}_ids") or [])
            if ids:
                upsert(ws, doc_id, ids, list(row[f"{kind}_texts"]),
                       np.asarray(row[f"{kind}_vecs"], np.float32))
        offs = np.asarray(row["page_offsets"])
        toks = row_page_tokens(row)
        pages = [(int(p), toks[offs[i]:offs[i + 1]]) for i, p in enumerate(row["page_nos"])]
        stores.pages.add_pages(ws, doc_id, pages)
        if row.get("chunk_tok_offsets") is not None and stores.chunk_tokens is not None:
            co, ct = np.asarray(row["chunk_tok_offsets"]), np.asarray(row["chunk_tokens"])
            stores.chunk_tokens.add_pages(ws, doc_id, [
                (chunk_index(c.chunk_id), ct[co[i]:co[i + 1]]) for i, c in enumerate(chunks)])
        stores.content.add_doc(ws, doc.units, chunks)
        stores.graph.add([Node.from_dict(n) for n in graph["nodes"]],
                         [Edge(**e) for e in graph["edges"]], doc_id=doc_id, workspace=ws)
    except Exception as err:  # noqa: BLE001 — record, clean up, keep the batch going
        row = {**row, "status": "failed", "error": f"write: {type(err).__name__}: {err}"}
        log.warning("%s failed while writing: %s", row["path"], err)
        return _fail(row, stores)
    units: dict[str, int] = {}
    for u in doc.units:
        units[u.modality] = units.get(u.modality, 0) + 1
    stats = {"units": units, "chunks": len(chunks), "timings": row.get("timings", {}),
             "ocr_pages": sum(p.ocr for p in doc.pages),
             "skipped_pages": {p.page: p.skip_reason for p in doc.pages if p.skip_reason},
             "llm_failures": len(row.get("llm_failures") or [])}
    result = {"status": "ok", "filename": doc.filename, "pages": doc.n_pages, "units": units,
              "chunks": len(chunks), "timings": row.get("timings", {}),
              "llm_failures": list(row.get("llm_failures") or []),
              "profile": doc_profile(doc, row),
              "done": (ws, doc_id, row["path"], doc.filename, doc.n_pages, len(doc.units), stats)}
    if commit:
        commit_rows([result], stores)
    return result


def doc_profile(doc: Document, row: dict[str, Any]) -> dict[str, Any]:
    """What this document cost, for the ingestion profile: stage wall and CPU seconds, and
    the parse CPU seconds of its text-layer and OCR pages (and the parser's sub-stages)."""
    meta = doc.meta or {}
    cpu = meta.get("page_cpu_seconds") or []
    text_s = sum(c for p, c in zip(doc.pages, cpu) if not p.ocr)
    return {"file": doc.filename, "pages": doc.n_pages,
            "ocr_pages": sum(p.ocr for p in doc.pages),
            "timings": row.get("timings", {}), "cpu": row.get("cpu", {}),
            "parse_text_cpu": round(text_s, 4),
            "parse_ocr_cpu": round(sum(cpu) - text_s, 4),
            "parse_parts": {k: round(v, 4) for k, v in (meta.get("timings") or {}).items()}}


def commit_rows(results: list[dict[str, Any]], stores) -> None:
    """Make written documents durable: save the graph, then mark each one done."""
    if not results:
        return
    stores.graph.save()
    for r in results:
        ws, doc_id, path, filename, n_pages, n_units, stats = r.pop("done")
        stores.catalog.upsert(ws, doc_id, path, filename, "done", n_pages=n_pages,
                              n_units=n_units, stats=stats)
