"""A page as a person sees it: its stored render and the boxes of every unit on it.

Renders are the parse stage's ``page-NNNN.jpg`` artifacts (``.png`` in stores written before
renders were JPEG; ``parse.dpi``); unit boxes are
page-relative (0..1, origin top-left), so a box in pixels is ``bbox * (width, height)`` of
the render whatever its resolution. Everything is read within one workspace: another
workspace's document is reported exactly as an absent one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from docray.engine.errors import NotFound
from docray.engine.index.artifacts import render_name
from docray.serve_apps.errors import Missing

MAX_UNIT_TEXT = 300


class PageViews:
    def __init__(self, catalog, content, artifacts_root: Path, dpi: int):
        self.catalog, self.content, self.root, self.dpi = catalog, content, artifacts_root, dpi

    def _render(self, ws: str, doc_id: str, page: int) -> tuple[str | None, int, int]:
        """(artifact id, width px, height px) of the page render; (None, 0, 0) if none."""
        from PIL import Image

        from docray.engine.index.artifacts import ArtifactStore

        store = ArtifactStore(self.root, workspace=ws)
        for name in (render_name(page), render_name(page).replace(".jpg", ".png")):
            aid = store.make_id(doc_id, name)
            try:
                path = store.resolve(aid)
            except NotFound:
                continue
            with Image.open(path) as image:  # reads the header only
                return aid, image.width, image.height
        return None, 0, 0

    def view(self, ws: str, doc: str, page: int) -> dict[str, Any]:
        row = self.catalog.find(ws, doc)
        if row is None:
            raise Missing(f"no document {doc!r}", field="doc")
        n_pages = int(row.get("n_pages") or 0)
        if not 1 <= page <= n_pages:
            raise Missing(f"document {doc!r} has {n_pages} pages; there is no page {page}",
                          field="page")
        doc_id = row["doc_id"]
        aid, width, height = self._render(ws, doc_id, page)
        units = [{"unit_id": u.unit_id, "modality": u.modality, "bbox": u.bbox,
                  "text": u.display_text()[:MAX_UNIT_TEXT]}
                 for u in self.content.page_units(ws, doc_id, page)]
        return {"doc_id": doc_id, "filename": row["filename"], "page": page, "n_pages": n_pages,
                "artifact_id": aid, "image_url": f"/v1/artifacts/{aid}" if aid else None,
                "width": width, "height": height, "dpi": self.dpi,
                "page_width_pt": round(width * 72.0 / self.dpi, 2),
                "page_height_pt": round(height * 72.0 / self.dpi, 2), "units": units}
