"""Build the query-path components from config and open stores (one place, reused by the
CLI, the quality benchmark and the Serve deployments)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from docray.engine.config import DocrayConfig


@dataclass
class Parts:
    encode_query: Callable[[str], tuple[np.ndarray, np.ndarray]]
    dense: Any
    graph: Any
    pages: Any
    fuser: Any
    reranker: Any
    answerer: Any


def make_query_encoder(encoder) -> Callable[[str], tuple[np.ndarray, np.ndarray]]:
    """One forward pass → (query vector (dim,), query token vectors (n_q, dim))."""

    @lru_cache(maxsize=1024)
    def encode(text: str):
        vecs, toks = encoder.encode_with_tokens([text])
        return np.asarray(vecs[0], np.float32), np.asarray(toks[0], np.float32)

    return encode


def make_reranker(cfg: DocrayConfig, encoder, chunk_tokens=None):
    from docray.engine.retrieve.rerank import (CrossEncoderReranker, LateInteractionReranker,
                                               StoredLateInteractionReranker)

    kind = cfg.retrieve.reranker
    if kind == "late-interaction":
        text = LateInteractionReranker(encoder)
        return StoredLateInteractionReranker(chunk_tokens, text) if chunk_tokens else text
    if kind == "cross-encoder":
        r = cfg.retrieve
        return CrossEncoderReranker(r.cross_encoder_model, cfg.embed.text.device,
                                    cfg.embed.allow_hub_download, r.cross_encoder_batch_size,
                                    r.cross_encoder_max_length, r.rerank_timeout_s)
    return None


def make_answerer(cfg: DocrayConfig, encoder=None, artifacts=None, chunk_tokens=None,
                  content=None):
    """The configured answerer. The extractive one pools sentence vectors from the stored
    chunk tokens when given them (and the content store for document labels)."""
    s = cfg.synthesize
    if s.answerer == "openai":
        from docray.engine.synthesize.openai_chat import OpenAIChatAnswerer

        return OpenAIChatAnswerer(s.url or "", s.model, artifacts, budget_tokens=s.max_context_tokens,
                                  max_tokens=s.max_tokens, reply_format=s.reply_format,
                                  max_chars=s.max_answer_chars)
    if s.answerer == "vllm":
        from docray.engine.errors import ConfigError

        raise ConfigError("synthesize.answerer vllm runs in the Serve Synthesis stage (`docray "
                          "serve`); in-process queries need answerer extractive, or openai "
                          "with url set to a served model")
    from docray.engine.synthesize.extractive import ExtractiveAnswerer
    from docray.engine.synthesize.spans import StoredSpans
    from docray.engine.synthesize.statements import DocTables

    spans = (StoredSpans.open(chunk_tokens, content, encoder)
             if encoder is not None and content is not None else None)
    tables = DocTables(content) if content is not None else None
    return ExtractiveAnswerer(s.abstain_threshold, encoder, spans, s.unsupported_weight, tables)


def single_thread_math() -> None:
    """One BLAS thread and one torch intra-op thread per call in a process that runs the
    query path in-process.

    The generators run on concurrent threads, and milvus-lite's embedded engine (faiss, with
    an OpenMP OpenBLAS) searches on its own; with a thread pool per BLAS call, idle pool
    threads spin between calls. On 2 cores that cost ~120 ms of CPU per open query
    (361 -> 246 ms, p95 261 -> 228 ms, same 100 questions, same run). The query encoder's
    forward pass (one short question) is no faster on two torch threads than on one, and
    costs twice the CPU: 20-23 against 11-13 ms per question (100 questions, one process,
    interleaved). Serve replicas already run one thread (Ray sets ``OMP_NUM_THREADS``), so
    with this the in-process engine also rounds its bf16 query vectors as they do.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")
    try:
        import torch
    except ImportError:  # an install without torch runs no local encoder
        return
    torch.set_num_threads(1)


def build_parts(cfg: DocrayConfig, stores, encoder=None) -> Parts:
    from docray.engine.heap import settle_heap
    from docray.engine.embed import get_text_encoder
    from docray.engine.retrieve.dense import DenseSearcher
    from docray.engine.retrieve.engine import Fuser
    from docray.engine.retrieve.graph_walk import GraphWalker
    from docray.engine.retrieve.pages import page_query_encoder, page_searcher

    single_thread_math()
    encoder = encoder or get_text_encoder(cfg.embed.text)

    @lru_cache(maxsize=4096)
    def filename(workspace: str, doc_id: str) -> str:
        row = stores.catalog.get(workspace, doc_id)
        return row["filename"] if row else doc_id

    chunk_tokens = getattr(stores, "chunk_tokens", None)
    parts = Parts(encode_query=make_query_encoder(encoder), dense=DenseSearcher(stores.dense),
                  graph=GraphWalker(stores.graph, stores.content, cfg.retrieve.graph_hops),
                  pages=page_searcher(cfg, stores.pages, page_query_encoder(cfg)),
                  fuser=Fuser(cfg, stores.content, filename),
                  reranker=make_reranker(cfg, encoder, chunk_tokens),
                  answerer=make_answerer(cfg, encoder, stores.artifacts(cfg.paths.workspace),
                                         chunk_tokens, stores.content))
    settle_heap("query engine")
    return parts
