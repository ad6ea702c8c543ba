"""ColPali / ColQwen2.5 page encoder via colpali-engine, from a local model dir (GPU profile).

Import-safe: colpali-engine and torch models load only when the class is constructed; a
missing package or model dir raises :class:`~docray.engine.errors.Unavailable` saying what
to install or configure. Page images come from the artifact store (``Page.render_id``).
"""
from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from docray.engine.config import PageEncoderConfig
from docray.engine.embed.base import PageInput, pack_pages
from docray.engine.errors import BadInput, Unavailable

if TYPE_CHECKING:
    from docray.engine.index.artifacts import ArtifactStore
    from docray.engine.model import Document

log = logging.getLogger(__name__)
BATCH = 4


def _classes(model_dir: Path):
    """(model class, processor class) for the checkpoint's architecture."""
    try:
        from colpali_engine import models
    except ImportError as err:
        raise Unavailable("embed.page.backend='colpali' needs colpali-engine: "
                          "pip install 'docray[gpu]'") from err
    arch = ""
    for name in ("config.json", "adapter_config.json"):
        if (model_dir / name).is_file():
            arch += json.dumps(json.loads((model_dir / name).read_text()))
    if "qwen2_5" in arch.lower() or "qwen2.5" in arch.lower():
        return models.ColQwen2_5, models.ColQwen2_5_Processor
    return models.ColPali, models.ColPaliProcessor


class ColPaliPageEncoder:
    """:class:`~docray.engine.embed.PageEncoder` over rendered page images."""

    name: str = "colpali"
    dim: int = 128

    def __init__(self, config: PageEncoderConfig, text_encoder=None,
                 artifacts: "ArtifactStore | None" = None):
        self.config, self.artifacts = config, artifacts
        model_dir = config.model_dir
        if model_dir is None or not Path(model_dir).is_dir():
            raise Unavailable(f"embed.page.model_dir={model_dir!s} is not a local ColPali model "
                              "directory; download one and point the config at it")
        import torch

        model_cls, proc_cls = _classes(Path(model_dir))
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = torch.bfloat16 if self.device == "cuda" else torch.float32
        self.model = model_cls.from_pretrained(str(model_dir), torch_dtype=dtype,
                                               device_map=self.device, local_files_only=True).eval()
        self.processor = proc_cls.from_pretrained(str(model_dir), local_files_only=True)
        self.dim = int(getattr(self.model, "dim", config.dim))
        self.name = f"colpali:{Path(model_dir).name}"

    def _run(self, batch) -> list[np.ndarray]:
        import torch

        batch = batch.to(self.device)
        with torch.inference_mode():
            out = self.model(**batch)  # (b, n_tok, dim)
        mask = batch["attention_mask"].bool().cpu().numpy()  # (b, n_tok)
        arr = out.float().cpu().numpy()
        return [arr[i][mask[i]].astype(np.float32) for i in range(len(arr))]  # [(n_i, dim)]

    def encode_pages(self, pages: list[PageInput]) -> list[np.ndarray]:
        if any(p.image is None for p in pages):
            raise BadInput("pages", "the colpali page encoder needs a rendered image per page")
        out: list[np.ndarray] = []
        for s in range(0, len(pages), BATCH):
            images = [p.image.convert("RGB") for p in pages[s:s + BATCH]]
            out.extend(m[: self.config.max_tokens] for m in
                       self._run(self.processor.process_images(images)))
        return out

    def encode_queries(self, texts: list[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for s in range(0, len(texts), BATCH):
            out.extend(self._run(self.processor.process_queries(list(texts[s:s + BATCH]))))
        return out

    def encode_document(self, doc: "Document", artifacts: "ArtifactStore | None" = None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from PIL import Image

        artifacts = artifacts or self.artifacts
        if artifacts is None:
            raise Unavailable("the colpali page encoder needs the artifact store for renders")
        pages = []
        for p in doc.pages:
            if not p.render_id:
                raise BadInput(doc.filename, f"page {p.page} has no render")
            image = Image.open(io.BytesIO(artifacts.read(p.render_id)))
            pages.append(PageInput(doc.doc_id, p.page, p.text, image))
        return pack_pages([p.page for p in pages], self.encode_pages(pages), self.dim)
