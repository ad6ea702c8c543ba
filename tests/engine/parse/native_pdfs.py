"""PDF fixture builders for the native parser tests (reportlab / PIL, written to tmp_path).

Every builder returns the path plus the page-relative box (x0, y0, x1, y1; origin
top-left) of the element it drew, so tests can check that the parsed bbox contains it.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

W, H = 612.0, 792.0  # US letter, points

LOREM = ("Retrieval systems read documents in many layouts and must keep the reading "
         "order of every paragraph intact across columns and pages for later answers. ")


def _font(size: int):
    import reportlab
    from PIL import ImageFont

    return ImageFont.truetype(os.path.join(os.path.dirname(reportlab.__file__), "fonts", "Vera.ttf"), size)


def rel(x0: float, top: float, x1: float, bottom: float) -> tuple[float, float, float, float]:
    """Points (top-left origin) → page-relative box."""
    return (x0 / W, top / H, x1 / W, bottom / H)


def contains(outer, inner, tol: float = 0.02) -> bool:
    return (outer[0] - tol <= inner[0] and outer[1] - tol <= inner[1]
            and outer[2] + tol >= inner[2] and outer[3] + tol >= inner[3])


def _wrap(c, text: str, x: float, top: float, width: float, size: float = 10, lead: float = 13):
    """Draw wrapped text from ``top`` (top-left origin); returns the bottom y."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    words, line, y = text.split(), "", top + size
    for w in words:
        trial = (line + " " + w).strip()
        if stringWidth(trial, "Helvetica", size) > width and line:
            c.drawString(x, H - y, line)
            line, y = w, y + lead
        else:
            line = trial
    if line:
        c.drawString(x, H - y, line)
    return y + 3


@pytest.fixture
def two_column_pdf(tmp_path: Path):
    from reportlab.pdfgen import canvas

    path = tmp_path / "two_column.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    c.setFont("Helvetica-Bold", 20)
    c.drawString(50, H - 70, "Parsing Layouts Study")
    c.setFont("Helvetica-Bold", 13)
    c.drawString(50, H - 110, "1 Introduction")
    c.setFont("Helvetica", 10)
    y = _wrap(c, "LEFTSTART " + LOREM * 4 + " LEFTEND", 50, 120, 240)
    c.setFont("Helvetica-Bold", 13)
    c.drawString(50, H - (y + 25), "2 Background")
    c.setFont("Helvetica", 10)
    _wrap(c, "MIDDLE " + LOREM * 3, 50, y + 35, 240)
    c.setFont("Helvetica-Bold", 13)
    c.drawString(330, H - 110, "3 Methods")
    c.setFont("Helvetica", 10)
    _wrap(c, "RIGHTSTART " + LOREM * 6 + " RIGHTEND", 330, 120, 240)
    c.showPage()
    c.save()
    return path


@pytest.fixture
def table_pdf(tmp_path: Path):
    """A ruled table with a two-level header: Revenue / Profit each spanning 2023, 2024."""
    from reportlab.lib import colors
    from reportlab.platypus import Table, TableStyle
    from reportlab.pdfgen import canvas

    path = tmp_path / "table.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    c.setFont("Helvetica-Bold", 11)
    c.drawString(72, H - 90, "Table 1: Revenue and profit by region")
    data = [["Region", "Revenue", "", "Profit", ""],
            ["", "2023", "2024", "2023", "2024"],
            ["Europe", "1,200", "1,350", "210", "260"],
            ["Asia", "980", "1,105", "150", "175"],
            ["Americas", "1,540", "1,610", "300", "320"]]
    t = Table(data, colWidths=[110, 70, 70, 70, 70], rowHeights=22)
    t.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.8, colors.black),
                           ("SPAN", (1, 0), (2, 0)), ("SPAN", (3, 0), (4, 0)),
                           ("SPAN", (0, 0), (0, 1)),
                           ("FONT", (0, 0), (-1, -1), "Helvetica", 10)]))
    tw, th = t.wrapOn(c, W, H)
    top = 110
    t.drawOn(c, 72, H - top - th)
    c.showPage()
    c.save()
    return path, rel(72, top, 72 + tw, top + th)


