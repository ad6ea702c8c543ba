import pytest

from docray.engine.index.catalog import Catalog


def test_states_and_lookup(tmp_path):
    cat = Catalog(tmp_path / "c.sqlite")
    cat.upsert("ws", "abc123def", "/x/a.pdf", "a.pdf", "running")
    cat.set_status("ws", "abc123def", "failed", error="boom")
    row = cat.get("ws", "abc123def")
    assert (row["status"], row["error"]) == ("failed", "boom")
    assert cat.find("ws", "a.pdf")["doc_id"] == "abc123def"
    assert cat.find("ws", "abc123")["doc_id"] == "abc123def"
    assert cat.find("other", "a.pdf") is None
    cat.upsert("ws", "abc123def", "/x/a.pdf", "a.pdf", "done", n_pages=3, stats={"units": 9})
    assert [r["status"] for r in cat.list("ws")] == ["done"]
    assert cat.get("ws", "abc123def")["stats"] == {"units": 9}
    assert cat.delete("ws", "abc123def") and cat.get("ws", "abc123def") is None


def test_unknown_status_is_refused(tmp_path):
    with pytest.raises(ValueError, match="bogus"):
        Catalog(tmp_path / "c.sqlite").upsert("ws", "d", "s", "f", "bogus")


def test_persists_across_instances(tmp_path):
    Catalog(tmp_path / "c.sqlite").upsert("ws", "d", "s", "f", "done")
    assert Catalog(tmp_path / "c.sqlite").get("ws", "d")["status"] == "done"
