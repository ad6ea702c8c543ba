"""PageStore: persistence, manifest checks, idempotent appends, delete + compaction, filters, int8."""
from __future__ import annotations

import json
import multiprocessing as mp

import numpy as np
import pytest
import torch
from pages_data import clustered_pages, fill, queries_from

from docray.engine.errors import BadInput, Corrupt
from docray.engine.index.pages import PageRef, PageStore, page_key
from docray.kernels.maxsim.cpu import int8_gemm_fast
from docray.kernels.maxsim.reference import maxsim_reference

DIM = 64


def _exact(docs: dict, query: np.ndarray, k: int, workspace: str = "ws") -> list[tuple[PageRef, float]]:
    """Brute force over the fp16-rounded pages with the reference kernel."""
    refs, tokens, offsets = [], [], [0]
    for doc_id, pages in docs.items():
        for p, t in pages:
            refs.append(PageRef(workspace, doc_id, p))
            tokens.append(torch.from_numpy(t).half().float())
            offsets.append(offsets[-1] + t.shape[0])
    scores = maxsim_reference(torch.from_numpy(query), torch.cat(tokens), torch.tensor(offsets))
    top = torch.topk(scores, k)
    return [(refs[i], float(v)) for v, i in zip(top.values, top.indices)]


@pytest.fixture
def docs():
    return clustered_pages(12, 5, DIM, seed=3)


def test_search_is_exact_and_survives_reopen(tmp_path, docs):
    store = PageStore(tmp_path / "pages", encoder="text-tokens", dim=DIM, dtype="fp16", shard_tokens=2000)
    fill(store, docs)
    assert store.count() == 60 and len(list((tmp_path / "pages" / "shards").iterdir())) > 1
    q = queries_from(docs, 1)[0]
    want = _exact(docs, q, 10)
    got = store.search(q, k=10)
    assert [h.page for h in got] == [r for r, _ in want]
    assert [h.score for h in got] == pytest.approx([s for _, s in want], abs=1e-3)
    store.close()
    again = PageStore(tmp_path / "pages", encoder="text-tokens", dim=DIM)
    assert again.count() == 60 and again.search(q, k=10) == got
    assert got[0].page.key == page_key("ws", got[0].page.doc_id, got[0].page.page_no)


def test_manifest_mismatch_and_damage_are_clear_errors(tmp_path, docs):
    PageStore(tmp_path / "s", encoder="colpali", dim=DIM).add_pages("ws", "a", docs["doc-0"])
    with pytest.raises(Corrupt, match="dim mismatch.*64.*128"):
        PageStore(tmp_path / "s", dim=128)
    with pytest.raises(Corrupt, match="encoder mismatch"):
        PageStore(tmp_path / "s", encoder="minilm")
    with pytest.raises(Corrupt, match="dtype mismatch"):
        PageStore(tmp_path / "s", dtype="int8")
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert {"encoder", "dim", "dtype", "count", "schema_version", "engine_version"} <= set(manifest)
    (tmp_path / "s" / "manifest.json").write_text(json.dumps(dict(manifest, schema_version=99)))
    with pytest.raises(Corrupt, match="schema_version 99") as err:
        PageStore(tmp_path / "s")
    assert str(tmp_path / "s" / "manifest.json") in str(err.value)
    (tmp_path / "s" / "manifest.json").unlink()
    with pytest.raises(Corrupt, match="missing"):
        PageStore(tmp_path / "s")


def test_truncated_shard_is_corrupt(tmp_path, docs):
    PageStore(tmp_path / "s", dim=DIM).add_pages("ws", "a", docs["doc-0"])
    tokens = next((tmp_path / "s" / "shards").iterdir()) / "tokens.bin"
    tokens.write_bytes(tokens.read_bytes()[:100])
    with pytest.raises(Corrupt, match="truncated"):
        PageStore(tmp_path / "s")


def test_add_is_idempotent_and_replace_replaces(tmp_path, docs):
    store = PageStore(tmp_path / "s", dim=DIM)
    assert store.add_pages("ws", "a", docs["doc-0"]) == 5 and store.has_doc("ws", "a")
    assert store.add_pages("ws", "a", docs["doc-0"]) == 0 and store.count() == 5
    new = [(0, docs["doc-1"][0][1])]
    assert store.add_pages("ws", "a", new, replace=True) == 1 and store.count() == 5
    hits = store.search(docs["doc-1"][0][1][:8], k=1, doc_ids=["a"])
    assert hits[0].page == PageRef("ws", "a", 0)
    assert not store.has_doc("ws", "b") and not store.has_doc("other", "a")


