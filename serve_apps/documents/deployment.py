"""Serve glue for uploads, deletes and job status (the single writer of the stores)."""
from __future__ import annotations

from ray import serve

from docray.engine.config import DocrayConfig


@serve.deployment(name="Documents")
class Documents:
    def __init__(self, cfg_json: str):
        from docray.serve_apps.documents.service import DocumentsService

        self.service = DocumentsService(DocrayConfig.model_validate_json(cfg_json))

    async def submit(self, workspace, files):
        return await self.service.submit(workspace, files)

    async def job(self, workspace, job_id):
        return await self.service.job(workspace, job_id)

    async def delete(self, workspace, doc_id):
        return await self.service.delete(workspace, doc_id)

    async def pending(self) -> int:
        return self.service.pending()

    async def check_health(self) -> None:
        """Serve calls this every few seconds: a restarted replica takes up the jobs the
        killed one left unfinished without waiting for a request."""
        self.service.resume_unfinished()
