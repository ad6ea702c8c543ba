"""Dense + BM25 store in Milvus (milvus-lite file by default, or a Milvus server URI).

Collections ``{prefix}_chunks``, ``{prefix}_entities``, ``{prefix}_relations`` share one
schema: ``id`` (primary key), ``workspace``, ``doc_id``, ``modality``,
``page``, ``text`` (analysed; BM25 feeds ``sparse``), ``payload`` (JSON: pages, unit_ids,
section, bbox and the logical ``chunk_id``/``entity_id``/``relation_id``) and ``dense``
(vectors normalised here on write, so inner product is cosine: metric IP, which spares a
brute-force search the norm of every row per query; a collection written before with
COSINE is rebuilt as IP when its stored rows are unit length). The primary key is
``{workspace}/{chunk_id}`` (entities and relations: ``{workspace}/{doc_id}:{id}``) so
tenants never overwrite each other; hits report the logical id. Writes are upserts by id,
so re-ingesting is idempotent; every write is flushed. Every search filters by workspace.
``{prefix}_chunks_by_doc`` copies the chunks split into partitions by document; searches
scoped to documents read only their partitions (see :mod:`.doc_partitions`). Each
workspace has partitions of its own, so no two share BM25 statistics (:mod:`.tenancy`).
``<db>.manifest.json`` (server URIs: ``<data_dir>/<prefix>_dense.manifest.json``) records
the encoder and dim (opening with another one raises :class:`Corrupt`) and whether the
copy by document is complete.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np

from docray.engine.config import MilvusConfig
from docray.engine.embed.base import l2_normalize
from docray.engine.errors import BadInput, ConfigError, Corrupt, Unavailable
from docray.engine.index.dense_index import (INDEX_PARAMS, METRIC, SEARCH_PARAMS,
                                             match_index)
from docray.engine.index.doc_partitions import DocPartitions
from docray.engine.index.milvus_rows import (ID_BYTES, TEXT_BYTES, build_filter,
                                             check_server_version, load_pymilvus_lazy_imports,
                                             locked, query_vector, row_id, truncate_bytes)
from docray.engine.index.sparse import SparseText, uses_bm25_function
from docray.engine.index.tenancy import Partitions, uses_partition_key, workspace_tag
from docray.engine.model import Chunk

log = logging.getLogger(__name__)
SCHEMA_VERSION = 1
COLLECTIONS = ("chunks", "entities", "relations")
_REF_KEYS = ("chunk_id", "entity_id", "relation_id")


@dataclass
class DenseHit:
    id: str  # chunk_id / entity_id / relation_id
    score: float
    doc_id: str
    page: int
    modality: str
    text: str
    workspace: str = ""
    payload: dict[str, Any] = field(default_factory=dict)


class DenseStore(Protocol):
    def upsert_chunks(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None: ...
    def delete_doc(self, workspace: str, doc_id: str) -> None: ...
    def count(self, collection: str = "chunks", workspace: str | None = None,
              doc_id: str | None = None) -> int: ...
    def search_hybrid(self, query_text: str, query_vec: np.ndarray, k: int, workspace: str,
                      doc_ids: Sequence[str] | None = None,
                      modalities: Sequence[str] | None = None) -> list[DenseHit]: ...


class MilvusDenseStore:
    """:class:`DenseStore` over pymilvus ``MilvusClient``; one owner process per db file."""

    def __init__(self, config: MilvusConfig, data_dir: str | Path, dim: int,
                 encoder: str = "unknown"):
        from pymilvus import MilvusClient

        # milvus-lite's in-process gRPC server logs a traceback for every AllocTimestamp
        # call pymilvus makes (unimplemented there, harmless): keep it out of user output.
        logging.getLogger("grpc._server").setLevel(logging.CRITICAL)

        self.config, self.dim, self.encoder = config, int(dim), encoder
        data_dir = Path(data_dir)
        if config.uri.endswith(".db"):
            db = Path(config.uri) if Path(config.uri).is_absolute() else data_dir / config.uri
            db.parent.mkdir(parents=True, exist_ok=True)
            self.uri, self.manifest_path = str(db), db.with_name(db.name + ".manifest.json")
        else:
            data_dir.mkdir(parents=True, exist_ok=True)
            self.uri = config.uri
            self.manifest_path = data_dir / f"{config.collection_prefix}_dense.manifest.json"
        self._check_manifest()
        load_pymilvus_lazy_imports()  # searches may run on several threads from here on
        try:
            self.client = MilvusClient(uri=self.uri)
        except Exception as err:  # noqa: BLE001 — pymilvus raises many types
            raise Unavailable(f"Milvus at {self.uri} could not be opened "
                              f"(another process may own the db file): {err}") from err
        try:
            check_server_version(self.client, self.uri)
        except ConfigError:
            self.client.close()
            raise
        self.names = {c: f"{config.collection_prefix}_{c}" for c in COLLECTIONS}
        self.metric: dict[str, str] = {}  # collection → its dense index's metric
        chunks = self.names["chunks"]
        exists = self.client.has_collection(chunks)
        self.parts = Partitions(self.client, not uses_partition_key(self.client, chunks)
                                if exists else config.tenancy == "partitions")
        if not self.parts.explicit:
            log.info("%s routes workspaces by a partition key: workspaces hashed together share "
                     "BM25 statistics (docray.engine.index.tenancy)", chunks)
        self.sparse = SparseText(
            self.client, ("server" if uses_bm25_function(self.client, chunks) else "client")
            if exists else config.bm25, self.manifest_path.with_name(
                self.manifest_path.name.replace("manifest.json", "bm25.sqlite")),
            config.bm25_avgdl)
        for name in self.names.values():
            self._ensure(name)
        self.by_doc = DocPartitions(self.client, self.names["chunks"], config.doc_partitions,
                                    self._create, self._check_manifest, self._write_manifest,
                                    self.parts, self.sparse.copy_fields)
        with locked(self.manifest_path.with_name(self.manifest_path.name + ".lock")):
            self._write_manifest()  # another process's record of the copy is kept
            for coll, name in self.names.items():
                self.sparse.ensure_counted(coll, name)
            self.by_doc.open()
        if self.by_doc.active:  # index type or metric changed since the copy was built
            self._match_index(self.by_doc.name)
            self.client.load_collection(self.by_doc.name)

    # -- manifest and schema --------------------------------------------------------------
    def _check_manifest(self) -> int:
        """Raise unless the manifest matches; return its ``doc_partitions`` (0: none)."""
        if not self.manifest_path.exists():
            return 0
        try:
            m = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            found = (int(m["schema_version"]), int(m["dim"]), str(m["encoder"]))
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise Corrupt(str(self.manifest_path), f"unreadable dense-store manifest: {err}")
        want = (SCHEMA_VERSION, self.dim, self.encoder)
        if found != want:
            raise Corrupt(str(self.manifest_path),
                          f"dense store was written with schema/dim/encoder {found}, opened with "
                          f"{want}; re-ingest into a fresh data dir or restore the encoder config")
        return int(m.get("doc_partitions", 0))

    def _write_manifest(self, doc_partitions: int | None = None) -> None:
        """Write the manifest; ``doc_partitions`` records the copy by document complete
        for that many partitions (0: none; None: keep what the file says)."""
        if doc_partitions is None:
            doc_partitions = self._check_manifest()
        body = {"schema_version": SCHEMA_VERSION, "dim": self.dim, "encoder": self.encoder,
                "collections": sorted(self.names.values()), "index_type": self.config.index_type,
                "doc_partitions": doc_partitions}
        tmp = self.manifest_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(body, indent=2, sort_keys=True), encoding="utf-8")
        tmp.replace(self.manifest_path)

    def _ensure(self, name: str) -> None:
        c = self.client
        if c.has_collection(name):
            fields = {f["name"]: f for f in c.describe_collection(name)["fields"]}
            got = int(fields.get("dense", {}).get("params", {}).get("dim", -1))
            if got != self.dim:
                raise Corrupt(self.uri, f"collection {name} has dim {got}, expected {self.dim}")
            self._match_index(name)
            c.load_collection(name)
            return
        self._create(name)

    def _create(self, name: str, partition_key: bool = True) -> None:
        """An empty collection; ``workspace`` is its partition key in the ``partition_key``
        layout unless the caller partitions it (the copy by document)."""
        from pymilvus import DataType

        c = self.client
        s = c.create_schema(auto_id=False, enable_dynamic_field=False)
        s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_BYTES)
        s.add_field("workspace", DataType.VARCHAR, max_length=128,
                    is_partition_key=partition_key and not self.parts.explicit)
        s.add_field("doc_id", DataType.VARCHAR, max_length=128)
        s.add_field("modality", DataType.VARCHAR, max_length=32)
        s.add_field("page", DataType.INT64)
        s.add_field("text", DataType.VARCHAR, max_length=TEXT_BYTES,
                    enable_analyzer=not self.sparse.client_side)
        s.add_field("payload", DataType.JSON)
        s.add_field("dense", DataType.FLOAT_VECTOR, dim=self.dim)
        s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        self.sparse.add_to_schema(s, name)
        metric = self.metric.get(self.names["chunks"], METRIC)  # the copy scores as its source
        idx = c.prepare_index_params()
        idx.add_index("dense", index_type=self.config.index_type, metric_type=metric,
                      params=INDEX_PARAMS[self.config.index_type])
        idx.add_index("sparse", index_type="SPARSE_INVERTED_INDEX",
                      metric_type=self.sparse.metric)
        c.create_collection(name, schema=s, index_params=idx)
        self.metric[name] = metric
        log.info("created Milvus collection %s (dim %d) at %s", name, self.dim, self.uri)

    def _match_index(self, name: str) -> None:
        self.metric[name] = match_index(self.client, name, self.config.index_type)

    # -- writes ---------------------------------------------------------------------------
    def _vectors(self, vectors: np.ndarray, n: int) -> np.ndarray:
        """Rows at unit length (all-zero rows stay zero: they match nothing)."""
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.shape != (n, self.dim):
            raise BadInput("vectors", f"shape {vecs.shape} != ({n}, {self.dim})")
        if not np.isfinite(vecs).all():
            raise BadInput("vectors", "contain NaN or infinite values")
        return l2_normalize(vecs)

    def _upsert(self, collection: str, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        name = self.names[collection]
        for part, group in self._by_partition(name, rows):
            for s in range(0, len(group), 512):
                self.client.upsert(name, group[s:s + 512],
                                   **({"partition_name": part} if part else {}))
        self.client.flush(name)

    def _by_partition(self, name: str, rows: list[dict[str, Any]]):
        """(partition, rows) groups: one per workspace, or (None, all) under a key."""
        if not self.parts.explicit:
            return [(None, rows)]
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault(workspace_tag(row["workspace"]), []).append(row)
        for part in groups:
            self.parts.ensure(name, part)
        return list(groups.items())

    def upsert_chunks(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        vecs = self._vectors(vectors, len(chunks))  # (n, dim)
        rows = [{"id": row_id(c.workspace, c.chunk_id), "workspace": c.workspace,
                 "doc_id": c.doc_id, "modality": c.modality,
                 "page": c.pages[0] if c.pages else 0,
                 "text": truncate_bytes(c.text, TEXT_BYTES),
                 "payload": {"chunk_id": c.chunk_id, "pages": c.pages, "unit_ids": c.unit_ids,
                             "section": c.section, "bbox": list(c.bbox) if c.bbox else None},
                 "dense": v.tolist()} for c, v in zip(chunks, vecs)]
        self.sparse.fill("chunks", rows)
        self.by_doc.upsert(rows)  # first: an ingest that dies in between is redone
        self._upsert("chunks", rows)

    def _upsert_named(self, collection: str, key: str, workspace: str, doc_id: str,
                      ids: Sequence[str], texts: Sequence[str], vectors: np.ndarray,
                      payloads: Sequence[dict[str, Any]] | None) -> None:
        vecs = self._vectors(vectors, len(ids))  # (n, dim)
        payloads = payloads or [{} for _ in ids]
        rows = [{"id": row_id(workspace, f"{doc_id}:{i}"),
                 "workspace": workspace, "doc_id": doc_id, "modality": key, "page": 0,
                 "text": truncate_bytes(t, TEXT_BYTES), "payload": {**p, f"{key}_id": i},
                 "dense": v.tolist()} for i, t, v, p in zip(ids, texts, vecs, payloads)]
        self.sparse.fill(collection, rows)
        self._upsert(collection, rows)

    def upsert_entities(self, workspace: str, doc_id: str, ids: Sequence[str],
                        texts: Sequence[str], vectors: np.ndarray,
                        payloads: Sequence[dict[str, Any]] | None = None) -> None:
        """One row per (document, entity); ``payload["entity_id"]`` is the entity id."""
        self._upsert_named("entities", "entity", workspace, doc_id, ids, texts, vectors, payloads)

    def upsert_relations(self, workspace: str, doc_id: str, ids: Sequence[str],
                         texts: Sequence[str], vectors: np.ndarray,
                         payloads: Sequence[dict[str, Any]] | None = None) -> None:
        """One row per (document, relation); ``payload["relation_id"]`` is its id."""
        self._upsert_named("relations", "relation", workspace, doc_id, ids, texts, vectors,
                           payloads)

    def delete_doc(self, workspace: str, doc_id: str) -> None:
        expr = build_filter(workspace, [doc_id])
        self.by_doc.delete(expr)
        for coll, name in self.names.items():
            self.client.delete(name, filter=expr)
            self.client.flush(name)
            self.sparse.delete_doc(coll, workspace, doc_id)

    # -- reads ----------------------------------------------------------------------------
    def _name(self, collection: str) -> str:
        return self.names[self._key(collection)]

    def _key(self, collection: str) -> str:
        """``chunks`` for ``chunks`` or its Milvus name."""
        for key, name in self.names.items():
            if collection in (key, name):
                return key
        raise BadInput("collection", f"{collection!r} is not one of {', '.join(COLLECTIONS)}")

    def count(self, collection: str = "chunks", workspace: str | None = None,
              doc_id: str | None = None) -> int:
        expr = build_filter(workspace, [doc_id] if doc_id is not None else None)
        res = self.client.query(self._name(collection), filter=expr, output_fields=["count(*)"])
        return int(res[0]["count(*)"]) if res else 0

    def _hits(self, result, workspace: str, bm25: bool = False) -> list[DenseHit]:
        """Hits in Milvus order; milvus-lite reports BM25 as a negative distance."""
        out = []
        for h in result[0] if result else []:
            e = h.get("entity", {})
            payload, d = e.get("payload") or {}, float(h["distance"])
            ref = next((payload[k] for k in _REF_KEYS if k in payload), str(h["id"]))
            out.append(DenseHit(id=str(ref), score=abs(d) if bm25 else d,
                                doc_id=e.get("doc_id", ""), page=int(e.get("page", 0)),
                                modality=e.get("modality", ""), text=e.get("text", ""),
                                workspace=workspace, payload=payload))
        return out

    _FIELDS = ["doc_id", "page", "modality", "text", "payload"]

    def _target(self, collection: str, workspace: str, doc_ids: Sequence[str] | None
                ) -> tuple[str, list[str] | None]:
        """The collection to search and its partitions (the workspace's; a search of chunks
        scoped to documents reads their partitions of the copy by document). An empty
        list: the workspace has no rows there."""
        name = self._name(collection)
        if name == self.names["chunks"] and (routed := self.by_doc.route(workspace, doc_ids)):
            return routed
        return name, self.parts.of(name, workspace)

    def _dense_params(self, name: str) -> dict[str, Any]:
        return {"metric_type": self.metric.get(name, METRIC),
                "params": SEARCH_PARAMS[self.config.index_type]}

    def search_dense(self, query_vec: np.ndarray, k: int, workspace: str,
                     doc_ids: Sequence[str] | None = None,
                     modalities: Sequence[str] | None = None,
                     pages: Sequence[int] | None = None,
                     collection: str = "chunks",
                     fields: Sequence[str] | None = None) -> list[DenseHit]:
        """Nearest by cosine. ``fields``: the output fields to fetch (default all; a hit
        without ``payload`` reports the row id)."""
        name, parts = self._target(collection, workspace, doc_ids)
        if parts == []:
            return []
        res = self.client.search(
            name, data=[query_vector(query_vec)], anns_field="dense", limit=k,
            filter=build_filter(workspace, doc_ids, modalities, pages), partition_names=parts,
            output_fields=list(fields or self._FIELDS), search_params=self._dense_params(name))
        return self._hits(res, workspace)

    def search_sparse(self, query_text: str, k: int, workspace: str,
                      doc_ids: Sequence[str] | None = None,
                      modalities: Sequence[str] | None = None,
                      pages: Sequence[int] | None = None,
                      collection: str = "chunks",
                      fields: Sequence[str] | None = None) -> list[DenseHit]:
        """BM25 over ``text`` (scores are positive; larger is better); ``fields`` as in
        :meth:`search_dense`."""
        query = self.sparse.query(self._key(collection), workspace, query_text)
        if not query:
            return []
        name, parts = self._target(collection, workspace, doc_ids)
        if parts == []:
            return []
        res = self.client.search(
            name, data=[query], anns_field="sparse", limit=k,
            filter=build_filter(workspace, doc_ids, modalities, pages), partition_names=parts,
            output_fields=list(fields or self._FIELDS),
            search_params={"metric_type": self.sparse.metric})
        return self._hits(res, workspace, bm25=True)

    def search_hybrid(self, query_text: str, query_vec: np.ndarray, k: int, workspace: str,
                      doc_ids: Sequence[str] | None = None,
                      modalities: Sequence[str] | None = None,
                      pages: Sequence[int] | None = None, collection: str = "chunks",
                      weights: tuple[float, float] | None = None,
                      candidates: int | None = None) -> list[DenseHit]:
        """Dense ∪ BM25 fused by Milvus: RRF (k=60) by default, WeightedRanker(dense,
        sparse) when ``weights`` is given."""
        from pymilvus import AnnSearchRequest, RRFRanker, WeightedRanker

        query = self.sparse.query(self._key(collection), workspace, query_text)
        if not query:
            return self.search_dense(query_vec, k, workspace, doc_ids, modalities, pages,
                                     collection)
        expr, limit = build_filter(workspace, doc_ids, modalities, pages), candidates or max(k, 50)
        name, parts = self._target(collection, workspace, doc_ids)
        if parts == []:
            return []
        reqs = [AnnSearchRequest(data=[query_vector(query_vec)], anns_field="dense", limit=limit,
                                 expr=expr, param=self._dense_params(name)),
                AnnSearchRequest(data=[query], anns_field="sparse", limit=limit, expr=expr,
                                 param={"metric_type": self.sparse.metric})]
        ranker = WeightedRanker(*weights) if weights else RRFRanker(60)
        res = self.client.hybrid_search(name, reqs, ranker, limit=k, partition_names=parts,
                                        output_fields=self._FIELDS)
        return self._hits(res, workspace)

    def close(self) -> None:
        self.client.close()
        self.sparse.close()
