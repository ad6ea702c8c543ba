"""Describers: retrieval proxies for tables, figures and equations.

Backends (``describe.backend``): ``structural`` (deterministic, default) and ``vlm``
(an OpenAI-compatible vision-language server). Pick one with :func:`get_describer`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from docray.engine.config import DescribeConfig
from docray.engine.describe.base import Describer

if TYPE_CHECKING:
    from docray.engine.index.artifacts import ArtifactStore

__all__ = ["Describer", "get_describer"]


def get_describer(config: DescribeConfig, artifacts: "ArtifactStore | None" = None) -> Describer:
    """The describer named by ``config.backend``; ``artifacts`` feeds crops to the VLM."""
    from docray.engine.registry import DESCRIBERS

    cls = DESCRIBERS.resolve(config.backend)
    if config.backend == "structural":
        return cls(config)
    return cls(config, artifacts=artifacts)
