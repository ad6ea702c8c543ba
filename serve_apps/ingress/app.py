"""The HTTP API (FastAPI): routes only; the work is in the services.

Errors are :class:`~docray.serve_apps.protocol.ErrorBody` JSON: 4xx names the field,
503 carries Retry-After, 504 is a timeout, 502 names the failing stage.
"""
from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import AsyncIterator, Optional

from fastapi import Depends, FastAPI, File, Header, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from docray.engine.errors import BadInput, NotFound
from docray.engine.ingest.plan import SUPPORTED
from docray.serve_apps.errors import (Missing, ServeError, StageTimeout, TooLargeUpload,
                                      UnsupportedType, classify)
from docray.serve_apps.ingress import openai_compat
from docray.serve_apps.ingress.auth import Admission, KeyRing
from docray.serve_apps.ingress.web import web_routes
from docray.serve_apps.metrics import CONTENT_TYPE
from docray.serve_apps.protocol import (ChatRequest, DeleteResponse, DocumentStatus, ErrorBody,
                                        JobStatus, QueryRequest, QueryResponse)

log = logging.getLogger(__name__)
ERRORS = {c: {"model": ErrorBody} for c in (400, 401, 404, 413, 415, 422, 429, 502, 503,
                                                 504)}


def error_response(err: BaseException) -> JSONResponse:
    e = classify(err)
    if e.status >= 500 and not isinstance(err, ServeError):
        log.error("request failed: %s", err, exc_info=err)
    headers = {"Retry-After": str(e.retry_after)} if e.retry_after is not None else None
    body = ErrorBody(error=e.message if isinstance(e, ServeError) else str(e), field=e.field,
                     retryable=e.retryable)
    return JSONResponse(body.model_dump(), status_code=e.status, headers=headers)


def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    loc = [str(p) for p in first.get("loc", ()) if p != "body"]
    body = ErrorBody(error=f"{'.'.join(loc) or 'request'}: {first['msg']}",
                     field=".".join(loc) or None)
    return JSONResponse(body.model_dump(), status_code=422)


