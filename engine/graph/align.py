"""Entity alignment: name normalisation, acronym recognition and merging.

Two mentions are the same entity when their normalised names are equal or one's name is
another's alias (``"property, plant and equipment (PP&E)"`` defines ``PP&E`` as an alias).
Merged entities get the id ``ent:{normalised canonical name}``.
"""
from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter

from docray.engine.model import Entity

log = logging.getLogger(__name__)

CONNECTORS = frozenset({"and", "of", "the", "for", "&", "in", "on", "to", "a", "an"})
_NO_SINGULAR = frozenset({"series", "species", "news", "analysis", "basis", "thesis", "status",
                          "bus", "gas", "lens", "its", "this", "was", "has", "does", "is", "us",
                          "always", "perhaps", "across", "business", "less", "process",
                          "physics", "economics", "statistics", "mathematics", "sales", "goods",
                          "means", "earnings", "savings", "proceeds"})
_ACRONYM = re.compile(r"^(?=[A-Za-z0-9&./-]*[A-Z])[A-Z0-9][A-Za-z0-9&./-]*$")
_DEF = re.compile(r"\(\s*([A-Z0-9][A-Za-z0-9&./-]*[A-Z0-9&])\s*\)")


def singularise(word: str) -> str:
    """Singular of a simple English plural; other words unchanged.

    >>> [singularise(w) for w in ["apples", "companies", "boxes", "glass", "analysis", "pp&e"]]
    ['apple', 'company', 'box', 'glass', 'analysis', 'pp&e']
    """
    if len(word) <= 3 or not word.isalpha() or word in _NO_SINGULAR:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def normalize(name: str) -> str:
    """Case-fold, drop possessives and punctuation, singularise, collapse whitespace.

    Currency, percent signs, ``&`` inside a token and decimal points survive, so numbers
    keep their meaning.

    >>> normalize("  Apples' ")
    'apple'
    >>> normalize("3M's Property,  Plant & Equipment")
    '3m property plant and equipment'
    >>> normalize("PP&E")
    'pp&e'
    >>> normalize("$1,577 Million")
    '$1577 million'
    >>> normalize("12.5%")
    '12.5%'
    """
    s = unicodedata.normalize("NFKC", name).casefold().replace("\u2019", "'")
    s = re.sub(r"'s\b", "", s)
    s = re.sub(r"(?<=s)'(?=\s|$)", "", s)
    s = re.sub(r"\s&\s", " and ", s)
    s = re.sub(r"(?<=\d),(?=\d{3})", "", s)
    s = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", s)
    s = re.sub(r"[^\w\s&$%€£¥.]|_", " ", s)
    s = re.sub(r"(?<!\w)&|&(?!\w)", " and ", s)
    return " ".join(singularise(w) for w in s.split())


def tokens(text: str) -> list[str]:
    """Normalised content tokens (connectors dropped), for overlap matching.

    >>> tokens("Purchases of property, plant and equipment")
    ['purchase', 'property', 'plant', 'equipment']
    """
    return [t for t in normalize(text).split() if t not in CONNECTORS]


def is_acronym(name: str) -> bool:
    """True for short upper-case tokens such as ``PP&E``, ``3M``, ``EBITDA``.

    >>> [is_acronym(x) for x in ["PP&E", "3M", "EBITDA", "Apple", "2018", "A"]]
    [True, True, True, False, False, False]
    """
    name = name.strip()
    return 2 <= len(name) <= 10 and " " not in name and bool(_ACRONYM.match(name)) \
        and sum(c.isupper() for c in name) >= max(1, sum(c.isalpha() for c in name) - 1)


def acronym_letters(acronym: str) -> str:
    """Lower-case letters of an acronym, for matching against initials.

    >>> acronym_letters("PP&E")
    'ppe'
    """
    return "".join(c for c in acronym.lower() if c.isalpha())


def initials(phrase: str) -> str:
    """Initials of the content words of a phrase.

    >>> initials("property, plant and equipment")
    'ppe'
    """
    words = re.findall(r"[A-Za-z][\w'-]*", phrase)
    return "".join(w[0].lower() for w in words if w.lower() not in CONNECTORS)


def expand_before(text: str, acronym: str) -> str | None:
    """The words right before ``text``'s end whose initials spell ``acronym``, if any.

    >>> expand_before("Purchases of property, plant and equipment ", "PP&E")
    'property, plant and equipment'
    >>> expand_before("cash flow ", "PP&E") is None
    True
    """
    letters = acronym_letters(acronym)
    if len(letters) < 2:
        return None
    words = list(re.finditer(r"[A-Za-z][\w'-]*|&", text))
    i, k, start = len(words) - 1, len(letters) - 1, None
    while i >= 0 and k >= 0:
        w = words[i].group(0)
        if w.lower() in CONNECTORS and k < len(letters) - 1:
            i -= 1
            continue
        if w[0].lower() != letters[k]:
            return None
        start, k, i = words[i].start(), k - 1, i - 1
    if k >= 0 or start is None:
        return None
    return text[start:].strip().rstrip(",;:")


