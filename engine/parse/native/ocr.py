"""rapidocr 3.x wrapper: one engine per process, loaded on first use.

The angle classifier is off (``Global.use_cls=False``): on document pages it flips
correct lines and garbles them. Detection runs on the page scaled to at most 1280 px on
the long side (``Det.limit_type=max``): 2-7x faster than the default (which upscales the
short side to 736 px and never shrinks), while recognition still reads full-resolution
crops.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

_lock = threading.Lock()
_engine = None
_threads = 0  # onnxruntime intra-op threads; 0 = its default (all cores)


def set_threads(n: int) -> None:
    """Threads for the OCR and layout engines created after this call (0 = all cores)."""
    global _threads
    _threads = max(0, int(n))


def onnx_threads() -> int:
    return _threads


@dataclass
class OcrLine:
    box: tuple[float, float, float, float]  # pixels, origin top-left
    text: str
    score: float


def _get_engine():
    global _engine
    with _lock:
        if _engine is None:
            from rapidocr import RapidOCR

            logging.getLogger("RapidOCR").setLevel(logging.WARNING)
            _engine = RapidOCR(params={"Global.use_cls": False, "Global.log_level": "warning",
                                       "Det.limit_type": "max", "Det.limit_side_len": 1280,
                                       "EngineConfig.onnxruntime.intra_op_num_threads":
                                           _threads or -1})
            log.info("rapidocr engine loaded")
        return _engine


def ocr_image(image, min_score: float = 0.5) -> list[OcrLine]:
    """OCR a PIL image (or an HxWx3 array); lines with axis-aligned pixel boxes."""
    import numpy as np

    arr = np.asarray(image.convert("RGB")) if hasattr(image, "convert") else image
    if arr.size == 0 or min(arr.shape[:2]) < 8:
        return []
    try:
        result = _get_engine()(arr)
    except Exception as err:  # noqa: BLE001 - OCR failure must not kill the document
        log.warning("OCR failed: %s", err)
        return []
    if result is None or result.boxes is None or result.txts is None:
        return []
    out = []
    for quad, text, score in zip(result.boxes, result.txts, result.scores):
        if not text or not text.strip() or float(score) < min_score:
            continue
        q = np.asarray(quad, dtype=float)
        out.append(OcrLine((float(q[:, 0].min()), float(q[:, 1].min()),
                            float(q[:, 0].max()), float(q[:, 1].max())), text.strip(), float(score)))
    return out
