"""The attention kernel choice (flash-attn on CUDA in half precision, sdpa otherwise), and that
every encoder that loads a transformers model hands that choice to the model it loads."""
from __future__ import annotations

import importlib.util

import pytest
import torch

from docray.engine.config import PageEncoderConfig, TextEncoderConfig
from docray.engine.embed import attention
from docray.engine.embed.attention import attn_implementation, flash_attn_installed


@pytest.fixture()
def flash_and_cuda(monkeypatch):
    """Pretend flash-attn is importable and a CUDA device exists (nothing is imported)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "flash_attn" else real(name, *a))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


def test_flash_attention_on_cuda_in_half_precision(flash_and_cuda):
    assert attn_implementation("cuda", "bfloat16") == "flash_attention_2"
    assert attn_implementation("cuda:1", "float16") == "flash_attention_2"


@pytest.mark.parametrize("device,dtype", [("cpu", "bfloat16"), ("cpu", "float32"),
                                          ("cuda", "float32"), ("mps", "float16")])
def test_sdpa_off_cuda_or_in_float32_even_with_flash_attn(flash_and_cuda, device, dtype):
    assert attn_implementation(device, dtype) == "sdpa"


def test_sdpa_without_flash_attn(flash_and_cuda, monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    assert not flash_attn_installed()
    assert attn_implementation("cuda", "bfloat16") == "sdpa"


def test_sdpa_when_cuda_is_missing(flash_and_cuda, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert flash_attn_installed()
    assert attn_implementation("cuda", "bfloat16") == "sdpa"


def test_a_broken_flash_attn_spec_counts_as_missing(monkeypatch):
    def broken(name, *a):
        raise ValueError("flash_attn.__spec__ is None")
    monkeypatch.setattr(importlib.util, "find_spec", broken)
    assert flash_attn_installed() is False


def test_this_host_gets_sdpa_on_cpu():
    assert attn_implementation("cpu") == "sdpa"


# --- the encoders pass the choice to the model they load --------------------------------

@pytest.fixture()
def chosen(monkeypatch):
    """Make the chooser answer "eager" (a kernel no encoder would pick by itself) and record
    its calls, so a model config saying "eager" proves the value came from the chooser."""
    calls: list[tuple[str, str]] = []

    def choose(device, dtype="bfloat16"):
        calls.append((str(device), dtype))
        return "eager"
    monkeypatch.setattr(attention, "attn_implementation", choose)
    return calls


def test_cross_encoder_loads_with_sdpa_on_cpu(cross_encoder_dir):
    from docray.engine.retrieve.rerank import CrossEncoderReranker

    r = CrossEncoderReranker(str(cross_encoder_dir))
    assert r.attn == "sdpa" and r.model.model.config._attn_implementation == "sdpa"


def test_cross_encoder_asks_the_chooser(cross_encoder_dir, chosen):
    from docray.engine.retrieve.rerank import CrossEncoderReranker

    r = CrossEncoderReranker(str(cross_encoder_dir))
    assert chosen == [("cpu", "float32")]
    assert r.model.model.config._attn_implementation == "eager"


def test_minilm_loads_with_sdpa_on_cpu():
    from docray.engine.embed.minilm import MiniLMEncoder

    enc = MiniLMEncoder(TextEncoderConfig(batch_size=4))
    assert enc.attn == "sdpa"
    assert enc.model[0].auto_model.config._attn_implementation == "sdpa"


def test_minilm_asks_the_chooser(chosen):
    from docray.engine.embed.minilm import MiniLMEncoder

    enc = MiniLMEncoder(TextEncoderConfig(batch_size=4, dtype="float32"))
    assert chosen == [("cpu", "float32")]
    assert enc.model[0].auto_model.config._attn_implementation == "eager"
    assert enc.encode(["the pump delivers 58.9 litres"]).shape == (1, 384)


def test_colpali_asks_the_chooser(tmp_path, monkeypatch):
    from docray.engine.embed import colpali
    from tiny_colpali import tiny_colpali

    calls = []
    monkeypatch.setattr(colpali, "attn_implementation",
                        lambda device, dtype: calls.append((device, dtype)) or "eager")
    model_dir = tiny_colpali(tmp_path / "tiny-colpali")
    enc = colpali.ColPaliPageEncoder(PageEncoderConfig(backend="colpali", model_dir=model_dir,
                                                       dim=128, device="cpu"))
    assert calls == [("cpu", "float32")]
    assert enc.model.config._attn_implementation == "eager"


def test_colpali_loads_with_sdpa_on_cpu(tmp_path):
    from docray.engine.embed.colpali import ColPaliPageEncoder
    from tiny_colpali import tiny_colpali

    model_dir = tiny_colpali(tmp_path / "tiny-colpali")
    enc = ColPaliPageEncoder(PageEncoderConfig(backend="colpali", model_dir=model_dir, dim=128,
                                               device="cpu"))
    assert enc.model.config._attn_implementation == "sdpa"
