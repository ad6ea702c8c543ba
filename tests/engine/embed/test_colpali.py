"""The ColPali page encoder on colpali-engine's real ColPali classes, with a tiny random-init
checkpoint the test builds (tests/tiny_colpali.py). ColQwen2.5's processor needs torchvision
(transformers' Qwen2-VL image processor imports it), which does not load beside the CPU torch:
its checkpoints run on a GPU host, and only the family lookup is tested here."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from PIL import Image

from docray.engine.config import PageEncoderConfig
from docray.engine.embed import PageInput, get_page_encoder
from docray.engine.embed.base import pack_pages
from docray.engine.embed.colpali import FAMILIES, model_type
from docray.engine.errors import BadInput, ConfigError, Unavailable
from docray.kernels.maxsim import maxsim
from docray.kernels.maxsim.colpali_compat import load_score_multi_vector
from tiny_colpali import N_PATCHES, tiny_colpali


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_colpali(tmp_path_factory.mktemp("colpali") / "tiny-colpali")


@pytest.fixture(scope="module")
def encoder(model_dir):
    return get_page_encoder(PageEncoderConfig(backend="colpali", model_dir=model_dir, dim=128,
                                              max_tokens=1030, batch_size=2, device="cpu"))


def _pages(n: int) -> list[PageInput]:
    rng = np.random.default_rng(0)
    return [PageInput("d", i + 1, image=Image.fromarray(
        rng.integers(0, 255, (90 + 10 * i, 70, 3), dtype=np.uint8))) for i in range(n)]


def test_missing_model_dir_is_unavailable(tmp_path):
    with pytest.raises(Unavailable, match="model_dir"):
        get_page_encoder(PageEncoderConfig(backend="colpali", model_dir=tmp_path / "nope"))


def test_page_and_query_vectors_have_the_model_dims_and_token_counts(encoder):
    mats = encoder.encode_pages(_pages(3))  # 3 pages: batches of 2 and 1
    ids = encoder.processor.process_images([_pages(1)[0].image])["input_ids"][0]
    n_image = int((ids == encoder.processor.image_token_id).sum())
    assert encoder.dim == 128 and encoder.name == "colpali:tiny-colpali"
    # every page: its (64 / 8)^2 image patches plus the prompt tokens, 128-d unit vectors
    assert n_image == N_PATCHES == 64 and len(ids) > n_image
    assert [m.shape for m in mats] == [(len(ids), 128)] * 3
    assert all(np.allclose(np.linalg.norm(m, axis=1), 1, atol=1e-5) for m in mats)
    assert not np.allclose(mats[0], mats[1])  # different images, different vectors
    (q,) = encoder.encode_queries(["revenue growth table"])
    ids = encoder.processor.process_queries(["revenue growth table"])["input_ids"]
    assert q.shape == (ids.shape[1], 128) and ids.shape[1] > 3  # query + augmentation tokens


def test_our_maxsim_equals_colpali_engine_score_multi_vector(encoder):
    pages = encoder.encode_pages(_pages(3))
    queries = encoder.encode_queries(["revenue growth table", "which model is best",
                                      "net income"])
    _, offsets, _ = pack_pages([1, 2, 3], pages, 128)
    tokens = torch.from_numpy(np.concatenate(pages))  # (total, 128) fp32
    ours = maxsim([torch.from_numpy(q) for q in queries], tokens, offsets)  # (3, 3)
    theirs = load_score_multi_vector()([torch.from_numpy(q) for q in queries],
                                       [torch.from_numpy(p) for p in pages], device="cpu")
    assert ours.shape == theirs.shape == (3, 3)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_max_tokens_caps_each_page(model_dir):
    enc = get_page_encoder(PageEncoderConfig(backend="colpali", model_dir=model_dir, dim=128,
                                             max_tokens=10, device="cpu"))
    assert [m.shape for m in enc.encode_pages(_pages(2))] == [(10, 128)] * 2


def test_a_page_without_an_image_is_bad_input(encoder):
    with pytest.raises(BadInput, match="rendered image"):
        encoder.encode_pages([PageInput("d", 1, text="no render")])


def test_dim_other_than_the_models_is_a_config_error(model_dir):
    with pytest.raises(ConfigError, match="embed.page.dim=384.*128"):
        get_page_encoder(PageEncoderConfig(backend="colpali", model_dir=model_dir, dim=384))


def test_family_comes_from_the_checkpoint_model_type(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen2_5_vl"}))
    assert model_type(tmp_path) == "qwen2_5_vl" and FAMILIES["qwen2_5_vl"][1] == "ColQwen2_5"
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    with pytest.raises(ConfigError, match="'llama' is not a ColPali family"):
        get_page_encoder(PageEncoderConfig(backend="colpali", model_dir=tmp_path, dim=128))
