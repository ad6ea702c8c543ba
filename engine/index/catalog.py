"""Catalog: per-document ingestion state in SQLite (one row per workspace × doc).

States move ``pending → running → done`` or ``→ failed`` (with the error recorded).
Ingestion writes stores first and marks ``done`` last, so a crash leaves the document
``running``; the next run cleans that document's partial rows and redoes it.
"""
from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

STATES = ("pending", "running", "done", "failed")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    workspace TEXT NOT NULL,
    doc_id    TEXT NOT NULL,
    source    TEXT NOT NULL,
    filename  TEXT NOT NULL,
    status    TEXT NOT NULL,
    error     TEXT,
    n_pages   INTEGER DEFAULT 0,
    n_units   INTEGER DEFAULT 0,
    stats     TEXT DEFAULT '{}',
    updated   REAL NOT NULL,
    PRIMARY KEY (workspace, doc_id)
);
CREATE INDEX IF NOT EXISTS documents_status ON documents (workspace, status);
"""


class Catalog:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._conn() as c:
            c.executescript(_SCHEMA)

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=30)
        conn.row_factory = sqlite3.Row
        try:
            with conn:
                yield conn
        finally:
            conn.close()

    def upsert(self, workspace: str, doc_id: str, source: str, filename: str,
               status: str, error: str | None = None, **fields: Any) -> None:
        if status not in STATES:
            raise ValueError(f"status {status!r} is not one of {STATES}")
        stats = json.dumps(fields.pop("stats", {}))
        n_pages, n_units = fields.pop("n_pages", 0), fields.pop("n_units", 0)
        with self._conn() as c:
            c.execute(
                "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT(workspace, doc_id) DO UPDATE SET source=excluded.source, "
                "filename=excluded.filename, status=excluded.status, error=excluded.error, "
                "n_pages=excluded.n_pages, n_units=excluded.n_units, stats=excluded.stats, "
                "updated=excluded.updated",
                (workspace, doc_id, source, filename, status, error, n_pages, n_units, stats,
                 time.time()))

    def set_status(self, workspace: str, doc_id: str, status: str,
                   error: str | None = None) -> None:
        if status not in STATES:
            raise ValueError(f"status {status!r} is not one of {STATES}")
        with self._conn() as c:
            c.execute("UPDATE documents SET status=?, error=?, updated=? "
                      "WHERE workspace=? AND doc_id=?",
                      (status, error, time.time(), workspace, doc_id))

    def get(self, workspace: str, doc_id: str) -> dict[str, Any] | None:
        with self._conn() as c:
            row = c.execute("SELECT * FROM documents WHERE workspace=? AND doc_id=?",
                            (workspace, doc_id)).fetchone()
        return _row(row) if row else None

    def list(self, workspace: str | None = None, status: str | None = None) -> list[dict]:
        sql, args = "SELECT * FROM documents WHERE 1=1", []
        if workspace is not None:
            sql, args = sql + " AND workspace=?", [*args, workspace]
        if status is not None:
            sql, args = sql + " AND status=?", [*args, status]
        with self._conn() as c:
            return [_row(r) for r in c.execute(sql + " ORDER BY filename", args)]

    def find(self, workspace: str, ref: str) -> dict[str, Any] | None:
        """Look a document up by doc_id, doc_id prefix, or file name."""
        with self._conn() as c:
            row = c.execute(
                "SELECT * FROM documents WHERE workspace=? AND (doc_id=? OR filename=?) "
                "ORDER BY updated DESC LIMIT 1", (workspace, ref, ref)).fetchone()
            if row is None and len(ref) >= 6:
                row = c.execute("SELECT * FROM documents WHERE workspace=? AND doc_id LIKE ?",
                                (workspace, ref + "%")).fetchone()
        return _row(row) if row else None

    def delete(self, workspace: str, doc_id: str) -> bool:
        with self._conn() as c:
            cur = c.execute("DELETE FROM documents WHERE workspace=? AND doc_id=?",
                            (workspace, doc_id))
        return cur.rowcount > 0


def _row(row: sqlite3.Row) -> dict[str, Any]:
    d = dict(row)
    d["stats"] = json.loads(d.get("stats") or "{}")
    return d
