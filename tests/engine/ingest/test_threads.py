"""Thread settings of the ingest workers (engine/ingest/threads.py): the env and pool sizes
a stage's config names reach its Ray actors; the run order puts the largest files first."""
from __future__ import annotations

import pytest

from docray.engine.config import IngestConfig, config_from_dict
from docray.engine.ingest.pipeline import _order
from docray.engine.ingest.threads import remote_args, worker_env


def test_worker_env_sizes_every_pool_and_sleeps_idle_threads():
    env = worker_env(3, IngestConfig())
    assert {env[k] for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")} \
        == {"3"}
    assert env["OMP_WAIT_POLICY"] == "PASSIVE" and env["TOKENIZERS_PARALLELISM"] == "false"
    assert "OMP_NUM_THREADS" not in worker_env(0, IngestConfig())  # 0: library defaults
    assert worker_env(1, IngestConfig(omp_wait_policy="active"))["OMP_WAIT_POLICY"] == "ACTIVE"


def test_remote_args_pick_the_stage_thread_count():
    ing = IngestConfig(parse_threads=1, encoder_threads=2)
    env = {s: remote_args(ing, s)["runtime_env"]["env_vars"]["OMP_NUM_THREADS"]
           for s in ("prepare", "parse", "encode", "pages")}
    assert env == {"prepare": "1", "parse": "1", "encode": "2", "pages": "2"}


def test_largest_files_go_first(tmp_path):
    rows = []
    for name, size in (("a.pdf", 10), ("b.pdf", 300), ("c.pdf", 20)):
        (tmp_path / name).write_bytes(b"x" * size)
        rows.append({"path": str(tmp_path / name)})
    rows.append({"path": str(tmp_path / "gone.pdf")})  # unreadable: last, not an error
    cfg = config_from_dict({"ingest": {"largest_first": True}})
    assert [r["path"].rsplit("/", 1)[1] for r in _order(rows, cfg)] == \
        ["b.pdf", "c.pdf", "a.pdf", "gone.pdf"]
    keep = config_from_dict({"ingest": {"largest_first": False}})
    assert _order(rows, keep) == rows


@pytest.mark.usefixtures("ray_cluster")
def test_thread_settings_reach_the_actors(cfg):
    """The real stage wrappers, started by Ray Data with the stage's remote args, see the
    env and pool sizes of their config (encoder: torch threads; prepare: onnxruntime)."""
    import ray

    from docray.engine.ingest.stages.encode import EncodeActor
    from docray.engine.ingest.stages.prepare import PrepareFn

    cfg = cfg.model_copy(update={"ingest": cfg.ingest.model_copy(
        update={"encoder_threads": 3, "parse_threads": 1})})
    cfg_json = cfg.model_dump_json()

    def report(row):
        import os

        from docray.engine.parse.native.ocr import onnx_threads

        return {**row, "omp": os.environ.get("OMP_NUM_THREADS"),
                "wait": os.environ.get("OMP_WAIT_POLICY"), "onnx": onnx_threads()}

    class EncodeProbe(EncodeActor):
        def __call__(self, row):
            import torch

            return {**report(row), "torch": torch.get_num_threads()}

    class PrepareProbe(PrepareFn):
        def __call__(self, row):
            return report(row)

    got = {}
    for stage, cls in (("encode", EncodeProbe), ("prepare", PrepareProbe)):
        ds = ray.data.from_items([{"stage": stage}]).map(
            cls, fn_constructor_args=(cfg_json,), num_cpus=0.5,
            compute=ray.data.ActorPoolStrategy(size=1), **remote_args(cfg.ingest, stage))
        got[stage] = ds.take_all()[0]
    assert got["encode"]["torch"] == 3 and got["encode"]["omp"] == "3"
    assert got["prepare"]["onnx"] == 1 and got["prepare"]["omp"] == "1"
    assert got["encode"]["wait"] == got["prepare"]["wait"] == "PASSIVE"
