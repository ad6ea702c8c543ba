"""A copy of the chunk collection split into partitions by document, for scoped searches.

milvus-lite runs a search in Python over every row of the partitions it reads (version
dedup, tombstones, then the filter), however few rows the filter keeps; a Milvus server
prunes partition keys itself. The chunk collection partitions by workspace, so a question
scoped to one document paid for every chunk of the workspace: on the qa.jsonl corpus
(14k chunks) 15 ms per dense and 19 ms per BM25 search. This copy hashes ``doc_id`` into
``n`` partitions, and a search scoped to documents reads only theirs (5 and 9 ms there).

Each workspace has its own ``n`` partitions, ``<workspace tag>_d<k>`` (:mod:`.tenancy`), so
a document of one workspace never shares BM25 statistics with another workspace's; the copy
of a collection with the ``partition_key`` layout keeps the ``d<k>`` partitions shared by
all workspaces.

Unscoped searches stay on the chunk collection. (With Milvus's own BM25, statistics are
kept per segment, and per-partition IDF cost 7 points of open BM25 recall@5 on qa.jsonl;
docray's own BM25 statistics, :mod:`.bm25`, are the workspace's whichever partitions a
search reads.)

Consistency: writes reach the copy before the chunk collection (an ingest that dies
between the two is redone by its resume), deletes likewise. The copy of an existing
collection is built by the first process that opens it (the store holds its manifest
lock meanwhile), and used only once the manifest records it complete
(``doc_partitions``); a half-built copy is dropped and built again.
"""
from __future__ import annotations

import logging
import zlib
from typing import Any, Callable, Sequence

from docray.engine.index.tenancy import Partitions, workspace_tag

log = logging.getLogger(__name__)
COPY_BATCH = 1000


def bucket(doc_id: str, n: int) -> str:
    """The partition of a document among ``n``.

    >>> bucket("doc-1", 16) == bucket("doc-1", 16), bucket("doc-1", 16).startswith("d")
    (True, True)
    """
    return f"d{zlib.crc32(doc_id.encode('utf-8')) % n}"


class DocPartitions:
    """The document-partitioned copy of one collection.

    ``create(name, partition_key)`` makes an empty collection with the store's schema;
    ``ready()`` / ``mark_ready(n)`` read and write the store's manifest entry; ``parts``
    the store's partitions (their layout, and those that exist); ``copy_fields`` picks the
    source fields a copied row carries (not a field Milvus derives)."""

    def __init__(self, client, source: str, n: int, create: Callable[[str, bool], None],
                 ready: Callable[[], int], mark_ready: Callable[[int], None],
                 parts: Partitions, copy_fields: Callable[[list[str]], list[str]]):
        self.client, self.source, self.n, self.parts = client, source, int(n), parts
        self._copy_fields = copy_fields
        self.name = f"{source}_by_doc"
        self._create, self._ready, self._mark_ready = create, ready, mark_ready
        self.active = False

    def open(self) -> None:
        """Use the copy, building it from the source first when it is missing or was
        built for another ``n``; with ``n == 0`` drop any copy. The caller holds the
        store's manifest lock."""
        c = self.client
        exists, ready = c.has_collection(self.name), self._ready()
        if self.n and exists and ready == self.n:
            c.load_collection(self.name)
            self.active = True
            return
        if exists:
            log.info("dropping %s (built for %s partitions, want %s)", self.name,
                     ready or "an unfinished build", self.n)
            c.drop_collection(self.name)
        self._mark_ready(0)
        if not self.n:
            return
        self._create(self.name, False)
        if not self.parts.explicit:  # the partition_key layout: d<k> shared by workspaces
            for i in range(self.n):
                c.create_partition(self.name, f"d{i}")
        c.load_collection(self.name)
        copied = self._copy()
        self._mark_ready(self.n)
        self.active = True
        log.info("built %s: %d rows in %d partitions by document", self.name, copied, self.n)

    def _copy(self) -> int:
        c = self.client
        c.load_collection(self.source)
        names = [f["name"] for f in c.describe_collection(self.source)["fields"]]
        fields = self._copy_fields(names)
        it = c.query_iterator(self.source, batch_size=COPY_BATCH, filter="page >= 0",
                              output_fields=fields)
        copied = 0
        try:
            while rows := it.next():
                self._write([{k: r[k] for k in fields} for r in rows])
                copied += len(rows)
        finally:
            it.close()
        c.flush(self.name)
        return copied

    def _write(self, rows: Sequence[dict[str, Any]]) -> None:
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            part = bucket(row["doc_id"], self.n)
            if self.parts.explicit:
                part = f"{workspace_tag(row['workspace'])}_{part}"
            groups.setdefault(part, []).append(row)
        for part, group in groups.items():
            if self.parts.explicit:
                self.parts.ensure(self.name, part)
            for s in range(0, len(group), 512):
                self.client.upsert(self.name, group[s:s + 512], partition_name=part)

    def upsert(self, rows: Sequence[dict[str, Any]]) -> None:
        if self.active and rows:
            self._write(rows)
            self.client.flush(self.name)

    def delete(self, expr: str) -> None:
        if self.active:
            self.client.delete(self.name, filter=expr)
            self.client.flush(self.name)

    def route(self, workspace: str, doc_ids: Sequence[str] | None
              ) -> tuple[str, list[str]] | None:
        """(collection, partitions) for a search of ``workspace`` scoped to ``doc_ids``
        (an empty list: none of them has rows); None when the search should read the
        source collection."""
        if not self.active or not doc_ids:
            return None
        buckets = sorted({bucket(d, self.n) for d in doc_ids})
        if not self.parts.explicit:
            return self.name, buckets
        return self.name, self.parts.of(self.name, workspace, buckets) or []
