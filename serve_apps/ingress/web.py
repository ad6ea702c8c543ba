"""The web page for people and the two routes only it needs.

``/`` is ``web/index.html``; ``/ui/*`` its scripts and styles (plain files, no build
step, nothing fetched from elsewhere). The page calls the same JSON API with the same
keys; it adds a page view (``/v1/documents/{doc}/pages/{page}``: render + unit boxes) and
the graph around units (``/v1/graph?unit=…``).
"""
from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi import Depends, FastAPI, Path as PathParam, Query
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from docray.serve_apps.ingress.pages import PageViews
from docray.serve_apps.protocol import GraphView, PageView

WEB = Path(__file__).with_name("web")
MAX_GRAPH_UNITS = 10


def web_routes(app: FastAPI, ctx, workspace) -> None:
    app.mount("/ui", StaticFiles(directory=WEB), name="ui")
    pages = PageViews(ctx.query.catalog, ctx.query.fuser.content, ctx.artifacts_root,
                      ctx.query.cfg.parse.dpi)

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(WEB / "index.html", media_type="text/html")

    @app.get("/v1/documents/{doc}/pages/{page}", response_model=PageView)
    async def page_view(doc: str, page: int = PathParam(..., ge=1, le=100_000),
                        ws: str = Depends(workspace)):
        return await asyncio.to_thread(pages.view, ws, doc, page)

    @app.get("/v1/graph", response_model=GraphView)
    async def graph(unit: list[str] = Query(..., min_length=1, max_length=MAX_GRAPH_UNITS,
                                            description="Unit ids (evidence `unit_id`)."),
                    hops: int = Query(1, ge=0, le=3),
                    limit: int = Query(40, ge=1, le=200, description="At most this many nodes."),
                    ws: str = Depends(workspace)):
        with ctx.admission.slot():
            return await ctx.query.neighbourhood(unit, ws, hops, limit)
