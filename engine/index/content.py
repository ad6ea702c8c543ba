"""Content store: units and chunks by id (SQLite), for dereference at answer time.

Milvus holds the vectors and what a search returns; this table holds the full unit
records (table cells, captions, bboxes) that the answerer and the graph walk map back
to, and the chunk ↔ unit ↔ page links.
"""
from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
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


class _Parsed:
    """Parsed units and chunks by (kind, workspace, id), and the chunk ids of a page,
    least recently used dropped past ``cap``. A query parses a few hundred chunk bodies,
    mostly the same ones as the last query on that document; the store empties this
    whenever the file may have changed."""

    def __init__(self, cap: int):
        self.cap, self._items, self._lock = cap, OrderedDict(), threading.Lock()

    def get_many(self, keys: list[tuple]) -> dict[tuple, object]:
        with self._lock:
            out = {k: self._items[k] for k in keys if k in self._items}
            for k in out:
                self._items.move_to_end(k)
        return out

    def put_many(self, items: dict[tuple, object]) -> None:
        with self._lock:
            self._items.update(items)
            while len(self._items) > self.cap:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def through(self, prefix: tuple, ids: Iterable, load) -> dict:
        """id → value for ``ids``: cached under ``(*prefix, id)``, the rest from
        ``load(missing ids) -> {id: value}`` and kept."""
        ids = list(dict.fromkeys(ids))
        out = {k[-1]: v for k, v in self.get_many([(*prefix, i) for i in ids]).items()}
        todo = [i for i in ids if i not in out]
        if todo:
            new = load(todo)
            self.put_many({(*prefix, i): v for i, v in new.items()})
            out.update(new)
        return out


class ContentStore:
    """Records are read-only once returned: parsed ones are shared between reads."""

    def __init__(self, path: str | Path, cache_records: int = 20000,
                 cache_links: int = 200_000):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._db.executescript(_SCHEMA)
        self._parsed, self._links = _Parsed(cache_records), _Parsed(cache_links)
        self._version = None

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        try:
            with self._db:
                yield self._db
        finally:
            self._parsed.clear()
            self._links.clear()

    def _fresh(self) -> None:
        """Drop parsed records when another connection committed since the last read
        (SQLite's data_version moves then; this connection's own writes clear in _tx)."""
        (version,) = self._db.execute("PRAGMA data_version").fetchone()
        if version != self._version:
            self._parsed.clear()
            self._links.clear()
            self._version = version

    def _records(self, kind: str, model, workspace: str, ids: Iterable[str]) -> dict:
        self._fresh()
        return self._parsed.through((kind, workspace), ids, lambda todo: {
            k: model.model_validate_json(v) for k, v in self._many(
                f"SELECT {kind}_id, body FROM {kind}s", f"{kind}_id", workspace, todo)})

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
        return self._records("unit", Unit, workspace, unit_ids)

    def chunks(self, workspace: str, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        return self._records("chunk", Chunk, workspace, chunk_ids)

    def chunks_for_units(self, workspace: str, unit_ids: Iterable[str]) -> dict[str, list[str]]:
        """Unit id → its chunk ids (units without a chunk are left out). A graph walk asks
        for up to thousands of units per query: the links are kept apart from the records."""
        def load(todo: list[str]) -> dict[str, list[str]]:
            found: dict[str, list[str]] = {u: [] for u in todo}  # kept empty too
            for u, ch in self._many("SELECT unit_id, chunk_id FROM unit_chunk", "unit_id",
                                    workspace, todo):
                found[u].append(ch)
            return found

        self._fresh()
        return {u: v for u, v in self._links.through((workspace,), unit_ids, load).items() if v}

    def chunks_on_pages(self, workspace: str, pages: Iterable[tuple[str, int]]) -> dict:
        """(doc_id, page) → chunk ids whose pages include it."""
        def load(todo: list[tuple[str, int]]) -> dict[tuple[str, int], list[str]]:
            return {(doc_id, page): [cid for (cid,) in self._db.execute(  # no body parsed
                "SELECT chunk_id FROM chunks WHERE workspace=? AND doc_id=? "
                "AND first_page BETWEEN ? AND ? AND EXISTS "
                "(SELECT 1 FROM json_each(body, '$.pages') WHERE value = ?)",
                (workspace, doc_id, page - 3, page, page))] for doc_id, page in todo}

        self._fresh()
        return self._parsed.through(("page", workspace), pages, load)

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

    def page_units(self, workspace: str, doc_id: str, page: int) -> list[Unit]:
        """The units of one page, in reading order (the page view draws their boxes)."""
        rows = self._db.execute("SELECT body FROM units WHERE workspace=? AND doc_id=? "
                                "AND page=?", (workspace, doc_id, page))
        return sorted((Unit.model_validate_json(b) for (b,) in rows), key=lambda u: u.order)

    def doc_units(self, workspace: str, doc_id: str, modality: str) -> list[Unit]:
        """The units of one modality of a document (e.g. its printed page numbers)."""
        rows = self._db.execute("SELECT body FROM units WHERE workspace=? AND doc_id=? "
                                "AND modality=?", (workspace, doc_id, modality))
        return [Unit.model_validate_json(b) for (b,) in rows]

    def doc_units_saying(self, workspace: str, doc_id: str, word: str) -> list[Unit]:
        """The units of a document whose text or caption holds ``word`` (any case), in
        reading order: only those are parsed."""
        rows = self._db.execute(
            "SELECT body FROM units WHERE workspace=? AND doc_id=? AND (instr(lower("
            "json_extract(body, '$.text')), ?) OR instr(lower(json_extract(body, '$.caption'))"
            ", ?))", (workspace, doc_id, word.lower(), word.lower()))
        return sorted((Unit.model_validate_json(b) for (b,) in rows),
                      key=lambda u: (u.page, u.order))

    def docs_with(self, workspace: str, modality: str) -> list[str]:
        """The documents of the workspace that have units of ``modality``."""
        rows = self._db.execute("SELECT DISTINCT doc_id FROM units WHERE workspace=? AND "
                                "modality=?", (workspace, modality))
        return [d for (d,) in rows]

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
