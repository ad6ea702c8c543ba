"""Graceful stop: a drain flag every Ingress replica watches, and their in-flight counts.

On SIGTERM or SIGINT ``docray serve`` sets the flag in Ray's GCS key-value store, which
every process of the cluster reads, so replicas on any node see it. Each Ingress replica
polls it from a thread every ``interval_s``; once set, the replica refuses new work with
503 + Retry-After (and ``/healthz`` says ``draining``) and writes how many requests it still
has in flight. The runner waits until every running replica reports zero, bounded by
``limits.drain_timeout_s``, and only then stops Serve: a request that was admitted is
answered, whatever stage it is in.

The GCS KV is the store Serve itself keeps its checkpoints in; a named actor would cost a
process per app for one boolean.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

log = logging.getLogger(__name__)
NAMESPACE = "docray"


def _flag(app: str) -> bytes:
    return f"drain/{app}".encode()


def _report_prefix(app: str) -> bytes:
    return f"inflight/{app}/".encode()


def request_drain(app: str) -> None:
    from ray.experimental.internal_kv import _internal_kv_put

    _internal_kv_put(_flag(app), b"1", overwrite=True, namespace=NAMESPACE)


def clear(app: str) -> None:
    """Forget a previous drain of ``app`` (a long-lived cluster keeps its KV)."""
    from ray.experimental.internal_kv import _internal_kv_del

    _internal_kv_del(_flag(app), namespace=NAMESPACE)
    _internal_kv_del(_report_prefix(app), del_by_prefix=True, namespace=NAMESPACE)


def reports(app: str) -> dict[str, int]:
    """Replica id -> requests still in flight, for the replicas that saw the flag."""
    from ray.experimental.internal_kv import _internal_kv_get, _internal_kv_list

    prefix = _report_prefix(app)
    found = {}
    for key in _internal_kv_list(prefix, namespace=NAMESPACE):
        value = _internal_kv_get(key, namespace=NAMESPACE)
        if value is not None:
            found[key[len(prefix):].decode()] = int(value)
    return found


def wait_drained(app: str, running_replicas: Callable[[], int], timeout_s: float,
                 interval_s: float = 0.05) -> bool:
    """True once every running Ingress replica reports no request in flight."""
    deadline = time.monotonic() + timeout_s
    while True:
        seen = reports(app)
        if len(seen) >= max(1, running_replicas()) and not any(seen.values()):
            return True
        if time.monotonic() >= deadline:
            log.warning("drain of %s timed out after %.0fs: in flight %s", app, timeout_s, seen)
            return False
        time.sleep(interval_s)


class DrainWatch:
    """Inside an Ingress replica: sets ``on_drain`` once the flag appears, then reports
    ``inflight()`` until the process ends. A daemon thread, one KV read per poll: every
    50 ms that was 8% of the Ingress replica's sampled time under 8 clients (py-spy), a
    GIL-holding GCS call 20 times a second; every 200 ms a stop still starts refusing
    within a fifth of a second."""

    def __init__(self, app: str, replica: str, inflight: Callable[[], int],
                 on_drain: Callable[[], None], interval_s: float = 0.2):
        self.app, self.replica, self.inflight = app, replica, inflight
        self.on_drain, self.interval_s = on_drain, interval_s
        self.draining = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="docray-drain", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        from ray.experimental.internal_kv import _internal_kv_exists, _internal_kv_put

        key = _report_prefix(self.app) + self.replica.encode()
        while not self._stop.wait(self.interval_s):
            try:
                if not self.draining and _internal_kv_exists(_flag(self.app),
                                                             namespace=NAMESPACE):
                    self.draining = True
                    self.on_drain()
                    log.info("replica %s draining", self.replica)
                if self.draining:
                    _internal_kv_put(key, str(self.inflight()).encode(), overwrite=True,
                                     namespace=NAMESPACE)
            except Exception:  # noqa: BLE001 — GCS hiccup: try again next tick
                log.debug("drain watch poll failed", exc_info=True)

    def stop(self) -> None:
        self._stop.set()
