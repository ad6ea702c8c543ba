"""The web page in a real browser (Debian's headless Chromium driven by Selenium) against
``docray serve`` started as a user starts it: key entry, upload of a generated PDF with a
table, ingest progress, a streamed answer from a table cell in two modes side by side,
the evidence box drawn on the page render (checked pixel by pixel on the canvas), the
whole page with every unit's box, the graph view, delete, and the wrong-key message.

Screenshots (1280 px and 390 px wide) go to ``$DOCRAY_UI_SHOTS`` when it is set (the
README's come from ``DOCRAY_UI_SHOTS=benchmarks/results/ui``), else to the test's tmp dir.
"""
from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
import pytest

from serving import Server, serve_configs

pytestmark = pytest.mark.slow
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
KEY = "web-ui-test-key"
QUESTION = "How many Kestrel drones were shipped in 2023?"
ANSWER = "4,812"
SHIPMENTS = [["(Units)", "2023", "2022", "2021"],
             ["Kestrel drones", "4,812", "3,907", "2,655"],
             ["Osprey rovers", "1,296", "1,104", "870"],
             ["Heron buoys", "655", "702", "731"]]
TABLE_RGB = (44, 160, 44)  # draw.js COLOURS.table, as engine/parse/overlay.py


def _browser_or_skip() -> None:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip install -e .[dev])")
    if missing:
        why = (f"headless browser test needs {', '.join(missing)}: apt-get install chromium "
               "chromium-driver (.ci/run does it)")
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def _shipments_pdf(path: Path) -> Path:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    w, h = letter
    c.setFont("Helvetica-Bold", 18)
    c.drawString(72, h - 72, "Aerial Systems Shipment Report")
    c.setFont("Helvetica", 10)
    c.drawString(72, h - 100, "Aerial Systems ships drones, rovers and buoys to research fleets.")
    c.drawString(72, h - 130, "Table 1: Units shipped by product line")
    xs, y = [72, 260, 340, 420], h - 152
    for r, row in enumerate(SHIPMENTS):
        c.setFont("Helvetica-Bold" if r == 0 else "Helvetica", 10)
        for x, cell in zip(xs, row):
            c.drawString(x, y, cell)
        if r == 0:
            c.line(72, y - 4, 480, y - 4)
        y -= 18
    c.line(72, y + 12, 480, y + 12)
    c.showPage()
    c.save()
    return path


@pytest.fixture()
def server(tmp_path):
    _browser_or_skip()
    cfg, serve_cfg, _ = serve_configs(tmp_path, tmp_path / "data", {KEY: "default"},
                                      max_upload_mb=1)
    from docray.serve_apps.milvus_server import free_port

    srv = Server(cfg, serve_cfg, free_port(), tmp_path / "serve.log")
    try:
        srv.wait_ready()
        yield srv
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(timeout=180) == 0, srv.log.read_text()[-3000:]
    finally:
        srv.kill()


@pytest.fixture()
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--user-data-dir={tmp_path / 'chromium'}", "--window-size=1280,1000"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    driver.set_script_timeout(30)
    yield driver
    driver.quit()


def _wait(driver, css: str, timeout: float = 60):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, css)), f"nothing matched {css!r}")


def _until(driver, test, what: str, timeout: float = 60):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.3).until(lambda d: test(d), what)


# Pixels of a canvas at (x, y) in the render's own pixels, as [r, g, b, a] lists.
PIXELS = """const [canvas, points] = arguments;
const ctx = canvas.getContext('2d');
return points.map(([x, y]) =>
  Array.from(ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data));"""


# The answer's [n] markers as links to evidence cards (a generative answerer writes them;
# the extractive one here does not), checked with the page's own module.
CITES = """const done = arguments[arguments.length - 1];
import('/ui/answer.js').then(({ withCitations }) => {
  const p = document.createElement('p');
  withCitations(p, 'Revenue [1] and cost [2].', 'c');
  done([...p.querySelectorAll('a.cite')].flatMap((a) => [a.textContent, a.getAttribute('href')]));
});"""


