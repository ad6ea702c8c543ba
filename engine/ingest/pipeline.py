"""The ingestion pipeline: files → parse → describe → chunk → graph → encode → (pages) → write.

:func:`ingest` runs it on Ray Data (parse as CPU tasks; describe, graph and encode one
after the other in one actor pool, ``stages/doc.py``) and writes each finished document
from the driver, the single owner of the stores.
An image page encoder (``embed.page.backend: colpali``) adds the pages stage, an actor pool
with its own CPU/GPU share (``ingest.page_*``), over the renders the parse stage stored.
:func:`ingest_local` runs the same stage functions in this process without Ray; the
ingestion benchmark compares the two.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Iterable

from docray.engine.config import DocrayConfig
from docray.engine.ingest.plan import make_plan
from docray.engine.ingest.stages.pages import needs_page_stage
from docray.engine.ingest.stages.write import commit_rows, write_row
from docray.engine.ingest.stores import Stores
from docray.engine.ingest.summary import Summary

log = logging.getLogger(__name__)
Progress = Callable[[dict[str, Any]], None]


def _parse_task(row: dict[str, Any], cfg_json: str) -> dict[str, Any]:
    from docray.engine.ingest.stages.parse import parse_row
    from docray.engine.parse.native.ocr import set_threads

    cfg = DocrayConfig.model_validate_json(cfg_json)
    set_threads(cfg.ingest.parse_threads)
    return parse_row(row, cfg)


def init_ray(cfg: DocrayConfig) -> None:
    import ray

    if ray.is_initialized():
        return
    if cfg.ray.address:
        ray.init(address=cfg.ray.address, log_to_driver=False, logging_level=logging.WARNING)
    else:
        ray.init(num_cpus=cfg.ray.num_cpus, include_dashboard=False, log_to_driver=False,
                 object_store_memory=cfg.ray.object_store_mb * 1024 * 1024,
                 logging_level=logging.WARNING)
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    # Ray Data reserves a share of the CPUs per operator; on 2 cores that share is below
    # one parse task's, which left a single parse task running beside idle encoders.
    ctx.op_resource_reservation_enabled = False
    # The encoder's output rows are large (token vectors); the downstream-capacity policy
    # compared them with the driver's small read buffer and held the encoder idle.
    ctx.downstream_capacity_backpressure_ratio = None


def build_dataset(rows: list[dict[str, Any]], cfg: DocrayConfig):
    """The Ray Data plan. Fractional CPUs let every stage schedule on 2 cores."""
    import ray

    from docray.engine.ingest.stages.describe_chunk import DescribeChunkFn
    from docray.engine.ingest.stages.doc import DocEncodeActor

    cfg_json = cfg.model_dump_json()
    ing = cfg.ingest
    env = {"runtime_env": {"env_vars": dict(ing.worker_env)}} if ing.worker_env else {}
    ds = ray.data.from_items(rows, override_num_blocks=max(1, len(rows)))
    ds = ds.map(_parse_task, fn_kwargs={"cfg_json": cfg_json}, num_cpus=ing.parse_num_cpus,
                compute=ray.data.TaskPoolStrategy(size=ing.parse_concurrency), **env)
    described, extracted = None, None
    if cfg.describe.backend == "vllm":  # a batch pass on ray.data.llm over every unit
        ds, described = _llm_pass(ds, cfg, "describe")
    split = cfg.extract.backend == "vllm"  # the extraction pass goes between describe and graph
    if split:
        ds = ds.map(DescribeChunkFn, fn_constructor_args=(cfg_json, described), num_cpus=0.25,
                    compute=ray.data.ActorPoolStrategy(size=1), **env)
        ds, extracted = _llm_pass(ds, cfg, "extract")
    ds = ds.map(DocEncodeActor, fn_constructor_args=(cfg_json, described, extracted, not split),
                num_cpus=0.5, num_gpus=ing.num_gpus_per_actor or None,
                resources=dict(ing.encoder_resources) or None,
                compute=ray.data.ActorPoolStrategy(size=ing.encoder_actors), **env)
    if needs_page_stage(cfg):  # page renders -> ColPali multi-vectors, on their own actors
        from docray.engine.ingest.stages.pages import PageEncodeActor

        ds = ds.map(PageEncodeActor, fn_constructor_args=(cfg_json,),
                    num_cpus=ing.page_num_cpus, num_gpus=ing.page_num_gpus or None,
                    compute=ray.data.ActorPoolStrategy(size=ing.page_actors), **env)
    return ds


def _llm_pass(ds, cfg: DocrayConfig, stage: str):
    """Materialize ``ds`` and run the vLLM pass of ``stage`` over its rows: (the
    materialized dataset, the replies by item key)."""
    from docray.engine.ingest.stages.llm_pass import run_pass

    cfg_json = cfg.model_dump_json()
    ds = ds.materialize()
    if stage == "describe":
        from docray.engine.describe.vllm_batch import DescribeRequests, describe_schema

        items, schema = DescribeRequests(cfg_json), describe_schema(
            cfg.describe.max_description_chars)
    else:
        from docray.engine.graph.extract.vllm_batch import ExtractRequests, extract_schema

        items, schema = ExtractRequests(cfg_json), extract_schema(
            cfg.extract.max_entities_per_chunk)
    return ds, run_pass(ds, items, cfg, schema, stage)


def _run(rows_out: Iterable[dict[str, Any]], stores: Stores, summary: Summary,
         progress: Progress | None) -> None:
    """Write rows as they arrive; commit (graph save + catalog done) in batches."""
    pending: list[dict[str, Any]] = []
    last = time.monotonic()
    every_docs, every_s = stores.cfg.ingest.commit_every_docs, stores.cfg.ingest.commit_every_s

    def commit() -> None:
        nonlocal last
        with summary.timed("commit"):
            commit_rows(pending, stores)
        for result in pending:
            summary.add(result)
        pending.clear()
        last = time.monotonic()

    try:
        for row in rows_out:
            with summary.timed("write"):
                result = write_row(row, stores, commit=False)
            if result["status"] == "ok":
                pending.append(result)
            else:
                summary.add(result)
            if progress:
                progress(row)
            if len(pending) >= every_docs or time.monotonic() - last > every_s:
                commit()
    finally:
        commit()


def _start(paths, cfg: DocrayConfig, workspace: str | None) -> tuple[Stores, Any, Summary]:
    workspace = workspace or cfg.paths.workspace
    stores = Stores.open(cfg)
    plan = make_plan(list(paths), workspace, stores)
    summary = Summary(workspace=workspace, skipped=len(plan.skipped))
    for row in plan.failed:
        summary.add(write_row(row, stores))
    return stores, plan, summary


def ingest(paths: Iterable, cfg: DocrayConfig, workspace: str | None = None,
           progress: Progress | None = None) -> Summary:
    """Ingest files/directories on Ray Data; resumable, idempotent, failure-isolating."""
    stores, plan, summary = _start(paths, cfg, workspace)
    t0 = time.perf_counter()
    try:
        if plan.todo:
            init_ray(cfg)
            ds = build_dataset(plan.todo, cfg)
            _run(ds.iter_rows(), stores, summary, progress)
    finally:
        summary.seconds = time.perf_counter() - t0
        summary.graph = stores.graph.counts(summary.workspace)
        stores.close()
    return summary


def _page_stage(cfg_json: str):
    from docray.engine.ingest.stages.pages import PageEncodeActor

    return PageEncodeActor(cfg_json)


class IngestStages:
    """The stage objects of :func:`ingest_local`, built once: a long-lived caller (the
    Documents replica) reuses them across jobs instead of loading the encoder per job."""

    def __init__(self, cfg: DocrayConfig):
        from docray.engine.ingest.stages.doc import DocEncodeActor

        require_local(cfg)
        cfg_json = cfg.model_dump_json()
        self.cfg, self.doc = cfg, DocEncodeActor(cfg_json)
        self.pages = _page_stage(cfg_json) if needs_page_stage(cfg) else (lambda row: row)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        from docray.engine.ingest.stages.parse import parse_row

        return self.pages(self.doc(parse_row(row, self.cfg)))


def runs_local(cfg: DocrayConfig) -> bool:
    """Whether :func:`ingest_local` can run this config (vLLM passes need Ray Data)."""
    return "vllm" not in (cfg.describe.backend, cfg.extract.backend)


def require_local(cfg: DocrayConfig) -> None:
    if not runs_local(cfg):
        from docray.engine.errors import ConfigError

        raise ConfigError("describe/extract backend vllm runs as a Ray Data pass: use "
                          "ingest(), not ingest_local()")


def ingest_local(paths: Iterable, cfg: DocrayConfig, workspace: str | None = None,
                 progress: Progress | None = None,
                 stages: IngestStages | None = None) -> Summary:
    """The same stages, one document at a time, in this process (no Ray). ``stages`` built
    for the same config may be passed in to reuse their loaded models."""
    require_local(cfg)
    stores, plan, summary = _start(paths, cfg, workspace)
    t0 = time.perf_counter()
    try:
        if plan.todo:
            run = stages or IngestStages(cfg)
            _run(map(run, plan.todo), stores, summary, progress)
    finally:
        summary.seconds = time.perf_counter() - t0
        summary.graph = stores.graph.counts(summary.workspace)
        stores.close()
    return summary
