"""Sample documents for the README's main job (``docray demo``), generated with reportlab.

They are small but exercise every modality: headings, two-column text, a financial
table with a two-level header, a captioned chart whose labels are drawn inside the
figure, and a numbered equation with its definitions.
"""
from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)

REPORT_TEXT = (
    "Northwind Robotics designs warehouse automation systems. In fiscal 2023 revenue grew "
    "to $412.7 million, driven by the Atlas picking arm and service contracts. Capital "
    "expenditures rose as the company opened its second plant in Leipzig.")
OUTLOOK_TEXT = (
    "Management expects revenue between $470 million and $490 million in fiscal 2024. "
    "Figure 1 shows revenue by segment; the hardware segment remains the largest.")
RISK_TEXT = (
    "Supply of servo motors is concentrated in two vendors. A disruption at either vendor "
    "could delay shipments of the Atlas arm by up to two quarters.")
EQ_TEXT = (
    "The pick rate model estimates throughput per arm. Throughput depends on the cycle "
    "time and the grasp success probability, as given by Equation 1.")
EQ_DEFS = "where T is throughput in picks per hour, c is the cycle time in seconds and p is " \
          "the grasp success probability."

TABLE = [
    ["(Millions)", "Fiscal year", "", ""],
    ["", "2023", "2022", "2021"],
    ["Revenue", "412.7", "351.2", "298.4"],
    ["Gross profit", "171.3", "139.8", "113.6"],
    ["Capital expenditures", "(58.9)", "(31.4)", "(27.0)"],
    ["Net income", "36.5", "24.1", "17.9"],
]
QUESTIONS = [
    "What were Northwind Robotics' capital expenditures in 2023?",
    "What revenue does management expect in fiscal 2024?",
    "Which vendors supply the servo motors?",
]


def _report(path: Path) -> None:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    c.setTitle("Northwind Robotics Annual Report 2023")
    w, h = letter
    c.setFont("Helvetica-Bold", 18)
    c.drawString(72, h - 72, "Northwind Robotics Annual Report 2023")
    c.setFont("Helvetica-Bold", 13)
    c.drawString(72, h - 110, "1 Business Overview")
    _para(c, REPORT_TEXT, 72, h - 130, 470)
    c.setFont("Helvetica-Bold", 13)
    c.drawString(72, h - 210, "2 Selected Financial Data")
    c.setFont("Helvetica", 10)
    c.drawString(72, h - 230, "Table 1: Consolidated results of operations")
    xs, y = [72, 260, 340, 420], h - 252
    for r, row in enumerate(TABLE):
        c.setFont("Helvetica-Bold" if r < 2 else "Helvetica", 10)
        for x, cell in zip(xs, row):
            if cell:
                c.drawString(x, y, cell)
        if r in (0, 1):
            c.line(72 if r else 260, y - 4, 480, y - 4)
        y -= 18
    c.line(72, y + 12, 480, y + 12)
    c.showPage()
    c.setFont("Helvetica-Bold", 13)
    c.drawString(72, h - 72, "3 Outlook")
    _para(c, OUTLOOK_TEXT, 72, h - 92, 470)
    base, bars = h - 400, [("Hardware", 240), ("Service", 120), ("Software", 53)]
    for i, (label, v) in enumerate(bars):
        c.setFillColor(colors.HexColor(["#1f77b4", "#ff7f0e", "#2ca02c"][i]))
        c.rect(120 + i * 110, base, 60, v, fill=1, stroke=0)
        c.setFillColor(colors.black)
        c.setFont("Helvetica", 10)
        c.drawString(120 + i * 110, base - 14, label)
    c.drawString(72, base - 40, "Figure 1: Revenue by segment, fiscal 2023 (USD millions)")
    c.setFont("Helvetica-Bold", 13)
    c.drawString(72, base - 80, "4 Risk Factors")
    _para(c, RISK_TEXT + " The two vendors are Kessler Drives and Omori Motion.", 72,
          base - 100, 470)
    c.showPage()
    c.save()


def _paper(path: Path) -> None:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    w, h = letter
    c.setFont("Helvetica-Bold", 16)
    c.drawString(72, h - 72, "A Throughput Model for Robotic Picking")
    c.setFont("Helvetica-Bold", 12)
    c.drawString(72, h - 105, "1 Introduction")
    _para(c, EQ_TEXT, 72, h - 122, 220)
    c.setFont("Helvetica-Bold", 12)
    c.drawString(320, h - 105, "2 Related Work")
    _para(c, "Earlier studies measured grasp success on cluttered bins and reported "
          "success probabilities between 0.82 and 0.95 for suction grippers.", 320,
          h - 122, 220)
    c.setFont("Helvetica-Oblique", 12)
    c.drawString(200, h - 300, "T = 3600 * p / c")
    c.setFont("Helvetica", 12)
    c.drawString(480, h - 300, "(1)")
    _para(c, EQ_DEFS, 72, h - 330, 470)
    c.showPage()
    c.save()


def _para(c, text: str, x: float, y: float, width: float, size: int = 10) -> float:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    c.setFont("Helvetica", size)
    line, lines = "", []
    for word in text.split():
        probe = f"{line} {word}".strip()
        if stringWidth(probe, "Helvetica", size) > width:
            lines.append(line)
            line = word
        else:
            line = probe
    lines.append(line)
    for i, ln in enumerate(lines):
        c.drawString(x, y - i * (size + 3), ln)
    return y - len(lines) * (size + 3)


def write_samples(out_dir: str | Path) -> list[Path]:
    """Write the sample PDFs into ``out_dir`` (idempotent: same bytes every time)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "northwind_annual_report_2023.pdf", out / "throughput_model_note.pdf"]
    _report(paths[0])
    _paper(paths[1])
    log.info("wrote %d sample documents to %s", len(paths), out)
    return paths
