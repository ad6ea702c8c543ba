"""ColPali / ColQwen2.5 page encoder via colpali-engine, from a local model dir (GPU profile).

Import-safe: colpali-engine and torch load only when the class is constructed; a missing
package or model dir raises :class:`~docray.engine.errors.Unavailable` saying what to install
or configure. The model family comes from the checkpoint's ``config.json`` ``model_type``
(as transformers' Auto classes choose), not from its name: ``paligemma`` → ColPali,
``qwen2_5_vl`` → ColQwen2.5, ``qwen2_vl`` → ColQwen2. colpali-engine's modules are imported
through :mod:`docray.kernels.maxsim.colpali_compat` (its package ``__init__`` needs
torchvision; ColPali's processor does not, ColQwen's image processor does).

A page's multi-vector is every token the model returns under the attention mask (the image
patches plus the prompt tokens: 1024 + 6 for ColPali at 448 px), capped at
``embed.page.max_tokens``. Page images come from the artifact store (``Page.render_id``).
"""
from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from docray.engine.config import PageEncoderConfig
from docray.engine.embed.attention import attn_implementation
from docray.engine.embed.base import PageInput, pack_pages
from docray.engine.errors import BadInput, ConfigError, Unavailable

if TYPE_CHECKING:
    from docray.engine.index.artifacts import ArtifactStore
    from docray.engine.model import Document

log = logging.getLogger(__name__)

# config.json model_type -> (colpali-engine module, model class, processor class)
FAMILIES = {
    "paligemma": ("colpali_engine.models.paligemma.colpali", "ColPali", "ColPaliProcessor"),
    "qwen2_5_vl": ("colpali_engine.models.qwen2_5.colqwen2_5", "ColQwen2_5",
                   "ColQwen2_5_Processor"),
    "qwen2_vl": ("colpali_engine.models.qwen2.colqwen2", "ColQwen2", "ColQwen2Processor"),
}


def model_type(model_dir: Path) -> str:
    """The checkpoint's ``model_type`` (a LoRA adapter dir: its base model's)."""
    cfg = model_dir / "config.json"
    if cfg.is_file():
        return str(json.loads(cfg.read_text()).get("model_type", ""))
    adapter = model_dir / "adapter_config.json"
    if adapter.is_file():
        base = str(json.loads(adapter.read_text()).get("base_model_name_or_path", "")).lower()
        return "qwen2_5_vl" if "qwen2.5" in base or "qwen2_5" in base else "paligemma"
    raise Unavailable(f"embed.page.model_dir={model_dir} has no config.json: not a checkpoint")


def load_classes(model_dir: Path):
    """(model class, processor class) for the checkpoint's family."""
    from docray.kernels.maxsim.colpali_compat import import_module

    kind = model_type(model_dir)
    if kind not in FAMILIES:
        raise ConfigError(f"embed.page.model_dir={model_dir}: model_type {kind!r} is not a "
                          f"ColPali family; known: {', '.join(sorted(FAMILIES))}")
    module, model_cls, proc_cls = FAMILIES[kind]
    try:
        mod = import_module(module)
    except ImportError as err:
        raise Unavailable(f"embed.page.backend='colpali' ({kind}) cannot import {module}: "
                          f"{err}; install colpali-engine (and torchvision for ColQwen)") from err
    if mod is None:
        raise Unavailable("embed.page.backend='colpali' needs colpali-engine: "
                          "pip install --no-deps colpali-engine==0.3.18")
    return getattr(mod, model_cls), getattr(mod, proc_cls)


def _tie_meta_head(model, model_dir: Path) -> None:
    """Checkpoints omit the LM head that ties to the token embeddings, and ColPali's
    ``tie_weights`` reaches only the inner language model, so the head stays on the meta
    device (``.to(device)`` then fails). Tie it here; any other missing weight is an error."""
    meta = [n for n, p in model.named_parameters() if p.is_meta]
    for name in meta:
        if not name.endswith("lm_head.weight"):
            raise Unavailable(f"embed.page.model_dir={model_dir}: weights missing from the "
                              f"checkpoint: {', '.join(meta)}")
        owner = model.get_submodule(name.rsplit(".", 1)[0])
        owner.weight = model.get_input_embeddings().weight


def _device(config: PageEncoderConfig) -> str:
    import torch

    if config.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return config.device


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

        model_cls, proc_cls = load_classes(Path(model_dir))
        self.device = _device(config)
        dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        attn = attn_implementation(self.device, str(dtype).removeprefix("torch."))
        model = model_cls.from_pretrained(str(model_dir), dtype=dtype, local_files_only=True,
                                          attn_implementation=attn)
        _tie_meta_head(model, Path(model_dir))
        self.model = model.to(self.device).eval()
        self.processor = proc_cls.from_pretrained(str(model_dir), local_files_only=True)
        self.dim = int(getattr(self.model, "dim", config.dim))
        if self.dim != config.dim:
            raise ConfigError(f"embed.page.dim={config.dim} but the model at {model_dir} "
                              f"returns {self.dim}-d vectors; set embed.page.dim: {self.dim}")
        self.name = f"colpali:{Path(model_dir).name}"
        log.info("page encoder %s (%s) on %s", self.name, model_cls.__name__, self.device)

    def _run(self, batch) -> list[np.ndarray]:
        import torch

        batch = batch.to(self.device)
        batch.pop("labels", None)  # the processor's training labels: no loss at inference
        with torch.inference_mode():
            out = self.model(**batch)  # (b, n_tok, dim)
        mask = batch["attention_mask"].bool().cpu().numpy()  # (b, n_tok)
        arr = out.float().cpu().numpy()  # (b, n_tok, dim)
        return [arr[i][mask[i]].astype(np.float32) for i in range(len(arr))]  # [(n_i, dim)]

    def encode_pages(self, pages: list[PageInput]) -> list[np.ndarray]:
        """One (n_tok, dim) matrix per page image, capped at ``max_tokens``."""
        if any(p.image is None for p in pages):
            raise BadInput("pages", "the colpali page encoder needs a rendered image per page")
        out: list[np.ndarray] = []
        step = self.config.batch_size
        for s in range(0, len(pages), step):
            images = [p.image.convert("RGB") for p in pages[s:s + step]]
            out.extend(m[: self.config.max_tokens] for m in
                       self._run(self.processor.process_images(images)))
        return out

    def encode_queries(self, texts: list[str]) -> list[np.ndarray]:
        """One (n_q_tok, dim) matrix per query (with colpali-engine's augmentation tokens)."""
        out: list[np.ndarray] = []
        step = self.config.batch_size
        for s in range(0, len(texts), step):
            out.extend(self._run(self.processor.process_queries(list(texts[s:s + step]))))
        return out

    def encode_document(self, doc: "Document", artifacts: "ArtifactStore | None" = None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from PIL import Image

        artifacts = artifacts or self.artifacts
        if artifacts is None:
            raise Unavailable("the colpali page encoder needs the artifact store for renders")
        missing = [p.page for p in doc.pages if not p.render_id]
        if missing:
            raise BadInput(doc.filename, f"pages {missing} have no render")
        mats: list[np.ndarray] = []
        step = self.config.batch_size
        for s in range(0, len(doc.pages), step):  # a batch of renders in memory at a time
            batch = [PageInput(doc.doc_id, p.page, p.text,
                               Image.open(io.BytesIO(artifacts.read(p.render_id))))
                     for p in doc.pages[s:s + step]]
            mats.extend(self.encode_pages(batch))
        return pack_pages([p.page for p in doc.pages], mats, self.dim)
