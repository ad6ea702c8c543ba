"""Upload → ingestion job; delete; job status. Ray-free logic.

A job of a few files (``ingest.upload_inline_max_files``) runs in this process on stages
loaded once; a larger one runs on Ray Data, whose actor pool is started per job.

One instance owns every write (ingest and delete run one at a time under a lock), so the
graph file has a single writer; readers in other replicas pick the changes up. Uploaded
bytes arrive over the handle and are written under ``data_dir/uploads/<job>/``. Job
records are JSON files under ``data_dir/jobs/`` so they outlive a restart; a job that an
instance left queued or running (its replica was killed) is started again by the next
instance, and the ingest resumes from the catalog, so no document is written twice.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
import unicodedata
import uuid
from pathlib import Path
from typing import Any, Callable

from docray.engine.config import DocrayConfig

log = logging.getLogger(__name__)
_SAFE = re.compile(r"[^\w.-]+")  # letters and digits of any script stay; the rest is "_"
MAX_NAME = 120


def safe_name(name: str, taken: set[str] | frozenset = frozenset()) -> str:
    """A file name with no path parts, control or format characters (NUL, RTL overrides),
    never empty, never dot-led, at most ``MAX_NAME`` characters with its suffix kept (the
    suffix picks the parser), and not one of ``taken`` (two files of one upload that clean
    to one name both survive)."""
    base = unicodedata.normalize("NFC", Path(name.replace("\\", "/")).name)
    base = _SAFE.sub("_", base).lstrip(".") or "upload"
    stem, suffix = (base, "") if "." not in base else base.rsplit(".", 1)
    suffix = f".{suffix[:16]}" if suffix else ""
    stem = stem[:MAX_NAME - len(suffix)] or "upload"
    out, n = stem + suffix, 1
    while out in taken:
        n += 1
        out = f"{stem[:MAX_NAME - len(suffix) - len(str(n)) - 1]}-{n}{suffix}"
    return out


class DocumentsService:
    def __init__(self, cfg: DocrayConfig, ingest_fn: Callable | None = None):
        from docray.engine.index.catalog import Catalog
        from docray.engine.model import file_doc_id

        self.cfg, self._doc_id = cfg, file_doc_id
        self.ingest_fn = ingest_fn or self._ingest
        self._stages = None  # IngestStages, built by the first small job
        root = Path(cfg.paths.data_dir)
        self.uploads, self.jobs_dir = root / "uploads", root / "jobs"
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self.catalog = Catalog(root / "catalog.sqlite")
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task] = set()
        self._resumed = False

    # -- job records ---------------------------------------------------------------------
    def _save(self, job: dict[str, Any]) -> None:
        path = self.jobs_dir / f"{job['job_id']}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(job))
        tmp.replace(path)

    def _load(self, job_id: str) -> dict[str, Any] | None:
        if not re.fullmatch(r"[0-9a-f]{32}", job_id):
            return None
        path = self.jobs_dir / f"{job_id}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def resume_unfinished(self) -> list[str]:
        """Start again, once per instance, the jobs a previous one left queued or running.
        Call on the running event loop; returns their ids."""
        if self._resumed:
            return []
        self._resumed, resumed = True, []
        for path in sorted(self.jobs_dir.glob("*.json")):
            job = self._load(path.stem)
            if job is None or job.get("status") not in ("queued", "running"):
                continue
            paths = [self.uploads / job["job_id"] / d["filename"] for d in job["documents"]]
            lost = [p.name for p in paths if not p.exists()]
            if lost:
                job["status"], job["error"] = "failed", f"uploaded files lost: {', '.join(lost)}"
                self._save(job)
                continue
            log.warning("resuming ingestion job %s (%d files) that a previous instance left "
                        "%s", job["job_id"], len(paths), job["status"])
            self._start(job, paths)
            resumed.append(job["job_id"])
        return resumed

    async def job(self, workspace: str, job_id: str) -> dict[str, Any] | None:
        """Job status with per-document catalog status; None if not in this workspace."""
        self.resume_unfinished()
        job = self._load(job_id)
        if job is None or job["workspace"] != workspace:
            return None
        docs = []
        for d in job["documents"]:
            row = self.catalog.get(workspace, d["doc_id"])
            docs.append(_doc_status(row) if row else d)
        return {"job_id": job_id, "status": job["status"], "documents": docs,
                "error": job.get("error"), "graph": job.get("graph") or {}}

    # -- submit and run ------------------------------------------------------------------
    async def submit(self, workspace: str, files: list[tuple[str, bytes]]) -> dict[str, Any]:
        self.resume_unfinished()
        job_id = uuid.uuid4().hex
        folder = self.uploads / job_id
        folder.mkdir(parents=True)
        docs, paths, taken = [], [], set()
        for name, data in files:
            path = folder / safe_name(name, taken)
            taken.add(path.name)
            path.write_bytes(data)
            paths.append(path)
            docs.append({"doc_id": self._doc_id(path), "filename": path.name,
                         "status": "pending", "error": None, "n_pages": 0, "n_units": 0})
        job = {"job_id": job_id, "workspace": workspace, "status": "queued", "documents": docs,
               "error": None}
        self._save(job)
        self._start(job, paths)
        return await self.job(workspace, job_id)

    def _start(self, job: dict[str, Any], paths: list[Path]) -> None:
        task = asyncio.create_task(self._run(job, paths))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, job: dict[str, Any], paths: list[Path]) -> None:
        async with self._lock:
            job["status"] = "running"
            self._save(job)
            try:
                summary = await asyncio.to_thread(self.ingest_fn, paths, self.cfg,
                                                  job["workspace"])
                failed = summary.failed and not summary.ok
                job["status"] = "failed" if failed else "done"
                job["graph"] = summary.graph  # this workspace's graph after the job
                if summary.failures:
                    job["error"] = "; ".join(f"{f['file']}: {f['error']}"
                                             for f in summary.failures)
            except Exception as err:  # noqa: BLE001 — the job records it, the service lives on
                log.exception("ingestion job %s failed", job["job_id"])
                job["status"], job["error"] = "failed", f"{type(err).__name__}: {err}"
            self._save(job)

    def _ingest(self, paths: list[Path], cfg: DocrayConfig, workspace: str):
        """A small job runs here with stages kept across jobs; a larger one on Ray Data."""
        from docray.engine.ingest.pipeline import IngestStages, ingest, ingest_local, runs_local

        if len(paths) > cfg.ingest.upload_inline_max_files or not runs_local(cfg):
            return ingest(paths, cfg, workspace)
        if self._stages is None:
            self._stages = IngestStages(cfg)
        return ingest_local(paths, cfg, workspace, stages=self._stages)

    def pending(self) -> int:
        """Upload jobs not finished yet (a graceful stop waits for them)."""
        return sum(not t.done() for t in self._tasks)

    async def wait_idle(self) -> None:
        """Wait for running jobs (tests and shutdown)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- delete --------------------------------------------------------------------------
    def _delete(self, workspace: str, doc_id: str) -> None:
        from docray.engine.ingest.stores import Stores

        stores = Stores.open(self.cfg)
        try:
            stores.delete_doc(workspace, doc_id)
        finally:
            stores.close()

    async def delete(self, workspace: str, doc_id: str) -> bool:
        self.resume_unfinished()
        if self.catalog.get(workspace, doc_id) is None:
            return False
        async with self._lock:
            await asyncio.to_thread(self._delete, workspace, doc_id)
        return True


def _doc_status(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row.get(k) for k in ("doc_id", "filename", "status", "error", "n_pages",
                                     "n_units")}
