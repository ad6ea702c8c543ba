"""Late-interaction page index: ragged multi-vector store with exact MaxSim and two-stage search.

* :class:`PageStore` — token shards + catalog + manifest; ``add_pages``, ``delete_doc``,
  ``compact``, exact ``search`` (see :mod:`.store`).
* :class:`PooledPageIndex` — pooled page vectors in Milvus for candidate generation, then
  exact MaxSim on the candidates (see :mod:`.two_stage`; needs pymilvus, imported lazily).
* :class:`~.pooled.PooledPrefilter` — the in-memory pooled prefilter the query path uses;
  with ``pages.candidate_index`` faiss-ivf / faiss-hnsw its candidates come from a faiss
  index over the pooled rows (see :mod:`.faiss_index`; faiss imported lazily).
"""
from __future__ import annotations

from .catalog import page_key
from .manifest import SCHEMA_VERSION, Manifest
from .store import PageHit, PageRef, PageStore

__all__ = ["PageStore", "PageRef", "PageHit", "page_key", "Manifest", "SCHEMA_VERSION", "PooledPageIndex"]


def __getattr__(name: str):
    if name == "PooledPageIndex":  # lazy: keeps pymilvus optional
        from .two_stage import PooledPageIndex

        return PooledPageIndex
    raise AttributeError(name)
