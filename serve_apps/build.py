"""``build_app(config) -> Application``: the query path as composed Serve deployments.

Ingress (FastAPI) holds handles to GraphWalk, DenseSearch, PageRetrieval (called
concurrently), Rerank, Synthesis and Documents; each gets its replicas, resources and
queue bounds from a ``configs/serve/*.yaml`` (:class:`ServeSettings`).

Overload is refused in two places, both with 503 + Retry-After: the ingress admits at most
``limits.max_inflight`` queries; past the ingress replica's own bound
(``max_ongoing_requests`` + ``max_queued_requests``) the Serve proxy refuses requests
without handing them to the replica at all, which keeps refusals fast when the replica's
event loop is busy.
"""
from __future__ import annotations

from ray.serve import Application

from docray.engine.config import DocrayConfig
from docray.serve_apps.settings import ServeSettings

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
        if stage == "ingress":  # the proxy's own 503s, past the ingress queue, also say when
            from ray.serve.config import BackpressureConfig

            opts["backpressure_config"] = BackpressureConfig(
                retry_after_s=settings.limits.retry_after_s or None)
        return dep.options(**opts).bind(*args)

    return bind(Ingress, "ingress", cfg_json, settings.limits.model_dump_json(), app_name,
                bind(GraphWalk, "graph", cfg_json), bind(DenseSearch, "dense", cfg_json),
                bind(PageRetrieval, "pages", cfg_json), bind(Rerank, "rerank", cfg_json),
                bind(Synthesis, "synthesis", cfg_json), bind(Documents, "documents", cfg_json))
