"""Which partitions of a collection hold a workspace's rows: none shared between workspaces.

milvus-lite scores BM25 with the statistics of one segment: its row count, average length
and document frequencies over every row the segment holds, whatever the search filters out
(rows of other workspaces, deleted rows not yet compacted away; ``_search_sparse`` in
``milvus_lite/engine/collection.py``). A segment holds rows of one partition, and the
background compaction merges the segments of one partition. So two workspaces whose rows
share a partition move each other's BM25 scores. Under a partition key, workspaces are
hashed into 16 shared partitions, and the copy by document hashes every workspace's
documents into the same ``n`` partitions: adding a document to workspace B changed scores
of a question scoped to workspace A's document whenever the two documents hashed together.

Layout ``partitions`` (the default for new collections) gives each workspace partitions of
its own, named by a hash of the workspace: ``w<hash>`` in the chunk, entity and relation
collections and ``w<hash>_d<k>`` in the copy by document. Nothing B writes can then reach a
segment of A. Layout ``partition_key`` is the one collections were created with before; it
is kept for those (read from their schema) and for Milvus servers that hold more workspaces
than their partition limit (1,024 by default).
"""
from __future__ import annotations

import hashlib
import logging
import threading

log = logging.getLogger(__name__)


def workspace_tag(workspace: str) -> str:
    """The partition name of a workspace (letters, digits and ``_`` only, as Milvus wants).

    >>> workspace_tag("acme") == workspace_tag("acme") != workspace_tag("Acme")
    True
    """
    return "w" + hashlib.sha1(workspace.encode("utf-8")).hexdigest()[:20]


def uses_partition_key(client, name: str) -> bool:
    """Whether the existing collection ``name`` routes rows by its ``workspace`` key."""
    fields = client.describe_collection(name)["fields"]
    return any(f["name"] == "workspace" and f.get("is_partition_key") for f in fields)


class Partitions:
    """Partitions known to exist, created on first write. ``explicit`` False: the
    ``partition_key`` layout, where Milvus routes rows and no name is ever given."""

    def __init__(self, client, explicit: bool):
        self.client, self.explicit = client, bool(explicit)
        self._known: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def exists(self, name: str, partition: str) -> bool:
        """Only positives are cached: another process may create it later."""
        if (name, partition) in self._known:
            return True
        if self.client.has_partition(name, partition):
            self._known.add((name, partition))
            return True
        return False

    def ensure(self, name: str, partition: str) -> None:
        with self._lock:
            if self.exists(name, partition):
                return
            self.client.create_partition(name, partition)
            self.client.load_collection(name)  # a server loads the new partition too
            self._known.add((name, partition))
            log.debug("created partition %s of %s", partition, name)

    def of(self, name: str, workspace: str, suffixes: list[str] | None = None
           ) -> list[str] | None:
        """The existing partitions of ``name`` that may hold ``workspace``'s rows (with
        ``suffixes``: only those buckets of it); None under a partition key (Milvus
        routes by the filter); an empty list when the workspace has no rows there."""
        if not self.explicit:
            return None
        tag = workspace_tag(workspace)
        names = [f"{tag}_{s}" for s in suffixes] if suffixes else [tag]
        return [p for p in names if self.exists(name, p)]
