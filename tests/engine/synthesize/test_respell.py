"""Misspelt questions answered as meant; dates in the form asked; ROI over two years."""
import asyncio

from docray.engine.model import Cell, Chunk, TableContent, Unit
from docray.engine.synthesize import Passage
from docray.engine.synthesize.asks import ask
from docray.engine.synthesize.extractive import ExtractiveAnswerer
from docray.engine.synthesize.respell import Respeller, english_words, respell
from docray.engine.synthesize.scope import Vocabulary


def _table(rows, page=84):
    cells = [[Cell(text=t, is_header=(i == 0)) for t in r] for i, r in enumerate(rows)]
    u = Unit(unit_id=f"d:p{page}:u1", doc_id="d", page=page, bbox=(0.1, 0.2, 0.9, 0.8),
             modality="table", table=TableContent(rows=cells, header_rows=1))
    ch = Chunk(chunk_id=f"d:c{page}", doc_id="d", text=u.display_text(), modality="table",
               pages=[page], unit_ids=[u.unit_id], bbox=u.bbox)
    return Passage(ch, [u], 1.0, "LWAY_2019_10K.pdf")


def _text(text, page=14):
    u = Unit(unit_id=f"d:p{page}:u2", doc_id="d", page=page, bbox=(0, 0.5, 1, 0.6),
             modality="text", text=text)
    ch = Chunk(chunk_id=f"d:t{page}", doc_id="d", text=text, pages=[page], unit_ids=[u.unit_id])
    return Passage(ch, [u], 1.0, "brief.pdf")


def _answer(q, passages):
    return asyncio.run(ExtractiveAnswerer(0.05).answer(q, passages))


SALES = [["In thousands", "2019", "2018"], ["Drinkable Kefir other than ProBugs", "71,822", "78,523"],
         ["Cheese", "11,459", "11,486"], ["ProBugs Kefir", "2,780", "2,795"],
         ["Net Sales", "93,662", "103,350"]]


def test_a_misspelt_row_label_finds_its_row():
    a = _answer("What is the amount of net sales from ProBugs Kelir in 2018 and 2019 "
                "respectively?", [_table(SALES)])
    assert a.value.startswith("2,795; 2,780"), a.answer
    assert "ProBugs Kefir" in a.answer


def test_english_words_and_inflections_are_not_respelt():
    assert english_words(), "the bundled MiniLM vocabulary is installed with the engine"
    text = ["The company charged 12 tweet replies and found three names."]
    # "change" is a word (not "charge"), "round" is a word (not "found"), "tweets" is
    # "tweet" inflected, not a typo
    q = "What is the change in tweets? Round to three names."
    assert respell(q, text) == q
    assert respell("What did Activsion report?", ["Activision Blizzard reported"]) == \
        "What did Activision report?"


def test_respelling_keeps_the_case_of_the_word():
    fix = Respeller({"sencrl"}, english=frozenset({"what"}))
    assert fix("What is INF SERCRL LLP's fax?") == "What is INF SENCRL LLP's fax?"


def test_scope_check_reads_a_five_letter_misspelt_name_as_the_documents():
    v = Vocabulary(["ProBugs Kefir sales rose."])
    assert v.mentions("kelir")
    assert not v.mentions("boeing")
    assert not v.mentions("sales2")


def test_date_on_a_page_in_the_form_asked():
    a = _answer("Format the date mentioned on page 14 as YYYY-MM-DD.",
                [_text("Attorneys for the Bank, 255 Saint-Jacques Street."),
                 _text("Montréal, February 8, 2021")])
    assert a.value == "2021-02-08", a.answer
    assert "February 8, 2021" in a.answer


def test_roi_over_two_dates_is_a_percentage_change():
    assert ask("What is the ROI of an investment in the index from March 2007 to March "
               "2010?").op == "percent_change"
    rows = [["", "3/31/2007", "3/31/2008", "3/31/2009", "3/31/2010"],
            ["ABIOMED, Inc", "100", "96.19", "35.87", "75.55"],
            ["Nasdaq Composite Index", "100", "94.11", "63.12", "99.02"]]
    a = _answer("what is the roi of an investment in abiomed inc from march 2007 to march 2010?",
                [_table(rows, 41)])
    assert a.value == "-24.45%", a.answer
