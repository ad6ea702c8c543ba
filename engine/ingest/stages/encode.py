"""Stage: encode (dense chunk vectors + page multi-vectors).

Input row:  doc, chunks
Output row: + chunk_vecs (n_chunks, dim) float32, chunk_tokens (total, dim) float16 and
            chunk_tok_offsets (n_chunks + 1,) int64, page_nos (n_pages,) int32,
            page_offsets (n_pages + 1,) int64, page_token_index (total_page_tokens,) int64
            (rows of chunk_tokens; an image page encoder sets page_tokens instead)
Ray: the last step of :class:`~.doc.DocEncodeActor`'s pool, so the encoder loads once per
actor.

With the ``text-tokens`` page encoder, ONE forward pass over the chunk texts yields both
the chunk vectors and the token vectors; a page's multi-vector is the token vectors of
the chunks that lie on it (capped at ``embed.page.max_tokens``). Image page encoders
(ColPali) embed the page renders in their own stage (:mod:`.pages`); without that stage
in the plan, ``encode_row`` runs its core inline when handed the page encoder.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from docray.engine.config import DocrayConfig
from docray.engine.heap import trim_heap
from docray.engine.index.index_text import doc_label, index_text
from docray.engine.ingest.stages import failed, stage
from docray.engine.ingest.stages.pages import needs_page_stage, page_vectors_row
from docray.engine.model import Chunk, Document


def _cap(index: np.ndarray, cap: int) -> np.ndarray:
    if len(index) <= cap:
        return index
    keep = np.linspace(0, len(index) - 1, cap).round().astype(np.int64)  # (cap,)
    return index[keep]


def page_token_index(doc: Document, chunks: list[Chunk], chunk_offsets: np.ndarray,
                     cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which chunk token vectors make each page's multi-vector → (page_nos, offsets, index
    into the chunk tokens). Every page of the document gets an entry, with zero tokens when
    nothing is on it, so the page index holds every page. The row carries these indices, not
    the vectors: a page's tokens are its chunks' tokens, and shipping them twice doubled the
    largest part of every row between the encoder and the writer."""
    per_page: dict[int, list[np.ndarray]] = {p.page: [] for p in doc.pages}
    for i, chunk in enumerate(chunks):
        for page in chunk.pages:
            per_page.setdefault(page, []).append(np.arange(chunk_offsets[i],
                                                           chunk_offsets[i + 1]))
    page_nos = np.array(sorted(per_page), dtype=np.int32)
    picks = [_cap(np.concatenate(per_page[int(p)]) if per_page[int(p)]
                  else np.zeros(0, np.int64), cap) for p in page_nos]
    offsets = np.zeros(len(picks) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(k) for k in picks])
    index = np.concatenate(picks) if picks else np.zeros(0, np.int64)  # (total,)
    return page_nos, offsets, index


def row_page_tokens(row: dict[str, Any]) -> np.ndarray:
    """A row's page token vectors (total, dim) float16: the page encoder's own, or the
    chunk tokens that ``page_token_index`` names."""
    if row.get("page_tokens") is not None:
        return np.asarray(row["page_tokens"])
    return np.asarray(row["chunk_tokens"])[np.asarray(row["page_token_index"])]


MAX_ENTITIES, MAX_RELATIONS = 500, 250
ENCODE_SLICE = 256  # chunks per encoder call: bounds the float32 token vectors held at once


