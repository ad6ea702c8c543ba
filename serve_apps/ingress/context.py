"""Everything one ingress replica holds, built from config and a stages adapter."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from docray.engine.config import DocrayConfig
from docray.serve_apps.ingress.auth import Admission, KeyRing, RateLimiter
from docray.serve_apps.ingress.service import QueryService
from docray.serve_apps.metrics import Metrics
from docray.serve_apps.settings import Limits


@dataclass
class IngressContext:
    query: QueryService
    documents: Any
    keys: KeyRing
    admission: Admission
    limits: Limits
    metrics: Metrics
    artifacts_root: Path

    @classmethod
    def build(cls, cfg: DocrayConfig, limits: Limits, stages,
              replicas: Callable[[], dict[str, int]] | None = None,
              encoder=None) -> "IngressContext":
        metrics = Metrics(replicas)
        return cls(query=QueryService(cfg, stages, limits, metrics, encoder),
                   documents=stages.documents,
                   keys=KeyRing(cfg.serve.api_keys, cfg.paths.workspace,
                                RateLimiter(limits.rate_per_key, limits.rate_burst)),
                   admission=Admission(limits.max_inflight, limits.retry_after_s, metrics),
                   limits=limits, metrics=metrics,
                   artifacts_root=Path(cfg.paths.data_dir) / "artifacts")
