"""Content store: units and chunks by id (SQLite), for dereference at answer time.

Milvus holds the vectors and what a search returns; this table holds the full unit
records (table cells, captions, bboxes) that the answerer and the graph walk map back
to, and the chunk ↔ unit ↔ page links.
"""
from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from docray.engine.model import Chunk, Unit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS units (
    unit_id TEXT NOT NULL, workspace TEXT NOT NULL, doc_id TEXT NOT NULL,
    page INTEGER NOT NULL, modality TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (workspace, unit_id));
CREATE INDEX IF NOT EXISTS units_doc ON units (workspace, doc_id, page);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT NOT NULL, workspace TEXT NOT NULL, doc_id TEXT NOT NULL,
    first_page INTEGER NOT NULL, modality TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (workspace, chunk_id));
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (workspace, doc_id, first_page);
CREATE TABLE IF NOT EXISTS unit_chunk (
    workspace TEXT NOT NULL, unit_id TEXT NOT NULL, chunk_id TEXT NOT NULL,
    PRIMARY KEY (workspace, unit_id, chunk_id));
"""


class ContentStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._db.executescript(_SCHEMA)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._db:
            yield self._db

    def add_doc(self, workspace: str, units: list[Unit], chunks: list[Chunk]) -> None:
        with self._tx() as c:
            c.executemany("INSERT OR REPLACE INTO units VALUES (?,?,?,?,?,?)",
                          [(u.unit_id, workspace, u.doc_id, u.page, u.modality,
                            u.model_dump_json()) for u in units])
            c.executemany("INSERT OR REPLACE INTO chunks VALUES (?,?,?,?,?,?)",
                          [(ch.chunk_id, workspace, ch.doc_id, min(ch.pages or [1]),
                            ch.modality, ch.model_dump_json()) for ch in chunks])
            c.executemany("INSERT OR REPLACE INTO unit_chunk VALUES (?,?,?)",
                          [(workspace, u, ch.chunk_id) for ch in chunks for u in ch.unit_ids])

    def delete_doc(self, workspace: str, doc_id: str) -> None:
        with self._tx() as c:
            c.execute("DELETE FROM unit_chunk WHERE workspace=? AND chunk_id IN "
                      "(SELECT chunk_id FROM chunks WHERE workspace=? AND doc_id=?)",
                      (workspace, workspace, doc_id))
            c.execute("DELETE FROM units WHERE workspace=? AND doc_id=?", (workspace, doc_id))
            c.execute("DELETE FROM chunks WHERE workspace=? AND doc_id=?", (workspace, doc_id))

    def units(self, workspace: str, unit_ids: Iterable[str]) -> dict[str, Unit]:
        return {k: Unit.model_validate_json(v) for k, v in
                self._many("SELECT unit_id, body FROM units", "unit_id", workspace, unit_ids)}

    def chunks(self, workspace: str, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        return {k: Chunk.model_validate_json(v) for k, v in
                self._many("SELECT chunk_id, body FROM chunks", "chunk_id", workspace, chunk_ids)}

    def chunks_for_units(self, workspace: str, unit_ids: Iterable[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for u, ch in self._many("SELECT unit_id, chunk_id FROM unit_chunk", "unit_id",
                                workspace, unit_ids):
            out.setdefault(u, []).append(ch)
        return out

    def chunks_on_pages(self, workspace: str, pages: Iterable[tuple[str, int]]) -> dict:
        """(doc_id, page) → chunk ids whose pages include it."""
        out: dict[tuple[str, int], list[str]] = {}
        for doc_id, page in set(pages):  # SQLite reads the pages array: no body parsed here
            out[(doc_id, page)] = [cid for (cid,) in self._db.execute(
                "SELECT chunk_id FROM chunks WHERE workspace=? AND doc_id=? "
                "AND first_page BETWEEN ? AND ? AND EXISTS "
                "(SELECT 1 FROM json_each(body, '$.pages') WHERE value = ?)",
                (workspace, doc_id, page - 3, page, page))]
        return out

    def doc_chunks(self, workspace: str, doc_id: str | None = None) -> list[Chunk]:
        sql, args = "SELECT body FROM chunks WHERE workspace=?", [workspace]
        if doc_id:
            sql, args = sql + " AND doc_id=?", [*args, doc_id]
        return [Chunk.model_validate_json(b) for (b,) in self._db.execute(sql, args)]

    def doc_texts(self, workspace: str, doc_id: str) -> tuple[list[str], int | None]:
        """The chunk texts of a document and its last page with any unit (no model
        parsing: a few ms even for a 300-page filing)."""
        texts = [t for (t,) in self._db.execute(
            "SELECT json_extract(body, '$.text') FROM chunks WHERE workspace=? AND doc_id=?",
            (workspace, doc_id)) if t]
        (last,) = self._db.execute("SELECT MAX(page) FROM units WHERE workspace=? AND doc_id=?",
                                   (workspace, doc_id)).fetchone()
        return texts, last

    def doc_units(self, workspace: str, doc_id: str, modality: str) -> list[Unit]:
        """The units of one modality of a document (e.g. its printed page numbers)."""
        rows = self._db.execute("SELECT body FROM units WHERE workspace=? AND doc_id=? "
                                "AND modality=?", (workspace, doc_id, modality))
        return [Unit.model_validate_json(b) for (b,) in rows]

    def first_title(self, workspace: str, doc_id: str) -> Unit | None:
        """The document's first title with text, in reading order (it names the document
        in every chunk's index text)."""
        row = self._db.execute(
            "SELECT body FROM units WHERE workspace=? AND doc_id=? AND modality='title' "
            "AND TRIM(json_extract(body, '$.text')) != '' ORDER BY rowid LIMIT 1",
            (workspace, doc_id)).fetchone()
        return Unit.model_validate_json(row[0]) if row else None

    def count(self, workspace: str, doc_id: str | None = None) -> dict[str, int]:
        out = {}
        for table in ("units", "chunks"):
            sql, args = f"SELECT COUNT(*) FROM {table} WHERE workspace=?", [workspace]
            if doc_id:
                sql, args = sql + " AND doc_id=?", [*args, doc_id]
            out[table] = self._db.execute(sql, args).fetchone()[0]
        return out

    def _many(self, select: str, key: str, workspace: str, ids: Iterable[str]) -> list[tuple]:
        ids = list(dict.fromkeys(ids))
        rows: list[tuple] = []
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            marks = ",".join("?" * len(part))
            rows += self._db.execute(f"{select} WHERE workspace=? AND {key} IN ({marks})",
                                     [workspace, *part]).fetchall()
        return rows

    def close(self) -> None:
        self._db.close()
