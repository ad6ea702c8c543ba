"""Milvus rows and expressions: primary keys, byte-bounded text, string literals, the
scalar filter every search uses, and query vectors at unit length."""
from __future__ import annotations

import fcntl
import logging
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from docray.engine.embed.base import l2_normalize
from docray.engine.errors import ConfigError

log = logging.getLogger(__name__)
TEXT_BYTES, ID_BYTES = 65535, 512
MIN_SERVER = (2, 5)  # BM25 functions, analysed VARCHAR, sparse vectors


def check_server_version(client: Any, uri: str) -> str:
    """Refuse a Milvus server older than 2.5: 2.3 accepts the schema without its BM25
    function, then aborts loading the sparse field. milvus-lite reports its own version
    (``milvus_lite-3.2.2``) and passes.

    >>> class Old:
    ...     def get_server_version(self): return "v2.3.5-lite"
    >>> check_server_version(Old(), "http://127.0.0.1:19530")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    docray.engine.errors.ConfigError: milvus.uri='http://...' is Milvus v2.3.5-lite; ... 2.5 or later ...
    """
    try:
        version = str(client.get_server_version())
    except Exception as err:  # noqa: BLE001 — an older client or server without the call
        log.debug("Milvus at %s did not report its version: %s", uri, err)
        return ""
    m = re.match(r"v?(\d+)\.(\d+)", version)
    if m and (int(m[1]), int(m[2])) < MIN_SERVER:
        raise ConfigError(f"milvus.uri={uri!r} is Milvus {version}; docray's dense store needs "
                          "Milvus 2.5 or later (BM25 functions, analysed text, sparse vectors)")
    return version


def query_vector(vec: np.ndarray) -> list[float]:
    """A query vector at unit length, as Milvus takes it."""
    return l2_normalize(np.asarray(vec, np.float32).reshape(-1)).tolist()  # (dim,)


def truncate_bytes(text: str, limit: int) -> str:
    """Longest prefix of ``text`` whose UTF-8 encoding fits ``limit`` bytes.

    >>> truncate_bytes("héllo", 2)
    'h'
    """
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


def row_id(workspace: str, key: str) -> str:
    """Primary key: ids are unique per workspace, the collection spans workspaces."""
    return truncate_bytes(f"{workspace}/{key}", ID_BYTES)


def _q(value: str) -> str:
    """A Milvus string literal.

    >>> _q('a"b')
    '"a\\\\"b"'
    """
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_filter(workspace: str | None = None, doc_ids: Sequence[str] | None = None,
                 modalities: Sequence[str] | None = None,
                 pages: Sequence[int] | None = None) -> str:
    """Boolean filter expression over the scalar fields.

    >>> build_filter("w", ["d1"], None, [2])
    'workspace == "w" and doc_id in ["d1"] and page in [2]'
    """
    parts = []
    if workspace is not None:
        parts.append(f"workspace == {_q(workspace)}")
    if doc_ids is not None:
        parts.append(f"doc_id in [{', '.join(_q(d) for d in doc_ids)}]")
    if modalities is not None:
        parts.append(f"modality in [{', '.join(_q(m) for m in modalities)}]")
    if pages is not None:
        parts.append(f"page in [{', '.join(str(int(p)) for p in pages)}]")
    return " and ".join(parts)


@contextmanager
def locked(path: Path):
    """An exclusive flock on ``path`` for the block: processes that open one store
    serialise their manifest writes and the copy's build."""
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def load_pymilvus_lazy_imports() -> None:
    """pymilvus loads scipy.sparse on its first search by executing a fresh copy of the
    module; two first searches on two threads race, and one fails with "partially
    initialized module 'scipy.sparse._bsr'". Do that load once, here, on one thread."""
    from pymilvus.client.entity_helper import entity_is_sparse_matrix

    entity_is_sparse_matrix([[0.0]])
