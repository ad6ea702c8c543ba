"""MinerU 4 backend (``parse.backend: mineru``; ``make setup`` installs it in ``.venv-mineru``).

MinerU runs in a child process (:mod:`.mineru_worker`, under ``parse.mineru_python`` or this
interpreter) at the configured tier: ``flash`` reads the text layer (ONNX OCR where a page
has none) offline; ``basic``/``standard``/``advanced`` need MinerU's local models. Its
Content List V1 is imported through :mod:`.content_list`, so MinerU output becomes ordinary
docray units; its figure/table crops go to the artifact store, and every page is rendered
at ``parse.dpi`` like the native parser does (page images for ColPali and the answerer).

Why a child process: MinerU 4.0.12 pins ``openai<3`` and ``pillow<13`` (through gradio),
which would move packages the main environment's vLLM and answerer use, so here it lives in
its own virtual environment; a child process is also where its worker pool and logging
stay out of a Ray worker.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from docray.engine.errors import BadInput, Unavailable
from docray.engine.index.artifacts import render_name
from docray.engine.model import Document, Unit, file_doc_id
from docray.engine.parse.content_list import load_content_list

log = logging.getLogger(__name__)
WORKER = Path(__file__).with_name("mineru_worker.py")
OCR_MODES = {"auto": "auto", "always": "ocr", "never": "txt"}


def run_mineru(path: Path, out: Path, config: Any) -> dict[str, Any]:
    """Run the worker on ``path`` into ``out``; returns its summary line."""
    python = str(config.mineru_python or sys.executable)
    cmd = [python, str(WORKER), str(path), str(out), config.mineru_tier, OCR_MODES[config.ocr]]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                              timeout=config.mineru_timeout_s)
    except FileNotFoundError:
        raise Unavailable(f"parse.mineru_python={python} does not exist; run `make setup` "
                          "(it builds .venv-mineru) or pip install mineru==4.0.12") from None
    except subprocess.TimeoutExpired:
        raise BadInput(str(path), f"MinerU took longer than {config.mineru_timeout_s:g}s "
                       "(parse.mineru_timeout_s)") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        if "No module named 'mineru'" in proc.stderr:
            raise Unavailable(f"parse.backend=mineru: {python} has no MinerU; "
                              "pip install mineru==4.0.12 or set parse.mineru_python")
        raise BadInput(str(path), f"MinerU {config.mineru_tier} failed: {tail[0]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


class MinerUParser:
    name = "mineru"

    def __init__(self, config: Any, artifacts: Any = None):
        self.config, self.artifacts = config, artifacts

    def parse(self, path: Path, doc_id: str | None = None) -> Document:
        from docray.engine.parse.native.pdf import check_file, open_pdf

        path = Path(path)
        if not path.is_file():
            raise BadInput(str(path), "file does not exist")
        check_file(path, self.config)
        pdf = open_pdf(path, self.config)  # validates (encrypted, page limit) before MinerU
        doc_id = doc_id or file_doc_id(path)
        try:
            with tempfile.TemporaryDirectory(prefix="docray-mineru-") as tmp:
                run_mineru(path, Path(tmp), self.config)
                doc = load_content_list(Path(tmp) / "content_list.json", doc_id)
                units = [self._store_crop(u, Path(tmp)) for u in doc.units]
            pages = self._pages(pdf, doc_id, units)
        finally:
            pdf.close()
        log.info("mineru (%s) parsed %s: %d pages, %d units", self.config.mineru_tier,
                 path.name, len(pages), len(units))
        return doc.model_copy(update={"source": str(path), "filename": path.name,
                                      "n_pages": len(pages), "pages": pages, "units": units,
                                      "meta": {"parser": f"mineru-{self.config.mineru_tier}"}})

    def _store_crop(self, unit: Unit, root: Path) -> Unit:
        """MinerU's crop (``images/...``) → an artifact id of the store (or none)."""
        if not unit.artifact_id:
            return unit
        src = (root / unit.artifact_id).resolve()
        if self.artifacts is None or not src.is_file() or not src.is_relative_to(root.resolve()):
            return unit.model_copy(update={"artifact_id": None})
        name = f"mineru-{unit.modality}-{unit.order:05d}{src.suffix.lower() or '.jpg'}"
        aid = self.artifacts.put_bytes(unit.doc_id, name, src.read_bytes())
        return unit.model_copy(update={"artifact_id": aid})

    def _pages(self, pdf, doc_id: str, units: list[Unit]):
        """Every page of the PDF with its size, rendered at ``parse.dpi`` into the store."""
        from docray.engine.model import Page
        from docray.engine.parse.native.pdf import render

        pages, with_units = [], {u.page for u in units}
        for i in range(len(pdf)):
            page = pdf[i]
            w, h = page.get_size()
            rec = Page(doc_id=doc_id, page=i + 1, width=w, height=h,
                       skip_reason=None if i + 1 in with_units else "MinerU found no content")
            if self.artifacts is not None:
                rec.render_id = self.artifacts.put_image(doc_id, render_name(i + 1),
                                                         render(page, self.config.dpi))
            pages.append(rec)
            page.close()
        return pages
