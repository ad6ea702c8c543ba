"""Display equations: a math-looking line with a right-hand number "(n)"."""
from __future__ import annotations

import re

from .text import Block, Span, union

_NUMBER = re.compile(r"^\((\d+(?:\.\d+)?[a-z]?)\)$")
_INLINE = re.compile(r"^(.*\S)\s+\((\d+(?:\.\d+)?[a-z]?)\)$")
_MATH = set("=<>≤≥≈≠∑∫∏√±×·∂∇∞∈∀∃→←⇒^_|αβγδεζηθικλμνξπρστυφχψωΓΔΘΛΞΠΣΦΨΩ+−")


def mathy(text: str) -> bool:
    """Looks like a formula: math symbols present, not a prose sentence."""
    if not any(c in _MATH for c in text):
        return False
    words = re.findall(r"[A-Za-z]{4,}", text)
    return len(words) <= max(3, len(text) // 25)


def find_equations(spans: list[Span]) -> tuple[list[Block], set[int]]:
    """Equation blocks and the ids of the spans they consume."""
    eqs, used = [], set()
    for s in spans:
        m = _NUMBER.match(s.text.strip())
        body: list[Span] = []
        if m:
            body = [t for t in spans if t is not s and abs(t.yc - s.yc) < 0.6 * max(s.size, 3)
                    and t.x1 <= s.x0 + 1 and id(t) not in used]
            number, text = m.group(1), " ".join(t.text for t in sorted(body, key=lambda t: t.x0))
            parts = body + [s]
        else:
            m2 = _INLINE.match(s.text.strip())
            if not m2 or len(s.text) > 160:
                continue
            number, text, parts = m2.group(2), m2.group(1), [s]
        if not text or not mathy(text) or len(text) > 300:
            continue
        used.update(id(t) for t in parts)
        box = union(t.box for t in parts)
        eqs.append(Block(*box, kind="equation", text=text.strip(), equation_number=number,
                         size=s.size))
    return eqs, used