def acronym_definitions(text: str) -> list[tuple[str, str, int, int]]:
    """``(expansion, acronym, start, end)`` for each "long form (ACRONYM)" in ``text``.

    >>> acronym_definitions("Purchases of property, plant and equipment (PP&E) rose.")[0][:2]
    ('property, plant and equipment', 'PP&E')
    """
    found = []
    for m in _DEF.finditer(text):
        acronym = m.group(1)
        if not is_acronym(acronym):
            continue
        head = text[max(0, m.start() - 200):m.start()]
        exp = expand_before(head, acronym)
        if exp:
            found.append((exp, acronym, m.start() - len(head) + head.rfind(exp), m.end()))
    return found


def split_definition(name: str) -> tuple[str, list[str]]:
    """Split ``"long form (ACR)"`` into the long form and its alias.

    >>> split_definition("Property, plant and equipment (PP&E)")
    ('Property, plant and equipment', ['PP&E'])
    >>> split_definition("Apple")
    ('Apple', [])
    """
    m = re.match(r"^(.*?)\s*\(\s*([^()]+?)\s*\)\s*$", name)
    if m and is_acronym(m.group(2)) and initials(m.group(1)).endswith(acronym_letters(m.group(2))):
        return m.group(1).strip(), [m.group(2)]
    return name, []


class _UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _canonical(group: list[Entity]) -> str:
    """Most frequent surface name, preferring long forms over acronyms, then longer names."""
    counts = Counter(e.name for e in group)
    return max(counts, key=lambda n: (not is_acronym(n), counts[n], len(n)))


def _link_initials(prepared: list[tuple[Entity, str, list[str]]], uf: _UnionFind) -> None:
    """Join an acronym (>= 3 letters) with the one long-form name whose initials spell it."""
    by_initials: dict[str, set[int]] = {}
    for i, (_, name, _aliases) in enumerate(prepared):
        if not is_acronym(name) and len(name.split()) >= 2:
            by_initials.setdefault(initials(name), set()).add(uf.find(i))
    for i, (_, name, _aliases) in enumerate(prepared):
        if is_acronym(name) and len(acronym_letters(name)) >= 3:
            roots = {uf.find(r) for r in by_initials.get(acronym_letters(name), ())}
            if len(roots) == 1:
                uf.union(i, roots.pop())


def merge_entities(entities: list[Entity], match_initials: bool = True
                   ) -> tuple[list[Entity], dict[str, str]]:
    """Merge entities sharing a normalised name or alias; returns ``(merged, old_id -> new_id)``.

    >>> a = Entity(entity_id="x", name="Apples", doc_ids=["d1"])
    >>> b = Entity(entity_id="y", name="apple", doc_ids=["d2"])
    >>> merged, ids = merge_entities([a, b])
    >>> [(e.entity_id, e.doc_ids) for e in merged], ids["y"]
    ([('ent:apple', ['d1', 'd2'])], 'ent:apple')
    """
    prepared = []
    for e in entities:
        name, extra = split_definition(e.name)
        prepared.append((e, name, [*extra, *e.aliases]))
    uf = _UnionFind(len(prepared))
    owner: dict[str, int] = {}
    for i, (_, name, aliases) in enumerate(prepared):
        for key in {normalize(name), *(normalize(a) for a in aliases)} - {""}:
            if key in owner:
                uf.union(i, owner[key])
            else:
                owner[key] = i
    if match_initials:
        _link_initials(prepared, uf)
    groups: dict[int, list[int]] = {}
    for i in range(len(prepared)):
        groups.setdefault(uf.find(i), []).append(i)
    merged, id_map = [], {}
    for members in groups.values():
        ent = _merge_group([prepared[i] for i in members])
        merged.append(ent)
        for i in members:
            id_map[prepared[i][0].entity_id] = ent.entity_id
    return merged, id_map


def _merge_group(items: list[tuple[Entity, str, list[str]]]) -> Entity:
    renamed = [e.model_copy(update={"name": n}) for e, n, _ in items]
    name = _canonical(renamed)
    norm = normalize(name)
    aliases: dict[str, str] = {}
    for e, n, extra in items:
        for a in (n, *extra):
            if normalize(a) != norm:
                aliases.setdefault(normalize(a), a)
    types = Counter(e.type for e, _, _ in items)
    return Entity(
        entity_id=f"ent:{norm}", name=name, type=types.most_common(1)[0][0],
        aliases=sorted(aliases.values()),
        description=next((e.description for e, _, _ in items if e.description), ""),
        unit_ids=sorted({u for e, _, _ in items for u in e.unit_ids}),
        doc_ids=sorted({d for e, _, _ in items for d in e.doc_ids}))
