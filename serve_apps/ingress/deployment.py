"""Serve glue for the ingress: FastAPI built at replica start over DeploymentHandles."""
from __future__ import annotations

from functools import partial

from ray import serve

from docray.engine.config import DocrayConfig
from docray.engine.heap import settle_heap
from docray.serve_apps.settings import Limits


@serve.deployment(name="Ingress")
@serve.ingress()
class Ingress:
    def __init__(self, cfg_json: str, limits_json: str, app_name: str, graph, dense, pages,
                 rerank, synthesis, documents):
        from docray.serve_apps.ingress.context import IngressContext
        from docray.serve_apps.ingress.stages import HandleStages
        from docray.serve_apps.metrics import serve_replicas

        cfg = DocrayConfig.model_validate_json(cfg_json)
        limits = Limits.model_validate_json(limits_json)
        stages = HandleStages(graph, dense, pages, rerank, synthesis, documents,
                              retry_after=limits.retry_after_s)
        self.ctx = IngressContext.build(cfg, limits, stages, partial(serve_replicas, app_name))
        self.drain = _watch_drain(app_name, self.ctx.admission)
        settle_heap("Ingress")

    def __serve_build_asgi_app__(self):
        from docray.serve_apps.ingress.app import create_app

        return create_app(self.ctx)


def _watch_drain(app_name: str, admission):
    """Refuse new work once ``docray serve`` starts a graceful stop (serve_apps/drain.py)."""
    from docray.serve_apps.drain import DrainWatch

    replica = serve.get_replica_context().replica_id.unique_id
    return DrainWatch(app_name, replica, lambda: admission.busy,
                      on_drain=lambda: setattr(admission, "draining", True))