def _edge_points(bbox, w: int, h: int) -> list[tuple[float, float]]:
    """The middles of a box's four edges, in pixels of a ``w`` x ``h`` render."""
    x0, y0, x1, y1 = bbox[0] * w, bbox[1] * h, bbox[2] * w, bbox[3] * h
    return [(x0, (y0 + y1) / 2), (x1, (y0 + y1) / 2), ((x0 + x1) / 2, y0), ((x0 + x1) / 2, y1)]


def _box_drawn(driver, canvas, bbox, rgb) -> None:
    """The canvas shows the render at its own pixel size (a thumbnail shows part of it,
    from data-origin): ``bbox``'s edges are drawn in ``rgb``, the page margin is white."""
    w, h = map(int, canvas.get_attribute("data-page").split(","))
    ox, oy = map(int, canvas.get_attribute("data-origin").split(","))
    assert w > 600 and h > 800, (w, h)  # letter at parse.dpi 144: 1224 x 1584
    centre = ((bbox[0] + bbox[2]) / 2 * w, (bbox[1] + bbox[3]) / 2 * h)
    points = [*_edge_points(bbox, w, h), centre]
    *edges, mid, corner = driver.execute_script(
        PIXELS, canvas, [(x - ox, y - oy) for x, y in points] + [(2, 2)])
    for px in edges:
        assert all(abs(a - b) <= 12 for a, b in zip(px[:3], rgb)), (edges, rgb, bbox)
    assert corner[:3] == [255, 255, 255], corner  # the page's margin at the canvas corner
    assert mid[:3] != list(rgb)  # a translucent fill over the page, not a solid block


def _shot(driver, out: Path, name: str, width: int) -> None:
    """The whole page at ``width`` px wide, past the window's height (Chromium's own
    full-page capture over the DevTools protocol)."""
    import base64

    driver.set_window_size(width, 900)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": min(height, 6000), "scale": 1}})
    (out / name).write_bytes(base64.b64decode(shot["data"]))


# Drop a file on the drop zone as a person's drag would (a DataTransfer holding it).
DROP = """const [name, b64] = arguments;
const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
const dt = new DataTransfer();
dt.items.add(new File([bytes], name, { type: 'application/pdf' }));
const zone = document.getElementById('drop');
for (const type of ['dragover', 'drop']) {
  zone.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
}"""


def _upload_and_wait(driver, pdf: Path, tmp_path: Path) -> None:
    import base64

    from selenium.webdriver.common.by import By

    odd = tmp_path / "notes.exe"
    odd.write_bytes(b"MZ")
    driver.find_element(By.ID, "files").send_keys(str(odd))  # the file input's path
    notice = _wait(driver, "#notice:not([hidden])", 10)
    assert "Not uploaded: notes.exe" in notice.text and "PDF, image or text" in notice.text
    assert not driver.find_elements(By.CSS_SELECTOR, "#jobs .job")  # nothing was sent
    driver.execute_script(DROP, pdf.name, base64.b64encode(pdf.read_bytes()).decode())
    _wait(driver, "#jobs .job-doc", 60)
    _wait(driver, '#jobs .job[data-status="done"]', 420)
    row = _wait(driver, "#docs tbody tr", 30)
    cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
    assert cells[:3] == ["shipments.pdf", "done", "1"], cells


def _ask_two_modes(driver) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver.find_element(By.ID, "question").send_keys(QUESTION)
    Select(driver.find_element(By.ID, "mode-b")).select_by_value("chunk-only")
    driver.find_element(By.ID, "ask").click()
    for mode in ("hybrid", "chunk-only"):
        col = _wait(driver, f'.answer-col[data-mode="{mode}"][data-done="1"]', 180)
        assert ANSWER in col.find_element(By.CLASS_NAME, "answer-text").text, col.text
        assert not col.find_element(By.CLASS_NAME, "abstain").is_displayed()


