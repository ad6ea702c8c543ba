"""API keys → workspace, and the admission limit that turns overload into a fast 503."""
from __future__ import annotations

import hmac
from contextlib import contextmanager
from typing import Iterator, Mapping

from docray.serve_apps.errors import Overloaded, Unauthorized


class KeyRing:
    """``serve.api_keys`` (key → workspace). No keys: open, everything in ``default_ws``."""

    def __init__(self, keys: Mapping[str, str], default_ws: str):
        self.keys, self.default_ws = dict(keys), default_ws

    def workspace(self, authorization: str | None, x_api_key: str | None) -> str:
        if not self.keys:
            return self.default_ws
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
                return ws
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
