"""MilvusDenseStore through a server URI (``MilvusConfig.uri = http://127.0.0.1:PORT``),
the setting a Milvus standalone is reached by.

* The dense-store tests of test_dense.py run again against a ``milvus-lite server``: the
  store's server path (manifest beside the data dir, no db file, collections per prefix).
* A real Milvus standalone binary, the ``milvus`` package's embedded server (2.3.5), is
  refused with a clear error. Unguarded, it accepts docray's schema without the BM25
  function and then aborts (SIGABRT) loading the sparse field; rows upserted into a
  partition-key collection were not found afterwards. No Milvus >= 2.5 server runs on this
  machine (docker/compose.yaml describes one; tests/docker/test_compose.py checks it).
"""
from __future__ import annotations

import uuid

import pytest
from test_dense import (  # noqa: F401 — collected again here, with this module's store
    DIM,
    _fill,
    test_bm25_finds_exact_keyword,
    test_bad_vectors_and_long_text,
    test_delete_doc_removes_only_that_doc_everywhere,
    test_dense_search_filters_and_payload,
    test_fields_limit_what_a_hit_carries,
    test_hybrid_returns_the_right_chunk,
    test_same_chunk_id_in_two_workspaces_is_isolated,
    test_searcher_runs_dense_and_bm25_and_reports_logical_ids,
    test_upsert_is_idempotent_and_counts_filter,
    test_vectors_are_stored_at_unit_length_and_scored_by_inner_product,
)

from docray.engine.config import MilvusConfig
from docray.engine.errors import ConfigError, Corrupt
from docray.engine.index.dense import MilvusDenseStore
from docray.serve_apps.milvus_server import MilvusLiteServer, free_port


@pytest.fixture(scope="module")
def lite_server(tmp_path_factory):
    server = MilvusLiteServer(tmp_path_factory.mktemp("milvus-lite-server") / "m.db",
                              free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def store(lite_server, tmp_path):
    """The fixture test_dense's tests take, here through the server URI; a fresh
    collection prefix per test stands for a fresh db file."""
    cfg = MilvusConfig(uri=lite_server.uri, collection_prefix=f"t{uuid.uuid4().hex[:10]}")
    s = MilvusDenseStore(cfg, tmp_path, dim=DIM, encoder="fake")
    yield s
    for name in [*s.names.values(), s.by_doc.name]:
        if s.client.has_collection(name):
            s.client.drop_collection(name)
    s.close()


def test_server_store_keeps_its_manifest_in_the_data_dir_and_reopens(lite_server, tmp_path):
    cfg = MilvusConfig(uri=lite_server.uri, collection_prefix="reopen")
    s = MilvusDenseStore(cfg, tmp_path, dim=DIM, encoder="fake")
    _fill(s)
    s.close()
    assert (tmp_path / "reopen_dense.manifest.json").is_file()
    s = MilvusDenseStore(cfg, tmp_path, dim=DIM, encoder="fake")
    try:
        assert s.count() == 3 and s.search_sparse("Acme", 1, "w1")[0].id == "docA:c1"
    finally:
        s.close()
    with pytest.raises(Corrupt, match="reopen_dense.manifest.json"):
        MilvusDenseStore(cfg, tmp_path, dim=DIM * 2, encoder="fake")


@pytest.fixture(scope="session")
def milvus_standalone_23(tmp_path_factory):
    """The ``milvus`` package's Milvus 2.3 standalone (embedded etcd, local storage; ~8 s
    to start). Skipped where the package is missing or the server does not come up.
    It listens on every interface (Milvus 2.3 has no listen address); ports are free ones."""
    milvus = pytest.importorskip("milvus", reason="the `milvus` package (embedded server)")
    server = milvus.MilvusServer(milvus.MilvusServerConfig(), wait_for_started=True)
    server.set_base_dir(str(tmp_path_factory.mktemp("milvus-standalone")))
    server.listen_port = free_port()
    try:
        server.start()
    except (RuntimeError, TimeoutError, OSError) as err:
        server.stop()
        pytest.skip(f"Milvus standalone (milvus package) did not start: {err}")
    yield f"http://127.0.0.1:{server.listen_port}"
    server.stop()


@pytest.mark.slow
def test_a_milvus_server_older_than_2_5_is_refused_by_name(milvus_standalone_23, tmp_path):
    from pymilvus import MilvusClient

    client = MilvusClient(uri=milvus_standalone_23)
    try:
        assert client.get_server_version().startswith("v2.3")  # a real server answered
    finally:
        client.close()
    with pytest.raises(ConfigError, match=r"milvus.uri='http://127.0.0.1:\d+' is Milvus v2\.3"
                                          r".*needs Milvus 2\.5 or later"):
        MilvusDenseStore(MilvusConfig(uri=milvus_standalone_23), tmp_path, dim=DIM,
                         encoder="fake")
