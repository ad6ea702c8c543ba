"""No workspace's writes reach another's BM25 statistics.

milvus-lite's BM25 function keeps statistics per segment, over every row of the segment.
Under the older layout (workspace partition key; the copy by document hashing every
workspace's documents into shared partitions) rows of workspace B landed in segments beside
A's, and A's scores moved: the second test shows that mechanism (Milvus's BM25, shared
partitions), so the others are known to test something that could fail. Each workspace now
has partitions of its own, and docray keeps BM25 statistics per workspace itself
(:mod:`docray.engine.index.bm25`), which holds even where partitions are shared."""
import numpy as np
import pytest

from docray.engine.config import MilvusConfig
from docray.engine.index.dense import MilvusDenseStore
from docray.engine.model import Chunk

DIM = 8
A_TEXTS = ["Solar panels convert sunlight into electricity for the grid.",
           "The quarterly revenue of Acme grew by 8 percent on guidance.",
           "Photosynthesis turns light into chemical energy in leaves.",
           "Acme raised its revenue guidance for the full year."]
QUERY = "Acme revenue guidance light energy"


def _vec(i: int) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i % DIM], v[(i + 3) % DIM] = 1.0, 0.3
    return v / np.linalg.norm(v)


def _open(tmp_path, tenancy: str, bm25: str = "client") -> MilvusDenseStore:
    return MilvusDenseStore(MilvusConfig(uri="m.db", collection_prefix="t", doc_partitions=4,
                                         tenancy=tenancy, bm25=bm25),
                            tmp_path, dim=DIM, encoder="fake")


def _fill(store, ws: str, doc: str, texts: list[str]) -> None:
    chunks = [Chunk(chunk_id=f"{doc}:c{i}", doc_id=doc, text=t, pages=[i + 1], workspace=ws)
              for i, t in enumerate(texts)]
    store.upsert_chunks(chunks, np.stack([_vec(i) for i in range(len(chunks))]))


def _scores(store) -> list:
    """Exact (id, score) lists of A: BM25 scoped to one document and unscoped, hybrid."""
    qv = _vec(1)
    return [[(h.id, h.score) for h in hits] for hits in (
        store.search_sparse(QUERY, 10, "A", ["docB"]),
        store.search_sparse(QUERY, 10, "A"),
        store.search_hybrid(QUERY, qv, 10, "A", ["docB"]),
        store.search_hybrid(QUERY, qv, 10, "A"))]


def _other_tenants(store) -> None:
    """Workspaces whose documents share A's document ids (so their buckets too), and
    more, with texts full of the query's terms."""
    for ws in ("B", "C", "tenant-d"):
        for doc in ("docA", "docB", "docC", "docD", f"{ws}-extra"):
            _fill(store, ws, doc, [f"Acme revenue revenue guidance filler {ws} {j}" * (j + 1)
                                   for j in range(6)])


def _workspace_a(store) -> None:
    for i, doc in enumerate(("docA", "docB", "docC", "docD")):
        _fill(store, "A", doc, A_TEXTS[i:] + A_TEXTS[:i])


@pytest.mark.parametrize("bm25", ["client", "server"])
def test_other_workspaces_never_move_a_single_score_of_workspace_a(tmp_path, bm25):
    s = _open(tmp_path, "partitions", bm25)
    try:
        _workspace_a(s)
        before = _scores(s)
        assert all(before) and {d for d, _ in before[0]} == {"docB:c0", "docB:c1", "docB:c2"}
        _other_tenants(s)
        assert _scores(s) == before, "adding B's documents moved A's scores"
        for ws in ("B", "C"):
            for doc in ("docA", "docB"):
                s.delete_doc(ws, doc)
        assert _scores(s) == before, "deleting B's documents moved A's scores"
        assert s.search_sparse(QUERY, 10, "B", ["docB"]) == []  # B's own view holds
        assert {h.workspace for h in s.search_sparse(QUERY, 10, "B")} == {"B"}
    finally:
        s.close()
    s = _open(tmp_path, "partition_key")  # an existing store keeps its layout
    try:
        assert s.parts.explicit and _scores(s) == before
    finally:
        s.close()


def test_the_old_shared_partitions_let_other_workspaces_move_scores(tmp_path):
    s = _open(tmp_path, "partition_key", bm25="server")
    try:
        _workspace_a(s)
        before = _scores(s)
        _other_tenants(s)
        after = _scores(s)
        assert after[0] != before[0], "B's rows in A's document partition left A's BM25 as is"
    finally:
        s.close()
    s = _open(tmp_path, "partitions")
    try:
        assert not s.parts.explicit  # the layout is read from the collection, not the config
    finally:
        s.close()


def test_docray_bm25_keeps_workspaces_apart_even_in_shared_partitions(tmp_path):
    """The partition-key layout (a Milvus server with more workspaces than partitions):
    B's rows share A's segments, but A's statistics are A's alone."""
    s = _open(tmp_path, "partition_key")
    try:
        assert not s.parts.explicit and s.sparse.client_side
        _workspace_a(s)
        before = _scores(s)
        assert all(before)
        _other_tenants(s)
        assert _scores(s) == before, "B's rows in A's partitions moved A's scores"
        s.delete_doc("B", "docB")
        assert _scores(s) == before
    finally:
        s.close()
