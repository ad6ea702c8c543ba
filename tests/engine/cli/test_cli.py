"""The docray command as a user runs it: outputs, exit codes, one-line errors."""
import json

import pytest
from typer.testing import CliRunner

from docray.engine.cli import app
from docray.engine.samples import QUESTIONS, write_samples

runner = CliRunner()


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return write_samples(tmp_path_factory.mktemp("samples"))


def test_parse_writes_content_list_and_overlays(samples, tmp_path):
    res = runner.invoke(app, ["parse", str(samples[0]), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    blocks = json.loads((tmp_path / "o" / "content_list.json").read_text())
    assert {"table", "image"} <= {b["type"] for b in blocks}
    overlays = sorted((tmp_path / "o" / "overlays").glob("*.png"))
    assert [p.name for p in overlays] == ["page-0001.overlay.png", "page-0002.overlay.png"]


@pytest.mark.parametrize("content,cause", [(b"MZ\x90\x00not a pdf", "not a PDF"),
                                           (b"", "empty")])
def test_bad_input_is_one_line_and_nonzero(tmp_path, content, cause):
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(content)
    res = runner.invoke(app, ["parse", str(bad), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    line = res.output.strip()
    assert "bad.pdf" in line and cause.lower() in line.lower(), line


def test_bad_config_is_named(tmp_path, samples):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("parse: {dpi: 1}\n")
    res = runner.invoke(app, ["parse", str(samples[0]), "--out", str(tmp_path), "--config",
                              str(cfg)])
    assert res.exit_code == 2 and "parse.dpi" in res.output


def test_ingest_then_batch_query_in_order(samples, tmp_path, monkeypatch):
    monkeypatch.setenv("DOCRAY__PATHS__DATA_DIR", str(tmp_path / "data"))
    res = runner.invoke(app, ["ingest", *map(str, samples), "--local", "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output.strip().splitlines()[-1])
    assert summary["ok"] == 2 and summary["pages"] == 3
    qfile = tmp_path / "q.jsonl"
    qs = [{"id": f"q{i}", "question": q} for i, q in enumerate(QUESTIONS)]
    qs.append({"id": "none", "question": "What is the airspeed of an unladen swallow?"})
    qfile.write_text("\n".join(json.dumps(q) for q in qs))
    from docray.engine.synthesize.statements import DocTables

    read, warm = [], DocTables.warm
    monkeypatch.setattr(DocTables, "warm", lambda self, ws: read.append(
        (ws, warm(self, ws), len(self._docs))) or read[-1][1])
    res = runner.invoke(app, ["query", "--questions", str(qfile), "--json"])
    assert res.exit_code == 0, res.output
    assert read == [("default", 1, 1)]  # the report's tables, read before the first question
    rows = [json.loads(line) for line in res.output.strip().splitlines()]
    assert [r["id"] for r in rows] == [q["id"] for q in qs]
    capex = rows[0]
    assert "(58.9)" in capex["answer"] and not capex["abstained"]
    assert capex["evidence"][0]["doc"] == "northwind_annual_report_2023.pdf"
    assert {"doc", "page", "bbox", "modality", "score", "text"} <= set(capex["evidence"][0])
    assert "Kessler" in rows[2]["answer"] or "two vendors" in rows[2]["answer"]
    assert rows[-1]["abstained"] and rows[-1]["answer"] == "Not answerable"
    res = runner.invoke(app, ["delete", "northwind_annual_report_2023.pdf"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["query", QUESTIONS[0], "--json"])
    assert "(58.9)" not in json.loads(res.output)["answer"]
