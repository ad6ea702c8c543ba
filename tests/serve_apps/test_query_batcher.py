"""The Ingress's question encoder: concurrent questions share forward passes, each gets
the vectors it would get alone, repeats come from the cache, and a failed pass fails only
the questions in it."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

from docray.engine.samples import QUESTIONS
from docray.serve_apps.ingress.batching import QueryBatcher

TEXTS = [*QUESTIONS, "What was the revenue in 2023?", "Who signed the report?",
         "Which segment grew the most?"]


class Counting:
    """The real encoder, counting its calls; ``fail`` makes the next call raise."""

    def __init__(self, encoder):
        self.encoder, self.calls, self.fail = encoder, [], False

    def encode_with_tokens(self, texts):
        self.calls.append(list(texts))
        if self.fail:
            self.fail = False
            raise RuntimeError("encoder on fire")
        return self.encoder.encode_with_tokens(texts)


def test_concurrent_questions_share_passes_and_get_their_own_vectors(minilm):
    enc = Counting(minilm)
    batcher = QueryBatcher(enc, max_batch=4)

    async def ask(texts):
        return await asyncio.gather(*(batcher.encode(t) for t in texts))

    got = asyncio.run(ask(TEXTS))
    assert [len(c) for c in enc.calls] == [4, 2]
    for text, (vec, tok) in zip(TEXTS, got):
        alone_vec, alone_tok = minilm.encode_with_tokens([text])
        assert vec.shape == (minilm.dim,) and tok.shape == alone_tok[0].shape
        np.testing.assert_allclose(vec, alone_vec[0], atol=1e-5)
        np.testing.assert_allclose(tok, alone_tok[0], atol=1e-5)

    again = asyncio.run(ask([TEXTS[0], TEXTS[0]]))  # cached: no pass at all
    assert len(enc.calls) == 2 and np.array_equal(again[0][0], got[0][0])


def test_a_lone_question_is_encoded_at_once_and_duplicates_once(minilm):
    enc = Counting(minilm)
    batcher = QueryBatcher(enc, max_batch=4)

    async def ask():
        return await asyncio.gather(batcher.encode("Who audits the company?"),
                                    batcher.encode("Who audits the company?"))

    a, b = asyncio.run(ask())
    assert enc.calls == [["Who audits the company?"]] and np.array_equal(a[0], b[0])


def test_a_failed_pass_fails_its_questions_only(minilm):
    enc = Counting(minilm)
    batcher = QueryBatcher(enc, max_batch=2)
    enc.fail = True

    async def ask():
        return await asyncio.gather(*(batcher.encode(t) for t in TEXTS[:3]),
                                    return_exceptions=True)

    first, second, third = asyncio.run(ask())
    assert isinstance(first, RuntimeError) and isinstance(second, RuntimeError)
    assert isinstance(third, tuple) and third[0].shape == (minilm.dim,)
    with pytest.raises(RuntimeError):  # nothing of the failed pass was cached
        enc.fail = True
        asyncio.run(batcher.encode(TEXTS[0]))
    assert asyncio.run(batcher.encode(TEXTS[0]))[0].shape == (minilm.dim,)
