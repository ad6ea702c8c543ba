from docray.engine.graph.align import (
    acronym_definitions, is_acronym, merge_entities, normalize, split_definition)
from docray.engine.model import Entity


def E(i, name, aliases=(), docs=("d1",), units=("u1",)):
    return Entity(entity_id=i, name=name, aliases=list(aliases), doc_ids=list(docs),
                  unit_ids=list(units))


def test_normalize():
    assert normalize("Apples") == normalize("apple") == "apple"
    assert normalize("3M's") == "3m"
    assert normalize("  Property,   Plant & Equipment ") == "property plant and equipment"
    assert normalize("Companies") == "company"


def test_acronym_definition_and_split():
    defs = acronym_definitions("Purchases of property, plant and equipment (PP&E) were high.")
    assert [(d[0], d[1]) for d in defs] == [("property, plant and equipment", "PP&E")]
    assert split_definition("Property, plant and equipment (PP&E)") == \
        ("Property, plant and equipment", ["PP&E"])
    assert is_acronym("PP&E") and not is_acronym("Plant")


def test_merge_by_alias_and_plural():
    ents = [E("a", "Property, plant and equipment", aliases=["PP&E"], docs=["d1"]),
            E("b", "PP&E", docs=["d2"], units=["u2"]),
            E("c", "Apples"), E("d", "apple", docs=["d3"])]
    merged, ids = merge_entities(ents)
    by_id = {e.entity_id: e for e in merged}
    ppe = by_id["ent:property plant and equipment"]
    assert ids["a"] == ids["b"] == ppe.entity_id
    assert ppe.aliases == ["PP&E"] and ppe.doc_ids == ["d1", "d2"] and ppe.unit_ids == ["u1", "u2"]
    assert ids["c"] == ids["d"] == "ent:apple" and by_id["ent:apple"].doc_ids == ["d1", "d3"]
    assert len(merged) == 2


def test_merge_definition_in_name_and_initials():
    merged, ids = merge_entities([E("a", "property, plant and equipment (PP&E)"), E("b", "PP&E")])
    assert len(merged) == 1 and merged[0].name == "property, plant and equipment"
    merged, _ = merge_entities([E("a", "earnings before interest and taxes"), E("b", "EBIT")])
    assert len(merged) == 1
    merged, _ = merge_entities([E("a", "Acme"), E("b", "AI")])
    assert len(merged) == 2


def test_doctests_of_graph_modules():
    import doctest
    import importlib

    for name in ("align", "records", "structure", "extract.base", "extract.lexical", "extract.llm"):
        mod = importlib.import_module(f"docray.engine.graph.{name}")
        result = doctest.testmod(mod)
        assert result.failed == 0, name
