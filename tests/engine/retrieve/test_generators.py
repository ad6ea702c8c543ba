"""Graph walk, page MaxSim and rerank generators over real (small) stores."""
import numpy as np
import pytest

from docray.engine.graph.records import Edge, Node
from docray.engine.graph.store import GraphStore
from docray.engine.index.content import ContentStore
from docray.engine.index.pages import PageStore
from docray.engine.model import Chunk, Unit
from docray.engine.retrieve.graph_walk import GraphWalker
from docray.engine.retrieve.pages import PageSearcher
from docray.engine.retrieve.query import analyze
from docray.engine.retrieve.rerank import LateInteractionReranker, maxsim_score


def _unit(uid, doc, page, text):
    return Unit(unit_id=uid, doc_id=doc, page=page, bbox=(0, 0, 1, 1), modality="text", text=text)


@pytest.fixture()
def content(tmp_path):
    store = ContentStore(tmp_path / "content.sqlite")
    units = [_unit("d1:p1:u0", "d1", 1, "Acme sells anvils."),
             _unit("d1:p2:u1", "d1", 2, "Anvils are made of steel."),
             _unit("d2:p1:u0", "d2", 1, "Steel prices rose.")]
    chunks = [Chunk(chunk_id=f"{u.doc_id}:c{i}", doc_id=u.doc_id, text=u.text, pages=[u.page],
                    unit_ids=[u.unit_id]) for i, u in enumerate(units)]
    store.add_doc("ws", units[:2], chunks[:2])
    store.add_doc("ws", units[2:], chunks[2:])
    return store


def _graph(tmp_path):
    g = GraphStore(tmp_path / "graph")
    ent = lambda name, uid, doc: Node(id=f"ent:{name.lower()}", kind="entity", name=name,
                                      doc_id=doc, attrs={"unit_ids": [uid], "doc_ids": [doc]})
    g.add([ent("Acme", "d1:p1:u0", "d1"), ent("anvil", "d1:p2:u1", "d1")],
          [Edge("ent:acme", "ent:anvil", "co-occurs", 1.0, "d1")], doc_id="d1", workspace="ws")
    g.add([ent("steel", "d2:p1:u0", "d2")], [], doc_id="d2", workspace="ws")
    return g


def test_graph_walk_reaches_neighbours_of_mentioned_entities(tmp_path, content):
    walker = GraphWalker(_graph(tmp_path), content, hops=1)
    ranked = walker.search(analyze("What does Acme make?"), "ws", None, 10)
    ids = [c for c, _ in ranked]
    assert ids[0] == "d1:c0"          # the seed's own chunk first
    assert "d1:c1" in ids             # one hop away (anvil)
    assert "d2:c2" not in ids         # unrelated
    assert walker.search(analyze("What does Acme make?"), "other", None, 10) == []
    assert walker.search(analyze("What does Acme make?"), "ws", ["d2"], 10) == []


def test_warm_builds_the_name_index_before_the_first_question(tmp_path, content):
    """The name index reads every node of the workspace (5.8 s on the qa.jsonl corpus):
    warm() pays it, so the first question reads only the nodes its walk reaches."""
    def graph_with_fillers(path):
        g = _graph(path)
        g.add([Node(id=f"ent:filler{i}", kind="entity", name=f"filler {i}", doc_id="d2",
                    attrs={"unit_ids": ["d2:p1:u0"], "doc_ids": ["d2"]}) for i in range(200)],
              [], doc_id="d2b", workspace="ws")
        return g

    def nodes_read_by_first_question(g, warm: bool) -> int:
        walker = GraphWalker(g, content, hops=1)
        if warm:
            walker.warm("ws")
        read, real = [], g.node_at
        g.node_at = lambda i: read.append(i) or real(i)
        ranked = walker.search(analyze("What does Acme make?"), "ws", None, 10)
        assert [c for c, _ in ranked][0] == "d1:c0"
        return len(read)

    assert nodes_read_by_first_question(graph_with_fillers(tmp_path / "a"), warm=True) < 20
    assert nodes_read_by_first_question(graph_with_fillers(tmp_path / "b"), warm=False) > 200


