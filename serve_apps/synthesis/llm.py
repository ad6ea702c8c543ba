"""``synthesize.answerer: vllm``: the Synthesis stage hosts a vLLM engine via ``ray.serve.llm``.

:class:`LLMSynthesis` is Ray's own :class:`~ray.serve.llm.LLMServer` (engine start, health
checks, placement group, the OpenAI request models) with the two methods the Ingress calls on
any Synthesis stage, ``answer`` and ``stream``. They build the same chat request as the HTTP
answerer (:class:`~docray.engine.synthesize.openai_chat.ChatAnswerer`: numbered sources,
image parts for a vision model) and run it on the replica's engine in-process, so a query
costs no extra hop; ``[n]`` markers become citations and "Not answerable" an abstention, as
for every answerer.

:func:`build_synthesis` turns the ``llm`` section (with ``stages.synthesis.llm`` of the serve
config on top) into an :class:`~ray.serve.llm.LLMConfig` and builds the deployment with
:func:`ray.serve.llm.build_llm_deployment`, named ``Synthesis`` and sized by the stage's
settings. A dead engine fails the call (the Ingress answers 502 naming the stage) and fails
the replica's health check, so Serve replaces it.
"""
from __future__ import annotations

import logging
from typing import Any, AsyncIterator

from ray.serve.llm import LLMServer

from docray.engine.config import DocrayConfig
from docray.engine.config_llm import VLLMConfig
from docray.engine.errors import Unavailable
from docray.engine.synthesize.openai_chat import ChatAnswerer, delta_text
from docray.serve_apps.settings import ServeSettings

log = logging.getLogger(__name__)


class EngineAnswerer(ChatAnswerer):
    """A :class:`ChatAnswerer` whose transport is an in-process ``LLMServer``."""

    name = "vllm"

    def __init__(self, server: LLMServer, model: str, **kwargs: Any):
        super().__init__(model, **kwargs)
        self.server = server

    @staticmethod
    def _request(payload: dict):
        from ray.serve.llm.openai_api_models import ChatCompletionRequest

        return ChatCompletionRequest(**payload)

    async def _complete(self, payload: dict) -> str:
        async for reply in await self.server.chat(self._request(payload)):
            return _content(reply)
        raise Unavailable("the vLLM engine returned no reply")

    async def _stream(self, payload: dict) -> AsyncIterator[str]:
        async for batch in await self.server.chat(self._request(payload)):
            for line in batch if isinstance(batch, list) else [batch]:
                if not isinstance(line, str):
                    raise Unavailable(f"the vLLM engine failed: {_error(line)}")
                text = delta_text(line)
                if text:
                    yield text


def _error(reply: Any) -> str:
    err = getattr(reply, "error", None) or reply
    return str(getattr(err, "message", err))[:500]


def _content(reply: Any) -> str:
    choices = getattr(reply, "choices", None)
    if not choices:
        raise Unavailable(f"the vLLM engine failed: {_error(reply)}")
    return choices[0].message.content or ""


class LLMSynthesis(LLMServer):
    """Ray's LLMServer plus docray's Synthesis methods (``answer``, ``stream``)."""

    async def __init__(self, llm_config, cfg_json: str):
        await super().__init__(llm_config)
        from pathlib import Path

        from docray.engine.index.artifacts import ArtifactStore

        cfg = DocrayConfig.model_validate_json(cfg_json)
        v, s = cfg.llm, cfg.synthesize
        artifacts = ArtifactStore(Path(cfg.paths.data_dir) / "artifacts",
                                  workspace=cfg.paths.workspace,
                                  max_bytes=int(s.max_artifact_mb * (1 << 20)))
        self.answerer = EngineAnswerer(
            self, llm_config.model_loading_config.model_id, artifacts=artifacts,
            max_images=v.max_images if v.vision else 0, budget_tokens=s.max_context_tokens,
            max_tokens=s.max_tokens, reply_format=s.reply_format,
            max_chars=s.max_answer_chars)
        log.info("Synthesis: vLLM engine up (%s)", llm_config.model_loading_config.model_id)

    async def answer(self, question, passages, qvec=None):
        return await self.answerer.answer(question, passages, qvec)

    async def stream(self, question, passages, qvec=None):
        async for token in self.answerer.stream(question, passages, qvec):
            yield token


def stage_llm(cfg: DocrayConfig, settings: ServeSettings) -> VLLMConfig:
    """The ``llm`` section with the serve config's ``stages.synthesis.llm`` on top."""
    return cfg.llm.with_overrides(settings.stage("synthesis").llm)


def synthesis_llm_config(cfg: DocrayConfig, settings: ServeSettings):
    """The :class:`~ray.serve.llm.LLMConfig` of the Synthesis stage: the model, one bundle
    per engine worker (the stage's num_gpus each on GPU), the engine's arguments, and the
    stage's replicas, autoscaling and queue bounds."""
    from ray.serve.llm import LLMConfig

    stage = settings.stage("synthesis")
    v = stage_llm(cfg, settings)
    opts = stage.deployment_options("synthesis")
    actor = opts.pop("ray_actor_options")
    actor.pop("num_gpus", None)  # GPUs belong to the engine's bundles, not the replica
    return LLMConfig(
        model_loading_config={"model_id": v.served_name, "model_source": v.model},
        accelerator_config={"kind": v.accelerator},
        placement_group_config={"bundles": v.bundles(stage.num_gpus), "strategy": "PACK"},
        engine_kwargs={k: a for k, a in v.engine_args().items() if k != "served_model_name"},
        runtime_env={"env_vars": v.env_vars()},
        deployment_config={**opts, "ray_actor_options": actor})


def build_synthesis(cfg: DocrayConfig, settings: ServeSettings):
    """The Synthesis deployment hosting vLLM, bound (an argument of the Ingress)."""
    from ray.serve.llm import build_llm_deployment

    cfg = cfg.model_copy(update={"llm": stage_llm(cfg, settings)})
    return build_llm_deployment(synthesis_llm_config(cfg, settings), deployment_cls=LLMSynthesis,
                                bind_kwargs={"cfg_json": cfg.model_dump_json()},
                                override_serve_options={"name": "Synthesis"})
