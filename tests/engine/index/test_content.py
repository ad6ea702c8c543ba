"""Content store reads: parsed records are reused, and never outlive a change to the file."""
from docray.engine.index.content import ContentStore, _Parsed
from docray.engine.model import Chunk, Unit


def _doc(doc: str, text: str, pages=(1,)):
    units = [Unit(unit_id=f"{doc}:p{p}:u0", doc_id=doc, page=p, bbox=(0, 0, 1, 1),
                  modality="text", text=f"{text} (page {p})") for p in pages]
    chunks = [Chunk(chunk_id=f"{doc}:c0", doc_id=doc, text=text, pages=list(pages),
                    unit_ids=[u.unit_id for u in units])]
    return units, chunks


def test_repeated_reads_return_the_parsed_records_of_the_first(tmp_path):
    store = ContentStore(tmp_path / "c.sqlite")
    store.add_doc("ws", *_doc("d1", "Revenue rose."))
    first = store.chunks("ws", ["d1:c0"])["d1:c0"]
    again = store.chunks("ws", ["d1:c0", "d1:c0"])
    assert list(again) == ["d1:c0"] and again["d1:c0"] is first
    assert first.text == "Revenue rose."
    assert store.chunks("other", ["d1:c0"]) == {}  # the cache is per workspace too


def test_a_write_by_another_connection_is_seen_by_the_next_read(tmp_path):
    reader, writer = ContentStore(tmp_path / "c.sqlite"), ContentStore(tmp_path / "c.sqlite")
    writer.add_doc("ws", *_doc("d1", "Revenue rose.", pages=(1, 2)))
    assert reader.chunks("ws", ["d1:c0"])["d1:c0"].text == "Revenue rose."
    assert reader.chunks_on_pages("ws", [("d1", 2)]) == {("d1", 2): ["d1:c0"]}
    assert reader.units("ws", ["d1:p2:u0"])["d1:p2:u0"].page == 2
    assert reader.chunks_for_units("ws", ["d1:p2:u0", "nope"]) == {"d1:p2:u0": ["d1:c0"]}

    writer.delete_doc("ws", "d1")  # another process re-ingests the document, changed
    writer.add_doc("ws", *_doc("d1", "Revenue fell.", pages=(1,)))
    assert reader.chunks("ws", ["d1:c0"])["d1:c0"].text == "Revenue fell."
    assert reader.chunks_on_pages("ws", [("d1", 2)]) == {("d1", 2): []}
    assert reader.units("ws", ["d1:p2:u0"]) == {}
    assert reader.chunks_for_units("ws", ["d1:p2:u0", "d1:p1:u0"]) == {"d1:p1:u0": ["d1:c0"]}


def test_own_deletes_are_seen_at_once(tmp_path):
    store = ContentStore(tmp_path / "c.sqlite")
    store.add_doc("ws", *_doc("d1", "Revenue rose."))
    assert store.chunks("ws", ["d1:c0"]) and store.chunks_for_units("ws", ["d1:p1:u0"])
    assert store.chunks_on_pages("ws", [("d1", 1)]) == {("d1", 1): ["d1:c0"]}
    store.delete_doc("ws", "d1")
    assert store.chunks("ws", ["d1:c0"]) == {}
    assert store.chunks_on_pages("ws", [("d1", 1)]) == {("d1", 1): []}
    assert store.chunks_for_units("ws", ["d1:p1:u0"]) == {}


def test_the_parsed_cache_keeps_the_most_recently_used_within_its_cap():
    cache = _Parsed(cap=2)
    cache.put_many({("chunk", "ws", "a"): 1, ("chunk", "ws", "b"): 2})
    assert cache.get_many([("chunk", "ws", "a")]) == {("chunk", "ws", "a"): 1}  # a is fresh
    cache.put_many({("chunk", "ws", "c"): 3})
    assert cache.get_many([("chunk", "ws", k) for k in "abc"]) == \
        {("chunk", "ws", "a"): 1, ("chunk", "ws", "c"): 3}