def test_a_scoped_walk_keeps_only_the_units_of_its_documents(tmp_path, content):
    """An entity named in two documents: a walk scoped to one (or both) keeps only theirs."""
    g = GraphStore(tmp_path / "graph")
    steel = lambda doc, uid: Node(id="ent:steel", kind="entity", name="steel", doc_id=doc,
                                  attrs={"unit_ids": [uid], "doc_ids": [doc]})
    g.add([steel("d1", "d1:p2:u1")], [], doc_id="d1", workspace="ws")
    g.add([steel("d2", "d2:p1:u0")], [], doc_id="d2", workspace="ws")
    walker, q = GraphWalker(g, content, hops=1), analyze("Who buys steel?")
    assert [c for c, _ in walker.search(q, "ws", ["d2"], 10)] == ["d2:c2"]
    assert [c for c, _ in walker.search(q, "ws", ["d1"], 10)] == ["d1:c1"]
    assert {c for c, _ in walker.search(q, "ws", ["d1", "d2"], 10)} == {"d1:c1", "d2:c2"}
    assert {c for c, _ in walker.search(q, "ws", None, 10)} == {"d1:c1", "d2:c2"}


def test_graph_walk_stops_at_max_units_keeping_the_best_nodes(tmp_path, content):
    walker = GraphWalker(_graph(tmp_path), content, hops=1, max_units=1)
    assert [c for c, _ in walker.search(analyze("What does Acme make?"), "ws", None, 10)] == \
        ["d1:c0"]  # the seed's unit fills the budget; the neighbour is not reached


def test_page_search_ranks_the_matching_page_first(tmp_path):
    rng = np.random.default_rng(0)
    store = PageStore(tmp_path / "pages", dim=8, dtype="fp16", encoder="t")
    target = rng.normal(size=(5, 8)).astype(np.float32)
    target /= np.linalg.norm(target, axis=1, keepdims=True)
    def noise(n):
        x = rng.normal(size=(n, 8)).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    pages = [(p, noise(6)) for p in (1, 2, 3)]
    pages[1] = (2, np.concatenate([target, pages[1][1]]))
    store.add_pages("ws", "d1", pages)
    hits = PageSearcher(store).search_tokens(target[:3], "ws", None, 3)
    assert hits[0][0] == ("d1", 2)
    assert hits[0][1] == pytest.approx(1.0, abs=1e-2)   # mean of max cosine = 1
    assert PageSearcher(store).search_tokens(target[:3], "other", None, 3) == []


class _Enc:
    """A deterministic bag-of-letters encoder with the TextEncoder interface."""

    dim = 26

    def encode_with_tokens(self, texts):
        toks = []
        for t in texts:
            rows = []
            for w in t.lower().split():
                v = np.zeros(26, np.float32)
                for ch in w:
                    if ch.isalpha():
                        v[ord(ch) - 97] += 1
                rows.append(v / (np.linalg.norm(v) or 1))
            toks.append(np.array(rows))
        return np.stack([t.mean(0) for t in toks]), toks


def test_late_interaction_rerank_prefers_token_matches():
    r = LateInteractionReranker(_Enc())
    s = r.score("steel anvils", ["cats and dogs", "anvils of steel"])
    assert s[1] > s[0]
    assert maxsim_score(np.zeros((0, 3)), np.ones((2, 3))) == 0.0


def test_stored_rerank_uses_saved_chunk_tokens_and_falls_back(tmp_path):
    from docray.engine.retrieve.rerank import StoredLateInteractionReranker

    enc = _Enc()
    store = PageStore(tmp_path / "ct", dim=26, dtype="int8", encoder="t")
    _, toks = enc.encode_with_tokens(["cats and dogs", "anvils of steel"])
    store.add_pages("ws", "d1", [(0, toks[0]), (1, toks[1])])
    r = StoredLateInteractionReranker(store, LateInteractionReranker(enc))
    q = enc.encode_with_tokens(["steel anvils"])[1][0]
    stored = r.score_chunks(q, "ws", ["d1:c0", "d1:c1"], ["x", "y"], "steel anvils")
    assert stored[1] > stored[0] and stored[1] == pytest.approx(1.0, abs=0.02)
    # d1:c2 was never stored: the whole head is rescored from text instead
    fb = r.score_chunks(q, "ws", ["d1:c0", "d1:c2"], ["cats and dogs", "anvils of steel"],
                        "steel anvils")
    assert fb == pytest.approx(LateInteractionReranker(enc).score(
        "steel anvils", ["cats and dogs", "anvils of steel"]))


def test_content_store_doc_texts_and_page_number_units(content):
    texts, last = content.doc_texts("ws", "d1")
    assert sorted(texts) == ["Acme sells anvils.", "Anvils are made of steel."] and last == 2
    assert content.doc_texts("other", "d1") == ([], None)
    assert content.doc_units("ws", "d1", "page_number") == []
    assert [u.unit_id for u in content.doc_units("ws", "d1", "text")] == ["d1:p1:u0", "d1:p2:u1"]
