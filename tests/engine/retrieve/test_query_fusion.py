from docray.engine.retrieve.fusion import fuse, page_ranking, rrf
from docray.engine.retrieve.query import analyze, sparse_text


def test_analysis_finds_cues_years_and_keywords():
    p = analyze("According to the cash flow statement, what was 3M's capex in FY2018 (in USD)?")
    assert p.modalities == ["table"]
    assert p.years == ["2018"]
    assert "capex" in p.keywords and "3m's" in p.keywords or "3m" in " ".join(p.keywords)
    assert "the" not in p.keywords
    assert analyze("Show the chart of revenue by segment").modalities == ["image"]
    assert analyze("What is Equation 3?").modalities == ["equation"]
    assert analyze("Who founded the company?").modalities == []


def test_bm25_text_drops_only_function_words():
    assert sparse_text("What is the total revenue of 3M's segment in FY2018?") == \
        "total revenue 3M's segment FY2018"
    assert analyze("How many shares were there?").sparse_text == "many shares"
    assert sparse_text("What is it?") == "What is it?"  # nothing left: the question as is


def test_rrf_rewards_agreement_across_signals():
    ranked = fuse({"dense": ["a", "b", "c"], "sparse": ["c", "b", "a"], "graph": ["b"]}, {},
                  {}, {"dense": 1.0, "sparse": 1.0, "graph": 1.0}, {}, [], 0.0)
    assert ranked[0][0] == "b"


def test_weights_change_the_winner():
    lists = {"dense": ["a", "b"], "sparse": ["b", "a"]}
    assert fuse(lists, {}, {}, {"dense": 2.0, "sparse": 1.0}, {}, [], 0)[0][0] == "a"
    assert fuse(lists, {}, {}, {"dense": 1.0, "sparse": 2.0}, {}, [], 0)[0][0] == "b"


def test_page_signal_reaches_every_chunk_on_the_page():
    ranked = fuse({"dense": ["x"]}, {"page": [("d", 4)]},
                  {"x": [("d", 1)], "y": [("d", 4)], "z": [("d", 4)]}, {"dense": 1, "page": 1},
                  {}, [], 0)
    keys = [k for k, _ in ranked]
    assert set(keys) == {"x", "y", "z"}
    assert page_ranking(ranked, {"x": [("d", 1)], "y": [("d", 4)], "z": [("d", 4)]})[0] in (
        ("d", 1), ("d", 4))


def test_modality_preference_breaks_ties_toward_the_asked_modality():
    cm = {"t": "text", "tab": "table"}
    no_pref = fuse({"dense": ["t", "tab"]}, {}, {}, {"dense": 1}, cm, [], 0.01)
    pref = fuse({"dense": ["t", "tab"]}, {}, {}, {"dense": 1}, cm, ["table"], 0.01)
    assert no_pref[0][0] == "t" and pref[0][0] == "tab"


def test_rrf_deduplicates():
    assert list(rrf(["a", "a", "b"])) == ["a", "b"]


def test_rerank_weight_sets_how_far_the_reranker_moves_the_head():
    from docray.engine.retrieve.engine import rerank_ranked

    ranked = [("a", 3.0), ("b", 2.0), ("c", 1.0), ("tail", 0.5)]
    scores = {"a": 0.1, "b": 0.2, "c": 0.9}.__getitem__
    order = lambda w: [c for c, _ in rerank_ranked(lambda ids: [scores(i) for i in ids],  # noqa: E731
                                                   ranked, 3, w)]
    assert order(1.0) == ["c", "b", "a", "tail"]  # the reranker alone
    assert order(0.0) == ["a", "b", "c", "tail"]  # the fused order alone
    # normalised reranker a 0, b .125, c 1; fused a 1, b .5, c 0
    assert order(0.6) == ["c", "a", "b", "tail"]  # c .6 > a .4 > b .275
    assert order(0.3) == ["a", "b", "c", "tail"]  # a .7 > b .3875 > c .3