def _evidence_and_page(driver, server) -> None:
    import json

    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    col = '.answer-col[data-mode="hybrid"]'
    card = _wait(driver, f'{col} .card[data-modality="table"][data-drawn="1"]', 60)
    bbox = json.loads(card.get_attribute("data-bbox"))
    _box_drawn(driver, card.find_element(By.TAG_NAME, "canvas"), bbox, TABLE_RGB)
    assert "shipments.pdf" in card.text and "page 1" in card.text and "score" in card.text
    assert driver.execute_async_script(CITES) == ["[1]", "#ev-c-1", "[2]", "#ev-c-2"]
    card.find_element(By.CLASS_NAME, "card-open").send_keys(Keys.ENTER)  # by keyboard
    page = _wait(driver, "#page-dialog[open] #page-canvas[data-units]", 30)
    view = httpx.get(f"{server.url}/v1/documents/shipments.pdf/pages/1", timeout=30,
                     headers={"Authorization": f"Bearer {KEY}"}).json()
    assert int(page.get_attribute("data-units")) == len(view["units"]) >= 2
    for unit in view["units"]:
        if unit["modality"] in ("table", "title"):
            rgb = TABLE_RGB if unit["modality"] == "table" else (214, 39, 40)
            _box_drawn(driver, page, unit["bbox"], rgb)
    legend = driver.find_element(By.ID, "page-legend").text
    assert "table" in legend


def _graph(driver) -> None:
    from selenium.webdriver.common.by import By

    svg = _wait(driver, '.answer-col[data-mode="hybrid"] svg.graph', 60)
    nodes = svg.find_elements(By.CSS_SELECTOR, "g.node")
    assert len(nodes) >= 2 and svg.find_elements(By.CSS_SELECTOR, "line.edge"), svg.text
    assert svg.find_elements(By.CSS_SELECTOR, 'g.node.seed[data-kind="table"]')


def test_web_page_upload_ask_inspect_delete_and_wrong_key(server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    out = Path(os.environ.get("DOCRAY_UI_SHOTS") or tmp_path / "shots")
    out.mkdir(parents=True, exist_ok=True)
    pdf = _shipments_pdf(tmp_path / "shipments.pdf")
    browser.get(server.url + "/")
    assert browser.title == "docray"
    browser.find_element(By.ID, "key").send_keys(KEY)
    browser.find_element(By.CSS_SELECTOR, "#key-form button[type=submit]").click()
    _until(browser, lambda d: d.find_element(By.ID, "key-state").text == "Key accepted.",
           "the key was not accepted")
    _upload_and_wait(browser, pdf, tmp_path)
    _ask_two_modes(browser)
    _evidence_and_page(browser, server)
    _shot(browser, out, "page-1280.png", 1280)
    browser.find_element(By.ID, "page-close").click()
    _graph(browser)
    _shot(browser, out, "answer-1280.png", 1280)
    _shot(browser, out, "answer-390.png", 390)
    assert browser.execute_script(  # nothing wider than a 390 px phone
        "return document.documentElement.scrollWidth <= window.innerWidth")
    browser.set_window_size(1280, 1000)

    browser.find_element(By.CSS_SELECTOR, '[aria-label="Delete shipments.pdf"]').send_keys(
        Keys.ENTER)
    _until(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "#docs tbody tr"),
           "the deleted document is still listed")
    assert browser.find_element(By.ID, "docs-empty").is_displayed()

    browser.find_element(By.ID, "key-forget").click()
    browser.find_element(By.ID, "key").send_keys("not-the-key")
    browser.find_element(By.CSS_SELECTOR, "#key-form button[type=submit]").click()
    notice = _wait(browser, "#notice:not([hidden])", 30)
    _until(browser, lambda d: "API key was not accepted" in notice.text, "no 401 message")
    assert browser.execute_script("return sessionStorage.getItem('docray.apiKey')") == \
        "not-the-key"
    _shot(browser, out, "wrong-key-390.png", 390)
