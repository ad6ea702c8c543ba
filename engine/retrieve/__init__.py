"""Hybrid retrieval: query analysis, candidate generators, fusion, rerank."""
