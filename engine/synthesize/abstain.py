"""Abstention: say "Not answerable" with the reason instead of guessing."""
from __future__ import annotations

from docray.engine.model import Evidence
from docray.engine.synthesize import Answer

NOT_ANSWERABLE = "Not answerable"


def abstain(evidence: list[Evidence], confidence: float, reason: str) -> Answer:
    return Answer(answer=NOT_ANSWERABLE, abstained=True, evidence=evidence, reason=reason,
                  confidence=confidence)


def calibrate(scores_answerable: list[float], scores_unanswerable: list[float],
              max_false_abstain: float = 0.10) -> float:
    """Highest threshold that abstains on at most ``max_false_abstain`` of answerable
    questions (so abstention recall on unanswerable ones is as high as that allows).

    >>> calibrate([0.9, 0.8, 0.7, 0.2], [0.1, 0.3], max_false_abstain=0.25)
    0.7
    """
    ranked = sorted(scores_answerable)
    allowed = int(max_false_abstain * len(ranked))
    return ranked[allowed] if ranked else 0.0
