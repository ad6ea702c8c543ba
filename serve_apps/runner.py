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


DIRECT_PORT_ENV = ("RAY_SERVE_DIRECT_INGRESS_MIN_HTTP_PORT",
                   "RAY_SERVE_DIRECT_INGRESS_MAX_HTTP_PORT")
DRAIN_ENV = "RAY_SERVE_DIRECT_INGRESS_MIN_DRAINING_PERIOD_S"
LOOP_ENV = "RAY_SERVE_CONTROL_LOOP_INTERVAL_S"


def ray_serve_env(settings: ServeSettings, port: int | None = None) -> dict[str, str]:
    """Environment a local Ray cluster must start with for these settings (Serve reads it
    in every process it starts). 8 users on 2 cores, alternating runs of 75 s: p95 396 and
    383 ms with throughput-optimized against 483 and 468 ms without; Serve CPU per request
    167-171 against 192-196 ms.

    Throughput-optimized Serve also turns on direct ingress: every Ingress replica serves
    HTTP on a port of its own. With ``port`` (the app's port) those ports start there, so
    the first Ingress replica answers on the app's own port and requests skip the Serve
    proxy (which then listens on a free port): samples, 8 clients, one run, 47.5 and 55.6
    ms of CPU per request through the proxy against 33.8 and 24.6 direct."""
    want = "1" if settings.throughput_optimized else "0"
    env = {"RAY_SERVE_THROUGHPUT_OPTIMIZED": os.environ.get("RAY_SERVE_THROUGHPUT_OPTIMIZED",
                                                            want),
           LOOP_ENV: os.environ.get(LOOP_ENV, f"{settings.control_loop_interval_s:g}")}
    if port and env["RAY_SERVE_THROUGHPUT_OPTIMIZED"] == "1" \
            and not any(k in os.environ for k in DIRECT_PORT_ENV):
        spare = 4  # a replaced replica's port is quarantined for a while
        env.update({DIRECT_PORT_ENV[0]: str(port),
                    DIRECT_PORT_ENV[1]: str(port + _max_ingress(settings) + spare)})
        # Serve holds a stopping direct-ingress replica open 30 s for external load
        # balancers, longer than serve.shutdown waits; docray's drain (:meth:`ServeRunner.drain`)
        # already refused new work and waited for the admitted requests.
        env[DRAIN_ENV] = os.environ.get(DRAIN_ENV, "1")
    return env


def _max_ingress(settings: ServeSettings) -> int:
    ing = settings.stage("ingress")
    return ing.autoscaling.max_replicas if ing.autoscaling else (ing.num_replicas or 1)


def direct_ingress_port(port: int) -> bool:
    """True when this process's Ray was started so that the Ingress replica itself
    listens on ``port`` (see :func:`ray_serve_env`)."""
    return os.environ.get(DIRECT_PORT_ENV[0]) == str(port) \
        and os.environ.get("RAY_SERVE_THROUGHPUT_OPTIMIZED") == "1"


_ours: dict[str, str] = {}  # the direct-ingress variables this process set, unset on stop


def _unset_ours() -> None:
    for k, v in list(_ours.items()):
        if os.environ.get(k) == v:
            del os.environ[k]
        del _ours[k]


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
    env = ray_serve_env(settings, cfg.serve.port)
    _ours.update({k: v for k, v in env.items() if k in (*DIRECT_PORT_ENV, DRAIN_ENV)})
    os.environ.update(env)  # the raylet and its workers inherit it
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
            proxy_port = self.cfg.serve.port
            if self.owns_ray and direct_ingress_port(proxy_port):
                from docray.serve_apps.milvus_server import free_port

                proxy_port = free_port()  # the Ingress replica takes the app's port
            serve.start(proxy_location=self.settings.proxy_location,
                        http_options={"host": self.cfg.serve.host, "port": proxy_port})
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
        if not documents.is_initialized:
            # Throughput-optimized Serve runs a driver's routers on the caller's event loop;
            # this thread has none (every drain crashed here: the stop skipped upload jobs)
            documents._init(_run_router_in_separate_loop=True)
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
                    _unset_ours()
        finally:
            if self.milvus is not None:
                self.milvus.stop()