def test_bad_input_names_the_page(tmp_path):
    store = PageStore(tmp_path / "s", dim=DIM)
    with pytest.raises(BadInput, match="a page 3.*\\(n_tok, 64\\)"):
        store.add_pages("ws", "a", [(3, np.zeros((4, 32)))])
    with pytest.raises(BadInput, match="NaN"):
        store.add_pages("ws", "a", [(0, np.full((2, DIM), np.nan))])
    with pytest.raises(BadInput, match="query"):
        store.search(np.zeros((3, 5)))
    with pytest.raises(BadInput, match="dim"):
        PageStore(tmp_path / "new")


def test_delete_compact_and_filters(tmp_path, docs):
    store = PageStore(tmp_path / "s", dim=DIM, dtype="int8", shard_tokens=3000)
    fill(store, docs)
    store.add_pages("other", "doc-0", docs["doc-0"])
    store.add_pages("ws", "empty", [(0, np.zeros((0, DIM)))])  # a 0-token page never wins
    q = docs["doc-2"][1][1][:12]
    assert all(h.page.workspace == "other" for h in store.search(q, 5, workspace="other"))
    assert {h.page.doc_id for h in store.search(q, 20, doc_ids=["doc-2", "doc-3"])} <= {"doc-2", "doc-3"}
    assert all(h.page.doc_id != "empty" for h in store.search(q, 100))
    before = store.search(q, 10)
    assert store.delete_doc("ws", "doc-2") == 5 and store.delete_doc("ws", "doc-2") == 0
    assert store.count() == 61 and not store.has_doc("ws", "doc-2")
    after = store.search(q, 10)
    kept = [h for h in before if h.page.doc_id != "doc-2"]
    assert after[: len(kept)] == kept and all(h.page.doc_id != "doc-2" for h in after)
    size = sum(f.stat().st_size for f in (tmp_path / "s" / "shards").rglob("*.bin"))
    assert store.compact() == 5 and store.compact() == 0
    assert sum(f.stat().st_size for f in (tmp_path / "s" / "shards").rglob("*.bin")) < size
    assert store.search(q, 10) == after and PageStore(tmp_path / "s").search(q, 10) == after


def test_int8_tracks_fp16_top10(tmp_path):
    docs = clustered_pages(60, 5, 128, seed=7)
    fp16 = PageStore(tmp_path / "f", dim=128, dtype="fp16")
    int8 = PageStore(tmp_path / "i", dim=128, dtype="int8")
    fill(fp16, docs)
    fill(int8, docs)
    # int8 storage scores with the int8 GEMM by default where the CPU has an int8 dot
    # product (fp32 tiles elsewhere); fp16 storage stays fp32.
    assert (int8.compute, fp16.compute) == ("int8" if int8_gemm_fast() else "fp32", "fp32")
    exact = PageStore(tmp_path / "i", compute="fp32")
    gemm = PageStore(tmp_path / "i", compute="int8")  # int8 x int8 GEMM, on any CPU
    overlaps, vs_exact = [], []
    for q in queries_from(docs, 20, n_tok=24, seed=9):
        a = {h.page for h in fp16.search(q, 10)}
        b = {h.page for h in int8.search(q, 10)}
        c = {h.page for h in exact.search(q, 10)}
        overlaps.append(len(a & b) / 10)
        vs_exact.append(len({h.page for h in gemm.search(q, 10)} & c) / 10)
    assert np.mean(overlaps) >= 0.95, overlaps
    assert np.mean(vs_exact) >= 0.95, vs_exact


def _append_in_child(path: str, doc_id: str, tokens: np.ndarray) -> None:
    PageStore(path).add_pages("ws", doc_id, [(0, tokens), (1, tokens[:3])])


def test_appends_from_other_processes_are_seen(tmp_path, docs):
    store = PageStore(tmp_path / "s", dim=DIM)
    store.add_pages("ws", "mine", docs["doc-0"])
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_append_in_child, args=(str(tmp_path / "s"), f"c{i}", docs["doc-1"][i][1]))
             for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert store.count() == 9 and store.has_doc("ws", "c1")
    hit = store.search(docs["doc-1"][1][1][:10], k=1)[0]
    assert hit.page == PageRef("ws", "c1", 0)


def test_optional_dependencies_stay_unimported():
    import subprocess
    import sys

    code = ("import sys, docray.engine.index.pages, docray.kernels.maxsim; "
            "bad = [m for m in ('pymilvus', 'triton', 'colpali_engine') if m in sys.modules]; "
            "assert not bad, bad")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).returncode == 0
