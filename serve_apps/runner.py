"""Start and stop the whole app: milvus-lite server (when needed), Ray, Serve.

Used by ``docray serve``, the tests and the load benchmark.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

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


def _init_ray(cfg: DocrayConfig, settings: ServeSettings) -> None:
    import ray

    if ray.is_initialized():
        if any(os.environ.get(k) != v for k, v in ray_serve_env(settings).items()):
            log.warning("Ray is already running: %s does not apply to it",
                        ray_serve_env(settings))
        return
    if cfg.ray.address:
        ray.init(address=cfg.ray.address, log_to_driver=False)
        return
    os.environ.update(ray_serve_env(settings))  # the raylet and its workers inherit it
    ray.init(num_cpus=settings.ray_num_cpus or cfg.ray.num_cpus, include_dashboard=False,
             log_to_driver=False, object_store_memory=cfg.ray.object_store_mb * 1024 * 1024)


@dataclass
class ServeRunner:
    cfg: DocrayConfig
    settings: ServeSettings = field(default_factory=ServeSettings)
    app_name: str = APP_NAME
    milvus: MilvusLiteServer | None = None

    @property
    def url(self) -> str:
        return f"http://{self.cfg.serve.host}:{self.cfg.serve.port}"

    def start(self, blocking: bool = False) -> str:
        from ray import serve

        shared, self.milvus = shared_milvus(self.cfg, self.settings.milvus_port,
                                            self.settings.milvus_threads)
        if self.milvus is not None:
            self.milvus.start()
        try:
            _init_ray(self.cfg, self.settings)
            serve.start(http_options={"host": self.cfg.serve.host, "port": self.cfg.serve.port})
            serve.run(build_app(shared, self.settings, self.app_name), name=self.app_name,
                      route_prefix="/", blocking=blocking)
        except BaseException:
            self.stop()
            raise
        log.info("docray serving at %s", self.url)
        return self.url

    def stop(self) -> None:
        try:
            import ray
            from ray import serve

            if ray.is_initialized():
                serve.shutdown()
        finally:
            if self.milvus is not None:
                self.milvus.stop()
