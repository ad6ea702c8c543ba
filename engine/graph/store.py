"""GraphStore: workspace-tagged node/edge tables with a CSR adjacency, persisted on disk.

Nodes are keyed by ``(workspace, node_id)``. Each document *contributes* node records; a node
shared by several documents (a merged entity ``ent:…``) is the union of its contributions, so
:meth:`GraphStore.delete_doc` drops one document's contributions and edges without touching
other data, and a node vanishes only when no document contributes to it any more.

On disk (``path/``): ``nodes.jsonl`` (one contribution a line), ``edges.npz`` (int32 node
indices, type and doc codes, float32 weights), ``tables.json`` (string tables) and
``manifest.json`` (written last; checked on open).
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from docray.engine.errors import BadInput, Corrupt
from docray.engine.graph.align import normalize, tokens
from docray.engine.graph.records import ENTITY, UNIT_OF, Edge, Node
from docray.engine.model import doc_of

log = logging.getLogger(__name__)
SCHEMA_VERSION = 1
DEFAULT_TYPE_WEIGHTS = {UNIT_OF: 0.5}
Key = tuple[str, str]


def engine_version() -> str:
    try:
        return metadata.version("docray")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def contribution_line(ws: str, doc_id: str, node: Node) -> str:
    """The saved JSON line of one document's contribution to a node."""
    record = {"id": node.id, "kind": node.kind, "name": node.name, "doc_id": node.doc_id,
              "unit_id": node.unit_id, "page": node.page, "attrs": node.attrs}  # to_dict(), uncopied
    return json.dumps({"ws": ws, "doc": doc_id, "node": record}, ensure_ascii=False)


def node_of_line(line: str) -> Node:
    return Node.from_dict(json.loads(line)["node"])


def _entity_keys(node: Node, first: bool) -> set[str]:
    """The index keys an entity contribution adds: its aliases, and its name when it is the
    node's first contribution (whose name the merged node keeps)."""
    keys = {normalize(a) for a in node.attrs.get("aliases", [])}
    return keys | {normalize(node.name)} if first else keys


def _merge(contribs: dict[str, Node]) -> Node:
    """One node from the per-document records of the same id (first document wins scalars)."""
    first = next(iter(contribs.values()))
    if len(contribs) == 1 and first.kind != ENTITY:
        return first
    attrs = dict(first.attrs)
    for key in ("aliases", "unit_ids"):
        vals = {v for n in contribs.values() for v in n.attrs.get(key, [])}
        if vals or key in attrs:
            attrs[key] = sorted(vals)
    attrs["doc_ids"] = sorted(contribs)
    if not attrs.get("description"):
        attrs["description"] = next((n.attrs.get("description") for n in contribs.values()
                                     if n.attrs.get("description")), "")
    return Node(first.id, first.kind, first.name, first.doc_id, first.unit_id, first.page, attrs)


