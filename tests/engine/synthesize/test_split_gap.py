"""The dev-test gap of quality.py's answers, beside the gap two random halves give by chance
(benchmarks/answer_eval.py split_gap)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from answer_eval import split_gap  # noqa: E402


def _rows(dev_right: int, test_right: int, n: int = 100) -> list[dict]:
    return ([{"unanswerable": False, "correct": i < dev_right, "confidence": 1.0, "dev": True}
             for i in range(n)] +
            [{"unanswerable": False, "correct": i < test_right, "confidence": 1.0, "dev": False}
             for i in range(n)] +
            [{"unanswerable": True, "correct": False, "confidence": 0.0, "dev": False}])


def test_a_gap_that_chance_rarely_gives_is_flagged_rare():
    g = split_gap(_rows(70, 30), 0.5, draws=500)
    assert g["dev_minus_test"] == 40.0
    assert g["random_halves_p95"] < 20  # random halves mix the two: ~7 points apart at most
    assert g["share_at_least_as_large"] == 0.0


def test_equal_halves_sit_inside_the_spread():
    g = split_gap(_rows(50, 50), 0.5, draws=500)
    assert g["dev_minus_test"] == 0.0 and g["share_at_least_as_large"] == 1.0
    assert 0 < g["random_halves_median"] < g["random_halves_p95"]


def test_an_answer_below_the_threshold_counts_wrong():
    rows = _rows(60, 60)
    for r in rows[:60]:
        r["confidence"] = 0.1  # the dev half's right answers all abstain
    assert split_gap(rows, 0.5, draws=50)["dev_minus_test"] == -60.0
