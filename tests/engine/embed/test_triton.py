"""TritonTextEncoder against a real Triton Inference Server serving our MiniLM encoder.

The server (tests/engine/embed/triton_server.py: pytriton 0.7 = Triton 2.51) runs as a child
process in ``.venv-triton`` (``make setup``; pytriton needs numpy<2, this venv has numpy 2);
this process is only the tritonclient-HTTP client, as in production.
"""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

httpclient = pytest.importorskip("tritonclient.http")

from docray.engine.config import TextEncoderConfig, config_from_dict  # noqa: E402
from docray.engine.embed import TextEncoder, get_text_encoder  # noqa: E402
from docray.engine.embed.triton import TritonTimeout  # noqa: E402
from docray.engine.errors import Unavailable  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
TRITON_PY = REPO / ".venv-triton" / "bin" / "python"
SERVER = Path(__file__).with_name("triton_server.py")
READY_S = 180  # model load (MiniLM) + Triton start on a busy 2-core box


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> list[str]:
    """Live (non-zombie) processes of the server's process group."""
    import psutil

    out = []
    for p in psutil.process_iter(["pid", "status", "cmdline"]):
        try:
            if os.getpgid(p.info["pid"]) == pgid and p.info["status"] != psutil.STATUS_ZOMBIE:
                out.append(" ".join(p.info["cmdline"] or [])[:120])
        except (ProcessLookupError, PermissionError):
            continue
    return out


class Server:
    def __init__(self, url: str, stats: Path, log: Path):
        self.url, self.stats, self.log = url, stats, log

    def batches(self) -> list[int]:
        """Batch sizes the served callable has seen so far, in order."""
        return [int(x) for x in self.stats.read_text().split()]


@pytest.fixture(scope="module")
def triton_server(tmp_path_factory):
    if not TRITON_PY.exists():
        pytest.skip(f"{TRITON_PY} missing: `make setup` builds .venv-triton (nvidia-pytriton)")
    tmp = tmp_path_factory.mktemp("triton")
    port = _free_port()
    stats, log = tmp / "batches.txt", tmp / "server.log"
    cmd = [str(TRITON_PY), str(SERVER), "--http-port", str(port),
           "--grpc-port", str(_free_port()), "--metrics-port", str(_free_port()),
           "--stats", str(stats), "--workspace", str(tmp / "workspace")]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    with log.open("w") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, cwd=tmp)
    client = httpclient.InferenceServerClient(f"127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + READY_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"triton server exited {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if client.is_server_ready() and all(client.is_model_ready(m)
                                                    for m in ("docray_text", "slow")):
                    break
            except Exception:  # not listening yet
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"triton server not ready in {READY_S}s:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield Server(f"http://127.0.0.1:{port}", stats, log)
    finally:
        client.close()
        proc.terminate()  # the script turns SIGTERM into pytriton's orderly stop
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + 15  # tritonserver and its python stubs follow
        while (left := _group_alive(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.5)
        stopped = proc.poll() is not None
        if left or not stopped:
            os.killpg(proc.pid, signal.SIGKILL)  # never leak a server, even on failure
            proc.wait(timeout=10)
        assert stopped and not left, \
            f"triton processes left after SIGTERM: {left}\n{log.read_text()[-2000:]}"


def _pdf(path: Path, text: str) -> Path:
    """A one-page born-digital PDF (as tests/engine/ingest/ingest_fixtures.py makes them)."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    c.setFont("Helvetica-Bold", 14)
    c.drawString(72, 720, text.split(".")[0])
    c.setFont("Helvetica", 11)
    c.drawString(72, 700, text)
    c.save()
    return path


def _cfg(url, **kw):
    return TextEncoderConfig(backend="triton", url=url, **kw)


TEXTS = [f"Solar panel {i} converts {i * 7} percent of sunlight into power." for i in range(10)]


def test_vectors_equal_in_process_minilm_and_requests_are_batched(triton_server, minilm):
    enc = get_text_encoder(_cfg(triton_server.url, batch_size=4))
    assert isinstance(enc, TextEncoder) and enc.dim == 384 and enc.name == "triton:docray_text"
    before = len(triton_server.batches())
    v = enc.encode(TEXTS)  # (10, 384)
    ref = minilm.encode(TEXTS)  # (10, 384)
    assert v.shape == (10, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    cos = np.sum(v * ref, axis=1)  # both unit length; bf16 where the CPU has it, padding differs
    assert cos.min() > 0.999, cos
    assert np.argmax(v @ ref.T, axis=1).tolist() == list(range(10))
    seen = triton_server.batches()[before:]
    assert sum(seen) == 10 and max(seen) > 1 and len(seen) <= 3, seen  # 4 + 4 + 2, not 10
    vecs, toks = enc.encode_with_tokens(TEXTS[:2])
    assert [t.shape for t in toks] == [(1, 384)] * 2 and np.allclose(toks[1][0], vecs[1])
    assert enc.encode([]).shape == (0, 384)


def test_server_down_is_unavailable_naming_url():
    port = _free_port()
    with pytest.raises(Unavailable, match=rf"127\.0\.0\.1:{port}.*embed\.text\.url"):
        get_text_encoder(_cfg(f"http://127.0.0.1:{port}", timeout_s=5)).encode(["x"])


def test_slow_server_times_out(triton_server):
    enc = get_text_encoder(_cfg(triton_server.url, triton_model="slow", timeout_s=0.5))
    t0 = time.monotonic()
    with pytest.raises(TritonTimeout, match=r"embed\.text\.timeout_s=0\.5"):
        enc.encode(["x"])
    assert time.monotonic() - t0 < 2.5  # the model sleeps 3 s: the client gave up first


def test_ingest_and_query_through_triton(triton_server, ray_cluster, tmp_path):
    from docray.engine.ingest import ingest
    from docray.engine.ingest.stores import Stores
    from docray.engine.model import file_doc_id
    from docray.engine.retrieve.engine import QueryEngine
    from docray.engine.retrieve.parts import build_parts

    cfg = config_from_dict({
        "paths": {"data_dir": str(tmp_path / "data")},
        "ray": {"num_cpus": 2, "object_store_mb": 256},
        "parse": {"ocr": "never"},
        "ingest": {"parse_concurrency": 1, "encoder_actors": 1},
        "embed": {"text": {"backend": "triton", "url": triton_server.url, "batch_size": 8}},
    })
    docs = [_pdf(tmp_path / "solar.pdf", "Solar panels convert sunlight into electricity "
                 "using photovoltaic cells."),
            _pdf(tmp_path / "wind.pdf", "Wind turbines generate power from moving air. "
                 "Offshore wind farms grew 15 percent.")]
    before = len(triton_server.batches())
    summary = ingest(docs, cfg, "tri")
    assert (summary.ok, summary.failed) == (2, 0), summary.failures
    assert len(triton_server.batches()) > before  # chunks were embedded by the server
    s = Stores.open(cfg)
    try:
        before = len(triton_server.batches())
        engine = QueryEngine(cfg, build_parts(cfg, s))
        got = asyncio.run(engine.retrieve("How do offshore wind turbines make power?", "tri",
                                          mode="chunk-only"))
        assert len(triton_server.batches()) > before  # the question went through Triton too
        assert got.passages and got.passages[0].chunk.doc_id == file_doc_id(docs[1])
    finally:
        s.close()
