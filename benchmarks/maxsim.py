"""MaxSim benchmark: docray's kernels against colpali-engine's scorer and the torch reference.

CPU (default; ~4-6 minutes on 2 cores)::

    python benchmarks/maxsim.py

builds synthetic clustered corpora — ColPali-shaped (1K and 10K pages x 1030 tokens x 128
dims, fp16) and MiniLM-token-shaped (10K pages x 200-400 tokens x 384 dims) — with 32-token
queries, measures this machine's memory bandwidth in the same run (a large torch sum and
numpy copy), and times per query (median): docray's CPU path (fp16 storage, fp32 tiles;
int8 storage, int8 VNNI GEMM), colpali-engine's ``score_multi_vector`` on the same fp16
pages (list of tensors, its own input form), and the torch einsum reference. It reports
effective GB/s (stored corpus bytes / time), the fraction of measured bandwidth, batched
queries/s, the speed-up over colpali-engine and top-10 agreement with it. Writes
``benchmarks/results/maxsim.json`` and ``benchmarks/results/maxsim.png``.

GPU (ready command; needs CUDA + triton)::

    python benchmarks/maxsim.py --device cuda --pages 40000

builds a 40K-page ColPali-shaped corpus on the GPU (fp16 and int8) and measures the fused
Triton kernel: single-query latency with effective TB/s, and batched queries/s (64 queries
per launch); checks its top-10 against the reference on a slice. Results are merged into
``maxsim.json`` under ``"cuda"``.

Options: ``--queries`` (timed queries per method), ``--quick`` (small corpora, for a smoke run).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import sys
import time
from typing import Callable

import numpy as np
import torch

from docray.kernels.maxsim import maxsim_topk
from docray.kernels.maxsim.colpali_compat import load_score_multi_vector
from docray.kernels.maxsim.reference import maxsim_reference

RESULTS = pathlib.Path(__file__).resolve().parent / "results"


def measure_bandwidth(gib: float = 1.0) -> dict:
    """Read bandwidth (torch sum, all threads) and copy bandwidth (numpy, read + write), GB/s."""
    n = int(gib * (1 << 30)) // 4
    x = torch.ones(n)
    x.sum()
    t = min(_time(lambda: x.sum()) for _ in range(3))
    a = np.ones(n, dtype=np.float32)
    b = np.empty_like(a)
    tc = min(_time(lambda: np.copyto(b, a)) for _ in range(3))
    return {"read_gbs": n * 4 / t / 1e9, "copy_gbs": 2 * n * 4 / tc / 1e9}


def _time(fn: Callable) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def make_corpus(n_pages: int, lengths: tuple[int, int], dim: int, seed: int, device: str = "cpu"):
    """Clustered unit-ish tokens, fp16 (n_tok, dim), offsets (n_pages + 1,), built in chunks."""
    g = torch.Generator(device=device).manual_seed(seed)
    lo, hi = lengths
    lens = torch.randint(lo, hi + 1, (n_pages,), generator=g, device=device) if hi > lo else \
        torch.full((n_pages,), lo, device=device)
    offsets = torch.cat([lens.new_zeros(1), lens.cumsum(0)]).long()  # (n_pages + 1,)
    n_tok = int(offsets[-1])
    centers = torch.nn.functional.normalize(torch.randn(256, dim, generator=g, device=device), dim=1)
    noise = (0.5 / dim**0.5) * torch.randn(1 << 16, dim, generator=g, device=device)  # (65536, dim)
    page_topic = torch.randint(256, (n_pages,), generator=g, device=device)  # (n_pages,)
    tokens = torch.empty(n_tok, dim, dtype=torch.float16, device=device)
    step = 1 << 22
    for a in range(0, n_tok, step):
        b = min(a + step, n_tok)
        rows = torch.arange(a, b, device=device)
        page = torch.searchsorted(offsets, rows, right=True) - 1  # (rows,)
        topic = torch.where(torch.rand(b - a, generator=g, device=device) < 0.5, page_topic[page],
                            torch.randint(256, (b - a,), generator=g, device=device))
        nz = torch.randint(1 << 16, (b - a,), generator=g, device=device)
        tokens[a:b] = (centers[topic] + noise[nz]).half()  # (rows, dim)
    return tokens, offsets


def make_queries(tokens, offsets, n: int, n_tok: int = 32, seed: int = 7) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        p = int(torch.randint(len(offsets) - 1, (1,), generator=g))
        a, b = int(offsets[p]), int(offsets[p + 1])
        rows = torch.randint(a, b, (n_tok,), generator=g)
        q = tokens[rows.to(tokens.device)].float().cpu() + 0.05 * torch.randn(n_tok, tokens.shape[1], generator=g)
        out.append(torch.nn.functional.normalize(q, dim=1))  # (n_tok, dim)
    return out


def quantize(tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scales = torch.empty(tokens.shape[0], device=tokens.device)
    q = torch.empty(tokens.shape, dtype=torch.int8, device=tokens.device)
    for a in range(0, tokens.shape[0], 1 << 22):
        x = tokens[a:a + (1 << 22)].float()
        s = x.abs().amax(dim=1).clamp_min(1e-12) / 127.0
        scales[a:a + len(s)] = s
        q[a:a + len(s)] = torch.round(x / s[:, None]).to(torch.int8)
    return q, scales


def timed(fn: Callable[[torch.Tensor], torch.Tensor], queries: list, n: int, sync=lambda: None,
          warmup: bool = True) -> tuple[float, list]:
    """Median seconds per query over ``n`` queries (after one warm-up); returns top-10 indices too."""
    if warmup:
        fn(queries[0])
        sync()
    times, tops = [], []
    for q in queries[:n]:
        start = time.perf_counter()
        top = fn(q)
        sync()
        times.append(time.perf_counter() - start)
        tops.append(set(top.tolist()))
    return statistics.median(times), tops


def bench_cpu_corpus(name: str, n_pages: int, lengths, dim: int, n_q: int, n_base: int, bw: float, score_mv) -> dict:
    tokens, offsets = make_corpus(n_pages, lengths, dim, seed=n_pages + dim)
    queries = make_queries(tokens, offsets, max(n_q, n_base) + 1)
    q8, s8 = quantize(tokens)
    fp16_bytes, int8_bytes = tokens.numel() * 2, q8.numel() + s8.numel() * 4
    res = {"pages": n_pages, "tokens": int(offsets[-1]), "dim": dim, "query_tokens": 32, "methods": {}}

    def record(method: str, sec: float, tops, nbytes: int):
        gbs = nbytes / sec / 1e9
        res["methods"][method] = {"ms_per_query": sec * 1e3, "effective_gbs": gbs, "bandwidth_fraction": gbs / bw}
        print(f"  {name:14s} {method:26s} {sec * 1e3:9.1f} ms/query  {gbs:6.2f} GB/s  ({gbs / bw:5.1%} of bw)",
              flush=True)
        return tops

    ours = record("docray_cpu_fp16", *timed(lambda q: maxsim_topk(q, tokens, offsets, 10)[1][0], queries, n_q),
                  fp16_bytes)
    ours8 = record("docray_cpu_int8_vnni", *timed(
        lambda q: maxsim_topk(q, q8, offsets, 10, s8, compute="int8")[1][0], queries, n_q), int8_bytes)
    batch = queries[:8]
    t = min(_time(lambda: maxsim_topk(batch, tokens, offsets, 10)) for _ in range(2))
    res["batched_fp16_queries_per_s"] = len(batch) / t
    pages = [tokens[int(offsets[i]):int(offsets[i + 1])] for i in range(n_pages)]
    theirs = record("colpali_engine", *timed(
        lambda q: score_mv([q.half()], pages, device="cpu")[0].topk(10).indices, queries, n_base,
        warmup=n_pages <= 2000), fp16_bytes) \
        if score_mv else None
    ref = record("torch_einsum_reference", *timed(
        lambda q: maxsim_reference(q, tokens, offsets).topk(10).indices, queries, n_base,
        warmup=n_pages <= 2000), fp16_bytes)
    n = min(n_base, n_q)
    res["top10_equal_to_reference"] = sum(a == b for a, b in zip(ours[:n], ref)) / n
    res["int8_top10_overlap_with_fp16"] = float(np.mean([len(a & b) / 10 for a, b in zip(ours8, ours)]))
    if theirs:
        res["top10_equal_to_colpali"] = sum(a == b for a, b in zip(ours[:n], theirs)) / n
        res["top10_overlap_with_colpali"] = float(np.mean([len(a & b) / 10 for a, b in zip(ours[:n], theirs)]))
        m = res["methods"]
        res["speedup_vs_colpali_fp16"] = m["colpali_engine"]["ms_per_query"] / m["docray_cpu_fp16"]["ms_per_query"]
        res["speedup_vs_colpali_int8"] = m["colpali_engine"]["ms_per_query"] / m["docray_cpu_int8_vnni"]["ms_per_query"]
    return res


def run_cpu(args) -> dict:
    torch.set_num_threads(args.threads or torch.get_num_threads())
    bw = measure_bandwidth()
    print(f"memory bandwidth: read {bw['read_gbs']:.1f} GB/s, copy {bw['copy_gbs']:.1f} GB/s", flush=True)
    score_mv = load_score_multi_vector()
    scale = 10 if args.quick else 1
    corpora = [("colpali_1k", 1000 // scale, (1030, 1030), 128), ("colpali_10k", 10000 // scale, (1030, 1030), 128),
               ("minilm_10k", 10000 // scale, (200, 400), 384)]
    if args.pages:
        corpora = [(f"colpali_{args.pages}", args.pages, (1030, 1030), 128)]
    out = {"machine": {"cpu": platform.processor() or platform.machine(), "threads": torch.get_num_threads(),
                       "torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()},
           "bandwidth": bw, "load_average_at_start": os.getloadavg(), "corpora": {}}
    for name, n_pages, lengths, dim in corpora:
        n_base = 5 if n_pages <= 2000 else 2  # the baselines take seconds per query
        out["corpora"][name] = bench_cpu_corpus(name, n_pages, lengths, dim, args.queries, n_base,
                                                bw["read_gbs"], score_mv)
    out["load_average_at_end"] = os.getloadavg()  # other jobs on a shared machine skew every number
    return out


def run_cuda(args) -> dict:
    from docray.kernels.maxsim.triton import maxsim_topk_triton

    dev, n_pages = "cuda", args.pages or 40000
    tokens, offsets = make_corpus(n_pages, (1030, 1030), 128, seed=1, device=dev)
    offsets = offsets.to(dev)
    q8, s8 = quantize(tokens)
    queries = make_queries(tokens, offsets.cpu(), 65)
    res = {"device": torch.cuda.get_device_name(), "pages": n_pages, "tokens": int(offsets[-1]), "methods": {}}
    for name, data, scales, nbytes in (("triton_fp16", tokens, None, tokens.numel() * 2),
                                       ("triton_int8", q8, s8, q8.numel() + s8.numel() * 4)):
        sec, _ = timed(lambda q: maxsim_topk_triton(q, data, offsets, 10, scales)[1][0], queries, args.queries,
                       torch.cuda.synchronize)
        batch = queries[:64]
        maxsim_topk_triton(batch, data, offsets, 10, scales)
        torch.cuda.synchronize()
        tb = min(_time(lambda: (maxsim_topk_triton(batch, data, offsets, 10, scales), torch.cuda.synchronize()))
                 for _ in range(3))
        res["methods"][name] = {"ms_per_query": sec * 1e3, "effective_tbs": nbytes / sec / 1e12,
                                "batched_queries_per_s": len(batch) / tb}
        print(f"  {name}: {sec * 1e3:.2f} ms/query, {nbytes / sec / 1e12:.2f} TB/s, {len(batch) / tb:.0f} q/s")
    sl = 2000 * 1030
    want = maxsim_reference(queries[0], tokens[:sl], offsets[:2001]).topk(10).indices.cpu()
    got = maxsim_topk_triton(queries[0], tokens[:sl], offsets[:2001], 10)[1][0].cpu()
    res["top10_equal_to_reference_on_2k_slice"] = set(want.tolist()) == set(got.tolist())
    return res


def plot(results: dict, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    corpora = results["cpu"]["corpora"]
    methods = list(next(iter(corpora.values()))["methods"])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.5))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        xs = np.arange(len(corpora)) + i * width
        ax1.bar(xs, [c["methods"][m]["ms_per_query"] for c in corpora.values()], width, label=m)
        ax2.bar(xs, [100 * c["methods"][m]["bandwidth_fraction"] for c in corpora.values()], width, label=m)
    for ax, title in ((ax1, "ms per query (median, log)"), (ax2, "% of measured read bandwidth")):
        ax.set_xticks(np.arange(len(corpora)) + 0.4 - width / 2, list(corpora))
        ax.set_title(title)
    ax1.set_yscale("log")
    ax1.legend(fontsize=8)
    bw = results["cpu"]["bandwidth"]["read_gbs"]
    fig.suptitle(f"MaxSim on CPU ({results['cpu']['machine']['threads']} threads, read bw {bw:.1f} GB/s)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--pages", type=int, default=None, help="one ColPali-shaped corpus of this many pages")
    ap.add_argument("--queries", type=int, default=7, help="timed queries for docray's paths")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--quick", action="store_true", help="corpora 10x smaller (smoke run)")
    ap.add_argument("--out", type=pathlib.Path, default=RESULTS / "maxsim.json")
    args = ap.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    results[args.device] = run_cpu(args) if args.device == "cpu" else run_cuda(args)
    args.out.write_text(json.dumps(results, indent=2))
    if "cpu" in results:
        plot(results, args.out.with_suffix(".png"))
    print(json.dumps({k: v for k, v in results[args.device].items() if k != "corpora"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
