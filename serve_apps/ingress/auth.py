"""API keys → workspace, a per-key rate limit (429), and the admission limit that turns
overload into a fast 503."""
from __future__ import annotations

import hmac
import math
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Mapping

from docray.serve_apps.errors import Overloaded, RateLimited, Unauthorized


class RateLimiter:
    """A token bucket per key: ``rate`` requests/s sustained, ``burst`` at once.

    Per ingress replica (no cross-replica round trip on the request path): with N replicas
    a key gets up to N times the rate. ``rate <= 0`` turns it off.
    """

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.rate, self.burst, self.clock = rate, max(1, burst), clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)

    def check(self, key: str) -> None:
        if self.rate <= 0:
            return
        now = self.clock()
        tokens, at = self._buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            wait = max(1, math.ceil((1.0 - tokens) / self.rate))
            raise RateLimited(f"rate limit: at most {self.rate:g} requests/s per key "
                              f"(burst {self.burst}); retry after {wait}s", retry_after=wait)
        self._buckets[key] = (tokens - 1.0, now)


class KeyRing:
    """``serve.api_keys`` (key → workspace). No keys: open, everything in ``default_ws``.
    With a ``limiter``, every request of a key (a workspace when open) spends a token."""

    def __init__(self, keys: Mapping[str, str], default_ws: str,
                 limiter: RateLimiter | None = None):
        self.keys, self.default_ws, self.limiter = dict(keys), default_ws, limiter

    def workspace(self, authorization: str | None, x_api_key: str | None) -> str:
        ws, key = self._resolve(authorization, x_api_key)
        if self.limiter is not None:
            self.limiter.check(key)
        return ws

    def _resolve(self, authorization: str | None, x_api_key: str | None) -> tuple[str, str]:
        """(workspace, the key that names it); raises Unauthorized."""
        if not self.keys:
            return self.default_ws, self.default_ws
        key = x_api_key
        if authorization:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() == "bearer" and value.strip():
                key = value.strip()
        if not key:
            raise Unauthorized("missing API key: send 'Authorization: Bearer <key>' or "
                               "'X-API-Key: <key>'", field="authorization")
        for known, ws in self.keys.items():  # constant-time compare per key
            if hmac.compare_digest(known.encode(), key.encode()):
                return ws, known
        raise Unauthorized("invalid API key", field="authorization")


class Admission:
    """Non-blocking slot counter: a request either gets a slot now or a 503 now.

    The slot is released in ``finally``, so a raising request never leaks it.
    """

    def __init__(self, limit: int, retry_after: int, metrics=None):
        self.limit, self.retry_after, self.metrics = limit, retry_after, metrics
        self.inflight = 0
        self.other = 0  # uploads and deletes in flight: not limited, but drained
        self.draining = False

    @property
    def busy(self) -> int:
        """Everything a graceful stop waits for."""
        return self.inflight + self.other

    def check_open(self) -> None:
        if self.draining:
            raise Overloaded("server is shutting down; retry on another replica or after "
                             "the restart", retry_after=self.retry_after)

    def _set(self, delta: int) -> None:
        self.inflight += delta
        if self.metrics is not None:
            self.metrics.admitted.set(self.inflight)

    def acquire(self) -> None:
        self.check_open()
        if self.inflight >= self.limit:
            if self.metrics is not None:
                self.metrics.rejected.labels("admission").inc()
            raise Overloaded(f"server busy: {self.inflight} requests in flight "
                             f"(limit {self.limit})", retry_after=self.retry_after)
        self._set(+1)

    def release(self) -> None:
        self._set(-1)

    @contextmanager
    def slot(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()

    @contextmanager
    def track(self) -> Iterator[None]:
        """Unlimited work (uploads, deletes) that a drain still refuses and waits for."""
        self.check_open()
        self.other += 1
        try:
            yield
        finally:
            self.other -= 1