@pytest.fixture
def borderless_table_pdf(tmp_path: Path):
    """A financial-statement style table: no rules, aligned numeric columns."""
    from reportlab.pdfgen import canvas

    path = tmp_path / "borderless.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    c.setFont("Helvetica", 9)
    rows = [("(Millions)", "2018", "2017", "2016"),
            ("Net sales", "$ 32,765", "$ 31,657", "$ 30,109"),
            ("Cost of sales", "16,682", "16,055", "15,118"),
            ("Purchases of property, plant and equipment (PP&E)", "(1,577)", "(1,373)", "(1,420)"),
            ("Other — net", "120", "256", "(9)")]
    for k, row in enumerate(rows):
        y = H - 100 - 14 * k
        c.drawString(60, y, row[0])
        for j, v in enumerate(row[1:]):
            c.drawRightString(380 + 70 * j, y, v)
    c.showPage()
    c.save()
    return path


@pytest.fixture
def statement_pdf(tmp_path: Path):
    """A 10-K balance sheet: two header lines ("August 29," over "2021") centred over a
    column whose "$" sits left of the right-aligned amounts, so "2021" ends left of them."""
    from reportlab.pdfgen import canvas

    path = tmp_path / "statement.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    c.setFont("Helvetica", 8)
    y = H - 100
    for k, (month, year) in enumerate((("August 29,", "2021"), ("August 30,", "2020"))):
        c.drawCentredString(426 + 114 * k, y, month)
        c.drawCentredString(426 + 114 * k, y - 11, year)
    rows = [("Cash and cash equivalents", "$", "11,258", "12,277"),
            ("Receivables, net", "", "1,803", "1,550"),
            ("TOTAL ASSETS", "$", "59,268", "55,556"),
            ("TOTAL LIABILITIES", "", "41,190", "36,851")]
    for k, (label, dollar, a, b) in enumerate(rows):
        yy = y - 28 - 12 * k
        c.drawString(60, yy, label)
        for j, v in enumerate((a, b)):
            if dollar:
                c.drawString(408 + 114 * j, yy, dollar)
            c.drawRightString(479 + 114 * j, yy, v)
    c.showPage()
    c.save()
    return path


@pytest.fixture
def justified_beside_table_pdf(tmp_path: Path):
    """A 10-K notes page (GS's, p183): a justified left column whose one stretched line
    has word gaps of 1.5 em, beside a right-column maturity table whose rows share the
    left column's line heights."""
    from reportlab.pdfgen import canvas

    path = tmp_path / "justified.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    left = ["The firm's investment commitments include",
            "funds that the firm raises and manages.",
            "Investment commitments include $2.10 billion",
            None,  # the stretched line
            "December 2015, respectively, related to",
            "commitments to invest in funds managed by",
            "the firm. The firm also uses other financial",
            "instruments to mitigate credit risks related",
            "to certain commitments not covered by SMFG."]
    for k, line in enumerate(left):
        t = c.beginText(50, H - 100 - 12 * k)
        t.setFont("Helvetica", 8.6)
        t.setWordSpace(0)  # the text state outlives a text object
        if line is None:
            t.setWordSpace(9.5)  # 1.5 em gaps, justified to the column's width
            line = "and $2.86 billion as of 2016 and"
        t.textLine(line)
        c.drawText(t)
    c.setFont("Helvetica", 8.6)
    c.drawString(330, H - 88, "$ in millions")
    c.drawRightString(560, H - 88, "December 2016")
    for k, (label, v) in enumerate((("2017", "290"), ("2018", "282"), ("2019", "238"),
                                    ("2020 - thereafter", "1,131"),
                                    ("Other commitments and guarantees", "91"),
                                    ("Total", "2,032"))):
        c.drawString(330, H - 100 - 12 * k, label)
        c.drawRightString(560, H - 100 - 12 * k, v)
    c.showPage()
    c.save()
    return path


