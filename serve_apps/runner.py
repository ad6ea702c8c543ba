"""Start and stop the whole app: milvus-lite server (when needed), Ray, Serve.

Used by ``docray serve``, the tests and the load benchmark.
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Callable

from docray.engine.config import DocrayConfig
from docray.serve_apps.build import APP_NAME, build_app
from docray.serve_apps.milvus_server import MilvusLiteServer, shared_milvus
from docray.serve_apps.settings import ServeSettings

log = logging.getLogger(__name__)


def ray_serve_env(settings: ServeSettings) -> dict[str, str]:
    """Environment a local Ray cluster must start with for these settings (Serve reads it
    in every process it starts). 8 users on 2 cores, alternating runs of 75 s: p95 396 and
    383 ms with throughput-optimized against 483 and 468 ms without; Serve CPU per request
    167-171 against 192-196 ms."""
    want = "1" if settings.throughput_optimized else "0"
    return {"RAY_SERVE_THROUGHPUT_OPTIMIZED": os.environ.get("RAY_SERVE_THROUGHPUT_OPTIMIZED",
                                                             want)}


def _init_ray(cfg: DocrayConfig, settings: ServeSettings) -> bool:
    """Connect to (or start) Ray; True when this call started or joined it, so that the
    runner's stop also disconnects (and, for a local cluster, ends it)."""
    import ray

    if ray.is_initialized():
        if any(os.environ.get(k) != v for k, v in ray_serve_env(settings).items()):
            log.warning("Ray is already running: %s does not apply to it",
                        ray_serve_env(settings))
        return False
    if cfg.ray.address:
        ray.init(address=cfg.ray.address, log_to_driver=False)
        return True
    os.environ.update(ray_serve_env(settings))  # the raylet and its workers inherit it
    ray.init(num_cpus=settings.ray_num_cpus or cfg.ray.num_cpus, include_dashboard=False,
             log_to_driver=False, object_store_memory=cfg.ray.object_store_mb * 1024 * 1024)
    return True


@dataclass
class ServeRunner:
    cfg: DocrayConfig
    settings: ServeSettings = field(default_factory=ServeSettings)
    app_name: str = APP_NAME
    milvus: MilvusLiteServer | None = None
    owns_ray: bool = False

    @property
    def url(self) -> str:
        return f"http://{self.cfg.serve.host}:{self.cfg.serve.port}"

    def start(self, blocking: bool = False, after_ray: Callable[[], None] | None = None) -> str:
        """Start milvus-lite (if needed), Ray, Serve and the app; ``after_ray`` runs right
        after Ray is up (``docray serve`` takes SIGTERM back from Ray's handler there)."""
        from ray import serve

        shared, self.milvus = shared_milvus(self.cfg, self.settings.milvus_port,
                                            self.settings.milvus_threads)
        if self.milvus is not None:
            self.milvus.start()
        try:
            self.owns_ray = _init_ray(self.cfg, self.settings)
            if after_ray is not None:
                after_ray()
            from docray.serve_apps import drain

            drain.clear(self.app_name)
            serve.start(proxy_location=self.settings.proxy_location,
                        http_options={"host": self.cfg.serve.host, "port": self.cfg.serve.port})
            serve.run(build_app(shared, self.settings, self.app_name), name=self.app_name,
                      route_prefix="/", blocking=blocking)
        except BaseException:
            self.stop()
            raise
        log.info("docray serving at %s", self.url)
        return self.url

    def drain(self, timeout_s: float | None = None) -> bool:
        """Stop admitting, then wait (bounded) for admitted requests and upload jobs.
        True when everything in flight finished within the bound."""
        from ray import serve

        from docray.serve_apps import drain
        from docray.serve_apps.metrics import serve_replicas

        budget = self.settings.limits.drain_timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + budget
        drain.request_drain(self.app_name)
        ok = drain.wait_drained(self.app_name,
                                lambda: serve_replicas(self.app_name).get("Ingress", 0), budget)
        documents = serve.get_deployment_handle("Documents", self.app_name)
        while documents.pending.remote().result(timeout_s=10):
            if time.monotonic() >= deadline:
                log.warning("upload jobs still running after %.0fs; the next ingest of "
                            "those files resumes them", budget)
                return False
            time.sleep(0.1)
        return ok

    def stop(self, drain_first: bool = False) -> None:
        """Serve, then Ray when this runner started it, then milvus-lite; with
        ``drain_first`` the in-flight work is finished first (see :meth:`drain`)."""
        try:
            import ray
            from ray import serve

            if ray.is_initialized():
                if drain_first:
                    try:
                        self.drain()
                    except Exception:  # noqa: BLE001 — still stop everything below
                        log.exception("drain failed; stopping anyway")
                serve.shutdown()
                if self.owns_ray:
                    ray.shutdown()
                    self.owns_ray = False
        finally:
            if self.milvus is not None:
                self.milvus.stop()
