"""benchmarks/encoder_dtype.py as the README shows it, on a three-chunk content store."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
RESULTS = REPO / "benchmarks" / "results"
NAME = "encoder_dtype_test"


def test_encoder_dtype_benchmark_writes_costs_and_cosines(tmp_path):
    with sqlite3.connect(tmp_path / "content.sqlite") as db:
        db.execute("CREATE TABLE chunks (chunk_id TEXT, body TEXT)")
        db.executemany("INSERT INTO chunks VALUES (?, ?)", [
            ("c1", "Net sales rose 12% to $4.2 billion in fiscal 2023. " * 8),
            ("c2", "Figure 3: the distribution of reasoning steps per claim."),
            ("c3", "Operating income | 2022 | 2023\nTotal | 1,204 | 1,377")])
    qa = tmp_path / "qa.jsonl"
    qa.write_text("\n".join(json.dumps({"question": q}) for q in (
        "What were net sales in fiscal 2023?", "How many reasoning steps?")) + "\n")
    try:
        res = subprocess.run(
            [sys.executable, "benchmarks/encoder_dtype.py", "--data", str(tmp_path),
             "--qa", str(qa), "--rounds", "1", "--formats", "bfloat16,float32",
             "--name", NAME], cwd=REPO, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-3000:]
        out = json.loads((RESULTS / f"{NAME}.json").read_text())
        assert (RESULTS / f"{NAME}.png").stat().st_size > 0
    finally:
        for ext in ("json", "png"):
            (RESULTS / f"{NAME}.{ext}").unlink(missing_ok=True)
    assert out["chunks"] == 3 and out["questions"] == 2
    f32, b16 = out["formats"]["float32"], out["formats"]["bfloat16"]
    assert f32["cosine_to_fp32_min"] == 1.0
    assert 0.99 < b16["cosine_to_fp32_min"] <= 1.0
    assert all(row["chunk_cpu_ms"] > 0 and row["question_cpu_ms"] > 0 for row in (f32, b16))
