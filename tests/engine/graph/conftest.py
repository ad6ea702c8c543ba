"""Shared fixtures: a 3M-like cash-flow table with a two-level header, and text chunks."""
from __future__ import annotations

import pytest

from docray.engine.model import Cell, Chunk, TableContent, Unit

DOC = "doc3m"


def _row(*texts: str, header: bool = False) -> list[Cell]:
    return [Cell(text=t, is_header=header) for t in texts]


def cashflow_unit(doc_id: str = DOC, unit_id: str = "t1") -> Unit:
    rows = [
        [Cell(text="(Millions)", is_header=True, row_span=2),
         Cell(text="Years ended December 31", is_header=True, col_span=3)],
        _row("2018", "2017", "2016", header=True),
        _row("Cash Flows from Investing Activities", "", "", ""),
        _row("Purchases of property, plant and equipment (PP&E)", "(1,577)", "(1,373)", "(1,420)"),
        _row("Proceeds from sale of PP&E and other assets", "262", "49", "58"),
    ]
    table = TableContent(rows=rows, header_rows=2, header_cols=1)
    return Unit(unit_id=unit_id, doc_id=doc_id, page=3, bbox=(0.1, 0.2, 0.9, 0.6),
                modality="table", table=table,
                caption="3M Company Consolidated Statement of Cash Flows",
                description="Cash flow statement of 3M for 2016-2018.")


TEXT = ("3M spent $1,577 million on purchases of property, plant and equipment (PP&E) in 2018. "
        "Capital spending at 3M rose 12.5% as PP&E investment grew. "
        "3M expects PP&E spending of about $1.7 billion next year.")


def text_chunk(doc_id: str = DOC, chunk_id: str = "c1", text: str = TEXT) -> Chunk:
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, text=text, pages=[2], unit_ids=["u1"])


@pytest.fixture
def cashflow() -> Unit:
    return cashflow_unit()


@pytest.fixture
def chunk() -> Chunk:
    return text_chunk()
