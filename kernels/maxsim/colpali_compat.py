"""Load colpali-engine modules without its package ``__init__`` (scorer, models, processors).

``import colpali_engine`` runs its package ``__init__``, which imports every model family and
through transformers' Qwen2-VL video processor pulls in torchvision. PyPI's torchvision does
not load beside the CPU torch 2.13.0 build ("operator torchvision::nms does not exist"), and
installing it would also try to move torch. So colpali-engine is installed with
``pip install --no-deps colpali-engine`` (what its scorer, ColPali and ColQwen2.5 need — torch,
PIL, transformers — is present; peft and torchvision are not) and its modules are imported
*without* running the package ``__init__`` files above them: empty stand-in package modules
whose ``__path__`` points at the real folders are placed in ``sys.modules`` first, so e.g.
``colpali_engine.models.paligemma.colpali`` loads from disk while ``colpali_engine/__init__.py``,
``colpali_engine/models/__init__.py`` and ``.../paligemma/__init__.py`` are never executed.
Nothing in torchvision is stubbed. Where colpali-engine was already imported whole (a GPU
host with torchvision), the real packages are used as they are.

Users: :mod:`docray.engine.embed.colpali` (the page encoder), the MaxSim agreement tests and
``benchmarks/maxsim.py``.
"""
from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys
import types
from typing import Callable, Optional


def _root() -> Optional[pathlib.Path]:
    loaded = sys.modules.get("colpali_engine")  # a stand-in from an earlier call, or the real one
    if loaded is not None:
        return pathlib.Path(list(loaded.__path__)[0])
    spec = importlib.util.find_spec("colpali_engine")  # locates the package, runs nothing
    if spec is None or spec.origin is None:
        return None
    return pathlib.Path(spec.origin).parent


def import_module(name: str) -> Optional[types.ModuleType]:
    """``colpali_engine.<...>`` module ``name`` with the package ``__init__`` files above it
    skipped (its own ``__init__`` runs when it is a package); None when colpali-engine is absent.
    """
    if name in sys.modules:
        return sys.modules[name]
    root = _root()
    if root is None:
        return None
    parts = name.split(".")
    if parts[0] != "colpali_engine":
        raise ValueError(f"{name!r} is not a colpali_engine module")
    for depth in range(1, len(parts)):
        pkg = ".".join(parts[:depth])
        if pkg not in sys.modules:
            shell = types.ModuleType(pkg)
            shell.__path__ = [str(root.joinpath(*parts[1:depth]))]  # __init__ skipped
            sys.modules[pkg] = shell
    return importlib.import_module(name)


def load_score_multi_vector() -> Optional[Callable]:
    """``BaseVisualRetrieverProcessor.score_multi_vector`` or None when colpali-engine is absent."""
    mod = import_module("colpali_engine.utils.processing_utils")
    return None if mod is None else mod.BaseVisualRetrieverProcessor.score_multi_vector