class GraphStore:
    """In-memory graph with incremental per-document add/delete and CSR walks."""

    def __init__(self, path: str | Path | None = None,
                 type_weights: dict[str, float] | None = None):
        self.path = Path(path) if path is not None else None
        self.type_weights = {**DEFAULT_TYPE_WEIGHTS, **(type_weights or {})}
        self._keys: list[Key] = []
        self._index: dict[Key, int] = {}
        # node index -> doc_id -> the contribution's saved JSON line (parsed on read: a
        # driver ingesting a corpus never reads most of them, and a line is a tenth of a Node)
        self._contrib: list[dict[str, str]] = []
        self._docs: dict[str, set[str]] = {}        # workspace -> doc ids
        self._types: list[str] = []
        self._doc_codes: list[Key] = []             # code -> (workspace, doc_id)
        self._edges = {k: np.zeros(0, dt) for k, dt in
                       (("src", np.int32), ("dst", np.int32), ("type", np.int16),
                        ("doc", np.int32), ("weight", np.float32))}
        self._cache: dict[Any, Any] = {}
        # workspace -> normalised entity name/alias -> entity node indices, kept up to date
        # by add() (rebuilding it per document made ingestion O(nodes × documents))
        self._entity_keys: dict[str, dict[str, set[int]]] = {}

    # ---- writes ---------------------------------------------------------------------------
    def add(self, nodes: Sequence[Node], edges: Sequence[Edge], doc_id: str,
            workspace: str = "default") -> None:
        """Add one document's graph; re-adding a document replaces it (no duplicates)."""
        if self.has_doc(workspace, doc_id):
            self.delete_doc(workspace, doc_id)
        remap = self._resolve_entities(nodes, workspace)
        index = self._entity_index(workspace)
        for n in nodes:
            n = replace(n, id=remap[n.id]) if n.id in remap else n
            i = self._node_index((workspace, n.id))
            if n.kind == ENTITY:
                for key in _entity_keys(n, first=not self._contrib[i]):
                    index.setdefault(key, set()).add(i)
            self._contrib[i][doc_id] = contribution_line(workspace, doc_id, n)
        self._docs.setdefault(workspace, set()).add(doc_id)
        self._append_edges(edges, remap, doc_id, workspace)
        self._cache.clear()

    def _resolve_entities(self, nodes: Sequence[Node], ws: str) -> dict[str, str]:
        """Map a new entity id onto an existing entity of the workspace sharing a name/alias."""
        remap, index = {}, self._entity_index(ws)
        for n in nodes:
            if n.kind != ENTITY or (ws, n.id) in self._index:
                continue
            hits = {i for k in _entity_keys(n, first=True) for i in index.get(k, ())}
            if len(hits) == 1:
                remap[n.id] = self._keys[hits.pop()][1]
        return remap

    def _entity_index(self, ws: str) -> dict[str, set[int]]:
        """Normalised names and aliases of the workspace's entities (the merged node's name
        is its first contribution's) → node indices; rebuilt after a delete or a load."""
        if ws not in self._entity_keys:
            index: dict[str, set[int]] = {}
            for i, (w, node_id) in enumerate(self._keys):
                if w != ws or not node_id.startswith("ent:") or not self._contrib[i]:
                    continue
                node = self.node_at(i)
                if node.kind == ENTITY:
                    for key in {normalize(node.name), *map(normalize, node.attrs.get("aliases", []))}:
                        index.setdefault(key, set()).add(i)
            self._entity_keys[ws] = index
        return self._entity_keys[ws]

    def _node_index(self, key: Key) -> int:
        i = self._index.get(key)
        if i is None:
            i = self._index[key] = len(self._keys)
            self._keys.append(key)
            self._contrib.append({})
        return i

    def _append_edges(self, edges: Sequence[Edge], remap: dict[str, str], doc_id: str,
                      ws: str) -> None:
        code = len(self._doc_codes)
        self._doc_codes.append((ws, doc_id))
        cols: dict[str, list] = {k: [] for k in self._edges}
        for e in edges:
            src, dst = remap.get(e.src, e.src), remap.get(e.dst, e.dst)
            try:
                cols["src"].append(self._index[(ws, src)])
                cols["dst"].append(self._index[(ws, dst)])
            except KeyError:
                raise BadInput(f"edge {src}->{dst}", f"endpoint not a node of workspace {ws!r}") \
                    from None
            if e.type not in self._types:
                self._types.append(e.type)
            cols["type"].append(self._types.index(e.type))
            cols["doc"].append(code)
            cols["weight"].append(e.weight)
        for k, arr in self._edges.items():
            self._edges[k] = np.concatenate([arr, np.asarray(cols[k], dtype=arr.dtype)])

    def delete_doc(self, workspace: str, doc_id: str) -> bool:
        """Drop one document's node contributions and edges; True if it was present."""
        if not self.has_doc(workspace, doc_id):
            return False
        self._docs[workspace].discard(doc_id)
        codes = [c for c, k in enumerate(self._doc_codes) if k == (workspace, doc_id)]
        keep_e = ~np.isin(self._edges["doc"], codes)
        for k in self._edges:
            self._edges[k] = self._edges[k][keep_e]
        for i, (ws, _) in enumerate(self._keys):
            if ws == workspace:
                self._contrib[i].pop(doc_id, None)
        self._compact()
        self._cache.clear()
        self._entity_keys.clear()
        return True

    def _compact(self) -> None:
        """Drop nodes no document contributes to; renumber edges (arrays only)."""
        alive = np.array([bool(c) for c in self._contrib], dtype=bool)
        if alive.all():
            return
        new_of = np.cumsum(alive, dtype=np.int64) - 1
        self._keys = [k for k, a in zip(self._keys, alive) if a]
        self._contrib = [c for c, a in zip(self._contrib, alive) if a]
        self._index = {k: i for i, k in enumerate(self._keys)}
        ok = alive[self._edges["src"]] & alive[self._edges["dst"]]
        for k in self._edges:
            self._edges[k] = self._edges[k][ok]
        for k in ("src", "dst"):
            self._edges[k] = new_of[self._edges[k]].astype(np.int32)

    # ---- reads ----------------------------------------------------------------------------
    def has_doc(self, workspace: str, doc_id: str) -> bool:
        return doc_id in self._docs.get(workspace, ())

    def docs(self, workspace: str = "default") -> list[str]:
        return sorted(self._docs.get(workspace, ()))

    def counts(self, workspace: str | None = None) -> dict[str, int]:
        """Nodes, edges and documents, overall or for one workspace."""
        if workspace is None:
            return {"nodes": len(self._keys), "edges": len(self._edges["src"]),
                    "docs": sum(len(d) for d in self._docs.values())}
        mask = self.workspace_mask(workspace)
        return {"nodes": int(mask.sum()), "edges": int(mask[self._edges["src"]].sum()),
                "docs": len(self._docs.get(workspace, ()))}

    def index_of(self, node_id: str, workspace: str = "default") -> int | None:
        return self._index.get((workspace, node_id))

    def key_at(self, i: int) -> Key:
        return self._keys[i]

    def node_at(self, i: int) -> Node:
        cache = self._cache.setdefault("nodes", {})
        if i not in cache:
            cache[i] = _merge({doc: node_of_line(line) for doc, line in self._contrib[i].items()})
        return cache[i]

    def units_by_doc(self, node: Node, workspace: str = "default") -> dict[str, list[str]]:
        """The node's unit ids grouped by document (a unit id starts with its doc id), in
        their order, cached until the next write: a walk scoped to one document keeps the
        units of a corpus-wide entity without testing each of its thousands."""
        cache = self._cache.setdefault("units-by-doc", {})
        key = (workspace, node.id)
        if key not in cache:
            out: dict[str, list[str]] = {}
            for uid in node.unit_ids():
                out.setdefault(doc_of(uid), []).append(uid)
            cache[key] = out
        return cache[key]

    def get(self, node_id: str, workspace: str = "default") -> Node | None:
        i = self.index_of(node_id, workspace)
        return None if i is None else self.node_at(i)

    def iter_nodes(self, workspace: str = "default", kind: str | None = None) -> Iterator[Node]:
        for i, (ws, _) in enumerate(self._keys):
            if ws == workspace:
                n = self.node_at(i)
                if kind is None or n.kind == kind:
                    yield n

    def workspace_mask(self, workspace: str) -> np.ndarray:
        key = ("wsmask", workspace)
        if key not in self._cache:
            self._cache[key] = np.array([ws == workspace for ws, _ in self._keys], dtype=bool)
        return self._cache[key]

    def neighbors(self, node_id: str, types: Sequence[str] | None = None,
                  workspace: str = "default") -> list[tuple[Node, str, float]]:
        """``(neighbour, edge type, weight)`` over edges in either direction."""
        i = self.index_of(node_id, workspace)
        if i is None:
            return []
        src, dst = self._edges["src"], self._edges["dst"]
        hit = np.flatnonzero((src == i) | (dst == i))
        wanted = None if types is None else {self._types.index(t) for t in types
                                            if t in self._types}
        out = []
        for e in hit:
            t = int(self._edges["type"][e])
            if wanted is None or t in wanted:
                j = int(dst[e]) if src[e] == i else int(src[e])
                out.append((self.node_at(j), self._types[t], float(self._edges["weight"][e])))
        return out

    def adjacency(self, types: Sequence[str] | None = None) -> sp.csr_matrix:
        """Symmetric CSR ``(n_nodes, n_nodes)``: edge weight × type weight, duplicates summed."""
        key = ("adj", None if types is None else frozenset(types))
        if key not in self._cache:
            n = len(self._keys)
            tw = np.array([self.type_weights.get(t, 1.0) if types is None or t in types else 0.0
                           for t in self._types] or [0.0], dtype=np.float32)
            w = self._edges["weight"] * tw[self._edges["type"]]
            ok = w > 0
            s, d, w = self._edges["src"][ok], self._edges["dst"][ok], w[ok]
            a = sp.coo_matrix((np.concatenate([w, w]), (np.concatenate([s, d]),
                              np.concatenate([d, s]))), shape=(n, n)).tocsr()
            a.sum_duplicates()
            self._cache[key] = a
        return self._cache[key]

    def _alias_index(self, workspace: str) -> dict[str, set[int]]:
        key = ("alias", workspace)
        if key not in self._cache:
            idx: dict[str, set[int]] = {}
            for i, (ws, _) in enumerate(self._keys):
                if ws == workspace and self._contrib[i]:
                    n = self.node_at(i)
                    for name in (n.name, *n.attrs.get("aliases", [])):
                        idx.setdefault(normalize(name), set()).add(i)
            self._cache[key] = idx
        return self._cache[key]

    def lookup(self, text: str, workspace: str = "default") -> list[Node]:
        """Nodes whose normalised name or alias equals ``text`` exactly (O(1), query path)."""
        return [self.node_at(i) for i in sorted(self._alias_index(workspace)
                                                 .get(normalize(text), ()))]

    def find_nodes(self, text: str, kind: str | None = None, workspace: str = "default",
                   limit: int = 20) -> list[tuple[Node, float]]:
        """Nodes whose normalised name or alias equals ``text`` (score 1.0), else token-overlap
        (Jaccard) matches, best first."""
        hits = [(self.node_at(i), 1.0) for i in sorted(self._alias_index(workspace)
                                                        .get(normalize(text), ()))]
        hits = [(n, s) for n, s in hits if kind is None or n.kind == kind]
        if hits:
            return hits[:limit]
        q = set(tokens(text))
        if not q:
            return []
        scored = []
        for name, ids in self._alias_index(workspace).items():
            t = set(tokens(name))
            overlap = len(q & t)
            if overlap:
                scored += [(i, overlap / len(q | t)) for i in ids]
        best: dict[int, float] = {}
        for i, s in scored:
            best[i] = max(best.get(i, 0.0), s)
        out = [(self.node_at(i), s) for i, s in best.items()]
        out = [(n, s) for n, s in out if kind is None or n.kind == kind]
        return sorted(out, key=lambda x: (-x[1], x[0].id))[:limit]

    # ---- persistence ----------------------------------------------------------------------
    def save(self, path: str | Path | None = None) -> Path:
        from docray.engine.graph.store_io import save_store

        self.path = Path(path) if path is not None else self.path
        if self.path is None:
            raise ValueError("GraphStore.save needs a path")
        save_store(self, self.path)
        return self.path

    @classmethod
    def open(cls, path: str | Path, type_weights: dict[str, float] | None = None) -> "GraphStore":
        """Load a saved store; :class:`Corrupt` when files are missing or mismatched."""
        from docray.engine.graph.store_io import load_store

        store = cls(path, type_weights)
        load_store(store, Path(path))
        return store
