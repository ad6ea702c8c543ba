"""rapid-layout wrapper (its bundled PP-Layout CDLA model): one engine per process, lazy.

Labels: text, title, figure, figure_caption, table, table_caption, header, footer,
reference, equation.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

_lock = threading.Lock()
_engine = None


@dataclass
class Region:
    label: str
    box: tuple[float, float, float, float]  # pixels, origin top-left
    score: float


def _get_engine():
    global _engine
    with _lock:
        if _engine is None:
            from rapid_layout import RapidLayout

            logging.disable(logging.INFO)  # its loggers set themselves to INFO on creation
            try:
                from docray.engine.parse.native.ocr import onnx_threads

                threads = onnx_threads()
                _engine = (RapidLayout(engine_cfg={"intra_op_num_threads": threads})
                           if threads else RapidLayout())
            finally:
                logging.disable(logging.NOTSET)
            log.info("rapid-layout engine loaded")
        return _engine


def detect(image, min_score: float = 0.4) -> list[Region]:
    """Layout regions of a PIL page image; an empty list if the model fails."""
    import numpy as np

    arr = np.asarray(image.convert("RGB"))
    try:
        res = _get_engine()(arr)
    except Exception as err:  # noqa: BLE001 - layout is an aid, never fatal
        log.warning("layout detection failed: %s", err)
        return []
    if res is None or res.boxes is None:
        return []
    return [Region(str(label), tuple(float(v) for v in box), float(score))
            for box, label, score in zip(res.boxes, res.class_names, res.scores)
            if float(score) >= min_score]
