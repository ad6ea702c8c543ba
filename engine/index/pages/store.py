"""The page multi-vector store: ragged token shards + SQLite catalog + manifest, exact MaxSim.

Layout of a store folder::

    manifest.json        encoder, dim, dtype, count, schema_version, engine_version
    catalog.sqlite       one row per page: key, workspace, doc_id, page_no, shard, start, n_tok, live
    shards/<id>/         tokens.bin (+ scales.bin for int8), append-only, memory-mapped
    .lock                flock'd by every writer, so appends from several processes serialise

Writes are idempotent (``add_pages`` skips pages already live unless ``replace=True``) and
crash-safe (token bytes are fsync'd before the catalog rows that reference them commit).
Deletes are tombstones; :meth:`PageStore.compact` rewrites the shards without them. Search is
exact MaxSim through :func:`docray.kernels.maxsim.maxsim` over each shard's memory map;
0-token pages score -inf and are never returned. Readers notice other processes' commits
(SQLite ``data_version``) and remap before the next search.
"""
from __future__ import annotations

import fcntl
import logging
import pathlib
import threading
from contextlib import contextmanager
from typing import Iterable, Iterator, NamedTuple, Optional, Sequence, Union

import numpy as np
import torch

from docray.engine.errors import BadInput, Corrupt
from docray.kernels.maxsim.cpu import default_compute

from .catalog import Catalog, page_key
from .manifest import DTYPES, FILENAME, Manifest, check_manifest, read_manifest
from .shards import ShardFiles, encode
from .view import ShardView, score_selected, select, select_rows

logger = logging.getLogger(__name__)

Array = Union[np.ndarray, torch.Tensor]


class PageRef(NamedTuple):
    workspace: str
    doc_id: str
    page_no: int

    @property
    def key(self) -> str:
        return page_key(self.workspace, self.doc_id, self.page_no)


class PageHit(NamedTuple):
    page: PageRef
    score: float


def _as_numpy(tokens: Array) -> np.ndarray:
    if isinstance(tokens, torch.Tensor):
        return tokens.detach().float().cpu().numpy()
    return np.asarray(tokens)


