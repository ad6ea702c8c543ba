"""Serve glue for the three candidate generators."""
from __future__ import annotations

from ray import serve

from docray.engine.config import DocrayConfig
from docray.engine.heap import settle_heap


@serve.deployment(name="GraphWalk")
class GraphWalk:
    def __init__(self, cfg_json: str):
        from docray.serve_apps.retrieval.service import GraphWalkService

        self.service = GraphWalkService(DocrayConfig.model_validate_json(cfg_json))
        settle_heap("GraphWalk")

    async def search(self, plan, workspace, doc_ids, k):
        return await self.service.search(plan, workspace, doc_ids, k)

    async def neighbourhood(self, unit_ids, workspace, hops, max_nodes):
        return await self.service.neighbourhood(unit_ids, workspace, hops, max_nodes)


@serve.deployment(name="DenseSearch")
class DenseSearch:
    def __init__(self, cfg_json: str):
        from docray.serve_apps.retrieval.service import DenseSearchService

        self.service = DenseSearchService(DocrayConfig.model_validate_json(cfg_json))
        settle_heap("DenseSearch")

    async def search(self, plan, qvec, workspace, doc_ids, k):
        return await self.service.search(plan, qvec, workspace, doc_ids, k)


@serve.deployment(name="PageRetrieval")
class PageRetrieval:
    def __init__(self, cfg_json: str):
        from docray.serve_apps.retrieval.service import PageRetrievalService

        self.service = PageRetrievalService(DocrayConfig.model_validate_json(cfg_json))
        settle_heap("PageRetrieval")

    async def search(self, qtok, workspace, doc_ids, k, question=""):
        return await self.service.search(qtok, workspace, doc_ids, k, question)
