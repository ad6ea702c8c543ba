"""Fuzzed documents through the native parser: every input must end parsed or in a
``BadInput`` naming the file and the cause; none in a crash, a hang or memory past a cap.

Inputs: hostile files built here (a 200-inch page box, a page whose image would decompress
to 2.5 GB, deep object nesting, broken xref, zero pages, encryption, 10,000 tiny pages, an
image with absurd dimensions, binary posing as markdown) and mutants of real corpus PDFs
(truncations, bit flips). Each parse runs in a worker process under ``RLIMIT_AS`` and a
per-file time limit; a worker that dies or overruns is replaced and the input is counted.

    python benchmarks/fuzz_parse.py --n 400      # writes results/fuzz_parse.json
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import resource
import struct
import time
import zlib
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


# -- inputs ------------------------------------------------------------------------------
def _pdf(objects: list[bytes], broken_xref: bool = False) -> bytes:
    """A PDF from object bodies (1-based), catalog = object 1."""
    out, offsets = bytearray(b"%PDF-1.7\n"), []
    for k, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % (off + (7 if broken_xref else 0))
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref + (13 if broken_xref else 0))
    return bytes(out)


def _one_page(media: bytes, content: bytes, resources: bytes = b"<< >>") -> list[bytes]:
    return [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s] /Contents 4 0 R /Resources %s >>"
            % (media, resources),
            b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"]


def _text(s: str) -> bytes:
    return b"BT /F1 24 Tf 72 700 Td (%s) Tj ET" % s.encode()


_FONT = b"<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"


def _bomb_image_page() -> list[bytes]:
    """A 30000 x 30000 RGB image (2.7 GB decoded) in a few KB of Flate."""
    w = h = 30000
    row = zlib.compress(b"\xff" * (w * 3) * 64, 9)
    objs = _one_page(b"612 792", b"q 612 0 0 792 0 0 cm /Im1 Do Q",
                     b"<< /XObject << /Im1 5 0 R >> >>")
    objs.append(b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace "
                b"/DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n"
                % (w, h, len(row)) + row + b"\nendstream")
    return objs


def _many_pages(n: int) -> bytes:
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(n))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n)]
    objs += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>"] * n
    return _pdf(objs)


def _png_header(w: int, h: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(  # noqa: E731
        ">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) \
        + chunk(b"IEND", b"")


def hostile_inputs(folder: Path) -> list[Path]:
    """The named hostile files, written into ``folder``."""
    nest = b"[" * 100_000 + b"]" * 100_000
    files = {
        "huge_page_box.pdf": _pdf(_one_page(b"14400 14400", _text("huge page"))[:3]
                                  + [_one_page(b"1 1", _text("huge page box"))[3]]),
        "image_bomb.pdf": _pdf(_bomb_image_page()),
        "deep_nesting.pdf": _pdf(_one_page(b"612 792", _text("deep"), _FONT)[:3]
                                 + [b"<< /Length 4 /Deep %s >>\nstream\nq Q\nendstream" % nest]),
        "broken_xref.pdf": _pdf(_one_page(b"612 792", _text("broken xref"), _FONT),
                                broken_xref=True),
        "zero_pages.pdf": _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                                b"<< /Type /Pages /Kids [] /Count 0 >>"]),
        "encrypted.pdf": _pdf(_one_page(b"612 792", _text("x"), _FONT)).replace(
            b"/Root 1 0 R", b"/Root 1 0 R /Encrypt << /Filter /Standard /V 2 /R 3 /O (x) "
                           b"/U (y) /P -4 /Length 128 >>"),
        "ten_thousand_pages.pdf": _many_pages(10_000),
        "absurd_image.png": _png_header(200_000, 200_000),
        "binary_as.md": bytes(random.Random(7).randrange(256) for _ in range(4096)),
        "nul_text.md": b"# Title\n\n" + b"\x00" * 512,
    }
    paths = []
    for name, data in files.items():
        (folder / name).write_bytes(data)
        paths.append(folder / name)
    return paths


def mutants(seed: bytes, rng: random.Random, n: int) -> list[bytes]:
    """Truncations and bit flips of one seed file."""
    out = []
    for _ in range(n):
        data = bytearray(seed)
        if rng.random() < 0.4:
            data = data[: rng.randrange(1, len(data))]
        else:
            for _ in range(rng.choice((1, 4, 32, 256))):
                i = rng.randrange(len(data))
                data[i] ^= 1 << rng.randrange(8)
        out.append(bytes(data))
    return out


# -- the guarded parse -------------------------------------------------------------------
def _worker(jobs, results, mem_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
    import tempfile

    from docray.engine.config import ParseConfig
    from docray.engine.errors import BadInput
    from docray.engine.index.artifacts import ArtifactStore
    from docray.engine.parse.native import NativeParser

    store = ArtifactStore(Path(tempfile.mkdtemp(prefix="fuzz-artifacts-")), workspace="fuzz")
    parser = NativeParser(ParseConfig(ocr="never", layout=False), store)  # renders pages
    while (path := jobs.get()) is not None:
        try:
            doc = parser.parse(Path(path))
            results.put(("parsed", f"{doc.n_pages} pages, {len(doc.units)} units"))
        except BadInput as err:
            named = Path(path).name in str(err) and bool(err.cause)
            results.put(("bad_input" if named else "unnamed_bad_input", err.cause))
        except MemoryError:
            results.put(("oom", "MemoryError"))
        except Exception as err:  # noqa: BLE001 — the finding: an input that escapes BadInput
            results.put(("crash", f"{type(err).__name__}: {err}"[:300]))


class GuardedParser:
    """Parses in a worker process with ``mem_mb`` of address space and ``timeout_s`` per
    file; a worker that dies (``crash``) or overruns (``hang``) is replaced."""

    def __init__(self, timeout_s: float = 30.0, mem_mb: int = 4096):
        self.timeout_s, self.mem_mb = timeout_s, mem_mb
        self.ctx = mp.get_context("spawn")
        self.proc = None

    def _start(self) -> None:
        self.jobs, self.results = self.ctx.Queue(), self.ctx.Queue()
        self.proc = self.ctx.Process(target=_worker, args=(self.jobs, self.results,
                                                           self.mem_mb), daemon=True)
        self.proc.start()

    def parse(self, path: Path) -> tuple[str, str, float]:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        t0 = time.perf_counter()
        self.jobs.put(str(path))
        deadline = t0 + self.timeout_s + 20.0  # the first file also pays the worker's imports
        while time.perf_counter() < deadline:
            try:
                kind, detail = self.results.get(timeout=0.2)
                return kind, detail, time.perf_counter() - t0
            except Exception:  # noqa: BLE001 — queue.Empty: still running
                if not self.proc.is_alive():
                    self.proc = None
                    return "crash", "worker died", time.perf_counter() - t0
        self.close()
        return "hang", f"no answer in {self.timeout_s:g}s", time.perf_counter() - t0

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.proc = None


def run(folder: Path, n_mutants: int, seeds: list[Path], rng_seed: int = 0,
        timeout_s: float = 30.0, mem_mb: int = 4096) -> dict:
    rng = random.Random(rng_seed)
    inputs = hostile_inputs(folder)
    per_seed = max(1, n_mutants // max(1, len(seeds)))
    for s in seeds:
        for k, data in enumerate(mutants(s.read_bytes(), rng, per_seed)):
            p = folder / f"{s.stem[:40]}-m{k}.pdf"
            p.write_bytes(data)
            inputs.append(p)
    guard, rows, t0 = GuardedParser(timeout_s, mem_mb), [], time.perf_counter()
    try:
        for p in inputs:
            kind, detail, secs = guard.parse(p)
            rows.append({"input": p.name, "outcome": kind, "detail": detail,
                         "seconds": round(secs, 3)})
    finally:
        guard.close()
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    return {"inputs": len(rows), "seconds": round(time.perf_counter() - t0, 1),
            "outcomes": counts, "timeout_s": timeout_s, "mem_mb": mem_mb,
            "seeds": [s.name for s in seeds], "rows": rows}


def main() -> None:
    import tempfile

    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400, help="mutants of the corpus seeds")
    ap.add_argument("--seeds", type=int, default=8, help="corpus PDFs to mutate")
    ap.add_argument("--out", type=Path, default=RESULTS / "fuzz_parse.json")
    a = ap.parse_args()
    seeds = sorted(p for p in CORPUS.glob("*.pdf") if p.stat().st_size < 3 << 20)[: a.seeds]
    with tempfile.TemporaryDirectory() as tmp:
        res = run(Path(tmp), a.n, seeds)
    a.out.write_text(json.dumps(res, indent=1))
    bad = [r for r in res["rows"] if r["outcome"] not in ("parsed", "bad_input")]
    print(json.dumps({k: res[k] for k in ("inputs", "seconds", "outcomes")}))  # CLI output
    for r in bad:
        print("FINDING", r)


if __name__ == "__main__":
    main()
