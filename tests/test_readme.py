"""The README's "Using it" block, run line by line as a user types it (console script,
shell quoting, paths relative to the repository), on two small corpus PDFs."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from docray.serve_apps.milvus_server import free_port
from serving import wait_healthy

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def using_it_commands() -> list[list[str]]:
    text = (REPO / "README.md").read_text()
    block = text.split("## Using it", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    lines = [shlex.split(line, comments=True) for line in block.splitlines()]
    return [argv for argv in lines if argv and argv[0] == "docray"]


def test_readme_block_names_every_command():
    names = [argv[1] for argv in using_it_commands()]
    assert names == ["parse", "ingest", "query", "query", "delete", "serve"]


@pytest.fixture()
def user_env(tmp_path, corpus_dir):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "DOCRAY__PATHS__DATA_DIR": str(tmp_path / "data"),
           "DOCRAY__SERVE__PORT": str(free_port()),
           "DOCRAY__SERVE__API_KEYS": "{key-r: reports}"}  # the key that reads -w reports
    yield env
    shutil.rmtree(REPO / "out" / "ulta", ignore_errors=True)
    (REPO / "out" / "questions.jsonl").unlink(missing_ok=True)


def run(argv: list[str], env) -> str:
    res = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, (argv, res.stdout[-2000:], res.stderr[-3000:])
    return res.stdout


def serve_once(argv: list[str], env) -> dict:
    url = f"http://127.0.0.1:{env['DOCRAY__SERVE__PORT']}"
    log = Path(env["DOCRAY__PATHS__DATA_DIR"]).with_name("serve.log")
    with open(log, "w") as fh:  # a file, not a pipe nobody reads while the server starts
        proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        wait_healthy(url, proc, log, timeout_s=300)
        docs = httpx.get(f"{url}/v1/documents", headers={"X-API-Key": "key-r"}).json()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=180)
        output = log.read_text()
        assert proc.returncode == 0, output[-3000:]
        assert f"docray serving at {url}" in output and "stopped" in output
        return docs
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.corpus
def test_using_it_block_as_typed(user_env):
    parse, ingest, ask, batch, delete, serve = using_it_commands()
    run(parse, user_env)
    blocks = json.loads((REPO / "out/ulta/content_list.json").read_text())
    assert {b["page_idx"] for b in blocks} == set(range(9)) and any(
        b["type"] == "table" for b in blocks)
    out = run(ingest, user_env)
    assert re.search(r"documents ok\W+2\b", out), out
    out = run(ask, user_env)
    # qa.jsonl's published answer: "AMCOR's Adj. EBITDA was $2,018mn in FY 2023"
    assert "A: 2,018" in out and "AMCOR_2023Q4_EARNING" in out and "ULTA" not in out, out
    questions = [{"id": "ebitda", "question": ask[2], "doc": "AMCOR_2023Q4_EARNINGS.pdf"},
                 {"id": "sga", "question": "What drove the reduction in SG&A expense as a "
                  "percent of net sales in FY2023?", "doc": "ULTABEAUTY_2023Q4_EARNINGS.pdf"}]
    (REPO / "out/questions.jsonl").write_text("\n".join(json.dumps(q) for q in questions))
    rows = [json.loads(line) for line in run(batch, user_env).splitlines()]
    assert [r["id"] for r in rows] == ["ebitda", "sga"]
    assert {e["doc"] for e in rows[1]["evidence"]} == {"ULTABEAUTY_2023Q4_EARNINGS.pdf"}
    assert "deleted AMCOR_2023Q4_EARNINGS.pdf" in run(delete, user_env)
    assert [d["filename"] for d in serve_once(serve, user_env)] == [
        "ULTABEAUTY_2023Q4_EARNINGS.pdf"]


def test_make_demo_as_typed():
    """The README's main job: ``make demo`` answers with citations and abstains once."""
    res = subprocess.run(["make", "demo"], cwd=REPO, capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    answers = re.findall(r"^A: (.*)$", res.stdout, flags=re.M)
    assert len(answers) == 4 and answers[-1].startswith("Not answerable"), res.stdout[-3000:]
    assert "northwind_annual" in res.stdout  # the citations' document column
    assert re.search(r"2 documents\s+indexed", res.stdout), res.stdout[-2000:]
