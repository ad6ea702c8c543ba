"""MinerU 4.0.12 for real: the ``flash`` tier (text layer, offline, no model weights) parses
corpus PDFs in its own venv (``make setup`` builds .venv-mineru), and its Content List V1
comes in through docray's content_list import. Higher tiers need MinerU's local models."""
from __future__ import annotations

from pathlib import Path

import pytest

from docray.engine.config import ParseConfig
from docray.engine.errors import BadInput, Unavailable
from docray.engine.index.artifacts import ArtifactStore
from docray.engine.parse import get_parser

REPO = Path(__file__).resolve().parents[3]
MINERU_PY = REPO / ".venv-mineru" / "bin" / "python"
DOCS = {"1810.08699.pdf": 6, "2001.03131.pdf": 6}


def _config(**kw) -> ParseConfig:
    assert MINERU_PY.is_file(), f"{MINERU_PY} is missing: `make setup` builds it"
    return ParseConfig(backend="mineru", mineru_tier="flash", mineru_python=MINERU_PY, dpi=72,
                       **kw)


@pytest.fixture(scope="module")
def parsed(corpus_dir, tmp_path_factory):
    store = ArtifactStore(tmp_path_factory.mktemp("mineru") / "artifacts", workspace="m")
    parser = get_parser(_config(), store)
    return store, {name: parser.parse(corpus_dir / name) for name in DOCS}


@pytest.mark.corpus
def test_flash_tier_parses_corpus_pdfs_into_units(parsed):
    store, docs = parsed
    for name, n_pages in DOCS.items():
        doc = docs[name]
        assert doc.n_pages == n_pages == len(doc.pages) and doc.meta["parser"] == "mineru-flash"
        assert {u.page for u in doc.units} <= set(range(1, n_pages + 1))
        modalities = {u.modality for u in doc.units}
        assert {"title", "text", "table"} <= modalities, (name, modalities)
        assert sum(len(u.text) for u in doc.units if u.modality == "text") > 10_000
        for page in doc.pages:  # rendered like the native parser: ColPali reads these
            assert page.width > 0 and store.read(page.render_id)[:3] == b"\xff\xd8\xff"  # JPEG
        for u in doc.units:
            if u.artifact_id:  # MinerU's crops were moved into the artifact store
                assert u.artifact_id.startswith(f"m/{doc.doc_id}/mineru-")
                assert len(store.read(u.artifact_id)) > 100


@pytest.mark.corpus
def test_flash_tier_recovers_table_cells_and_sections(parsed):
    _, docs = parsed
    doc = docs["1810.08699.pdf"]  # pioNER: TABLE II compares the test sets
    table = next(u for u in doc.units if u.modality == "table" and "TABLE II" in u.caption)
    grid = table.table.grid()
    assert grid[0] == ["Test set", "Tokens", "LOC", "ORG", "PER"]
    assert ["Armenian", "53453", "1306", "1337", "1274"] in grid
    assert table.page == 3 and 0 <= table.bbox[0] < table.bbox[2] <= 1
    title = next(u for u in doc.units if u.modality == "title")
    assert "Armenian Named Entity Recognition" in title.text
    assert any(u.section and u.section[0] == title.text for u in doc.units[1:])


@pytest.mark.corpus
def test_parse_stage_runs_the_mineru_backend(corpus_dir, tmp_path):
    from docray.engine.config import DocrayConfig
    from docray.engine.ingest.stages.parse import parse_row
    from docray.engine.model import Document, file_doc_id

    cfg = DocrayConfig(paths={"data_dir": tmp_path}, parse=_config())
    path = corpus_dir / "2001.03131.pdf"
    row = parse_row({"path": str(path), "workspace": "w", "doc_id": file_doc_id(path)}, cfg)
    assert row.get("status") != "failed", row.get("error")
    doc = Document.model_validate_json(row["doc"])
    assert row["n_pages"] == 6 and doc.doc_id == file_doc_id(path) and len(doc.units) > 50


def test_a_file_that_is_not_a_pdf_is_bad_input(tmp_path):
    bad = tmp_path / "notes.pdf"
    bad.write_text("plain text, not a PDF")
    with pytest.raises(BadInput, match="not a PDF"):
        get_parser(_config()).parse(bad)


def test_an_interpreter_without_mineru_is_unavailable(tmp_path, multi_page_pdf):
    import importlib.util
    import sys

    with pytest.raises(Unavailable, match="does not exist"):
        get_parser(_config().model_copy(update={"mineru_python": tmp_path / "nope"})
                   ).parse(multi_page_pdf)
    if importlib.util.find_spec("mineru") is not None:  # a host with MinerU in this env
        pytest.skip("this interpreter has MinerU installed")
    with pytest.raises(Unavailable, match="has no MinerU"):
        get_parser(_config().model_copy(update={"mineru_python": Path(sys.executable)})
                   ).parse(multi_page_pdf)
