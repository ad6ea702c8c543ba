"""GPU projection of ingestion throughput, on paper, from a measured CPU profile.

    python benchmarks/ingest_projection.py [--result results/ingest.json] [--run ray]

Reads the profile benchmarks/ingest.py wrote (CPU seconds per page per stage, text-layer
vs OCR pages; the driver's write seconds) and prints the pages/s of one H200 node and of
N nodes, with the assumptions below. Model stages that have no measurement here (ColPali,
the vLLM describe and extract passes, bge-m3) are costed from their FLOPs and bytes per
item at a stated share of the H200's peak, cross-checked against the MiniLM encoder's
measured CPU cost per FLOP on this machine.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

# H200 SXM: 989 TFLOP/s dense bf16 (the H100's tensor cores), 4.8 TB/s HBM3e.
H200_FLOPS, H200_BW = 989e12, 4.8e12
MFU = 0.40         # share of peak a batched forward (prefill, encoders) reaches: assumed
BW_USE = 0.60      # share of HBM bandwidth a decode step reaches at batch 64: assumed
DECODE_BATCH = 64  # llm.batch_size in configs/gpu.yaml
NODE_CPUS = 16     # CPU cores beside one H200 (the lent device machine's shape)

# Per item: (FLOPs of the forward, decode tokens, weight bytes read per decode step)
COLQWEN_PAGE = 2 * (0.67e9 * 3072 + 3.1e9 * 780)   # ViT over 3072 patches + LM over 780
VLM_UNIT = (2 * (0.67e9 * 1600 + 7.6e9 * 1000), 150, 15.2e9)  # crop + 1k prompt, 150 out
LLM_CHUNK = (2 * 7.6e9 * 450, 200, 15.2e9)          # chunk + prompt 450 in, ~200 out
BGE_M3_TOKEN = 2 * 0.568e9                          # per token (568M params)
MINILM_TOKEN = 2 * 10.6e6                           # per token (non-embedding params)


def gpu_seconds(flops: float, out_tokens: int = 0, weight_bytes: float = 0.0) -> float:
    """GPU seconds of one item: its forward at MFU, plus its share of decode steps (each
    step reads the weights once for a batch of DECODE_BATCH sequences)."""
    step = weight_bytes / (H200_BW * BW_USE)
    return flops / (H200_FLOPS * MFU) + out_tokens * step / DECODE_BATCH


def project(run: dict, nodes: list[int]) -> dict:
    prof = run["profile"]
    pages = run["pages"]
    per = prof["parse_cpu_s_per_page"]
    ocr_share = per["ocr_pages"] / max(1, pages)
    cpu = prof["stage_cpu_s"]
    other = sum(cpu.get(k, 0.0) for k in ("describe", "chunk", "graph")) / pages
    parse = (1 - ocr_share) * per["text_layer"] + ocr_share * (per["ocr"] or 0.0)
    cpu_page = parse + other                                   # CPU-worker seconds per page
    driver_page = (cpu.get("write", 0.0) + cpu.get("commit", 0.0)) / pages
    chunks_per_page = run["chunks"] / pages
    units = run["units"]
    mm_per_page = sum(units.get(k, 0) for k in ("table", "image", "equation")) / pages
    tok_per_chunk = 230
    minilm_cpu = cpu.get("encode", 0.0) / max(1, run["chunks"])
    cpu_flops = MINILM_TOKEN * tok_per_chunk / minilm_cpu if minilm_cpu else None
    g = {"colpali": gpu_seconds(COLQWEN_PAGE),
         "describe_vlm": mm_per_page * gpu_seconds(*VLM_UNIT),
         "extract_llm": chunks_per_page * gpu_seconds(*LLM_CHUNK),
         "text_bge_m3": chunks_per_page * gpu_seconds(BGE_M3_TOKEN * tok_per_chunk)}
    gpu_all, gpu_lexical = sum(g.values()), sum(g.values()) - g["extract_llm"]
    node = {"cpu_parse_pages_s": (NODE_CPUS - 2) / cpu_page,   # 2 cores: driver, Ray
            "gpu_pages_s_llm_extract": 1 / gpu_all, "gpu_pages_s_lexical": 1 / gpu_lexical}
    ceiling = 1 / driver_page if driver_page else float("inf")
    return {"ocr_share": ocr_share, "cpu_s_per_page": cpu_page, "parse_s_per_page": parse,
            "driver_s_per_page": driver_page, "driver_ceiling_pages_s": ceiling,
            "chunks_per_page": chunks_per_page, "multimodal_units_per_page": mm_per_page,
            "gpu_s_per_page": g, "node": node,
            "cpu_effective_gflops": cpu_flops / 1e9 if cpu_flops else None,
            "h200_over_this_cpu": H200_FLOPS * MFU / cpu_flops if cpu_flops else None,
            "cluster": {n: {k: min(n * min(node["cpu_parse_pages_s"], v), ceiling)
                            for k, v in (("llm_extract", node["gpu_pages_s_llm_extract"]),
                                         ("lexical", node["gpu_pages_s_lexical"]))}
                        for n in nodes}}


def _round(v):
    if isinstance(v, float):
        return round(v, 4)
    if isinstance(v, dict):
        return {k: _round(x) for k, x in v.items()}
    return v


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--result", type=Path, default=RESULTS / "ingest.json")
    ap.add_argument("--run", default="ray")
    ap.add_argument("--nodes", default="1,2,4,8,16")
    args = ap.parse_args()
    run = json.loads(args.result.read_text())["runs"][args.run]
    out = project(run, [int(n) for n in args.nodes.split(",")])
    print(json.dumps(_round(out), indent=1))


if __name__ == "__main__":
    main()
