"""``build_app(config) -> Application``: the query path as composed Serve deployments.

Ingress (FastAPI) holds handles to GraphWalk, DenseSearch, PageRetrieval (called
concurrently), Rerank, Synthesis and Documents; each gets its replicas, resources and
queue bounds from a ``configs/serve/*.yaml`` (:class:`ServeSettings`).

Overload is refused in two places, both with 503 + Retry-After: the ingress admits at most
``limits.max_inflight`` queries; past the ingress replica's own bound
(``max_ongoing_requests`` + ``max_queued_requests``) Serve refuses requests before they
reach docray's code: the Serve proxy, or with direct ingress (``docray serve``, see
:func:`~docray.serve_apps.runner.ray_serve_env`) the replica's own HTTP server.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from ray.serve import Application

from docray.engine.config import DocrayConfig, load_config
from docray.engine.errors import ConfigError
from docray.serve_apps.settings import ServeSettings, load_serve_settings

APP_NAME = "docray"


def build_app(cfg: DocrayConfig, settings: ServeSettings | None = None,
              app_name: str = APP_NAME) -> Application:
    """``cfg.milvus.uri`` must be a server URI when more than one process uses Milvus
    (see :mod:`docray.serve_apps.milvus_server`)."""
    from docray.serve_apps.documents.deployment import Documents
    from docray.serve_apps.ingress.deployment import Ingress
    from docray.serve_apps.rerank.deployment import Rerank
    from docray.serve_apps.retrieval.deployment import DenseSearch, GraphWalk, PageRetrieval
    from docray.serve_apps.synthesis.deployment import Synthesis

    settings = settings or ServeSettings()
    cfg_json = cfg.model_dump_json()

    def bind(dep, stage: str, *args):
        opts = settings.stage(stage).deployment_options(stage)
        if stage == "ingress":  # Serve's own 503s, past the ingress queue, also say when
            from ray.serve.config import BackpressureConfig

            opts["backpressure_config"] = BackpressureConfig(
                retry_after_s=settings.limits.retry_after_s or None)
        return dep.options(**opts).bind(*args)

    if cfg.synthesize.answerer == "vllm":  # the stage hosts the engine (ray.serve.llm)
        from docray.serve_apps.synthesis.llm import build_synthesis

        synthesis = build_synthesis(cfg, settings)
    else:
        synthesis = bind(Synthesis, "synthesis", cfg_json)
    return bind(Ingress, "ingress", cfg_json, settings.limits.model_dump_json(), app_name,
                bind(GraphWalk, "graph", cfg_json), bind(DenseSearch, "dense", cfg_json),
                bind(PageRetrieval, "pages", cfg_json), bind(Rerank, "rerank", cfg_json),
                synthesis, bind(Documents, "documents", cfg_json))


class AppArgs(BaseModel):
    """``args`` of a Serve config's application (KubeRay ``serveConfigV2``, ``serve run``)."""
    model_config = ConfigDict(extra="forbid")
    config: str | None = Field(None, description="DocrayConfig YAML (default: DOCRAY_CONFIG).")
    serve_config: str | None = Field(None, description="configs/serve/*.yaml (default: the "
                                     "config's serve.config_file).")


def _resolve(path: Path, config: str | None) -> Path:
    """A relative serve config as the CLI finds it (from the working directory), else from
    the folder above the config's ``configs/`` (Serve builds apps in a Ray worker whose
    working directory is not the image's)."""
    if path.is_absolute() or path.exists() or config is None:
        return path
    root = Path(config).resolve().parent
    root = root.parent if root.name == "configs" else root
    return root / path


def app_builder(args: Mapping[str, Any]) -> Application:
    """Serve application builder (``import_path: docray.serve_apps.build:app_builder``).

    The app runs on a cluster that docray does not start, so Milvus must be a server URI:
    a milvus-lite file cannot be opened by replicas on several nodes."""
    from docray.serve_apps.milvus_server import is_file_uri

    try:
        a = AppArgs.model_validate(dict(args or {}))
    except ValidationError as err:
        raise ConfigError("invalid application args: " + "; ".join(
            f"{'.'.join(map(str, e['loc']))}={e.get('input')!r}: {e['msg']}"
            for e in err.errors())) from None
    cfg = load_config(a.config)
    if is_file_uri(cfg.milvus.uri):
        raise ConfigError(f"milvus.uri={cfg.milvus.uri!r}: a Serve application on a Ray cluster "
                          "needs a Milvus server URI (http://host:19530), not a milvus-lite file")
    serve_config = _resolve(Path(a.serve_config or cfg.serve.config_file), a.config)
    return build_app(cfg, load_serve_settings(serve_config))
