"""What MiniLM encoding costs on this CPU, per weight format: bf16, fp32, dynamic int8.

    python benchmarks/encoder_dtype.py --data .bench/corpus5

Ingestion spends most of its CPU outside parsing in MiniLM (issue 27), and every query
encodes its question once (issue 23). This measures, in one process, one torch thread
(as an ingest encoder actor and a Serve replica run), the CPU seconds per chunk for real
chunks of an ingested corpus (their stored text) and per question, for each format, with
the cosine of each format's chunk vectors to fp32's. Rounds alternate between formats so
that the machine's drift lands on all of them. Writes results/encoder_dtype.json and .png.
"""
from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import QA, RESULTS, machine, write_result  # noqa: E402


def encoders(formats: list[str]) -> dict:
    import torch

    from docray.engine.config import TextEncoderConfig
    from docray.engine.embed.minilm import MiniLMEncoder

    out = {}
    for fmt in formats:
        enc = MiniLMEncoder(TextEncoderConfig(dtype="float32" if fmt == "int8" else fmt))
        if fmt == "int8":
            enc.model = torch.ao.quantization.quantize_dynamic(enc.model, {torch.nn.Linear},
                                                               dtype=torch.qint8)
        out[fmt] = enc
    return out


def cpu_of(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="an ingested data dir")
    ap.add_argument("--chunks", type=int, default=128)
    ap.add_argument("--questions", type=int, default=64)
    ap.add_argument("--qa", type=Path, default=QA, help="questions, one JSON object a line")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--formats", default="bfloat16,float32,int8")
    ap.add_argument("--name", default="encoder_dtype", help="results file stem")
    args = ap.parse_args()
    torch.set_num_threads(1)
    with sqlite3.connect(args.data / "content.sqlite") as db:
        texts = [r[0] for r in db.execute(
            "SELECT body FROM chunks ORDER BY chunk_id LIMIT ?", (args.chunks,))]
    questions = [json.loads(line)["question"] for line in args.qa.read_text().splitlines()
                 if line.strip()][:args.questions]
    encs = encoders(args.formats.split(","))
    ref = encs["float32"].encode(texts) if "float32" in encs else None
    per: dict[str, dict[str, list[float]]] = {f: {"chunk": [], "question": []} for f in encs}
    for fmt, enc in encs.items():  # a warm-up pass each
        enc.encode(texts[:8])
    for _ in range(args.rounds):
        for fmt, enc in encs.items():
            per[fmt]["chunk"].append(cpu_of(lambda: enc.encode(texts)) / len(texts) * 1000)
            per[fmt]["question"].append(cpu_of(lambda: [enc.encode_with_tokens([q])
                                                        for q in questions])
                                        / len(questions) * 1000)
    rows = {}
    for fmt, enc in encs.items():
        row = {"chunk_cpu_ms": round(statistics.median(per[fmt]["chunk"]), 2),
               "question_cpu_ms": round(statistics.median(per[fmt]["question"]), 2),
               "rounds": per[fmt]}
        if ref is not None:
            v = ref if fmt == "float32" else enc.encode(texts)  # fp32 is already encoded
            cos = (v * ref).sum(1) / np.linalg.norm(v, axis=1) / np.linalg.norm(ref, axis=1)
            row |= {"cosine_to_fp32_mean": round(float(cos.mean()), 5),
                    "cosine_to_fp32_min": round(float(cos.min()), 5)}
        rows[fmt] = row
        print(fmt, {k: v for k, v in row.items() if k != "rounds"}, flush=True)
    from docray.kernels.maxsim.cpu import cpu_flags

    flags = sorted(cpu_flags() & {"avx512_bf16", "amx_bf16", "avx512_vnni", "avx512f"})
    write_result(args.name, {"machine": machine(), "cpu_flags": flags,
                             "chunks": len(texts), "questions": len(questions),
                             "threads": 1, "formats": rows})
    plot(rows, RESULTS / f"{args.name}.png")


def plot(rows: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    names = list(rows)
    for ax, key, title in ((axes[0], "chunk_cpu_ms", "CPU ms per chunk"),
                           (axes[1], "question_cpu_ms", "CPU ms per question")):
        ax.bar(names, [rows[n][key] for n in names], color="#4c78a8")
        ax.set_title(title)
        for i, n in enumerate(names):
            cos = rows[n].get("cosine_to_fp32_mean")
            label = f"{rows[n][key]:.1f}" + (f"\ncos {cos:.3f}" if cos is not None else "")
            ax.text(i, rows[n][key], label, ha="center", va="bottom", fontsize=8)
    fig.suptitle("MiniLM on this CPU, one thread, by weight format")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