def encode_chunks(encoder, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chunk vectors (n, dim) float32, token offsets (n + 1,) int64 and every chunk's token
    vectors (total, dim) float16, encoded ``ENCODE_SLICE`` texts at a time: a 1,478-chunk
    10-K's float32 token vectors alone are 380 MB. The heap is trimmed after each slice:
    the model's freed activations otherwise stayed in the worker's RSS (the 3M 10-K's
    116 MB of tokens grew the encoder by 480 MB)."""
    vecs, toks, sizes = [np.zeros((0, encoder.dim), np.float32)], [], [0]
    for s in range(0, len(texts), ENCODE_SLICE):
        v, t = encoder.encode_with_tokens(texts[s:s + ENCODE_SLICE])  # (b, dim), [(t, dim)]
        vecs.append(np.asarray(v, np.float32))
        sizes += [len(m) for m in t]
        toks.append(np.concatenate(t).astype(np.float16) if t  # (slice total, dim)
                    else np.zeros((0, encoder.dim), np.float16))
        del v, t
        trim_heap()
    offsets = np.cumsum(sizes, dtype=np.int64)  # (n + 1,)
    tokens = np.concatenate(toks) if toks else np.zeros((0, encoder.dim), np.float16)
    return np.concatenate(vecs), offsets, tokens


class CachedTexts:
    """Encoder front that remembers short texts (entity names and relation phrases repeat
    across documents: years, metrics, company names)."""

    def __init__(self, encoder, size: int = 200_000):
        self.encoder, self.size, self.dim = encoder, size, encoder.dim
        self._memo: dict[str, np.ndarray] = {}

    def encode(self, texts: list[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if todo:
            if len(self._memo) + len(todo) > self.size:
                self._memo.clear()
            self._memo.update(zip(todo, self.encoder.encode(todo)))
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._memo[t] for t in texts]).astype(np.float32)  # (n, dim)


def graph_vectors(graph: dict[str, Any], encoder) -> dict[str, Any]:
    """Vectors for entity names (+description) and the strongest relations, so the
    entity and relation collections in Milvus can be searched by meaning. The most
    connected entities (by units mentioning them) and strongest relations, capped."""
    ents = sorted((n for n in graph["nodes"] if n["kind"] == "entity"),
                  key=lambda n: -len(n["attrs"].get("unit_ids", [])))[:MAX_ENTITIES]
    names = {n["id"]: n["name"] for n in graph["nodes"]}
    rels = sorted((e for e in graph["edges"] if e["src"] in names and e["dst"] in names
                   and e["type"] not in ("row-of", "column-of", "unit-of")),
                  key=lambda e: -e.get("weight", 1.0))[:MAX_RELATIONS]
    ent_texts = [" ".join(filter(None, [n["name"], n["attrs"].get("description", "")]))
                 for n in ents]
    rel_texts = [f"{names[e['src']]} {e['type']} {names[e['dst']]}" for e in rels]
    texts = ent_texts + rel_texts
    vecs = encoder.encode(texts) if texts else np.zeros((0, encoder.dim), np.float32)
    return {"entity_ids": [n["id"] for n in ents], "entity_texts": ent_texts,
            "entity_vecs": np.asarray(vecs[:len(ents)], np.float32),
            "relation_ids": [f"{e['src']}|{e['type']}|{e['dst']}" for e in rels],
            "relation_texts": rel_texts,
            "relation_vecs": np.asarray(vecs[len(ents):], np.float32)}


def encode_row(row: dict[str, Any], cfg: DocrayConfig, text_encoder, page_encoder=None,
               name_encoder=None):
    row = dict(row)
    if failed(row):
        return row
    with stage(row, "encode"):
        doc = Document.model_validate_json(row["doc"])
        chunks = [Chunk.model_validate(c) for c in json.loads(row["chunks"])]
        label = doc_label(doc)
        texts = [index_text(label, c) for c in chunks]
        row["index_texts"] = texts
        # Chunk token vectors, kept for late-interaction rerank without re-encoding.
        row["chunk_vecs"], row["chunk_tok_offsets"], row["chunk_tokens"] = encode_chunks(
            text_encoder, texts)  # (n, dim) fp32, (n + 1,), (total, dim) fp16
    if failed(row):
        return row
    if row.get("graph"):
        with stage(row, "encode_graph"):
            row.update(graph_vectors(json.loads(row["graph"]), name_encoder or text_encoder))
    if failed(row):
        return row
    if page_encoder is not None:  # page images (ColPali): the pages stage's core, inline
        return page_vectors_row(row, cfg, page_encoder)
    if needs_page_stage(cfg):
        return row  # the pages stage (an actor pool of its own) embeds the page renders
    with stage(row, "page_vectors"):
        nos, offs, index = page_token_index(doc, chunks, row["chunk_tok_offsets"],
                                            cfg.embed.page.max_tokens)
        row["page_nos"], row["page_offsets"], row["page_token_index"] = nos, offs, index
    return row


class EncodeActor:
    """Loads the encoders once; a step of :class:`~.doc.DocEncodeActor` (and of
    ``IngestStages``)."""

    def __init__(self, cfg_json: str):
        import torch

        from docray.engine.embed import get_text_encoder

        self.cfg = DocrayConfig.model_validate_json(cfg_json)
        torch.set_num_threads(self.cfg.ingest.encoder_threads)
        self.text = get_text_encoder(self.cfg.embed.text)
        self.names = CachedTexts(self.text)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        try:
            return encode_row(row, self.cfg, self.text, None, self.names)
        finally:
            trim_heap()
