"""Prometheus metrics of one ingress replica (``GET /metrics``).

Per-stage latency histograms are measured around each DeploymentHandle call; queue depth
is the number of requests this replica has admitted and the in-flight calls per stage;
replicas per deployment come from ``serve.status()`` at scrape time.
"""
from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

log = logging.getLogger(__name__)
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    def __init__(self, replicas: Callable[[], dict[str, int]] | None = None):
        self.registry = r = CollectorRegistry()
        self.stage_latency = Histogram("docray_stage_latency_seconds", "Latency per stage call",
                                       ["stage"], buckets=BUCKETS, registry=r)
        self.request_latency = Histogram("docray_request_latency_seconds",
                                         "Latency per HTTP endpoint", ["endpoint"],
                                         buckets=BUCKETS, registry=r)
        self.requests = Counter("docray_requests_total", "HTTP requests by endpoint and status",
                                ["endpoint", "status"], registry=r)
        self.rejected = Counter("docray_rejected_total", "Requests rejected with 503 by reason",
                                ["reason"], registry=r)
        self.admitted = Gauge("docray_queue_depth", "Queries admitted and not yet finished "
                              "in this ingress replica", registry=r)
        self.stage_inflight = Gauge("docray_stage_inflight", "In-flight calls per stage",
                                    ["stage"], registry=r)
        self.replicas = Gauge("docray_replicas", "Running replicas per deployment",
                              ["deployment"], registry=r)
        self._replicas = replicas

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        self.stage_inflight.labels(name).inc()
        try:
            yield
        finally:
            self.stage_inflight.labels(name).dec()
            self.stage_latency.labels(name).observe(time.perf_counter() - t0)

    def render(self) -> bytes:
        if self._replicas is not None:
            try:
                for name, n in self._replicas().items():
                    self.replicas.labels(name).set(n)
            except Exception as err:  # noqa: BLE001 — metrics must never fail the scrape
                log.warning("could not read replica counts: %s", err)
        return generate_latest(self.registry)


def serve_replicas(app_name: str) -> dict[str, int]:
    """Running replicas per deployment of one Serve application."""
    from ray import serve

    app = serve.status().applications.get(app_name)
    if app is None:
        return {}
    return {name: d.replica_states.get("RUNNING", 0) for name, d in app.deployments.items()}
