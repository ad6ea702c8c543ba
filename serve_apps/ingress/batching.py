"""Question encoding shared across concurrent requests: one forward pass for the questions
that arrived while the previous one ran.

A MiniLM forward pass has a fixed cost (its layers' weights and Python calls) that a short
question does not amortise: on the 2-core AVX2 machine, 22 ms of CPU for one question, 15
per question in twos, 14 in fours (one thread, qa.jsonl questions). The Ingress encodes
every question, so under load that fixed cost was most of its CPU (56% of its py-spy
samples at 8 clients). Batches form only from waiting questions: a lone question is
encoded at once, as before. Padding does not change a question's vectors (attention mask,
mean pooling; 1e-7 apart).

Why not ``@serve.batch``: it needs a Serve replica context (QueryService also runs without
Ray, in the tests and in-process), and records six Ray metrics per batch.
"""
from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Optional

import numpy as np

Encoded = tuple[np.ndarray, np.ndarray]  # (vector (dim,), token vectors (n_q, dim))


class QueryBatcher:
    """``await batcher.encode(text)`` → (vector, token vectors), cached per text.

    ``encoder.encode_with_tokens(texts)`` runs in a worker thread, one batch at a time, on
    at most ``max_batch`` questions (more pads more: 8 at once cost 16 ms each)."""

    def __init__(self, encoder, max_batch: int = 4, cache_size: int = 1024):
        self.encoder, self.max_batch, self.cache_size = encoder, max_batch, cache_size
        self._cache: OrderedDict[str, Encoded] = OrderedDict()
        self._waiting: list[tuple[str, asyncio.Future]] = []
        self._task: Optional[asyncio.Task] = None

    async def encode(self, text: str) -> Encoded:
        hit = self._cache.get(text)
        if hit is not None:
            self._cache.move_to_end(text)
            return hit
        future = asyncio.get_running_loop().create_future()
        self._waiting.append((text, future))
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())
        return await future

    async def _run(self) -> None:
        while self._waiting:
            batch = self._waiting[:self.max_batch]
            del self._waiting[:self.max_batch]
            texts = list(dict.fromkeys(t for t, _ in batch))
            try:
                vecs, toks = await asyncio.to_thread(self.encoder.encode_with_tokens, texts)
            except Exception as err:  # noqa: BLE001 — each waiting request gets the error
                for _, future in batch:
                    if not future.done():
                        future.set_exception(err)
                continue
            got = {t: (np.asarray(vecs[i], np.float32), np.asarray(toks[i], np.float32))
                   for i, t in enumerate(texts)}
            for text, value in got.items():
                self._cache[text] = value
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
            for text, future in batch:
                if not future.done():  # a request cancelled meanwhile
                    future.set_result(got[text])
