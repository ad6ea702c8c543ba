"""A small document of units: text on pages 1-3, a table, a figure and an equation."""
from docray.engine.model import Cell, TableContent, Unit

DOC = "doc0001"


def unit(i: int, modality: str = "text", page: int = 1, text: str = "", **kw) -> Unit:
    return Unit(unit_id=f"{DOC}:u{i}", doc_id=DOC, page=page, order=i,
                bbox=kw.pop("bbox", (0.1, 0.1 * (i % 8), 0.9, 0.1 * (i % 8) + 0.08)),
                modality=modality, text=text, **kw)


def results_table() -> TableContent:
    h = lambda t, cs=1: Cell(text=t, is_header=True, col_span=cs)  # noqa: E731
    c = lambda t: Cell(text=t)  # noqa: E731
    return TableContent(rows=[[h("Model"), h("Accuracy", cs=2)],
                              [h(""), h("dev"), h("test")],
                              [c("BERT"), c("84.1"), c("83.5")],
                              [c("docray"), c("91.2"), c("90.7")]],
                        header_rows=2, header_cols=1)


def document() -> list[Unit]:
    return [
        unit(0, "title", 1, "1 Introduction", section=["1 Introduction"]),
        unit(1, "text", 1, "We study retrieval. As shown in Fig. 3, recall grows with k.",
             section=["1 Introduction"]),
        unit(2, "table", 1, caption="Table 1: Accuracy on the benchmark.", table=results_table(),
             section=["1 Introduction"]),
        unit(3, "text", 2, "Table 1 shows docray beats BERT on both splits.",
             section=["2 Method"]),
        unit(4, "text", 2, "The score combines both signals.", section=["2 Method"]),
        unit(5, "equation", 2, "s(q, p) = \\sum_i \\max_j q_i \\cdot p_j",
             equation_number="2", section=["2 Method"]),
        unit(6, "text", 2, "where q_i is the i-th query token vector and p_j denotes a page "
             "token. Eq. (2) is exact.", section=["2 Method"]),
        unit(7, "text", 3, "Results are discussed next.", section=["3 Results"]),
        unit(8, "image", 3, "recall@k 0.5 0.9", caption="Figure 3: Recall versus k.",
             artifact_id="default/doc0001/fig3.png", section=["3 Results"]),
        unit(9, "text", 3, "Unrelated closing remarks about Figure 30.", section=["3 Results"]),
    ]
