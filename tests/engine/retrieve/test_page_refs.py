"""A question that points at a page ("on page 14", "the cover", "page 9" as printed) ranks
that page's chunks first (query.page_refs, Fuser.referenced), on a real content store."""
from docray.engine.config import config_from_dict
from docray.engine.index.content import ContentStore
from docray.engine.model import Chunk, Unit
from docray.engine.retrieve.engine import Fuser
from docray.engine.retrieve.query import analyze, page_refs

WS, DOC = "ws", "d1"


def _store(tmp_path) -> ContentStore:
    store = ContentStore(tmp_path / "content.sqlite")
    chunks = [Chunk(chunk_id=f"c{p}", doc_id=DOC, text=f"text of page {p}", pages=[p],
                    unit_ids=[f"u{p}"], workspace=WS) for p in range(1, 16)]
    units = [Unit(unit_id=f"u{p}", doc_id=DOC, page=p, bbox=(0.1, 0.1, 0.9, 0.5),
                  modality="text", text=f"text of page {p}") for p in range(1, 16)]
    # the 12th page prints "9" as its page number (front matter is not numbered)
    units.append(Unit(unit_id="pn12", doc_id=DOC, page=12, bbox=(0.45, 0.95, 0.55, 0.98),
                      modality="page_number", text="9"))
    store.add_doc(WS, units, chunks)
    return store


def test_page_references_in_questions():
    assert page_refs("Format the date mentioned on page 14 as YYYY-MM-DD.") == [14]
    assert page_refs("What date is on the second page?") == [2]
    assert page_refs("How many people are in the images on the front cover?") == [1]
    assert page_refs("What is the name of the governor on the last page?") == [-1]
    assert page_refs("How many figures are in Pages 100-120 of this paper?") == []  # too wide
    # a list format shown as an example names no page; page likes are no page
    assert page_refs("List the pages with a logo, formatted like ['Page 2', 'Page 4']") == []
    assert page_refs("Which metrics count page likes and post reach?") == []


def test_the_named_page_leads_the_ranking_printed_or_counted(tmp_path):
    store = _store(tmp_path)
    fuser = Fuser(config_from_dict({"paths": {"data_dir": str(tmp_path)}}), store,
                  lambda ws, d: "report.pdf")
    dense = {"dense": [(f"c{p}", 1.0) for p in (3, 5, 7, 11, 2, 4)]}

    def top(question: str, doc_ids=(DOC,)) -> list[str]:
        plan = analyze(question, list(doc_ids) if doc_ids else None)
        ranked, _, _ = fuser.fuse(plan, WS, {"dense": dict(dense)})
        return [cid for cid, _ in ranked[:2]]

    assert top("What date is mentioned on page 14?")[0] == "c14"
    # "page 9" is the 9th page or the page printed 9 (the 12th): both lead
    assert set(top("What is the title of the diagram on page 9?")) == {"c9", "c12"}
    assert top("Who is named on the last page?")[0] == "c15"
    assert top("What is on page 14?", doc_ids=None)[0] == "c3"  # unscoped: no lookup
    assert fuser.referenced(analyze("What is on page 40?", [DOC]), WS) == []
    store.close()
