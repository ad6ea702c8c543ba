from docray.engine.graph.records import (
    CELL, COLUMN, COLUMN_OF, EQUATION, HEADER, HEADER_APPLIES_TO, IMAGE, ROW, ROW_OF, TABLE,
    UNIT_OF)
from docray.engine.graph.structure import equation_graph, figure_graph, find_cell, table_graph
from docray.engine.model import Cell, TableContent, Unit

from .conftest import cashflow_unit

ROW_TEXT = "Purchases of property, plant and equipment (PP&E)"


def _edges(edges):
    return {(e.src, e.type, e.dst) for e in edges}


def test_table_graph_cell_row_column_edges(cashflow):
    nodes, edges = table_graph(cashflow)
    by_id = {n.id: n for n in nodes}
    assert by_id["unit:t1"].kind == TABLE
    cell = by_id["t1:r3c1"]
    assert cell.kind == CELL and cell.name == "(1,577)"
    assert cell.attrs["row_label"] == ROW_TEXT and cell.attrs["col_leaf"] == "2018"
    row, col = by_id["t1:row3"], by_id["t1:col1"]
    assert row.kind == ROW and row.name == ROW_TEXT
    assert col.kind == COLUMN and col.name == "2018"
    assert col.attrs["path"] == ["Years ended December 31", "2018"]
    e = _edges(edges)
    assert ("t1:r3c1", ROW_OF, "t1:row3") in e
    assert ("t1:r3c1", COLUMN_OF, "t1:col1") in e
    assert ("t1:r3c1", UNIT_OF, "unit:t1") in e and ("t1:row3", UNIT_OF, "unit:t1") in e
    header = next(n for n in nodes if n.kind == HEADER)
    assert header.name == "Years ended December 31"
    assert {d for s, t, d in e if s == header.id and t == HEADER_APPLIES_TO} == \
        {"t1:col1", "t1:col2", "t1:col3"}
    assert by_id["unit:t1"].attrs["corner"] == "(Millions)"
    assert all(n.doc_id == "doc3m" and n.page == 3 for n in nodes)


def test_table_graph_ids_are_deterministic(cashflow):
    a, b = table_graph(cashflow), table_graph(cashflow_unit())
    assert [n.id for n in a[0]] == [n.id for n in b[0]]
    assert _edges(a[1]) == _edges(b[1])


def test_find_cell_on_nodes(cashflow):
    nodes, _ = table_graph(cashflow)
    assert find_cell(nodes, ROW_TEXT, "2018").name == "(1,577)"
    assert find_cell(nodes, "purchases of property, plant and equipment", "2016").name == "(1,420)"
    assert find_cell(nodes, "Proceeds from sale of PP&E", "Years ended December 31").name == "262"
    assert find_cell(nodes, "Dividends", "2018") is None


def test_header_inferred_when_not_declared():
    rows = [[Cell(text=t) for t in r] for r in
            [["(Millions)", "2018", "2017"], ["Net income", "5,349", "4,858"]]]
    unit = Unit(unit_id="t2", doc_id="d", page=1, bbox=(0, 0, 1, 1), modality="table",
                table=TableContent(rows=rows))
    nodes, _ = table_graph(unit)
    assert find_cell(nodes, "Net income", "2017").name == "4,858"


def test_figure_graph_caption_panels_labels():
    unit = Unit(unit_id="f1", doc_id="d", page=2, bbox=(0, 0, 1, 1), modality="image",
                caption="Figure 2: Revenue by segment. (a) Safety (b) Health care",
                text="Revenue ($ millions)\n2016\n2017\nYear")
    nodes, edges = figure_graph(unit)
    kinds = {n.kind for n in nodes}
    assert nodes[0].id == "unit:f1" and nodes[0].kind == IMAGE
    assert {"caption", "panel", "figure_label"} <= kinds
    assert {n.name for n in nodes if n.kind == "panel"} == {"(a) Safety", "(b) Health care"}
    axis = [n for n in nodes if n.kind == "figure_label"]
    assert {n.name for n in axis} == {"Revenue ($ millions)", "Year"}
    assert all(e.dst == "unit:f1" and e.type == UNIT_OF for e in edges)


def test_equation_graph_number():
    unit = Unit(unit_id="e1", doc_id="d", page=4, bbox=(0, 0, 1, 1), modality="equation",
                text="s(q,p) = \\sum_i \\max_j q_i p_j", equation_number="(3)")
    nodes, edges = equation_graph(unit)
    assert nodes[0].kind == EQUATION and nodes[0].attrs["number"] == "3"
    assert nodes[0].name == "Equation (3)"
    assert [(e.src, e.dst) for e in edges] == [("e1:eqnum", "unit:e1")]
