import os

import pytest
from PIL import Image

from docray.engine.errors import BadInput, NotFound
from docray.engine.index.artifacts import ArtifactStore, media_type


def test_put_and_read_round_trip(tmp_path):
    store = ArtifactStore(tmp_path / "a", workspace="ws")
    aid = store.put_image("doc1", "fig-1.png", Image.new("RGB", (4, 3), "red"))
    assert aid == "ws/doc1/fig-1.png"
    assert store.read(aid)[:8] == b"\x89PNG\r\n\x1a\n"
    render = store.put_image("doc1", "page-0001.jpg", Image.new("RGBA", (4, 3), "red"))
    assert store.read(render)[:3] == b"\xff\xd8\xff"  # JPEG (RGB; the alpha is dropped)
    assert [media_type(a) for a in (aid, render)] == ["image/png", "image/jpeg"]


@pytest.mark.parametrize("bad", ["../x/y", "ws/../../etc/passwd", "ws/doc/..", "a/b", "/etc/x/y",
                                 "ws/doc/a b.png"])
def test_unsafe_ids_are_refused(tmp_path, bad):
    store = ArtifactStore(tmp_path / "a", workspace="ws")
    with pytest.raises(BadInput):
        store.resolve(bad)


def test_symlink_is_refused(tmp_path):
    store = ArtifactStore(tmp_path / "a", workspace="ws")
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    (tmp_path / "a" / "ws" / "d").mkdir(parents=True)
    os.symlink(secret, tmp_path / "a" / "ws" / "d" / "link.png")
    with pytest.raises(BadInput, match="symbolic link"):
        store.resolve("ws/d/link.png")


def test_oversized_and_missing(tmp_path):
    store = ArtifactStore(tmp_path / "a", workspace="ws", max_bytes=10)
    aid = store.put_bytes("d", "big.bin", b"x" * 11)
    with pytest.raises(BadInput, match="exceeds"):
        store.resolve(aid)
    with pytest.raises(NotFound):
        store.resolve("ws/d/missing.png")


def test_delete_doc_removes_only_that_doc(tmp_path):
    store = ArtifactStore(tmp_path / "a", workspace="ws")
    a = store.put_bytes("d1", "x.png", b"1")
    b = store.put_bytes("d2", "x.png", b"2")
    store.delete_doc("d1")
    with pytest.raises(NotFound):
        store.resolve(a)
    assert store.read(b) == b"2"
