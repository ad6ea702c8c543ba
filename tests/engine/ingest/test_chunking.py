from docray.engine.config import ChunkConfig
from docray.engine.describe.structural import StructuralDescriber
from docray.engine.ingest.chunking import chunk_units, count_tokens
from docray.engine.model import Cell, TableContent, Unit

DOC = "d00c"


def _u(i, text="", modality="text", page=1, section=("S",), **kw):
    return Unit(unit_id=f"{DOC}:u{i}", doc_id=DOC, page=page, order=i, modality=modality,
                bbox=kw.pop("bbox", (0.1, 0.1, 0.5, 0.2)), section=list(section), text=text,
                **kw)


def _words(prefix, n):
    return " ".join(f"{prefix}{k}" for k in range(n))


def _table():
    rows = [[Cell(text=h, is_header=True) for h in ("name", "value")]]
    rows += [[Cell(text=f"row{r}"), Cell(text=str(r))] for r in range(60)]
    return TableContent(rows=rows, header_rows=1)


def test_text_windows_honour_size_and_overlap():
    units = [_u(0, _words("w", 100))]
    chunks = chunk_units(units, ChunkConfig(size_tokens=30, overlap_tokens=10), "ws")
    assert len(chunks) > 3
    for a, b in zip(chunks, chunks[1:]):
        assert count_tokens(a.text) <= 30
        tail = a.text.split()[-10:]
        assert b.text.split()[:10] == tail  # exactly 10 tokens of overlap
    covered = {w for c in chunks for w in c.text.split()}
    assert covered == set(_words("w", 100).split())


def test_sections_are_never_crossed():
    units = [_u(0, _words("a", 10), section=["1 Intro"]),
             _u(1, _words("b", 10), section=["2 Method"]),
             _u(2, _words("c", 10), section=["2 Method"], page=2, bbox=(0.1, 0.5, 0.9, 0.6))]
    chunks = chunk_units(units, ChunkConfig(size_tokens=100, overlap_tokens=20), "ws")
    assert [c.section for c in chunks] == [["1 Intro"], ["2 Method"]]
    assert chunks[0].text == _words("a", 10)
    assert chunks[1].unit_ids == [f"{DOC}:u1", f"{DOC}:u2"] and chunks[1].pages == [1, 2]
    assert chunks[1].bbox == (0.1, 0.1, 0.5, 0.2)  # two pages: first unit's bbox
    assert chunks[1].text == _words("b", 10) + "\n" + _words("c", 10)


def test_table_figure_equation_are_whole_chunks():
    units = [_u(0, _words("a", 20)),
             _u(1, modality="table", caption="Table 1: Big.", table=_table(),
                bbox=(0.2, 0.3, 0.8, 0.9)),
             _u(2, _words("b", 5)),
             _u(3, "E = m c^2", modality="equation", equation_number="1"),
             _u(4, "axis", modality="image", caption="Figure 1: plot")]
    units = StructuralDescriber().describe(units)
    chunks = chunk_units(units, ChunkConfig(size_tokens=16, overlap_tokens=4), "ws")
    tables = [c for c in chunks if c.modality == "table"]
    assert len(tables) == 1 and tables[0].unit_ids == [f"{DOC}:u1"]
    t = tables[0].text
    assert t.startswith(units[1].description) and t.endswith(units[1].display_text())
    assert "row59 | value: 59" in t and count_tokens(t) > 16  # not split despite size
    assert tables[0].bbox == (0.2, 0.3, 0.8, 0.9)
    assert [c.modality for c in chunks][-3:] == ["text", "equation", "image"]
    assert not any("row1" in c.text for c in chunks if c.modality == "text")


def test_ids_workspace_and_furniture():
    units = [_u(0, "Page 7", modality="page_number"), _u(1, "hello world"),
             _u(2, "Running header", modality="header")]
    chunks = chunk_units(units, ChunkConfig(), "tenant")
    assert [(c.chunk_id, c.text, c.workspace) for c in chunks] == [(f"{DOC}:c0", "hello world",
                                                                   "tenant")]
    assert chunk_units([], ChunkConfig(), "x") == []
    again = chunk_units(units, ChunkConfig(), "tenant")
    assert again == chunks  # deterministic


def test_one_page_union_bbox():
    units = [_u(0, "a b", bbox=(0.1, 0.1, 0.5, 0.2)), _u(1, "c d", bbox=(0.3, 0.4, 0.9, 0.5))]
    (chunk,) = chunk_units(units, ChunkConfig(), "ws")
    assert chunk.bbox == (0.1, 0.1, 0.9, 0.5)
