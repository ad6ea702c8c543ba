"""The upload path's service without Ray: hostile file names and concurrent duplicate
uploads, over the real in-process ingest (MiniLM, milvus-lite, the graph and catalog)."""
from __future__ import annotations

import asyncio
import json

import pytest

from docray.engine.config import config_from_dict
from docray.engine.ingest.pipeline import ingest_local
from docray.engine.ingest.stores import Stores
from docray.serve_apps.documents.service import MAX_NAME, DocumentsService, safe_name

NOTE = b"The Quillon gearbox is machined in Turku by the Aster team since 2011.\n"


@pytest.fixture()
def service(tmp_path):
    """The default service: jobs of up to four files run in it on stages it keeps."""
    cfg = config_from_dict({"paths": {"data_dir": str(tmp_path / "data")}})
    return DocumentsService(cfg)


def _run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("name, want", [
    ("../../etc/passwd.txt", "passwd.txt"),
    ("C:\\Users\\x\\report.md", "report.md"),
    ("résumé 报告.txt", "résumé_报告.txt"),
    ("a\x00b.txt", "a_b.txt"),
    ("\u202etxt.exe.txt", "_txt.exe.txt"),
    ("x" * 1000 + ".pdf", "x" * (MAX_NAME - 4) + ".pdf"),
    ("....", "upload"),
])
def test_safe_name_keeps_the_suffix_and_nothing_dangerous(name, want):
    got = safe_name(name)
    assert got == want and len(got) <= MAX_NAME and "/" not in got and "\x00" not in got


def test_two_files_that_clean_to_one_name_both_survive():
    taken = {"x.pdf"}
    assert safe_name("a/x.pdf", taken) == "x-2.pdf"
    assert safe_name("b/x.pdf", taken | {"x-2.pdf"}) == "x-3.pdf"


def test_hostile_names_are_stored_inside_the_job_and_listed_clean(service):
    names = ["../../escape.txt", "a\x00b.txt", "y" * 1000 + ".txt", "日本語 メモ.txt"]
    files = [(n, NOTE + f"Copy {i}.\n".encode()) for i, n in enumerate(names)]  # unique bytes

    async def go():
        job = await service.submit("ws", files)
        await service.wait_idle()
        return await service.job("ws", job["job_id"])

    job = _run(go())
    assert job["status"] == "done", job
    stored = {d["filename"] for d in job["documents"]}
    assert stored == {"escape.txt", "a_b.txt", "y" * (MAX_NAME - 4) + ".txt", "日本語_メモ.txt"}
    for path in service.uploads.rglob("*"):
        assert service.uploads in path.resolve().parents
    listed = {r["filename"]: r["status"] for r in service.catalog.list("ws")}
    assert listed == {n: "done" for n in stored}


def test_same_bytes_uploaded_ten_times_at_once_become_one_document(service):
    async def go():
        jobs = await asyncio.gather(*(service.submit("ws", [(f"copy{i}.txt", NOTE)])
                                      for i in range(10)))
        await service.wait_idle()
        return [await service.job("ws", j["job_id"]) for j in jobs]

    jobs = _run(go())
    assert all(j["status"] == "done" for j in jobs), jobs
    assert len({d["doc_id"] for j in jobs for d in j["documents"]}) == 1
    rows = service.catalog.list("ws")
    assert len(rows) == 1 and rows[0]["status"] == "done"
    stores = Stores.open(service.cfg)
    try:
        doc_id = rows[0]["doc_id"]
        assert stores.dense.count("chunks", workspace="ws", doc_id=doc_id) == \
            stores.content.count("ws", doc_id)["chunks"] > 0
        assert stores.graph.counts("ws")["docs"] == 1
    finally:
        stores.close()


def test_small_jobs_reuse_one_set_of_stages_and_large_ones_go_to_ray_data(tmp_path,
                                                                         monkeypatch):
    from docray.engine.ingest import pipeline

    built, on_ray, plain = [], [], pipeline.IngestStages

    class Counted(pipeline.IngestStages):
        def __init__(self, cfg):
            built.append(cfg)
            super().__init__(cfg)

    def fake_ray_ingest(paths, cfg, workspace):  # records the route; the work stays local
        on_ray.append([p.name for p in paths])
        return ingest_local(paths, cfg, workspace, stages=plain(cfg))

    monkeypatch.setattr(pipeline, "IngestStages", Counted)
    monkeypatch.setattr(pipeline, "ingest", fake_ray_ingest)
    cfg = config_from_dict({"paths": {"data_dir": str(tmp_path / "data")},
                            "ingest": {"upload_inline_max_files": 2}})
    service = DocumentsService(cfg)

    async def go():
        small = [await service.submit("ws", [(f"n{i}.txt", NOTE + bytes([65 + i]))])
                 for i in range(2)]
        await service.wait_idle()
        large = await service.submit("ws", [(f"m{i}.txt", NOTE + bytes([75 + i]))
                                            for i in range(3)])
        await service.wait_idle()
        return [await service.job("ws", j["job_id"]) for j in (*small, large)]

    jobs = _run(go())
    assert [j["status"] for j in jobs] == ["done"] * 3, jobs
    assert len(built) == 1, "the stages were loaded again for the second small job"
    assert on_ray == [["m0.txt", "m1.txt", "m2.txt"]]
    assert len(service.catalog.list("ws", status="done")) == 5


