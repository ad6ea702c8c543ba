"""Session-wide fixtures: corpus location, one local Ray cluster, one MiniLM load."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
EVAL = REPO.parent / "shared" / "eval"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
def ray_cluster():
    """One local Ray cluster for the whole test session (2 logical CPUs, small store)."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        from docray.serve_apps.runner import ray_serve_env
        from docray.serve_apps.settings import ServeSettings

        os.environ.update(ray_serve_env(ServeSettings()))  # as `docray serve` starts Ray
        ray.init(num_cpus=2, object_store_memory=256 * 1024 * 1024, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def minilm():
    """One load of the bundled MiniLM for every test that needs the real encoder (~8 s)."""
    from docray.engine.config import TextEncoderConfig
    from docray.engine.embed.minilm import MiniLMEncoder

    return MiniLMEncoder(TextEncoderConfig(batch_size=4))


@pytest.fixture(scope="session")
def cross_encoder_dir(tmp_path_factory) -> Path:
    """A tiny random-init BERT cross-encoder (and its WordPiece tokenizer) built on disk."""
    from tiny_models import tiny_cross_encoder

    return tiny_cross_encoder(tmp_path_factory.mktemp("cross_encoder"))


@pytest.fixture(scope="session")
def tiny_llm_dir(tmp_path_factory) -> Path:
    """A tiny Llama (config.json + BPE tokenizer with a chat template) for vLLM's dummy
    loader: random weights, real engine."""
    from tiny_models import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("tiny_llama"))