@pytest.fixture
def cash_flow_pdf(tmp_path: Path):
    """A cash flow statement (Costco's): a head row of three-word heads evenly spaced, long
    row labels left of "$" signs and amounts. Neither is the justified prose or the prose
    column that the parser rejoins or cuts off."""
    from reportlab.pdfgen import canvas

    path = tmp_path / "cash_flow.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    c.setFont("Helvetica", 8)
    for k, (head, date, year) in enumerate((("52 Weeks Ended", "August 29,", "2021"),
                                            ("52 Weeks Ended", "August 30,", "2020"),
                                            ("52 Weeks Ended", "September 1,", "2019"))):
        x = 390 + 84 * k
        c.drawCentredString(x, H - 100, head)
        c.drawCentredString(x, H - 110, date)
        c.drawCentredString(x, H - 118, year)
    rows = [("Net income including noncontrolling interests", "$", "5,079", "4,059", "3,704"),
            ("Depreciation and amortization of property and equipment", "$", "1,781",
             "1,645", "1,492"),
            ("Non-cash lease expense recognised in the period", "$", "286", "194", "188"),
            ("Net cash provided by operating activities", "$", "8,958", "8,861", "6,356")]
    for k, (label, dollar, *values) in enumerate(rows):
        y = H - 132 - 10 * k
        c.drawString(26, y, label)
        for j, v in enumerate(values):
            if dollar:
                c.drawString(362 + 84 * j, y, dollar)
            c.drawRightString(420 + 84 * j, y, v)
    c.showPage()
    c.save()
    return path


@pytest.fixture
def side_by_side_pdf(tmp_path: Path):
    """A 10-K's stores by state: one list set as two tables side by side under the same
    head ("U.S. Stores" with a raised "(1)"), the total at the foot of the right one; below
    it, a table whose text column ("3 - 11 years") sits between amount columns."""
    from reportlab.pdfgen import canvas

    path = tmp_path / "side_by_side.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    left = [("Alabama", "11"), ("Alaska", "2"), ("Arizona", "22"), ("Arkansas", "7"),
            ("California", "133")]
    right = [("Nebraska", "5"), ("Nevada", "9"), ("New Hampshire", "6"), ("New Jersey", "26"),
             ("Total Domestic store count", "978")]
    for x0, x1 in ((30, 280), (320, 570)):
        c.setFont("Helvetica-Bold", 7)
        c.drawRightString(x1 - 8, H - 100, "U.S. Stores")
        c.setFont("Helvetica", 5.5)
        c.drawString(x1 - 7.5, H - 98, "(1)")
    c.setFont("Helvetica", 7)
    for k, ((a, av), (b, bv)) in enumerate(zip(left, right)):
        y = H - 112 - 10 * k
        c.drawString(30, y, a)
        c.drawRightString(272, y, av)
        c.drawString(320, y, b)
        c.drawRightString(562, y, bv)
    c.setFont("Helvetica", 7)
    c.drawString(30, H - 200, "Intangible assets were as follows:")
    rows = [("Internally-developed franchises", "3 - 11 years", "1,154", "(1,105)", "49"),
            ("Developed software", "2 - 5 years", "601", "(579)", "22"),
            ("Trade names", "7 - 10 years", "54", "(30)", "24"),
            ("Customer base", "2 years", "617", "(617)", "—")]
    for k, (label, life, *values) in enumerate(rows):
        y = H - 220 - 10 * k
        c.drawString(30, y, label)
        c.drawString(200, y, life)
        for j, v in enumerate(values):
            c.drawRightString(340 + 70 * j, y, v)
    c.showPage()
    c.save()
    return path


