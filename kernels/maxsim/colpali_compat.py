"""Load colpali-engine's scorer (``score_multi_vector``) for comparison tests and benchmarks.

``import colpali_engine`` runs its package ``__init__``, which imports every model and through
transformers' Qwen2-VL image processor pulls in torchvision. PyPI's torchvision does not load
beside the CPU torch 2.13.0 build ("operator torchvision::nms does not exist"), and installing
it would also try to move torch. So colpali-engine is installed with
``pip install --no-deps colpali-engine`` (its scorer needs only torch, PIL and transformers,
all present) and the scorer module is imported *without* running the package ``__init__``:
empty stand-in package modules whose ``__path__`` points at the real folders are placed in
``sys.modules`` first, so ``colpali_engine.utils.processing_utils`` and its sibling imports
(``utils.maxsim``, ``utils.torch_utils``) load from disk while ``colpali_engine/__init__.py``
and ``colpali_engine/models`` are never executed. Nothing in torchvision is stubbed.

Only tests and ``benchmarks/maxsim.py`` use this; it is never on a serving path.
"""
from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys
import types
from typing import Callable, Optional


def load_score_multi_vector() -> Optional[Callable]:
    """``BaseVisualRetrieverProcessor.score_multi_vector`` or None when colpali-engine is absent."""
    if "colpali_engine.utils.processing_utils" in sys.modules:
        mod = sys.modules["colpali_engine.utils.processing_utils"]
        return mod.BaseVisualRetrieverProcessor.score_multi_vector
    spec = importlib.util.find_spec("colpali_engine")  # locates the package, runs nothing
    if spec is None or spec.origin is None:
        return None
    root = pathlib.Path(spec.origin).parent
    for name, folder in (("colpali_engine", root), ("colpali_engine.utils", root / "utils")):
        if name not in sys.modules:
            shell = types.ModuleType(name)
            shell.__path__ = [str(folder)]  # a package whose __init__ is skipped
            sys.modules[name] = shell
    mod = importlib.import_module("colpali_engine.utils.processing_utils")
    return mod.BaseVisualRetrieverProcessor.score_multi_vector
