"""Ray Data LLM passes: ``describe.backend: vllm`` and ``extract.backend: vllm``.

Each pass turns the documents of a materialized dataset into one request row per item
(a table/figure/equation unit to describe, or a passage to extract a graph from), runs them
through ``ray.data.llm``'s vLLM engine processor (batched, ``llm.concurrency`` engine
actors, CPU or GPU bundles from the ``llm`` section), and returns the replies by item key.
The engine sees every item of the ingest batch at once, which is what keeps it busy; the
price is a barrier between parse and describe (and between chunk and graph).

Replies are JSON constrained by a schema (vLLM structured outputs, no free whitespace),
so even a weak model's records parse. A failed item (engine error, a reply cut off at
``llm.max_tokens``) comes back with its cause; the consumer falls back to the
deterministic backend for that item and records the cause, and the batch goes on.
"""
from __future__ import annotations

import json
import logging
from typing import Any, Callable, Iterable

from docray.engine.config import DocrayConfig

log = logging.getLogger(__name__)
Reply = dict[str, Any]  # {"text": str, "error": str}


class _Preprocess:
    """Request row → the processor's input: messages and per-row sampling parameters."""

    def __init__(self, schema: dict[str, Any], max_tokens: int):
        self.sampling = {"temperature": 0.0, "max_tokens": max_tokens,
                         "structured_outputs": {"json": json.dumps(schema)}}

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        return {"key": row["key"], "messages": json.loads(row["messages"]),
                "sampling_params": self.sampling}


def _postprocess(row: dict[str, Any]) -> dict[str, Any]:
    return {"key": row["key"], "text": row.get("generated_text") or "",
            "error": str(row.get("__inference_error__") or "")}


def _stage(num_cpus: float) -> dict[str, Any]:
    return {"num_cpus": num_cpus, "concurrency": 1}


def build_llm_processor(cfg: DocrayConfig, schema: dict[str, Any]):
    """``ray.data.llm`` processor for the ``llm`` section: the engine's bundles and
    arguments, the batch size and the number of engine actors; the small tokenizer and
    template stages hold a tenth of a CPU each so the pass schedules beside the encoder."""
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    v = cfg.llm
    engine = {k: a for k, a in v.engine_args().items() if k != "served_model_name"}
    config = vLLMEngineProcessorConfig(
        model_source=v.model, engine_kwargs=engine, batch_size=v.batch_size,
        concurrency=v.concurrency, runtime_env={"env_vars": v.env_vars()},
        placement_group_config={"bundles": v.bundles(),
                                "strategy": "PACK"},
        should_continue_on_error=True, prepare_multimodal_stage=v.vision,
        chat_template_stage=_stage(0.1), tokenize_stage=_stage(0.1),
        detokenize_stage=_stage(0.1))
    return build_processor(config, preprocess=_Preprocess(schema, v.max_tokens),
                           postprocess=_postprocess,
                           preprocess_map_kwargs={"num_cpus": 0.1},
                           postprocess_map_kwargs={"num_cpus": 0.1})


def run_pass(docs, items: Callable[[dict[str, Any]], Iterable[dict[str, Any]]],
             cfg: DocrayConfig, schema: dict[str, Any], name: str) -> dict[str, Reply]:
    """Replies by key for every request ``items(row)`` makes from the rows of ``docs``."""
    requests = docs.flat_map(items, num_cpus=0.1)
    if requests.count() == 0:
        return {}
    out = {r["key"]: {"text": r["text"], "error": r["error"]}
           for r in build_llm_processor(cfg, schema)(requests).take_all()}
    failed = sum(1 for r in out.values() if r["error"])
    log.info("%s pass: %d items, %d failed", name, len(out), failed)
    return out


def failure(key: str, stage: str, cause: str) -> dict[str, str]:
    """One item's failure as the ingest summary records it."""
    log.warning("%s item %s failed: %s", stage, key, cause[:300])
    return {"stage": stage, "item": key, "error": cause[:500]}