def _sse(event: str, data) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Starlette's own refusals (no route matches, e.g. a path with a newline; a method the
    route lacks) in the same ErrorBody as every other error."""
    body = ErrorBody(error=str(exc.detail), retryable=False)
    return JSONResponse(body.model_dump(), status_code=exc.status_code,
                        headers=getattr(exc, "headers", None))


def create_app(ctx) -> FastAPI:
    """``ctx``: an :class:`~docray.serve_apps.ingress.deployment.IngressContext`-like
    object with ``query`` (QueryService), ``documents``, ``keys``, ``admission``,
    ``limits``, ``metrics``, ``artifacts_root``."""
    app = FastAPI(title="docray", version="0.1.0", responses=ERRORS,
                  description="Multimodal document RAG on Ray Serve.")
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, lambda _r, e: error_response(e))
    app.add_exception_handler(ServeError, lambda _r, e: error_response(e))
    keys: KeyRing = ctx.keys
    admission: Admission = ctx.admission
    limits = ctx.limits

    def workspace(authorization: Optional[str] = Header(None),
                  x_api_key: Optional[str] = Header(None)) -> str:
        return keys.workspace(authorization, x_api_key)

    async def bounded(coro):
        try:
            return await asyncio.wait_for(coro, limits.request_timeout_s)
        except (asyncio.TimeoutError, TimeoutError):
            raise StageTimeout(f"request timed out after {limits.request_timeout_s:g}s") from None

    @app.get("/healthz")
    async def healthz():
        if admission.draining:  # load balancers stop sending; the stop is under way
            return JSONResponse({"status": "draining", "inflight": admission.busy},
                                status_code=503,
                                headers={"Retry-After": str(limits.retry_after_s)})
        return {"status": "ok", "inflight": admission.inflight}

    @app.get("/metrics", response_class=Response,
             responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text"}})
    async def metrics() -> Response:
        body = await asyncio.to_thread(ctx.metrics.render)
        return Response(body, media_type=CONTENT_TYPE)

    @app.post("/v1/query", response_model=QueryResponse, response_model_exclude_unset=True)
    async def query(req: QueryRequest, ws: str = Depends(workspace)):
        with admission.slot(), ctx.metrics.request_latency.labels("query").time():
            return await bounded(ctx.query.query(req.question, ws, req.doc, req.mode,
                                                 req.top_k))

    async def _guarded(events: AsyncIterator, render) -> AsyncIterator[str]:
        try:
            async for ev in events:
                yield render(ev)
        except Exception as err:  # noqa: BLE001 — the status line is gone; report in-band
            e = classify(err)
            yield _sse("error", ErrorBody(error=str(getattr(e, "message", e)), field=e.field,
                                          retryable=e.retryable).model_dump())
        finally:
            admission.release()

    def _stream(question: str, ws: str, doc, mode: str, top_k: int) -> AsyncIterator[dict]:
        return ctx.query.stream(question, ws, doc, mode, top_k)

    async def _first(events: AsyncIterator) -> AsyncIterator:
        """Pull the first event before answering 200, so early failures get a status."""
        it = events.__aiter__()
        first = await bounded(it.__anext__())

        async def rest():
            yield first
            async for ev in it:
                yield ev
        return rest()

    @app.post("/v1/query/stream", responses={200: {"content": {"text/event-stream": {}}}})
    async def query_stream(req: QueryRequest, ws: str = Depends(workspace)):
        admission.acquire()
        try:
            events = await _first(_stream(req.question, ws, req.doc, req.mode, req.top_k))
        except BaseException:
            admission.release()
            raise
        render = lambda ev: _sse("token", ev) if "token" in ev else _sse("evidence", ev)  # noqa
        return StreamingResponse(_guarded(events, render), media_type="text/event-stream")

    @app.post("/v1/chat/completions")
    async def chat(req: ChatRequest, ws: str = Depends(workspace)):
        question = openai_compat.question_of(req)
        if not req.stream:
            with admission.slot():
                result = await bounded(ctx.query.query(question, ws))
            return openai_compat.completion(req, result)
        admission.acquire()
        try:
            events = await _first(_stream(question, ws, None, "hybrid", 5))
        except BaseException:
            admission.release()
            raise
        chunks = openai_compat.stream_chunks(req, events)
        return StreamingResponse(_guarded(chunks, lambda s: s), media_type="text/event-stream")

    _document_routes(app, ctx, workspace)
    web_routes(app, ctx, workspace)
    return app


def _document_routes(app: FastAPI, ctx, workspace) -> None:
    limits, admission = ctx.limits, ctx.admission

    @app.post("/v1/documents", response_model=JobStatus, status_code=202)
    async def upload(files: list[UploadFile] = File(...), ws: str = Depends(workspace)):
        with admission.track():
            return await _upload(files, ws)

    async def _upload(files: list[UploadFile], ws: str):
        if len(files) > limits.max_files:
            raise BadInput("files", f"at most {limits.max_files} files per upload")
        cap = int(limits.max_upload_mb * (1 << 20))
        payload = []
        for f in files:
            name = f.filename or ""
            if Path(name).suffix.lower() not in SUPPORTED:
                raise UnsupportedType(f"{name!r}: type not supported; use one of "
                                      f"{', '.join(sorted(SUPPORTED))}", field="files")
            data = await f.read(cap + 1)
            if len(data) > cap:
                raise TooLargeUpload(f"{name!r} exceeds {limits.max_upload_mb:g} MB",
                                     field="files")
            if not data:
                raise BadInput("files", f"{name!r} is empty")
            payload.append((name, data))
        return await ctx.documents.submit(ws, payload)

    @app.get("/v1/documents", response_model=list[DocumentStatus])
    async def list_documents(ws: str = Depends(workspace)):
        rows = await asyncio.to_thread(ctx.query.catalog.list, ws)
        return [DocumentStatus(**{k: r.get(k) for k in DocumentStatus.model_fields}) for r in rows]

    @app.get("/v1/documents/{doc}", response_model=DocumentStatus)
    async def get_document(doc: str, ws: str = Depends(workspace)):
        row = await asyncio.to_thread(ctx.query.catalog.find, ws, doc)
        if row is None:
            raise Missing(f"no document {doc!r}", field="doc")
        return DocumentStatus(**{k: row.get(k) for k in DocumentStatus.model_fields})

    @app.delete("/v1/documents/{doc}", response_model=DeleteResponse)
    async def delete_document(doc: str, ws: str = Depends(workspace)):
        with admission.track():
            row = await asyncio.to_thread(ctx.query.catalog.find, ws, doc)
            if row is None or not await ctx.documents.delete(ws, row["doc_id"]):
                raise Missing(f"no document {doc!r}", field="doc")
        return DeleteResponse(doc_id=row["doc_id"], deleted=True)

    @app.get("/v1/jobs/{job_id}", response_model=JobStatus)
    async def get_job(job_id: str, ws: str = Depends(workspace)):
        job = await ctx.documents.job(ws, job_id)
        if job is None:
            raise Missing(f"no job {job_id!r}", field="job_id")
        return job

    @app.get("/v1/artifacts/{artifact_id:path}", response_class=FileResponse,
             responses={200: {"content": {"image/png": {}, "image/jpeg": {}}}})
    async def artifact(artifact_id: str, ws: str = Depends(workspace)):
        from docray.engine.index.artifacts import ArtifactStore, media_type

        if artifact_id.split("/", 1)[0] != ws:  # another workspace: indistinguishable from absent
            raise Missing(f"artifact {artifact_id!r} does not exist", field="artifact_id")
        store = ArtifactStore(ctx.artifacts_root, workspace=ws)
        try:
            path = await asyncio.to_thread(store.resolve, artifact_id)
        except NotFound:  # the same answer as another workspace's artifact gets
            raise Missing(f"artifact {artifact_id!r} does not exist",
                          field="artifact_id") from None
        return FileResponse(path, media_type=media_type(path.name))
