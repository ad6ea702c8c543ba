from docray.engine.config import ExtractConfig
from docray.engine.graph.extract import Extractor, make_extractor
from docray.engine.graph.extract.lexical import LexicalExtractor
from docray.engine.model import Chunk
from docray.engine.registry import EXTRACTORS

from .conftest import cashflow_unit, text_chunk


def _names(entities):
    return {n for e in entities for n in (e.name, *e.aliases)}


def test_finds_names_acronyms_and_numbers(chunk):
    entities, _ = LexicalExtractor().extract([chunk])
    names = _names(entities)
    assert {"3M", "PP&E", "$1,577 million", "12.5%", "$1.7 billion"} <= names
    ppe = next(e for e in entities if "PP&E" in e.aliases)
    assert ppe.name == "property, plant and equipment"
    assert all(e.doc_ids == ["doc3m"] and e.unit_ids == ["u1"] for e in entities)
    types = {e.name: e.type for e in entities}
    assert types["$1,577 million"] == "money" and types["12.5%"] == "percent"


def test_cooccurrence_weight_grows_with_count():
    once = Chunk(chunk_id="a", doc_id="d", text="Acme Corp bought Globex Inc. The sky is blue.")
    twice = Chunk(chunk_id="b", doc_id="d",
                  text="Acme Corp bought Globex Inc. Later Acme Corp sold Globex Inc.")

    def weight(ch):
        _, rels = LexicalExtractor().extract([ch])
        return next(r.weight for r in rels if {r.src, r.dst} == {"ent:acme corp", "ent:globex inc"})

    assert weight(twice) > weight(once) >= 1.0


def test_belongs_to_anchor_for_table_unit():
    entities, rels = LexicalExtractor().extract([cashflow_unit()])
    belongs = {(r.src, r.dst) for r in rels if r.type == "belongs_to"}
    assert ("ent:3m", "unit:t1") in belongs
    assert all(r.unit_id == "t1" for r in rels if r.type == "belongs_to")
    assert "PP&E" in _names(entities)


def test_deterministic(chunk):
    a, b = LexicalExtractor().extract([chunk]), LexicalExtractor().extract([text_chunk()])
    assert a == b


def test_entity_cap_respected():
    text = " ".join(f"Company{i} Holdings bought {i}% of Widget{i} Systems." for i in range(30))
    ch = Chunk(chunk_id="x", doc_id="d", text=text)
    entities, _ = LexicalExtractor(ExtractConfig(max_entities_per_chunk=5), max_phrases=0).extract([ch])
    assert len(entities) <= 5


def test_registry_entries_resolve_to_extractors():
    for name in EXTRACTORS.names():
        cls = EXTRACTORS.resolve(name)
        assert callable(getattr(cls, "extract", None))
    assert isinstance(make_extractor(), Extractor)
