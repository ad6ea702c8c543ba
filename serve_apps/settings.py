"""Ray Serve deployment settings: the ``configs/serve/*.yaml`` files.

These are not :class:`~docray.engine.config.DocrayConfig` files: they say how many replicas
of each stage run, what resources each holds, how deep its queue may grow, and the
ingress limits (admission, timeouts, upload size). Unknown keys are errors.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from docray.engine.config import check_custom_resources
from docray.engine.errors import ConfigError

STAGES = ("ingress", "graph", "dense", "pages", "rerank", "synthesis", "documents")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Autoscaling(_Strict):
    min_replicas: int = Field(1, ge=0)
    max_replicas: int = Field(1, ge=1)
    initial_replicas: int | None = Field(None, ge=0)
    target_ongoing_requests: float = Field(2.0, gt=0)
    upscale_delay_s: float = Field(30.0, ge=0)
    downscale_delay_s: float = Field(600.0, ge=0)
    metrics_interval_s: float = Field(10.0, gt=0)
    look_back_period_s: float = Field(30.0, gt=0)


class StageSettings(_Strict):
    num_replicas: int | None = Field(None, ge=1, description="Fixed replicas (no autoscaling).")
    autoscaling: Autoscaling | None = None
    num_cpus: float = Field(0.1, ge=0, description="Logical CPUs per replica (fractional OK).")
    num_gpus: float = Field(0.0, ge=0)
    resources: dict[str, float] = Field(
        default_factory=dict, description="Ray custom resources per replica (ray_actor_options), "
        "e.g. {accel: 0.5} places the stage on nodes started with --resources='{\"accel\": 1}'.")
    memory_mb: int | None = Field(None, ge=1)
    max_ongoing_requests: int = Field(8, ge=1, description="Concurrent requests per replica.")
    max_queued_requests: int = Field(32, ge=-1, description="Queue cap; -1 is unbounded.")
    llm: dict[str, Any] = Field(default_factory=dict, description="synthesis with "
                                "synthesize.answerer vllm: fields of the config's llm section "
                                "to override for this stage (model, tensor_parallel_size, ...); "
                                "num_gpus is then GPUs per engine worker.")
    access_log: bool | None = Field(None, description="Serve's per-request log line in this "
                                    "stage's replica log; default: the ingress only (a query "
                                    "crosses six stages, six lines and file appends each).")

    @field_validator("resources")
    @classmethod
    def _custom_resources(cls, v: dict[str, float]) -> dict[str, float]:
        return check_custom_resources(v)

    @field_validator("llm")
    @classmethod
    def _llm_fields(cls, v: dict[str, Any]) -> dict[str, Any]:
        from docray.engine.config_llm import VLLMConfig

        bad = sorted(set(v) - set(VLLMConfig.model_fields))
        if bad:
            raise ValueError(f"unknown llm field(s) {bad}")
        return v

    @field_validator("max_queued_requests")
    @classmethod
    def _queue_cap(cls, v: int) -> int:
        if v == 0:
            raise ValueError("must be -1 (no limit) or at least 1 (Serve refuses 0)")
        return v

    def deployment_options(self, stage: str = "") -> dict[str, Any]:
        actor: dict[str, Any] = {"num_cpus": self.num_cpus}
        if self.num_gpus:
            actor["num_gpus"] = self.num_gpus
        if self.resources:
            actor["resources"] = dict(self.resources)
        if self.memory_mb:
            actor["memory"] = self.memory_mb * (1 << 20)
        opts: dict[str, Any] = {"ray_actor_options": actor,
                                "max_ongoing_requests": self.max_ongoing_requests,
                                "max_queued_requests": self.max_queued_requests,
                                "logging_config": {"enable_access_log": self.access_log
                                                   if self.access_log is not None
                                                   else stage == "ingress"}}
        if self.autoscaling is not None:
            opts["autoscaling_config"] = self.autoscaling.model_dump(exclude_none=True)
        else:
            opts["num_replicas"] = self.num_replicas or 1
        return opts


class Limits(_Strict):
    max_inflight: int = Field(16, ge=1, description="Admitted queries per ingress replica; "
                              "more are rejected at once with 503.")
    retry_after_s: int = Field(1, ge=0, description="Retry-After sent with 503.")
    rate_per_key: float = Field(0.0, ge=0, description="Requests/s each API key may send "
                                "per ingress replica (token bucket); beyond it 429 with "
                                "Retry-After. 0: no limit.")
    rate_burst: int = Field(20, ge=1, description="Requests a key may send at once before "
                            "rate_per_key applies.")
    stage_timeout_s: float = Field(20.0, gt=0, description="Per stage-call timeout (504).")
    request_timeout_s: float = Field(60.0, gt=0, description="Whole-request timeout (504).")
    max_upload_mb: float = Field(50.0, gt=0, description="Per uploaded file.")
    max_files: int = Field(20, ge=1, description="Files per upload request.")
    drain_timeout_s: float = Field(60.0, ge=0, description="On SIGTERM/SIGINT, how long "
                                   "`docray serve` waits for admitted requests and running "
                                   "upload jobs before it stops Serve anyway.")


class ServeSettings(_Strict):
    ray_num_cpus: int | None = Field(
        None, ge=1, description="Logical CPUs of the local Ray cluster `docray serve` starts "
        "(Ray CPUs are scheduling tokens; a Ray Data upload job needs 2 besides the stages).")
    milvus_port: int = Field(0, ge=0, le=65535,
                             description="Port of the milvus-lite server docray starts on "
                             "127.0.0.1; 0 picks a free one (printed at start).")
    milvus_threads: int = Field(1, ge=1, description="Threads per search in that server "
                                "(OMP_NUM_THREADS); concurrency comes from the requests.")
    throughput_optimized: bool = Field(
        True, description="Ray Serve's throughput-optimized mode (RAY_SERVE_THROUGHPUT_"
        "OPTIMIZED): user code on the replica's own event loop, gRPC between replicas, GC "
        "frozen after start-up. It applies to a Ray cluster docray starts; set the variable "
        "on the cluster for ray.address. An explicit RAY_SERVE_THROUGHPUT_OPTIMIZED wins.")
    control_loop_interval_s: float = Field(
        0.5, gt=0, le=10, description="Seconds between the Serve controller's control-loop "
        "passes (RAY_SERVE_CONTROL_LOOP_INTERVAL_S; Ray's default is 0.1). An idle app on 2 "
        "cores: the controller used 44 ms of CPU per second at 0.1 and 15.5 at 0.5. It "
        "applies to a Ray cluster docray starts; an explicit variable wins.")
    proxy_location: Literal["EveryNode", "HeadOnly"] = Field(
        "EveryNode", description="Where Serve runs HTTP proxies. Several Ray nodes on one "
        "machine (engine/local_cluster.py) need HeadOnly: each node's proxy would bind the "
        "same host:port.")
    limits: Limits = Limits()
    stages: dict[str, StageSettings] = Field(default_factory=dict)

    def stage(self, name: str) -> StageSettings:
        if name not in STAGES:
            raise KeyError(name)
        return self.stages.get(name, StageSettings())

    def model_post_init(self, __context: Any) -> None:
        bad = sorted(set(self.stages) - set(STAGES))
        if bad:
            raise ValueError(f"unknown stage(s) {bad}; expected some of {list(STAGES)}")


def load_serve_settings(path: str | Path | None) -> ServeSettings:
    """Read a ``configs/serve/*.yaml``; errors name the field and the value."""
    if path is None:
        return ServeSettings()
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"serve config {p} does not exist")
    try:
        data = yaml.safe_load(p.read_text()) or {}
        return ServeSettings.model_validate(data)
    except yaml.YAMLError as err:
        raise ConfigError(f"serve config {p} is not valid YAML: {err}") from None
    except ValidationError as err:
        msg = "; ".join(f"{'.'.join(map(str, e['loc']))}={e.get('input')!r}: {e['msg']}"
                        for e in err.errors())
        raise ConfigError(f"invalid serve config {p}: {msg}") from None
