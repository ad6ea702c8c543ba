"""On-disk format of :class:`~docray.engine.graph.store.GraphStore`.

``nodes.jsonl`` holds one node contribution a line (``{"ws", "doc", "node"}``), ``edges.npz``
the edge columns, ``tables.json`` the string tables (node keys, edge types, document codes)
and ``manifest.json`` — written last, so a crash mid-save leaves the old manifest, whose
counts then disagree and :func:`load_store` says so with :class:`Corrupt`.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from docray.engine.errors import Corrupt

if TYPE_CHECKING:
    from docray.engine.graph.store import GraphStore

log = logging.getLogger(__name__)


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def save_store(store: "GraphStore", path: Path) -> None:
    from docray.engine.graph.store import SCHEMA_VERSION, engine_version

    path.mkdir(parents=True, exist_ok=True)
    lines = _lines(store)
    _write(path / "nodes.jsonl", ("\n".join(lines) + "\n").encode())
    tmp = path / "edges.tmp.npz"
    np.savez(tmp, **store._edges)
    os.replace(tmp, path / "edges.npz")
    tables = {"keys": store._keys, "types": store._types, "doc_codes": store._doc_codes,
              "docs": {ws: sorted(d) for ws, d in store._docs.items()}}
    _write(path / "tables.json", json.dumps(tables).encode())
    manifest = {"schema_version": SCHEMA_VERSION, "n_nodes": len(store._keys),
                "n_edges": int(len(store._edges["src"])), "n_contributions": len(lines),
                "engine_version": engine_version(), "format": "docray-graph"}
    _write(path / "manifest.json", json.dumps(manifest, indent=2).encode())


def _lines(store: "GraphStore") -> list[str]:
    """One JSON line per node contribution. The store holds each contribution as its line
    (made once, when the document was added), so a save writes them as they are: ingestion
    saves after every few documents, and re-serialising the whole graph each time made the
    saves grow with the square of the corpus (45 CPU s of a 2,688-page ingest)."""
    return [line for contribs in store._contrib for line in contribs.values()]


def _manifest(path: Path) -> dict:
    from docray.engine.graph.store import SCHEMA_VERSION, engine_version

    try:
        manifest = json.loads((path / "manifest.json").read_text())
    except (OSError, ValueError) as err:
        raise Corrupt(str(path / "manifest.json"), f"unreadable graph manifest: {err}") from None
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise Corrupt(str(path), f"graph schema_version {manifest.get('schema_version')!r}, "
                                 f"this engine reads {SCHEMA_VERSION}; rebuild the graph")
    if manifest.get("engine_version") != engine_version():
        log.info("graph at %s written by engine %s, reading with %s", path,
                 manifest.get("engine_version"), engine_version())
    return manifest


def load_store(store: "GraphStore", path: Path) -> None:
    manifest = _manifest(path)
    try:
        tables = json.loads((path / "tables.json").read_text())
        with np.load(path / "edges.npz") as z:
            edges = {k: z[k] for k in store._edges}
        lines = [line for line in (path / "nodes.jsonl").read_text().splitlines() if line.strip()]
    except (OSError, ValueError, KeyError) as err:
        raise Corrupt(str(path), f"unreadable graph files: {err}") from None
    store._keys = [tuple(k) for k in tables["keys"]]
    store._index = {k: i for i, k in enumerate(store._keys)}
    store._contrib = [{} for _ in store._keys]
    for line in lines:  # parsed one at a time: a list of all parsed lines doubled the peak
        try:
            c = json.loads(line)
        except ValueError as err:
            raise Corrupt(str(path / "nodes.jsonl"), f"unreadable graph files: {err}") from None
        i = store._index.get((c["ws"], c["node"]["id"]))
        if i is None:
            raise Corrupt(str(path / "nodes.jsonl"), f"node {c['node']['id']!r} not in tables")
        store._contrib[i][c["doc"]] = line
    store._types = list(tables["types"])
    store._doc_codes = [tuple(k) for k in tables["doc_codes"]]
    store._docs = {ws: set(d) for ws, d in tables["docs"].items()}
    store._edges = {k: edges[k].astype(v.dtype) for k, v in store._edges.items()}
    got = {"n_nodes": len(store._keys), "n_edges": len(store._edges["src"]),
           "n_contributions": len(lines)}
    bad = {k: (manifest.get(k), v) for k, v in got.items() if manifest.get(k) != v}
    if bad:
        raise Corrupt(str(path), "graph files disagree with manifest.json "
                      + ", ".join(f"{k}: manifest {m}, found {f}" for k, (m, f) in bad.items()))
    n = len(store._keys)
    if len(store._edges["src"]) and max(store._edges["src"].max(), store._edges["dst"].max()) >= n:
        raise Corrupt(str(path / "edges.npz"), "edge endpoint beyond the node table")
    store._cache.clear()
    store._entity_keys.clear()
