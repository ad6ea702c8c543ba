"""Sentence vectors pooled from stored chunk tokens, and the answerer that uses them."""
import asyncio

import numpy as np
import pytest

from docray.engine.index.content import ContentStore
from docray.engine.index.index_text import doc_label, index_text
from docray.engine.index.pages import PageStore
from docray.engine.model import Chunk, Document, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.extractive import ExtractiveAnswerer
from docray.engine.synthesize.spans import StoredSpans

FILLER = " ".join(f"Segment {i} reports routine ledger entries for the archive." for i in range(60))
SHORT = ("Acme sold 40 anvils in 2021. The weather in Lisbon was mild. "
         "Quarterly revenue reached 12 million dollars.")
LONG = "Early on, the plant switched to solar power. " + FILLER + " Late sentence about cats."


@pytest.fixture()
def stored(tmp_path, minilm):
    """Two chunks ingested the way the encode stage does it: index text → token vectors."""
    content = ContentStore(tmp_path / "content.sqlite")
    title = Unit(unit_id="d:p1:u0", doc_id="d", page=1, bbox=(0, 0, 1, 0.1), modality="title",
                 text="Acme Annual Report")
    chunks = [Chunk(chunk_id="d:c0", doc_id="d", text=SHORT, pages=[1], section=["Results"],
                    workspace="ws"),
              Chunk(chunk_id="d:c1", doc_id="d", text=LONG, pages=[2], workspace="ws")]
    content.add_doc("ws", [title], chunks)
    label = doc_label(Document(doc_id="d", source="x", filename="acme.pdf", units=[title]))
    _, toks = minilm.encode_with_tokens([index_text(label, c) for c in chunks])
    store = PageStore(tmp_path / "ct", dim=minilm.dim, dtype="int8",
                      encoder=f"chunk-tokens:{minilm.name}")
    store.add_pages("ws", "d", [(0, toks[0]), (1, toks[1])])
    passages = [Passage(c, [], 1.0, "acme.pdf") for c in chunks]
    return StoredSpans.open(store, content, minilm), passages


def test_pooled_sentence_vectors_match_encoding_the_sentence(stored, minilm):
    spans, passages = stored
    sents = ["Acme sold 40 anvils in 2021.", "The weather in Lisbon was mild.",
             "Quarterly revenue reached 12 million dollars."]
    pooled = np.stack(spans.vectors(passages, [(0, s) for s in sents]))  # (3, dim)
    encoded = minilm.encode(sents)  # (3, dim)
    sim = pooled @ encoded.T  # (3, 3)
    assert np.all(np.diag(sim) > 0.5)
    assert np.all(sim.argmax(axis=1) == np.arange(3))  # each is closest to its own sentence


def test_truncated_chunk_aligns_through_the_label_and_gives_up_past_the_cut(stored, minilm):
    spans, passages = stored
    assert len(spans.store.entry_tokens(["ws:d:1"])["ws:d:1"]) == spans.max_tokens  # cut
    early, late, absent = spans.vectors(passages, [
        (1, "Early on, the plant switched to solar power."), (1, "Late sentence about cats."),
        (1, "Not in the chunk at all.")])
    assert late is None and absent is None
    own, filler, other = minilm.encode(["Early on, the plant switched to solar power.",
                                        "Segment 3 reports routine ledger entries.",
                                        "Late sentence about cats."])
    # found through the rebuilt label + heading: nearest to its own sentence
    assert float(early @ own) > max(float(early @ filler), float(early @ other)) + 0.1


def test_a_chunk_read_again_is_not_tokenized_again(stored):
    spans, passages = stored
    calls = []
    tok = spans.tok
    spans.tok = lambda text, **kw: calls.append(text) or tok(text, **kw)
    first = spans.vectors(passages, [(0, "Acme sold 40 anvils in 2021.")])
    again = spans.vectors(passages, [(0, "Acme sold 40 anvils in 2021.")])
    assert calls == [SHORT] and np.array_equal(first[0], again[0])
    edited = Chunk(chunk_id="d:c0", doc_id="d", text=SHORT.replace("40", "41"), pages=[1],
                   section=["Results"], workspace="ws")  # same id, other text: tokenized anew
    spans.vectors([Passage(edited, [], 1.0, "acme.pdf")], [(0, "Acme sold 41 anvils in 2021.")])
    assert len(calls) == 2


def test_other_encoders_tokens_are_not_used(tmp_path, minilm):
    store = PageStore(tmp_path / "ct", dim=minilm.dim, dtype="int8", encoder="chunk-tokens:other")
    assert StoredSpans.open(store, ContentStore(tmp_path / "c.sqlite"), minilm) is None
    assert StoredSpans.open(None, None, minilm) is None


def test_answerer_encodes_only_what_is_not_stored(stored, minilm):
    spans, passages = stored

    class Counting:
        tokenizer, name, max_len = minilm.tokenizer, minilm.name, minilm.max_len
        texts: list = []

        def encode(self, texts):
            self.texts += texts
            return minilm.encode(texts)

    enc = Counting()
    ans = ExtractiveAnswerer(0.0, enc, spans)
    q1, q2 = "How many anvils did Acme sell in 2021?", "What happened to cats late on?"
    res = asyncio.run(ans.answer(q1, passages[:1], minilm.encode([q1])[0]))
    assert res.value == "40" and not res.abstained and enc.texts == []
    asyncio.run(ans.answer(q2, passages[1:], minilm.encode([q2])[0]))
    assert enc.texts == ["Late sentence about cats."]  # past the cut: encoded


def test_a_sentence_past_the_cut_that_cannot_win_is_not_encoded(stored, minilm):
    """Cosine is at most 1: a stored sentence already scoring above ½ lexical + ½ of an
    unstored one settles the answer without encoding it; a closer race still encodes."""
    from docray.engine.retrieve.query import analyze
    from docray.engine.synthesize.cells import _overlap, _toks

    spans, passages = stored

    class Counting:
        texts: list = []

        def encode(self, texts):
            self.texts += texts
            return minilm.encode(texts)

    enc, win, late = Counting(), "Acme sold 40 anvils in 2021.", "Late sentence about cats."
    q = "Which company sold 40 anvils, Acme? Cats?"
    qvec = minilm.encode([q])[0]
    kw = {t for k in analyze(q).keywords for t in _toks(k)}
    (stored_win,) = spans.vectors(passages, [(0, win)])
    best = 0.5 * _overlap(kw, win) + 0.5 * float(stored_win @ qvec)
    assert 0.5 * _overlap(kw, late) + 0.5 < best  # the premise: the late one cannot win
    res = asyncio.run(ExtractiveAnswerer(0.0, enc, spans).answer(q, passages, qvec))
    assert win.startswith(res.answer) or res.answer == "40"
    assert enc.texts == []
    assert asyncio.run(ExtractiveAnswerer(0.0, minilm, None).answer(q, passages)).answer == \
        res.answer  # everything encoded: the same answer
    q2 = "What happened to cats late on?"  # only the late sentence can answer: encoded
    ans = ExtractiveAnswerer(0.0, enc, spans)
    asyncio.run(ans.answer(q2, passages[1:], minilm.encode([q2])[0]))
    assert enc.texts == [late]
