"""BM25 with docray's own statistics per workspace: sparse vectors Milvus scores by inner
product, so a score depends on the workspace's rows and nothing else.

milvus-lite's BM25 function scores every segment with that segment's own statistics (row
count, average length, document frequencies; ``_search_sparse`` in
``milvus_lite/engine/collection.py``, whose TODO says so): a flush makes a segment, an
ingested document is one flush, so a chunk's IDF came from its own document's chunks until
the background compaction merged segments, and then moved. The same question on the same
rows could rank differently before and after a compaction.

Here a row's sparse vector holds, per term, the BM25 term-frequency part
``tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))`` with a fixed ``avgdl`` (config
``milvus.bm25_avgdl``; near the chunk length), so it depends on the row alone. The query
vector holds ``IDF(t)·count(t)`` with ``IDF = ln(1 + (N − df + 0.5)/(df + 0.5))``, N and df
over the workspace's rows of that collection, kept in SQLite by :class:`Bm25Stats`. The
product is the BM25 score. Tokens are lowercased ``\\w+`` runs, as milvus-lite's standard
analyzer makes them; a term's dimension is its CRC-32.

Stats are idempotent per row id (an upsert first takes back what the row counted before),
so a re-upsert or a resumed ingest never counts a row twice; a delete takes a document's
rows back. Rows are counted before Milvus holds them: a crash in between leaves the
document unfinished, and its resume deletes it from both.
"""
from __future__ import annotations

import math
import re
import sqlite3
import threading
import zlib
from collections import Counter
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)
K1, B = 1.5, 0.75  # milvus-lite's BM25 defaults

_SCHEMA = """
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS bm25_rows (
    coll TEXT NOT NULL, row_id TEXT NOT NULL, workspace TEXT NOT NULL, doc_id TEXT NOT NULL,
    terms BLOB NOT NULL,
    PRIMARY KEY (coll, row_id));
CREATE INDEX IF NOT EXISTS bm25_rows_doc ON bm25_rows (coll, workspace, doc_id);
CREATE TABLE IF NOT EXISTS bm25_df (
    coll TEXT NOT NULL, workspace TEXT NOT NULL, term INTEGER NOT NULL, df INTEGER NOT NULL,
    PRIMARY KEY (coll, workspace, term)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bm25_n (
    coll TEXT NOT NULL, workspace TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (coll, workspace)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bm25_built (coll TEXT PRIMARY KEY);
"""


def tokenize(text: str) -> list[str]:
    """Lowercased word runs.

    >>> tokenize("AMCOR's EBITDA: 2,018")
    ['amcor', 's', 'ebitda', '2', '018']
    """
    return _WORD.findall(text.lower())


@lru_cache(maxsize=200_000)
def term_id(term: str) -> int:
    """A term's sparse dimension (CRC-32 of its UTF-8 bytes).

    >>> term_id("revenue") == term_id("revenue") != term_id("revenues")
    True
    """
    return zlib.crc32(term.encode("utf-8")) % (2**32 - 2) + 1  # 0 marks a row of no terms


def term_counts(text: str) -> Counter:
    """term id → occurrences in ``text``."""
    return Counter(term_id(t) for t in tokenize(text))


def row_vector(text: str, avgdl: float, k1: float = K1, b: float = B) -> dict[int, float]:
    """The row side of BM25: the saturated, length-normalised frequency of each term.

    >>> v = row_vector("cash cash flow", avgdl=3.0)
    >>> round(v[term_id("cash")], 4), round(v[term_id("flow")], 4)
    (1.4286, 1.0)
    """
    counts = term_counts(text)
    norm = k1 * (1.0 - b + b * sum(counts.values()) / avgdl)
    return {t: float(tf * (k1 + 1.0) / (tf + norm)) for t, tf in counts.items()}


def idf(n: int, df: int) -> float:
    """BM25's IDF over ``n`` rows, ``df`` of which hold the term.

    >>> round(idf(100, 1), 4), idf(100, 0) > idf(100, 1) > idf(100, 100) > 0
    (4.2097, True)
    """
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _blob(terms: Iterable[int]) -> bytes:
    return np.asarray(sorted(terms), dtype=np.uint32).tobytes()


def _terms(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.uint32)  # (n_terms,)