@pytest.fixture
def tight_columns_pdf(tmp_path: Path):
    """GS's small-print schedules: amount columns 0.55 em apart (under the 1.1 em that
    splits words), some with a "$" before the figure."""
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen import canvas

    path = tmp_path / "tight.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    size, gap = 7.0, 0.55 * 7.0
    rows = [("$ in millions", "2017", "2019", "2022"),
            ("Time deposits", "—", "$ 11,896", "$ 7,886"),
            ("Secured long-term financings", "6,394", "11,083", "28,971"),
            ("Minimum rental payments", "290", "520", "766")]
    c.setFont("Helvetica", size)
    widest = [max(stringWidth(r[j], "Helvetica", size) for r in rows[1:]) for j in (1, 2, 3)]
    rights = [260.0]
    for w in widest[1:]:
        rights.append(rights[-1] + gap + w)  # the widest figure 0.55 em from the last
    for k, (label, *cells) in enumerate(rows):
        y = H - 100 - 10 * k
        c.drawString(60, y, label)
        for right, v in zip(rights, cells):
            c.drawRightString(right, y, v)
    c.showPage()
    c.save()
    return path


def chart_image():
    """A bar chart with text inside it (for OCR)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (800, 500), "white")
    d = ImageDraw.Draw(img)
    d.text((40, 20), "SALES GROWTH", fill="black", font=_font(44))
    for k, hgt in enumerate((120, 200, 280, 340)):
        d.rectangle((100 + 160 * k, 460 - hgt, 200 + 160 * k, 460), fill=(40, 90, 200))
    d.line((60, 460, 760, 460), fill="black", width=3)
    return img


@pytest.fixture
def figure_pdf(tmp_path: Path):
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    path = tmp_path / "figure.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    c.setFont("Helvetica", 10)
    _wrap(c, LOREM * 2, 72, 60, 468)
    c.drawImage(ImageReader(chart_image()), 156, H - 150 - 187.5, width=300, height=187.5)
    c.setFont("Helvetica", 10)
    c.drawString(156, H - 360, "Figure 1: Quarterly sales of the product line.")
    _wrap(c, LOREM * 3, 72, 400, 468)
    c.showPage()
    c.save()
    return path, rel(156, 150, 456, 337.5)


@pytest.fixture
def equation_pdf(tmp_path: Path):
    from reportlab.pdfgen import canvas

    path = tmp_path / "equation.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    c.setFont("Helvetica", 10)
    y = _wrap(c, LOREM * 2, 72, 60, 468)
    c.setFont("Helvetica", 12)
    c.drawString(260, H - (y + 30), "E = mc^2")
    c.drawRightString(540, H - (y + 30), "(1)")
    c.setFont("Helvetica", 10)
    _wrap(c, LOREM * 2, 72, y + 50, 468)
    c.showPage()
    c.save()
    return path, rel(255, y + 18, 545, y + 34)


def text_image(lines: list[str], size=(1224, 1584), font_px: int = 34):
    from PIL import Image, ImageDraw

    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    for k, line in enumerate(lines):
        d.text((120, 160 + k * 70), line, fill="black", font=_font(font_px))
    return img


SCAN_LINES = ["Quarterly Report", "Revenue increased in every region this year.",
              "The board approved the new dividend policy."]


@pytest.fixture
def scanned_pdf(tmp_path: Path):
    """An image-only page: text rendered to pixels, no text layer."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    path = tmp_path / "scanned.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    c.drawImage(ImageReader(text_image(SCAN_LINES)), 0, 0, width=W, height=H)
    c.showPage()
    c.setFont("Helvetica", 10)  # a blank second page
    c.showPage()
    c.save()
    return path


@pytest.fixture
def multi_page_pdf(tmp_path: Path):
    from reportlab.pdfgen import canvas

    path = tmp_path / "three_pages.pdf"
    c = canvas.Canvas(str(path), pagesize=(W, H))
    for k in range(3):
        c.setFont("Helvetica", 10)
        _wrap(c, f"Page {k + 1}. " + LOREM, 72, 72, 468)
        c.showPage()
    c.save()
    return path