class PageStore:
    """Ragged multi-vector page index. Open an existing folder or create one (needs ``dim``)."""

    def __init__(
        self,
        path: Union[str, pathlib.Path],
        *,
        encoder: Optional[str] = None,
        dim: Optional[int] = None,
        dtype: Optional[str] = None,
        shard_tokens: int = 4_000_000,
        compute: str = "auto",
    ):
        self.path = pathlib.Path(path)
        self.shard_tokens, self.compute = shard_tokens, compute
        self._mutex = threading.RLock()
        self.manifest = self._open_manifest(encoder, dim, dtype)
        self.dim, self.dtype = self.manifest.dim, self.manifest.dtype
        if compute == "auto":  # int8 storage → int8 GEMM where the CPU has VNNI/AMX
            self.compute = default_compute(self.dtype)
        self._catalog = Catalog(str(self.path / "catalog.sqlite"))
        self._reload()

    @classmethod
    def open_existing(cls, path: Union[str, pathlib.Path]) -> Optional["PageStore"]:
        """The store at ``path`` for reading, or None when nothing was ever written there."""
        return cls(path) if (pathlib.Path(path) / FILENAME).exists() else None

    # ----------------------------------------------------------------- open / state
    def _open_manifest(self, encoder: Optional[str], dim: Optional[int], dtype: Optional[str]) -> Manifest:
        if (self.path / FILENAME).exists():
            found = read_manifest(self.path)
            check_manifest(found, self.path, encoder, dim, dtype)
            return found
        if (self.path / "catalog.sqlite").exists() or (self.path / "shards").exists():
            raise Corrupt(str(self.path / FILENAME), "manifest.json is missing but store files exist")
        if not dim or dim <= 0:
            raise BadInput("dim", f"creating a page store at {self.path} needs a positive dim, got {dim!r}")
        if (dtype or "fp16") not in DTYPES:
            raise BadInput("dtype", f"must be one of {DTYPES}, got {dtype!r}")
        self.path.mkdir(parents=True, exist_ok=True)
        manifest = Manifest(encoder=encoder or "unknown", dim=int(dim), dtype=dtype or "fp16")
        manifest.write(self.path)
        return manifest

    def _files(self, shard: int) -> ShardFiles:
        return ShardFiles(self.path / "shards" / f"{shard:05d}", self.dtype, self.dim)

    def _reload(self) -> None:
        """Re-read the catalog and remap every shard's committed prefix."""
        by_shard: dict[int, list[tuple]] = {}
        for row in self._catalog.rows():
            by_shard.setdefault(row[5], []).append(row)
        views = []
        for shard, rows in sorted(by_shard.items()):
            starts = np.array([r[6] for r in rows], dtype=np.int64)
            lengths = np.array([r[7] for r in rows], dtype=np.int64)
            end = int((starts + lengths).max())
            if not np.array_equal(starts[1:], (starts + lengths)[:-1]) or starts[0] != 0:
                raise Corrupt(str(self._files(shard).folder), "catalog rows do not tile the shard")
            tokens, scales = self._files(shard).open(end)
            refs = [PageRef(r[2], r[3], r[4]) for r in rows]
            views.append(ShardView(tokens, scales, starts, lengths, np.array([r[8] == 1 for r in rows]),
                                    refs, np.array([r[0] for r in rows], dtype=np.int64)))
        self._views = views
        self._version = self._catalog.data_version()
        self._key_index = None  # built on first score_keys()

    def refresh(self) -> None:
        """Pick up commits made by other processes (called before every search)."""
        with self._mutex:
            if self._catalog.data_version() != self._version:
                self._reload()

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        with self._mutex, open(self.path / ".lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _locate(self, keys: Sequence[str]) -> dict[str, tuple["ShardView", int]]:
        """Live, non-empty entries among ``keys`` → (shard view, row in it)."""
        self.refresh()
        self._rows_of(set())  # builds the key index
        out = {}
        for key in keys:
            loc = self._key_index.get(key)
            if loc is not None and self._views[loc[0]].lengths[loc[1]] > 0:
                out[key] = (self._views[loc[0]], loc[1])
        return out

    def score_keys(self, query: Array, keys: Sequence[str]) -> dict[str, float]:
        """Exact MaxSim of one query against a few named entries (rerank path: O(len(keys))).

        Missing or deleted keys are absent from the result."""
        q = self._query(query)  # (n_q, dim)
        return {key: float((q @ view.page_tokens(i).T).max(dim=1).values.sum())  # scalar
                for key, (view, i) in self._locate(keys).items()}

    def entry_tokens(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored token vectors of a few named entries, fp32 (n_tok, dim) each.

        Missing, empty or deleted keys are absent from the result."""
        return {key: view.page_tokens(i).numpy() for key, (view, i) in self._locate(keys).items()}

    def close(self) -> None:
        self._views = []
        self._catalog.close()

    def __enter__(self) -> "PageStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----------------------------------------------------------------- writes
    def count(self) -> int:
        """Live pages."""
        return self._catalog.count()

    def has_doc(self, workspace: str, doc_id: str) -> bool:
        return self._catalog.has_doc(workspace, doc_id)

    def add_pages(
        self, workspace: str, doc_id: str, pages: Sequence[tuple[int, Array]], *, replace: bool = False
    ) -> int:
        """Append a document's pages; pages already live are skipped (or replaced). Returns pages written."""
        checked = self._validate(workspace, doc_id, pages)
        with self._write_lock():
            keys = [page_key(workspace, doc_id, p) for p, _ in checked]
            live = self._catalog.live_keys(keys)
            if not replace:
                checked = [(p, t) for (p, t), k in zip(checked, keys) if k not in live]
            if checked:
                self._append(workspace, doc_id, checked, tombstones=sorted(live) if replace else [])
        self._reload()
        return len(checked)

    def _validate(self, workspace: str, doc_id: str, pages: Sequence[tuple[int, Array]]) -> list:
        for name, value in (("workspace", workspace), ("doc_id", doc_id)):
            if not isinstance(value, str) or not value:
                raise BadInput(name, f"must be a non-empty string, got {value!r}")
        out, seen = [], set()
        for page_no, tokens in pages:
            src = f"{workspace}/{doc_id} page {page_no}"
            arr = _as_numpy(tokens)
            if arr.ndim != 2 or arr.shape[1] != self.dim:
                raise BadInput(src, f"tokens must be (n_tok, {self.dim}), got {arr.shape}")
            if not np.isfinite(arr).all():
                raise BadInput(src, "tokens contain NaN or inf")
            if int(page_no) in seen:
                raise BadInput(src, "page number given twice")
            seen.add(int(page_no))
            out.append((int(page_no), arr))
        return out

    def _append(self, workspace: str, doc_id: str, pages: list, tombstones: list[str]) -> None:
        n_rows = sum(t.shape[0] for _, t in pages)
        shard, start = self._tail(n_rows)
        encoded = [encode(t, self.dtype) for _, t in pages]
        self._files(shard).append(start, [r for r, _ in encoded], [s for _, s in encoded if s is not None])
        rows, pos = [], start
        for (page_no, tokens) in pages:
            rows.append((page_key(workspace, doc_id, page_no), workspace, doc_id, page_no, shard, pos, tokens.shape[0]))
            pos += tokens.shape[0]
        self._catalog.insert(rows, tombstones)
        self._write_count()

    def _tail(self, n_rows: int) -> tuple[int, int]:
        """(shard, first row) for an append of ``n_rows``: the last shard unless it would overflow."""
        last = self._catalog.last_shard()
        if last is not None:
            end = self._catalog.shard_end(last)
            if end == 0 or end + n_rows <= self.shard_tokens:
                return last, end
        return self._free_shard_id(), 0

    def _free_shard_id(self) -> int:
        folder = self.path / "shards"
        taken = [int(p.name) for p in folder.iterdir() if p.name.isdigit()] if folder.exists() else []
        last = self._catalog.last_shard()
        return max(taken + ([last] if last is not None else []) + [-1]) + 1

    def _write_count(self) -> None:
        self.manifest.count = self._catalog.count()
        self.manifest.write(self.path)

    def delete_doc(self, workspace: str, doc_id: str) -> int:
        """Tombstone every page of a document; returns pages deleted (0 if it was absent)."""
        with self._write_lock():
            n = self._catalog.delete_doc(workspace, doc_id)
            self._write_count()
        self._reload()
        return n

    def compact(self) -> int:
        """Rewrite the live pages into fresh shards, dropping tombstones; returns pages dropped."""
        with self._write_lock():
            self._reload()
            dead = sum(int((~v.live).sum()) for v in self._views)
            if dead == 0:
                return 0
            old = sorted({p.name for p in (self.path / "shards").iterdir()})
            moves = self._rewrite_live(self._free_shard_id())
            self._catalog.relocate(moves)
            for name in old:
                for f in (self.path / "shards" / name).iterdir():
                    f.unlink()
                (self.path / "shards" / name).rmdir()
            self._write_count()
        self._reload()
        logger.info("compacted %s: dropped %d pages, kept %d", self.path, dead, len(moves))
        return dead

    def _rewrite_live(self, shard: int) -> list[tuple[int, int, int]]:
        moves, pos = [], 0
        for view in self._views:
            for i in np.nonzero(view.live)[0]:
                a, n = int(view.starts[i]), int(view.lengths[i])
                if pos and pos + n > self.shard_tokens:
                    shard, pos = shard + 1, 0
                scales = [view.scales[a:a + n].numpy()] if view.scales is not None else []
                self._files(shard).append(pos, [view.tokens[a:a + n].numpy()], scales)
                moves.append((int(view.ids[i]), shard, pos))
                pos += n
        return moves

    # ----------------------------------------------------------------- reads
    def pages(self, workspace: Optional[str] = None) -> Iterator[tuple[PageRef, torch.Tensor]]:
        """Live pages with their fp32 tokens (n_tok, dim), in storage order."""
        self.refresh()
        for view in self._views:
            for i in np.nonzero(view.live)[0]:
                if workspace is None or view.refs[i].workspace == workspace:
                    yield view.refs[i], view.page_tokens(i)

    def search(
        self, query: Array, k: int = 10, workspace: Optional[str] = None, doc_ids: Optional[Iterable[str]] = None
    ) -> list[PageHit]:
        """Exact MaxSim top-k for one query (n_q, dim), optionally within a workspace and/or documents."""
        return self.search_batch([query], k, workspace, doc_ids)[0]

    def search_batch(
        self, queries: Sequence[Array], k: int = 10, workspace: Optional[str] = None,
        doc_ids: Optional[Iterable[str]] = None, keys: Optional[Iterable[str]] = None,
    ) -> list[list[PageHit]]:
        """Exact top-k for several queries in one pass over the shards (``keys`` limits to those pages)."""
        qs = [self._query(q) for q in queries]
        self.refresh()
        docs = set(doc_ids) if doc_ids is not None else None
        wanted = set(keys) if keys is not None else None
        rows = self._rows_of(wanted) if wanted is not None else None
        all_scores, all_refs = [], []
        for v, view in enumerate(self._views):
            if rows is not None:  # candidates named by key: test only their rows
                sel = select_rows(view, rows.get(v, np.zeros(0, np.int64)), workspace, docs)
            else:
                sel = select(view, workspace, docs)
            if sel.any():
                all_scores.append(score_selected(view, qs, sel, self.compute))  # (n_queries, n_sel)
                all_refs.extend(view.refs[i] for i in np.nonzero(sel)[0])
        if not all_refs:
            return [[] for _ in qs]
        scores = torch.cat(all_scores, dim=1)  # (n_queries, n_pages_selected)
        values, idx = torch.topk(scores, min(k, scores.shape[1]), dim=1)
        return [[PageHit(all_refs[j], float(v)) for v, j in zip(vs.tolist(), ix.tolist()) if v != float("-inf")]
                for vs, ix in zip(values, idx)]

    def _query(self, query: Array) -> torch.Tensor:
        q = torch.as_tensor(_as_numpy(query), dtype=torch.float32)
        if q.dim() != 2 or q.shape[1] != self.dim:
            raise BadInput("query", f"must be (n_q, {self.dim}), got {tuple(q.shape)}")
        return q  # (n_q, dim)

    def _rows_of(self, keys: set[str]) -> dict[int, np.ndarray]:
        """Live entries among ``keys`` → {shard view: its rows}; O(len(keys)), not O(pages)."""
        if self._key_index is None:
            self._key_index = {key: (v, i) for v, view in enumerate(self._views)
                               for i, key in enumerate(view.keys) if view.live[i]}
        by_view: dict[int, list[int]] = {}
        for key in keys:
            loc = self._key_index.get(key)
            if loc is not None:
                by_view.setdefault(loc[0], []).append(loc[1])
        return {v: np.array(sorted(r), dtype=np.int64) for v, r in by_view.items()}
