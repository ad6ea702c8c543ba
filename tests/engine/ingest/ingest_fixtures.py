"""PDF builders shared by the ingestion tests."""
from __future__ import annotations

from pathlib import Path


def make_pdf(path: Path, pages: list[str]) -> Path:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    for text in pages:
        y = 720
        c.setFont("Helvetica-Bold", 14)
        c.drawString(72, y, text.split(".")[0][:60])
        c.setFont("Helvetica", 11)
        for line in _wrap(text, 90):
            y -= 16
            c.drawString(72, y, line)
        c.showPage()
    c.save()
    return path


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for w in text.split():
        if len(line) + len(w) + 1 > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return lines + [line]
