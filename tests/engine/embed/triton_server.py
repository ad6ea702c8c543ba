"""A real Triton Inference Server (pytriton 0.7, Triton 2.51) serving docray's MiniLM encoder.

Run by tests/engine/embed/test_triton.py as a child process with the interpreter of
``.venv-triton``: pytriton's bundled python-backend utils break under numpy 2 (bytes tensors
deserialise as garbage), so the server lives in a venv of its own with numpy<2 while the
client (``TritonTextEncoder``, tritonclient HTTP) runs in the main venv.

Models (the contract of engine/embed/triton.py):
  docray_text  TEXT bytes (-1, 1) -> EMBEDDING fp32 (-1, 384), dynamic batching; every batch
               the callable sees appends its size as one line to ``--stats`` (the test checks
               that requests carry several texts and that ingest/query really went through it).
  slow         same signature, sleeps ``--slow-s`` seconds: past the client's timeout.
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import sysconfig
import time
from pathlib import Path

log = logging.getLogger("triton_server")
DIM = 384


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--http-port", type=int, required=True)
    p.add_argument("--grpc-port", type=int, required=True)
    p.add_argument("--metrics-port", type=int, required=True)
    p.add_argument("--stats", type=Path, required=True, help="file: one batch size per line")
    p.add_argument("--workspace", type=Path, default=None,
                   help="pytriton's copy of tritonserver + model store (default ~/.cache)")
    p.add_argument("--slow-s", type=float, default=3.0)
    p.add_argument("--max-batch", type=int, default=16)
    return p.parse_args()


def main() -> None:
    args = _args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    # The python-backend stub tritonserver starts embeds libpython; without this interpreter's
    # LIBDIR on the path it picks up another one ("RLock has no _recursion_count").
    os.environ["LD_LIBRARY_PATH"] = ":".join(
        p for p in (sysconfig.get_config_var("LIBDIR"), os.environ.get("LD_LIBRARY_PATH")) if p)

    import numpy as np
    from pytriton.decorators import batch
    from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
    from pytriton.triton import Triton, TritonConfig

    from docray.engine.config import TextEncoderConfig
    from docray.engine.embed.minilm import MiniLMEncoder

    encoder = MiniLMEncoder(TextEncoderConfig(batch_size=4))  # as tests/conftest.py's minilm
    args.stats.write_text("")

    @batch
    def embed(TEXT):  # noqa: N803 - the tensor name
        texts = [row[0].decode("utf-8") for row in TEXT]  # TEXT: (b, 1) bytes
        with args.stats.open("a") as f:
            f.write(f"{len(texts)}\n")
        return {"EMBEDDING": encoder.encode(texts).astype(np.float32)}  # (b, 384)

    @batch
    def slow(TEXT):  # noqa: N803
        time.sleep(args.slow_s)
        return {"EMBEDDING": np.zeros((len(TEXT), DIM), np.float32)}  # (b, 384)

    cfg = TritonConfig(http_address="127.0.0.1", http_port=args.http_port,
                       grpc_address="127.0.0.1", grpc_port=args.grpc_port,
                       metrics_port=args.metrics_port, exit_on_error=True)
    inputs = [Tensor(name="TEXT", dtype=bytes, shape=(1,))]
    outputs = [Tensor(name="EMBEDDING", dtype=np.float32, shape=(DIM,))]
    # SIGTERM as SIGINT: Triton.serve() then stops tritonserver and its python stubs and
    # removes its workspace, instead of this process dying and orphaning them.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with Triton(config=cfg, workspace=args.workspace) as triton:
        triton.bind("docray_text", embed, inputs, outputs, config=ModelConfig(
            max_batch_size=args.max_batch,
            batcher=DynamicBatcher(max_queue_delay_microseconds=2000)))
        triton.bind("slow", slow, inputs, outputs,
                    config=ModelConfig(max_batch_size=args.max_batch))
        log.info("serving docray_text and slow on 127.0.0.1:%d", args.http_port)
        triton.serve()  # until SIGTERM/SIGINT


if __name__ == "__main__":
    main()
