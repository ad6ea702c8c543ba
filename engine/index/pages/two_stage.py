"""Two-stage page search for very large corpora: pooled vectors in Milvus, then exact MaxSim.

Stage 1 (candidates): every page is summarised by a few pooled vectors — the normalised mean
of its tokens plus ``n_centroids`` k-means centroids — stored as ordinary rows in a Milvus
collection (milvus-lite has no multi-vector field), one row per pooled vector, keyed
``<page_key>#<j>``. Each query token (and the query mean) is searched there; the union of
the pages hit is the candidate set. Stage 2: exact MaxSim over the candidates from the
:class:`~docray.engine.index.pages.store.PageStore`. Recall against exact search is
measured by the tests and ``benchmarks/maxsim.py``; it depends on ``per_token`` (hits per
query vector).

Pass a ``pymilvus.MilvusClient`` or a URI (a ``*.db`` path selects milvus-lite). pymilvus is
imported only here, so the page store works without it.
"""
from __future__ import annotations

import logging
from typing import Any, Iterable, Optional, Sequence, Union

import torch

from .store import Array, PageHit, PageStore, _as_numpy

logger = logging.getLogger(__name__)

INDEX_TYPES = ("FLAT", "IVF_FLAT", "HNSW", "AUTOINDEX")


def pool_page(tokens: torch.Tensor, n_centroids: int = 4, iters: int = 6) -> torch.Tensor:
    """Pooled vectors of one page (n_tok, dim) -> (1 + c, dim), unit norm; empty page -> (0, dim)."""
    if tokens.shape[0] == 0:
        return tokens.new_zeros(0, tokens.shape[1])
    x = torch.nn.functional.normalize(tokens.float(), dim=1)  # (n_tok, dim)
    c = min(n_centroids, x.shape[0])
    cent = x[torch.linspace(0, x.shape[0] - 1, c).long()]  # (c, dim) deterministic init
    for _ in range(iters):
        assign = (x @ cent.T).argmax(dim=1)  # (n_tok,)
        sums = torch.zeros_like(cent).index_add_(0, assign, x)  # (c, dim)
        counts = torch.bincount(assign, minlength=c)[:, None]  # (c, 1)
        cent = torch.where(counts > 0, sums / counts.clamp_min(1), cent)  # (c, dim)
    pooled = torch.cat([x.mean(dim=0, keepdim=True), cent])  # (1 + c, dim)
    return torch.nn.functional.normalize(pooled, dim=1)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class PooledPageIndex:
    """Pooled page vectors in one Milvus collection; candidates for :meth:`PageStore.search_batch`."""

    def __init__(
        self, client: Union[str, Any], collection: str = "page_pooled", *, dim: int,
        n_centroids: int = 4, index_type: str = "FLAT", index_params: Optional[dict] = None,
    ):
        from pymilvus import MilvusClient

        if index_type not in INDEX_TYPES:
            raise ValueError(f"index_type must be one of {INDEX_TYPES}, got {index_type!r}")
        self.client = MilvusClient(uri=client) if isinstance(client, str) else client
        self.collection, self.dim, self.n_centroids = collection, dim, n_centroids
        if not self.client.has_collection(collection):
            self._create(index_type, index_params or {})

    def _create(self, index_type: str, params: dict) -> None:
        from pymilvus import DataType

        schema = self.client.create_schema(auto_id=False)
        schema.add_field("id", DataType.VARCHAR, max_length=1024, is_primary=True)
        schema.add_field("page_key", DataType.VARCHAR, max_length=1024)
        schema.add_field("workspace", DataType.VARCHAR, max_length=512)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=512)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
        index = self.client.prepare_index_params()
        index.add_index("vector", index_type=index_type, metric_type="IP", params=params)
        self.client.create_collection(self.collection, schema=schema, index_params=index)

    def index_store(self, store: PageStore, workspace: Optional[str] = None, batch: int = 4096) -> int:
        """Upsert pooled vectors of every live page (idempotent: ids are page keys). Returns rows written."""
        rows: list[dict] = []
        written = 0
        for ref, tokens in store.pages(workspace):
            pooled = pool_page(tokens, self.n_centroids)  # (1 + c, dim)
            rows.extend({"id": f"{ref.key}#{j}", "page_key": ref.key, "workspace": ref.workspace,
                         "doc_id": ref.doc_id, "vector": v} for j, v in enumerate(pooled.tolist()))
            if len(rows) >= batch:
                written += self._upsert(rows)
                rows = []
        written += self._upsert(rows)
        self.client.flush(self.collection)
        return written

    def _upsert(self, rows: list[dict]) -> int:
        if rows:
            self.client.upsert(self.collection, rows)
        return len(rows)

    def delete_doc(self, workspace: str, doc_id: str) -> None:
        expr = f"workspace == {_quote(workspace)} and doc_id == {_quote(doc_id)}"
        self.client.delete(self.collection, filter=expr)
        self.client.flush(self.collection)

    def candidates(
        self, query: Array, per_token: int = 64, workspace: Optional[str] = None,
        doc_ids: Optional[Iterable[str]] = None,
    ) -> set[str]:
        """Page keys hit by any query token or the query mean (``per_token`` hits per vector)."""
        q = torch.nn.functional.normalize(torch.as_tensor(_as_numpy(query), dtype=torch.float32), dim=1)  # (n_q, dim)
        probes = torch.cat([q, torch.nn.functional.normalize(q.mean(0, keepdim=True), dim=1)])  # (n_q + 1, dim)
        filters = []
        if workspace is not None:
            filters.append(f"workspace == {_quote(workspace)}")
        if doc_ids is not None:
            filters.append(f"doc_id in [{', '.join(_quote(d) for d in doc_ids)}]")
        hits = self.client.search(self.collection, data=probes.tolist(), limit=per_token,
                                  filter=" and ".join(filters), output_fields=["page_key"],
                                  search_params={"metric_type": "IP"})
        return {h["entity"]["page_key"] for row in hits for h in row}

    def search(
        self, store: PageStore, query: Array, k: int = 10, per_token: int = 64,
        workspace: Optional[str] = None, doc_ids: Optional[Sequence[str]] = None,
    ) -> list[PageHit]:
        """Two-stage top-k: Milvus candidates, then exact MaxSim on them from ``store``."""
        keys = self.candidates(query, per_token, workspace, doc_ids)
        if not keys:
            return []
        return store.search_batch([query], k, workspace, doc_ids, keys=keys)[0]
