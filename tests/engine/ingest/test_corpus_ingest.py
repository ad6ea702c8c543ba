"""Corpus ingestion: 10+ real documents through the Ray pipeline, 3M's table graph."""
from __future__ import annotations

import pytest

from docray.engine.graph.structure import find_cell
from docray.engine.ingest import ingest
from docray.engine.ingest.stores import Stores
from docray.engine.model import file_doc_id

pytestmark = [pytest.mark.corpus, pytest.mark.slow, pytest.mark.usefixtures("ray_cluster")]

DOCS = ["3M_2018_10K.pdf", "ULTABEAUTY_2023Q4_EARNINGS.pdf", "AMCOR_2023Q4_EARNINGS.pdf",
        "1801.05147.pdf", "1810.08699.pdf", "2001.03131.pdf", "2310.07609v1.pdf",
        "2303.05039v2.pdf", "379f44022bb27aa53efd5d322c7b57bf.pdf",
        "f86d073b0d735ac873a65d906ba82758.pdf", "f8d3a162ab9507e021d83dd109118b60.pdf"]


def test_corpus_subset_fills_every_index(cfg, corpus_dir):
    paths = [corpus_dir / d for d in DOCS]
    summary = ingest(paths, cfg, "corpus")
    assert (summary.ok, summary.failed) == (len(DOCS), 0), summary.failures
    assert summary.pages == 160 + 9 + 14 + 9 + 6 + 6 + 10 + 9 + 17 + 20 + 17
    # sane modality counts: mostly text, real tables, some figures, chunks per page
    assert summary.units["text"] > 10 * summary.pages / 10
    assert summary.units["table"] >= 100 and summary.units.get("image", 0) >= 5
    assert 1 <= summary.chunks / summary.pages <= 20
    s = Stores.open(cfg)
    try:
        threem = file_doc_id(corpus_dir / "3M_2018_10K.pdf")
        row = "Purchases of property, plant and equipment (PP&E)"
        # the cash-flow statement on p.60 (the same line item recurs in other tables)
        cells = [n for n in s.graph.iter_nodes("corpus", kind="table_cell")
                 if n.doc_id == threem and n.page == 60 and n.attrs.get("row_label") == row
                 and n.attrs.get("col_leaf") == "2018"]
        assert len(cells) == 1, cells
        cell = cells[0]
        assert cell.name == "(1,577)"
        assert find_cell(s.graph, row, "2018", workspace="corpus").name == "(1,577)"
        types = {t for _, t, _ in s.graph.neighbors(cell.id, workspace="corpus")}
        assert {"row-of", "column-of"} <= types
        pages = {(r.doc_id, r.page_no) for r, _ in s.pages.pages("corpus")}
        assert len(pages) == summary.pages
        assert s.dense.count("chunks", workspace="corpus") == summary.chunks
    finally:
        s.close()
