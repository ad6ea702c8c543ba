"""Graph walks as sparse matrix products over the store's CSR adjacency.

:func:`k_hop` propagates seed scores ``hops`` times through the row-normalised adjacency
(``frontier ← decay · Pᵀ · frontier``); a node keeps the best score any hop gave it, so a
node h hops from a seed scores at most ``seed · decay**h``. :func:`structural_importance`
is degree or (personalised) PageRank by power iteration; :func:`nodes_to_units` maps node
scores onto the unit ids retrieval returns.
"""
from __future__ import annotations

import logging
from typing import Literal, Sequence

import numpy as np
import scipy.sparse as sp

from docray.engine.graph.records import Node
from docray.engine.graph.store import GraphStore

log = logging.getLogger(__name__)


def _transition(adj: sp.csr_matrix) -> sp.csr_matrix:
    """Row-stochastic ``D⁻¹A`` (rows of isolated nodes stay zero)."""
    deg = np.asarray(adj.sum(axis=1)).ravel()  # (n,)
    inv = np.divide(1.0, deg, out=np.zeros_like(deg, dtype=np.float64), where=deg > 0)
    return sp.diags(inv) @ adj


def _seed_vector(store: GraphStore, seeds: dict[str, float], workspace: str) -> np.ndarray:
    x = np.zeros(len(store._keys), dtype=np.float64)  # (n,)
    for node_id, score in seeds.items():
        i = store.index_of(node_id, workspace)
        if i is None:
            log.debug("seed %s not in workspace %s", node_id, workspace)
        else:
            x[i] = max(x[i], float(score))
    return x


def _to_dict(store: GraphStore, x: np.ndarray, workspace: str) -> dict[str, float]:
    x = np.where(store.workspace_mask(workspace), x, 0.0) if len(x) else x
    return {store.key_at(int(i))[1]: float(x[i]) for i in np.flatnonzero(x > 0)}


def k_hop(store: GraphStore, seeds: dict[str, float], hops: int, workspace: str = "default",
          decay: float = 0.5, edge_types: Sequence[str] | None = None,
          normalize: bool = True) -> dict[str, float]:
    """Scores of every node within ``hops`` of a seed (seeds included with their own score).

    With ``normalize`` a node's mass is split over its edges by weight; without it the raw
    weighted adjacency is used (scores then grow with degree).
    """
    x = _seed_vector(store, seeds, workspace)
    if not x.any() or hops <= 0:
        return _to_dict(store, x, workspace)
    return _to_dict(store, _walk(store, x, hops, decay, edge_types, normalize), workspace)


def _step(store: GraphStore, edge_types: Sequence[str] | None, normalize: bool) -> sp.csc_matrix:
    """Walk operator, cached on the store until its next write (query-time hot path). CSC:
    a sparse frontier takes column slices, and a full product costs the same as CSR."""
    key = ("step", None if edge_types is None else frozenset(edge_types), normalize)
    if key not in store._cache:
        adj = store.adjacency(edge_types)
        store._cache[key] = (_transition(adj) if normalize else adj).T.tocsc()  # (n, n)
    return store._cache[key]


def _walk(store: GraphStore, x: np.ndarray, hops: int, decay: float,
          edge_types: Sequence[str] | None, normalize: bool) -> np.ndarray:
    """A few seeds reach a small part of the graph: while the frontier is sparse, a hop
    multiplies only the operator's columns it touches (O(edges reached), not O(nnz))."""
    step = _step(store, edge_types, normalize)
    best, frontier = x.copy(), x
    for _ in range(hops):
        nz = np.flatnonzero(frontier)  # (m,)
        if len(nz) * 16 < len(frontier):
            frontier = decay * (step[:, nz] @ frontier[nz])  # (n, m) @ (m,) -> (n,)
        else:
            frontier = decay * (step @ frontier)  # (n,)
        best = np.maximum(best, frontier)
    return best


def k_hop_top(store: GraphStore, seeds: dict[str, float], hops: int, workspace: str = "default",
              top_n: int = 200, decay: float = 0.5) -> list[tuple[Node, float]]:
    """The ``top_n`` best-scoring nodes of a k-hop walk (no dict of every reached node)."""
    x = _seed_vector(store, seeds, workspace)
    if not x.any():
        return []
    best = _walk(store, x, hops, decay, None, True) * store.workspace_mask(workspace)  # (n,)
    nz = np.flatnonzero(best > 0)
    if len(nz) > top_n:
        nz = nz[np.argpartition(-best[nz], top_n)[:top_n]]
    nz = nz[np.argsort(-best[nz], kind="stable")]
    return [(store.node_at(int(i)), float(best[i])) for i in nz]


def structural_importance(store: GraphStore, workspace: str = "default",
                          method: Literal["pagerank", "degree"] = "pagerank",
                          seeds: dict[str, float] | None = None, damping: float = 0.85,
                          iters: int = 30, tol: float = 1e-8) -> dict[str, float]:
    """Importance of the workspace's nodes: weighted degree (scaled to max 1) or PageRank,
    personalised to ``seeds`` when given (sums to 1 over the workspace)."""
    mask = store.workspace_mask(workspace)
    if not mask.any():
        return {}
    adj = store.adjacency()
    if method == "degree":
        deg = np.asarray(adj.sum(axis=1)).ravel() * mask  # (n,)
        return _to_dict(store, deg / deg.max() if deg.max() > 0 else deg, workspace)
    p = _seed_vector(store, seeds, workspace) if seeds else mask.astype(np.float64)
    if p.sum() == 0:
        p = mask.astype(np.float64)
    p /= p.sum()
    step = _transition(adj).T.tocsr()
    dangling = (np.asarray(adj.sum(axis=1)).ravel() == 0) & mask
    r = p.copy()
    for _ in range(iters):
        nxt = damping * (step @ r + r[dangling].sum() * p) + (1 - damping) * p
        done = np.abs(nxt - r).sum() < tol
        r = nxt
        if done:
            break
    return _to_dict(store, r, workspace)


def nodes_to_units(store: GraphStore, scores: dict[str, float],
                   workspace: str = "default") -> dict[str, float]:
    """Best node score per unit id (cells/rows map to their table, entities to their units)."""
    out: dict[str, float] = {}
    for node_id, s in scores.items():
        node = store.get(node_id, workspace)
        if node is None:
            continue
        for uid in node.unit_ids():
            out[uid] = max(out.get(uid, 0.0), s)
    return out
