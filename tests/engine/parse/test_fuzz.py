"""Fuzzed documents (the fast part of benchmarks/fuzz_parse.py): hostile files and
hypothesis-chosen mutants of a real corpus PDF each end parsed or in a BadInput naming the
file, in a worker under a 4 GB address-space cap and a per-file time limit."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import fuzz_parse  # noqa: E402

pytestmark = pytest.mark.slow
OK = {"parsed", "bad_input"}


@pytest.fixture(scope="module")
def guard():
    g = fuzz_parse.GuardedParser(timeout_s=30, mem_mb=4096)
    yield g
    g.close()


def test_hostile_files_end_parsed_or_in_a_named_bad_input(tmp_path, guard):
    got = {p.name: guard.parse(p)[:2] for p in fuzz_parse.hostile_inputs(tmp_path)}
    assert {k for k, _ in got.values()} <= OK, got
    refused = {"zero_pages.pdf": "no pages", "encrypted.pdf": "encrypted",
               "ten_thousand_pages.pdf": "limits.max_pages", "absurd_image.png": "pixels",
               "binary_as.md": "UTF-8", "nul_text.md": "NUL"}
    for name, cause in refused.items():
        assert got[name][0] == "bad_input" and cause in got[name][1], (name, got[name])
    for name in ("huge_page_box.pdf", "image_bomb.pdf", "deep_nesting.pdf", "broken_xref.pdf"):
        assert got[name][0] == "parsed", (name, got[name])


def test_a_huge_page_box_renders_under_the_pixel_cap(tmp_path):
    from docray.engine.config import ParseConfig
    from docray.engine.index.artifacts import ArtifactStore
    from docray.engine.parse.native import NativeParser
    from docray.engine.parse.native.pdf import MAX_RENDER_PIXELS
    from PIL import Image

    src = next(p for p in fuzz_parse.hostile_inputs(tmp_path) if p.name == "huge_page_box.pdf")
    store = ArtifactStore(tmp_path / "art", workspace="w")
    doc = NativeParser(ParseConfig(ocr="never", layout=False), store).parse(src)
    with Image.open(store.resolve(doc.pages[0].render_id)) as im:
        assert im.width * im.height <= MAX_RENDER_PIXELS and im.width > 1000
    assert doc.pages[0].width == 14400  # bboxes stay in points


@pytest.fixture(scope="module")
def seed(corpus_dir) -> bytes:
    return (corpus_dir / "1810.08699.pdf").read_bytes()


@pytest.mark.corpus
@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(cut=st.one_of(st.none(), st.floats(0.0, 1.0)),
       flips=st.lists(st.tuples(st.floats(0.0, 1.0), st.integers(0, 7)), max_size=64))
def test_mutated_corpus_pdf_never_crashes_hangs_or_blows_memory(tmp_path_factory, guard,
                                                                 seed, cut, flips):
    data = bytearray(seed if cut is None else seed[: max(1, int(len(seed) * cut))])
    for where, bit in flips:
        data[min(len(data) - 1, int(len(data) * where))] ^= 1 << bit
    path = tmp_path_factory.mktemp("mutant") / "mutant.pdf"
    path.write_bytes(bytes(data))
    kind, detail, _ = guard.parse(path)
    assert kind in OK, (kind, detail, cut, flips)


def test_a_malformed_page_pdfplumber_never_needed_does_not_fail_the_document(table_pdf,
                                                                               tmp_path):
    """pdfplumber opens for page 1's ruled table; page 2's MediaBox is not numbers. The
    document parses (pdfplumber's close() used to load page 2 and raise)."""
    import pypdfium2 as pdfium

    from docray.engine.config import ParseConfig
    from docray.engine.parse.native import NativeParser

    pdf = pdfium.PdfDocument(str(table_pdf[0]))
    pdf.new_page(612, 792)
    path = tmp_path / "two.pdf"
    pdf.save(str(path))
    pdf.close()
    data = path.read_bytes()
    last = data.rindex(b"/MediaBox")
    end = data.index(b"]", last)
    path.write_bytes(data[:last] + b"/MediaBox[0 0 612 /X" + data[end:])
    doc = NativeParser(ParseConfig(ocr="never", layout=False)).parse(path)
    assert doc.n_pages == 2 and any(u.modality == "table" for u in doc.units)
