"""The dense index of a Milvus collection: its type and params, and its metric.

Vectors are written at unit length, so inner product (``IP``) is cosine without a norm
per row per search. :func:`match_index` brings an existing collection's index to the
configured type, and a COSINE index over unit vectors (an older docray's) to IP.
"""
from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger(__name__)
METRIC = "IP"  # over unit vectors: cosine without a norm per row per search
INDEX_PARAMS = {"FLAT": {}, "IVF_FLAT": {"nlist": 128}, "IVF_SQ8": {"nlist": 128},
                "HNSW": {"M": 16, "efConstruction": 200}}
SEARCH_PARAMS = {"FLAT": {}, "IVF_FLAT": {"nprobe": 16}, "IVF_SQ8": {"nprobe": 16},
                 "HNSW": {"ef": 128}}


def match_index(client, name: str, want: str) -> str:
    """Rebuild the dense index of ``name`` when it is of another type than ``want`` (say a
    FLAT db opened with HNSW), or when a COSINE index holds unit vectors (then IP scores
    the same, cheaper); returns the metric it has after. The first process to open it
    after the change rebuilds it; the rows stay as they are."""
    try:
        info = client.describe_index(name, "dense")
        got, metric = info.get("index_type"), info.get("metric_type", "COSINE")
    except Exception as err:  # noqa: BLE001 — no index yet, or an older server
        log.debug("no dense index found on %s: %s", name, err)
        got, metric = None, "COSINE"
    to = METRIC if metric != METRIC and unit_rows(client, name) else metric
    if (got, metric) == (want, to):
        return to
    log.info("rebuilding the dense index of %s: %s %s -> %s %s", name, got, metric, want, to)
    client.release_collection(name)
    if got is not None:
        client.drop_index(name, "dense")
    idx = client.prepare_index_params()
    idx.add_index("dense", index_type=want, metric_type=to, params=INDEX_PARAMS[want])
    client.create_index(name, idx)
    return to


def unit_rows(client, name: str, sample: int = 2000) -> bool:
    """Whether the collection's stored vectors (a sample) all have unit length."""
    client.load_collection(name)
    rows = client.query(name, filter="page >= 0", output_fields=["dense"], limit=sample)
    if not rows:
        return True
    norms = np.linalg.norm(np.asarray([r["dense"] for r in rows], np.float32), axis=1)
    return bool(np.all(np.abs(norms - 1.0) < 1e-3))
