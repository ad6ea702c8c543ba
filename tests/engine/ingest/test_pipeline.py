"""End-to-end ingestion on Ray Data (one local cluster for the session)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docray.engine.ingest import ingest
from ingest_fixtures import make_pdf
from docray.engine.ingest.stores import Stores
from docray.engine.model import file_doc_id

pytestmark = pytest.mark.usefixtures("ray_cluster")


def _counts(cfg, ws, doc_id):
    s = Stores.open(cfg)
    try:
        return {"milvus_chunks": s.dense.count("chunks", workspace=ws, doc_id=doc_id),
                "pages": sum(1 for ref, _ in s.pages.pages(ws) if ref.doc_id == doc_id),
                "graph_docs": int(s.graph.has_doc(ws, doc_id)),
                "content": s.content.count(ws, doc_id)["chunks"],
                "status": (s.catalog.get(ws, doc_id) or {}).get("status")}
    finally:
        s.close()


def test_end_to_end_fills_every_index(cfg, sample_pdfs):
    summary = ingest(sample_pdfs, cfg, "ws1")
    assert (summary.ok, summary.failed) == (2, 0)
    assert summary.units.get("table", 0) >= 1 and summary.units.get("image", 0) >= 1
    assert summary.units.get("equation", 0) >= 1
    pages = {"northwind_annual_report_2023.pdf": 2, "throughput_model_note.pdf": 1}
    for pdf in sample_pdfs:
        c = _counts(cfg, "ws1", file_doc_id(pdf))
        assert c["status"] == "done"
        assert c["milvus_chunks"] == c["content"] > 0
        assert c["pages"] == pages[pdf.name] and c["graph_docs"] == 1


def test_reingest_is_a_noop_with_identical_counts(cfg, small_pdfs):
    ingest(small_pdfs, cfg, "ws")
    before = [_counts(cfg, "ws", file_doc_id(p)) for p in small_pdfs]
    summary = ingest(small_pdfs, cfg, "ws")
    assert summary.skipped == 3 and summary.ok == 0
    assert [_counts(cfg, "ws", file_doc_id(p)) for p in small_pdfs] == before


def test_corrupt_file_fails_alone(cfg, small_pdfs, tmp_path):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4\n garbage without xref")
    summary = ingest([*small_pdfs, bad], cfg, "ws")
    assert summary.ok == 3 and summary.failed == 1
    assert summary.failures[0]["file"] == "broken.pdf"
    row = Stores.open(cfg).catalog.get("ws", file_doc_id(bad))
    assert row["status"] == "failed" and "broken.pdf" in row["error"]


def test_workspaces_are_isolated(cfg, small_pdfs):
    ingest(small_pdfs[:1], cfg, "a")
    ingest(small_pdfs[1:2], cfg, "b")
    a0, b1 = file_doc_id(small_pdfs[0]), file_doc_id(small_pdfs[1])
    assert _counts(cfg, "a", a0)["milvus_chunks"] > 0
    assert _counts(cfg, "b", a0)["milvus_chunks"] == 0
    assert _counts(cfg, "a", b1)["pages"] == 0 and _counts(cfg, "b", b1)["pages"] > 0
    s = Stores.open(cfg)
    try:
        assert s.dense.count("chunks", workspace="a") == _counts(cfg, "a", a0)["milvus_chunks"]
    finally:
        s.close()


def test_summary_counts_only_its_workspace_graph(cfg, small_pdfs):
    """The summary's graph is the workspace's own, not the whole store's (two docs in
    another workspace of the same data dir must not show up)."""
    b = ingest(small_pdfs[1:], cfg, "other")
    a = ingest(small_pdfs[:1], cfg, "mine")
    assert a.graph["docs"] == 1 and b.graph["docs"] == len(small_pdfs) - 1
    s = Stores.open(cfg)
    try:
        assert a.graph == s.graph.counts("mine") != s.graph.counts()
    finally:
        s.close()


def test_delete_removes_document_from_every_store(cfg, small_pdfs):
    ingest(small_pdfs, cfg, "ws")
    gone, kept = file_doc_id(small_pdfs[0]), file_doc_id(small_pdfs[1])
    s = Stores.open(cfg)
    try:
        edges_before = s.graph.counts("ws")
        s.delete_doc("ws", gone)
        assert s.graph.counts("ws")["edges"] < edges_before["edges"]
    finally:
        s.close()
    c = _counts(cfg, "ws", gone)
    assert c == {"milvus_chunks": 0, "pages": 0, "graph_docs": 0, "content": 0, "status": None}
    assert _counts(cfg, "ws", kept)["milvus_chunks"] > 0


def test_kill_mid_run_then_resume_has_no_duplicates(cfg, tmp_path):
    """SIGKILL the ingest process after its first document is written, then rerun."""
    docs = [make_pdf(tmp_path / f"k{i}.pdf", [f"Topic {i} page {p}. " + "word " * 150
                                               for p in range(6)]) for i in range(5)]
    cfg_path = tmp_path / "cfg.json"
    import ray

    address = ray.get_runtime_context().gcs_address  # this session's cluster, not "auto"
    cfg = cfg.model_copy(update={"ingest": cfg.ingest.model_copy(
        update={"commit_every_docs": 1})})  # a done mark per document, so we can kill between
    cfg_path.write_text(cfg.model_copy(update={"ray": cfg.ray.model_copy(
        update={"address": address})}).model_dump_json())
    catalog = Path(cfg.paths.data_dir) / "catalog.sqlite"
    code = ("import sys, json; from docray.engine.config import DocrayConfig; "
            "from docray.engine.ingest import ingest; "
            "cfg = DocrayConfig.model_validate_json(open(sys.argv[1]).read()); "
            "ingest(sys.argv[2:], cfg, 'ws')")
    proc = subprocess.Popen([sys.executable, "-c", code, str(cfg_path), *map(str, docs)],
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if catalog.exists() and _done(catalog) >= 1:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "ingest finished before it could be interrupted"
        assert _done(catalog) < len(docs), "all documents done before the kill"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    summary = ingest(docs, cfg, "ws")
    assert summary.failed == 0 and summary.ok + summary.skipped == len(docs)
    assert summary.ok >= 1
    for d in docs:
        c = _counts(cfg, "ws", file_doc_id(d))
        assert c["status"] == "done"
        assert c["pages"] == 6, c
        assert c["milvus_chunks"] == c["content"], c
    s = Stores.open(cfg)
    try:
        keys = [ref.key for ref, _ in s.pages.pages("ws")]
        assert len(keys) == len(set(keys)) == 30
    finally:
        s.close()


def _done(catalog: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(catalog, timeout=1) as c:
            return c.execute("SELECT COUNT(*) FROM documents WHERE status='done'").fetchone()[0]
    except sqlite3.Error:
        return 0