class Bm25Stats:
    """Per collection and workspace: how many rows there are and how many hold each term.
    One SQLite file (WAL), shared by the processes that open the same dense store."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=120, check_same_thread=False,
                                   isolation_level=None)
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()  # one connection, used from several threads
        self._cache: dict[tuple[str, str], dict[int, int]] = {}
        self._n: dict[tuple[str, str], int] = {}
        self._version = None

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            finally:
                self._cache.clear()
                self._n.clear()

    # -- writes ---------------------------------------------------------------------------
    def upsert(self, coll: str, rows: Sequence[tuple[str, str, str, Iterable[int]]]) -> None:
        """Count ``(row_id, workspace, doc_id, term ids)`` rows, taking back what a row of
        the same id counted before."""
        if not rows:
            return
        rows = list({r[0]: r for r in rows}.values())  # one count per row id
        with self._write() as c:
            old = self._take_back(c, coll, [r[0] for r in rows])
            add: Counter = Counter()
            n: Counter = Counter()
            for row_id, ws, doc_id, terms in rows:
                blob = _blob(set(terms))
                c.execute("INSERT OR REPLACE INTO bm25_rows VALUES (?,?,?,?,?)",
                          (coll, row_id, ws, doc_id, blob))
                add.update((ws, int(t)) for t in _terms(blob))
                n[ws] += 1
            self._apply(c, coll, add, n, old)

    def delete_doc(self, coll: str, workspace: str, doc_id: str) -> None:
        with self._write() as c:
            ids = [r[0] for r in c.execute(
                "SELECT row_id FROM bm25_rows WHERE coll=? AND workspace=? AND doc_id=?",
                (coll, workspace, doc_id))]
            self._apply(c, coll, Counter(), Counter(),
                        self._take_back(c, coll, ids))

    @staticmethod
    def _take_back(c, coll: str, ids: list[str]) -> tuple[Counter, Counter]:
        """Forget the rows ``ids``: (term counts, row counts) per workspace to subtract."""
        sub: Counter = Counter()
        n: Counter = Counter()
        for s in range(0, len(ids), 500):
            part = ids[s:s + 500]
            q = f"row_id IN ({','.join('?' * len(part))})"
            for ws, blob in c.execute(f"SELECT workspace, terms FROM bm25_rows WHERE coll=? "
                                      f"AND {q}", (coll, *part)).fetchall():
                sub.update((ws, int(t)) for t in _terms(blob))
                n[ws] += 1
            c.execute(f"DELETE FROM bm25_rows WHERE coll=? AND {q}", (coll, *part))
        return sub, n

    @staticmethod
    def _apply(c, coll: str, add: Counter, n: Counter, old: tuple[Counter, Counter]) -> None:
        sub, n_old = old
        delta = Counter(add)
        delta.subtract(sub)
        c.executemany("INSERT INTO bm25_df VALUES (?,?,?,?) ON CONFLICT(coll, workspace, term) "
                      "DO UPDATE SET df = df + excluded.df",
                      [(coll, ws, t, d) for (ws, t), d in delta.items() if d])
        c.executemany("DELETE FROM bm25_df WHERE coll=? AND workspace=? AND term=? AND df <= 0",
                      [(coll, ws, t) for (ws, t), d in delta.items() if d < 0])
        dn = Counter(n)
        dn.subtract(n_old)
        c.executemany("INSERT INTO bm25_n VALUES (?,?,?) ON CONFLICT(coll, workspace) "
                      "DO UPDATE SET n = n + excluded.n",
                      [(coll, ws, d) for ws, d in dn.items() if d])

    def rebuild(self, coll: str, rows: Iterable[tuple[str, str, str, Iterable[int]]]) -> int:
        """Count ``rows`` as the whole of ``coll`` (a collection whose stats were lost or
        never kept); returns how many."""
        with self._write() as c:
            for table in ("bm25_rows", "bm25_df", "bm25_n"):
                c.execute(f"DELETE FROM {table} WHERE coll=?", (coll,))
        count = 0
        batch: list = []
        for row in rows:
            batch.append(row)
            if len(batch) >= 1000:
                self.upsert(coll, batch)
                count, batch = count + len(batch), []
        self.upsert(coll, batch)
        self.mark_built(coll)
        return count + len(batch)

    def mark_built(self, coll: str) -> None:
        with self._write() as c:
            c.execute("INSERT OR IGNORE INTO bm25_built VALUES (?)", (coll,))

    def built(self, coll: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM bm25_built WHERE coll=?",
                                    (coll,)).fetchone() is not None

    # -- reads ----------------------------------------------------------------------------
    def _fresh(self) -> None:
        """Drop cached counts when any connection committed since the last read."""
        (version,) = self._db.execute("PRAGMA data_version").fetchone()
        if version != self._version:
            self._cache.clear()
            self._n.clear()
            self._version = version

    def query_vector(self, coll: str, workspace: str, text: str) -> dict[int, float]:
        """``IDF(t)·count(t)`` for the query's terms that some row of the workspace holds
        (an empty dict: none does)."""
        counts = term_counts(text)
        if not counts:
            return {}
        key = (coll, workspace)
        with self._lock:
            self._fresh()
            if key not in self._n:
                row = self._db.execute("SELECT n FROM bm25_n WHERE coll=? AND workspace=?",
                                       key).fetchone()
                self._n[key] = int(row[0]) if row else 0
            n, known = self._n[key], self._cache.setdefault(key, {})
            todo = [t for t in counts if t not in known]
            if todo and n:
                found = dict(self._db.execute(
                    f"SELECT term, df FROM bm25_df WHERE coll=? AND workspace=? AND term IN "
                    f"({','.join('?' * len(todo))})", (*key, *todo)).fetchall())
                known.update({t: int(found.get(t, 0)) for t in todo})
        return {t: idf(n, known[t]) * c for t, c in counts.items() if n and known.get(t)}

    def rows(self, coll: str, workspace: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT n FROM bm25_n WHERE coll=? AND workspace=?",
                                   (coll, workspace)).fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        with self._lock:
            self._db.close()
