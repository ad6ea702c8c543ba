import pypdfium2 as pdfium

from docray.engine.parse.native.pdf import render


def test_crops_past_the_page_edge_are_clamped_not_fatal(tmp_path):
    from reportlab.pdfgen import canvas

    path = tmp_path / "one.pdf"
    c = canvas.Canvas(str(path), pagesize=(200, 100))
    c.drawString(10, 50, "edge")
    c.save()
    page = pdfium.PdfDocument(str(path))[0]
    assert render(page, 72, (-20, -20, 250, 150)).size == (200, 100)   # clamped to the page
    assert render(page, 72, (150, 10, 260, 60)).size == (50, 50)       # partly outside
    assert render(page, 72, (230, 10, 260, 60)).size[0] >= 1          # wholly outside: blank
