"""Cross-encoder rerank on the real sentence-transformers CrossEncoder (tiny random BERT)."""
from __future__ import annotations

import numpy as np
import pytest

from docray.engine.config import config_from_dict
from docray.engine.errors import Unavailable
from docray.engine.retrieve.engine import rerank_ranked
from docray.engine.retrieve.rerank import CrossEncoderReranker, RerankTimeout

Q = "How many litres does the pump deliver?"
TEXTS = ["The pump delivers 58.9 litres per minute at full load.",
         "Servo motors drive the valve actuator of the press.",
         "Revenue grew in 2021 by ten percent over the prior year.",
         "Figure 3 shows the pressure curve of the hydraulic circuit."]


@pytest.fixture(scope="module")
def reranker(cross_encoder_dir):
    return CrossEncoderReranker(str(cross_encoder_dir), batch_size=2, max_length=24)


def _reference(model_dir, pairs, max_length):
    """The checkpoint run by transformers itself: sigmoid of the single logit."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    enc = tok([q for q, _ in pairs], [t for _, t in pairs], padding=True, truncation=True,
              max_length=max_length, return_tensors="pt")
    with torch.inference_mode():
        logits = model(**enc).logits[:, 0]  # (n,)
    return torch.sigmoid(logits).numpy()


def test_scores_equal_the_checkpoint_run_by_transformers(reranker, cross_encoder_dir):
    got = reranker.score(Q, TEXTS)
    want = _reference(cross_encoder_dir, [(Q, t) for t in TEXTS], 24)
    assert len(got) == len(TEXTS)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert len(set(np.round(got, 6))) > 1  # a constant scorer would pass the order checks


def test_batch_size_does_not_change_scores(reranker, cross_encoder_dir):
    one_batch = CrossEncoderReranker(str(cross_encoder_dir), batch_size=16, max_length=24)
    np.testing.assert_allclose(reranker.score(Q, TEXTS), one_batch.score(Q, TEXTS), atol=1e-5)
    assert reranker.score(Q, []) == []


def test_pairs_are_cut_at_max_length(reranker):
    long = TEXTS[0] + " " + " ".join(TEXTS[1:])
    tail = long + " The press runs hot after an hour."
    a, b = reranker.score(Q, [long, tail])
    assert a == pytest.approx(b, abs=1e-6)  # past 24 tokens nothing is read
    assert reranker.model.max_seq_length == 24


def test_timeout_between_batches_and_fused_order_kept(cross_encoder_dir, caplog):
    slow = CrossEncoderReranker(str(cross_encoder_dir), batch_size=1, timeout_s=1e-9)
    assert len(slow.score(Q, TEXTS[:1])) == 1  # one batch: nothing left to cut off
    with pytest.raises(RerankTimeout, match=r"scored 1 of 4 .*rerank_timeout_s=1e-09"):
        slow.score(Q, TEXTS)
    ranked = [("c1", 0.9), ("c2", 0.5), ("c3", 0.1)]
    with caplog.at_level("WARNING", logger="docray.engine.retrieve.engine"):
        assert rerank_ranked(lambda ids: slow.score(Q, TEXTS[:len(ids)]), ranked, 3) == ranked
    assert any("rerank skipped" in r.getMessage() and "scored 1 of 3" in r.getMessage()
               for r in caplog.records)


def test_rerank_ranked_orders_the_head_by_the_cross_encoder(reranker):
    ranked = [(f"c{i}", 1.0) for i in range(len(TEXTS))]  # tied fused scores
    scores = reranker.score(Q, TEXTS)
    out = rerank_ranked(lambda ids: reranker.score(Q, [TEXTS[int(c[1:])] for c in ids]),
                        ranked, len(TEXTS), weight=1.0)
    assert [c for c, _ in out] == [f"c{i}" for i in np.argsort(-np.asarray(scores))]


def test_built_from_config_with_sdpa_on_cpu(cross_encoder_dir):
    from docray.engine.retrieve.parts import make_reranker

    cfg = config_from_dict({"retrieve": {"reranker": "cross-encoder",
                                         "cross_encoder_model": str(cross_encoder_dir),
                                         "cross_encoder_batch_size": 3,
                                         "cross_encoder_max_length": 32,
                                         "rerank_timeout_s": 2.5}})
    r = make_reranker(cfg, encoder=None)
    assert isinstance(r, CrossEncoderReranker)
    assert (r.batch_size, r.timeout_s, r.model.max_seq_length) == (3, 2.5, 32)
    assert r.attn == "sdpa" and r.model.model.config._attn_implementation == "sdpa"


def test_missing_model_names_the_setting(tmp_path):
    with pytest.raises(Unavailable, match="retrieve.cross_encoder_model"):
        CrossEncoderReranker(str(tmp_path / "absent"))
