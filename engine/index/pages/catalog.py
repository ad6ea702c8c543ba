"""SQLite page table of a page store: where every page's tokens live, and its tombstone.

One row per stored page: ``(page_key, workspace, doc_id, page_no, shard, start, n_tok, live)``.
A page key is live at most once (partial unique index); replaced and deleted pages keep
their row with ``live = 0`` until :meth:`PageStore.compact` rewrites the shards. The table
is the commit point of an append: token bytes are written and fsync'd first, the rows are
inserted after, so a crash in between leaves only unreferenced bytes that the next append
truncates.
"""
from __future__ import annotations

import sqlite3
from typing import Iterable, Optional, Sequence
from urllib.parse import quote

SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    page_key TEXT NOT NULL, workspace TEXT NOT NULL, doc_id TEXT NOT NULL, page_no INTEGER NOT NULL,
    shard INTEGER NOT NULL, start INTEGER NOT NULL, n_tok INTEGER NOT NULL, live INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS live_key ON pages(page_key) WHERE live = 1;
CREATE INDEX IF NOT EXISTS by_doc ON pages(workspace, doc_id);
CREATE INDEX IF NOT EXISTS by_shard ON pages(shard, start);
"""
COLUMNS = "id, page_key, workspace, doc_id, page_no, shard, start, n_tok, live"


def page_key(workspace: str, doc_id: str, page_no: int) -> str:
    """Stable, reversible string key: ``quote(workspace):quote(doc_id):page_no``."""
    return f"{quote(workspace, safe='')}:{quote(doc_id, safe='')}:{int(page_no)}"


def chunk_key(workspace: str, chunk_id: str) -> str:
    """Key of a chunk's entry in the chunk-token store (``<doc_id>:c<n>`` → n).

    >>> chunk_key("ws", "d1:c3") == page_key("ws", "d1", 3)
    True
    """
    doc_id, n = chunk_id.rsplit(":c", 1)
    return page_key(workspace, doc_id, int(n))


class Catalog:
    """Thin typed wrapper over the SQLite file; every method is one statement or transaction."""

    def __init__(self, path: str):
        self.db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def data_version(self) -> int:
        """Changes whenever *another* connection commits (SQLite ``PRAGMA data_version``)."""
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def rows(self, live_only: bool = False) -> list[tuple]:
        where = " WHERE live = 1" if live_only else ""
        return self.db.execute(f"SELECT {COLUMNS} FROM pages{where} ORDER BY shard, start, n_tok > 0, id").fetchall()

    def live_keys(self, keys: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for i in range(0, len(keys), 500):
            chunk = list(keys[i:i + 500])
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT page_key FROM pages WHERE live = 1 AND page_key IN ({marks})"
            found.update(r[0] for r in self.db.execute(sql, chunk))
        return found

    def has_doc(self, workspace: str, doc_id: str) -> bool:
        sql = "SELECT 1 FROM pages WHERE live = 1 AND workspace = ? AND doc_id = ? LIMIT 1"
        return self.db.execute(sql, (workspace, doc_id)).fetchone() is not None

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM pages WHERE live = 1").fetchone()[0])

    def shard_end(self, shard: int) -> int:
        """Committed token rows of ``shard`` (live or not)."""
        row = self.db.execute("SELECT MAX(start + n_tok) FROM pages WHERE shard = ?", (shard,)).fetchone()
        return int(row[0] or 0)

    def last_shard(self) -> Optional[int]:
        row = self.db.execute("SELECT MAX(shard) FROM pages").fetchone()
        return None if row[0] is None else int(row[0])

    def insert(self, rows: Iterable[tuple], tombstone_keys: Sequence[str] = ()) -> None:
        """Tombstone ``tombstone_keys`` and insert (page_key, workspace, doc_id, page_no, shard, start, n_tok)."""
        with self._txn():
            self.db.executemany("UPDATE pages SET live = 0 WHERE live = 1 AND page_key = ?",
                                [(k,) for k in tombstone_keys])
            self.db.executemany(
                "INSERT INTO pages (page_key, workspace, doc_id, page_no, shard, start, n_tok, live) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 1)", list(rows))

    def delete_doc(self, workspace: str, doc_id: str) -> int:
        with self._txn():
            cur = self.db.execute("UPDATE pages SET live = 0 WHERE live = 1 AND workspace = ? AND doc_id = ?",
                                  (workspace, doc_id))
        return cur.rowcount

    def relocate(self, moves: Sequence[tuple[int, int, int]]) -> None:
        """Drop tombstones and move live rows: moves = (id, new_shard, new_start), in one transaction."""
        with self._txn():
            self.db.execute("DELETE FROM pages WHERE live = 0")
            self.db.executemany("UPDATE pages SET shard = ?, start = ? WHERE id = ?",
                                [(s, st, i) for i, s, st in moves])

    def _txn(self):
        return _Transaction(self.db)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK`` if the body raises)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