def test_decompression_bombs_in_one_upload_are_capped_and_lose_nothing_else(service, tmp_path):
    """A page image that would decode to 2.7 GB, a PNG that claims 200,000² pixels, a
    200-inch page box and 10,000 pages, uploaded with a good note in one job: the note is
    done, each hostile file is done within the caps or failed naming the cap, and the
    process never grows by more than 1.5 GB."""
    import sys
    import threading
    from pathlib import Path

    import psutil

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import fuzz_parse

    names = ("image_bomb.pdf", "absurd_image.png", "huge_page_box.pdf", "ten_thousand_pages.pdf")
    files = [(p.name, p.read_bytes()) for p in fuzz_parse.hostile_inputs(tmp_path)
             if p.name in names] + [("note.txt", NOTE)]
    proc, peak, stop = psutil.Process(), [0], threading.Event()
    start = proc.memory_info().rss

    def watch():
        while not stop.wait(0.05):
            peak[0] = max(peak[0], proc.memory_info().rss)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()

    async def go():
        job = await service.submit("ws", files)
        await service.wait_idle()
        return await service.job("ws", job["job_id"])

    try:
        job = _run(go())
    finally:
        stop.set()
        watcher.join()
    docs = {d["filename"]: d for d in job["documents"]}
    assert set(docs) == set(names) | {"note.txt"}, docs
    assert docs["note.txt"]["status"] == "done"
    assert docs["image_bomb.pdf"]["status"] == docs["huge_page_box.pdf"]["status"] == "done"
    assert docs["absurd_image.png"]["status"] == "failed"
    assert "pixels" in docs["absurd_image.png"]["error"]
    assert docs["ten_thousand_pages.pdf"]["status"] == "failed"
    assert "max_pages" in docs["ten_thousand_pages.pdf"]["error"]
    assert (peak[0] - start) / 2**30 < 1.5, f"grew {(peak[0] - start) / 2**20:.0f} MB"


def test_a_job_left_running_by_a_killed_instance_is_resumed_once_without_duplicates(tmp_path):
    """The replica died mid-job: its record says running and one of its two documents is
    already done. The next instance starts the job again on its first call; the job ends
    done, each document once in every store."""
    cfg = config_from_dict({"paths": {"data_dir": str(tmp_path / "data")}})
    first = DocumentsService(cfg, ingest_fn=ingest_local)
    other = b"The Borealis pump is cast in Oulu by the Meridian crew since 2004.\n"

    async def submit():
        job = await first.submit("ws", [("a.txt", NOTE), ("b.txt", other)])
        await first.wait_idle()
        return job

    job_id = _run(submit())["job_id"]
    record = first.jobs_dir / f"{job_id}.json"
    body = json.loads(record.read_text())
    body["status"] = "running"  # as the killed instance left it
    record.write_text(json.dumps(body))
    stores = Stores.open(cfg)
    try:
        b_id = next(d["doc_id"] for d in body["documents"] if d["filename"] == "b.txt")
        stores.delete_doc("ws", b_id)  # b.txt was not written yet when it died
    finally:
        stores.close()

    second = DocumentsService(cfg, ingest_fn=ingest_local)

    async def resume():
        status = await second.job("ws", job_id)  # the first call takes the job up
        await second.wait_idle()
        return status, await second.job("ws", job_id), second.resume_unfinished()

    during, after, again = _run(resume())
    assert during["status"] in ("queued", "running") and again == []
    assert after["status"] == "done", after
    rows = second.catalog.list("ws")
    assert sorted(r["filename"] for r in rows) == ["a.txt", "b.txt"]
    assert all(r["status"] == "done" for r in rows)
    stores = Stores.open(cfg)
    try:
        for r in rows:
            assert stores.dense.count("chunks", workspace="ws", doc_id=r["doc_id"]) == \
                stores.content.count("ws", r["doc_id"])["chunks"] > 0
    finally:
        stores.close()


def test_a_job_whose_uploads_are_gone_fails_naming_them(tmp_path):
    cfg = config_from_dict({"paths": {"data_dir": str(tmp_path / "data")}})
    service = DocumentsService(cfg, ingest_fn=ingest_local)
    job_id = "ab" * 16
    (service.jobs_dir / f"{job_id}.json").write_text(json.dumps({
        "job_id": job_id, "workspace": "ws", "status": "queued", "error": None,
        "documents": [{"doc_id": "x", "filename": "gone.pdf", "status": "pending"}]}))
    status = _run(service.job("ws", job_id))
    assert status["status"] == "failed" and "gone.pdf" in status["error"]
