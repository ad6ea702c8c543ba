"""How the ingress reaches the stages: DeploymentHandles in Serve, objects in tests.

Both adapters expose the same async methods, so :class:`QueryService` never knows which
it has. The handle adapter turns Serve's back-pressure rejection into :class:`Overloaded`.
"""
from __future__ import annotations

from typing import Any, AsyncIterator

from docray.serve_apps.errors import Overloaded


class LocalStages:
    """Stage services called in this process (unit tests, no Ray)."""

    def __init__(self, graph, dense, pages, rerank, synthesis, documents=None):
        self._g, self._d, self._p, self._r, self._s = graph, dense, pages, rerank, synthesis
        self.documents = documents

    async def graph(self, plan, ws, doc_ids, k):
        return await self._g.search(plan, ws, doc_ids, k)

    async def neighbourhood(self, unit_ids, ws, hops, max_nodes):
        return await self._g.neighbourhood(unit_ids, ws, hops, max_nodes)

    async def dense(self, plan, qvec, ws, doc_ids, k):
        return await self._d.search(plan, qvec, ws, doc_ids, k)

    async def pages(self, qtok, ws, doc_ids, k, question=""):
        return await self._p.search(qtok, ws, doc_ids, k, question)

    async def rerank(self, question, qtok, head, chunks, workspace="default"):
        return await self._r.rerank(question, qtok, head, chunks, workspace)

    async def answer(self, question, passages, qvec=None):
        return await self._s.answer(question, passages, qvec)

    def stream(self, question, passages, qvec=None) -> AsyncIterator[str]:
        return self._s.stream(question, passages, qvec)


async def _await(response, stage: str, retry_after: int) -> Any:
    from ray.serve.exceptions import BackPressureError

    try:
        return await response
    except BackPressureError as err:
        raise Overloaded(f"stage {stage} is at capacity: {err}", retry_after=retry_after) from None


def replica_transport(handle):
    """The handle over the transport this process's Serve is configured for.

    Handles passed to a deployment's constructor were made in the driver, which imported
    Serve before ``RAY_SERVE_THROUGHPUT_OPTIMIZED`` was set (serve_apps/runner.py sets it
    for the cluster it starts): they keep Ray actor calls. In a throughput-optimized
    replica, calls go over the replicas' gRPC servers instead (see the README's Serving
    section for the measured difference)."""
    from ray.serve._private.constants import RAY_SERVE_USE_GRPC_BY_DEFAULT

    return handle.options(_by_reference=not RAY_SERVE_USE_GRPC_BY_DEFAULT)


class HandleStages:
    """Stages behind DeploymentHandles."""

    def __init__(self, graph, dense, pages, rerank, synthesis, documents=None,
                 retry_after: int = 1):
        graph, dense, pages, rerank, synthesis = map(
            replica_transport, (graph, dense, pages, rerank, synthesis))
        self._g, self._d, self._p, self._r, self._s = graph, dense, pages, rerank, synthesis
        self._retry = retry_after
        self.documents = HandleProxy(documents, "documents", retry_after) if documents else None

    async def graph(self, plan, ws, doc_ids, k):
        return await _await(self._g.search.remote(plan, ws, doc_ids, k), "graph", self._retry)

    async def neighbourhood(self, unit_ids, ws, hops, max_nodes):
        return await _await(self._g.neighbourhood.remote(unit_ids, ws, hops, max_nodes),
                            "graph", self._retry)

    async def dense(self, plan, qvec, ws, doc_ids, k):
        return await _await(self._d.search.remote(plan, qvec, ws, doc_ids, k), "dense",
                            self._retry)

    async def pages(self, qtok, ws, doc_ids, k, question=""):
        return await _await(self._p.search.remote(qtok, ws, doc_ids, k, question), "pages",
                            self._retry)

    async def rerank(self, question, qtok, head, chunks, workspace="default"):
        return await _await(self._r.rerank.remote(question, qtok, head, chunks, workspace),
                            "rerank", self._retry)

    async def answer(self, question, passages, qvec=None):
        return await _await(self._s.answer.remote(question, passages, qvec), "synthesis",
                            self._retry)

    async def stream(self, question, passages, qvec=None) -> AsyncIterator[str]:
        from ray.serve.exceptions import BackPressureError

        gen = self._s.options(stream=True).stream.remote(question, passages, qvec)
        try:
            async for token in gen:
                yield token
        except BackPressureError as err:
            raise Overloaded(f"stage synthesis is at capacity: {err}",
                             retry_after=self._retry) from None


class HandleProxy:
    """``await proxy.method(*args)`` → ``await handle.method.remote(*args)``."""

    def __init__(self, handle, stage: str, retry_after: int):
        self._h, self._stage, self._retry = handle, stage, retry_after

    def __getattr__(self, name: str):
        method = getattr(self._h, name)

        async def call(*args, **kwargs):
            return await _await(method.remote(*args, **kwargs), self._stage, self._retry)

        return call
