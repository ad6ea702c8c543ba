"""Ingestion stages: each module is a pure core over rows plus a thin Ray wrapper.

A row is a plain dict that flows through every stage. Keys set so far:

* ``path``, ``workspace``, ``doc_id``           — set by the planner
* ``status`` (``ok`` / ``failed``), ``error``   — a failed row passes through untouched
* ``doc``                                       — Document JSON (parse)
* ``chunks``                                    — Chunk JSON list (describe_chunk)
* ``chunk_vecs``, ``chunk_tokens``, ``page_nos``, ``page_offsets``, ``page_token_index``
  (or ``page_tokens`` from an image page encoder) — arrays (encode, pages)
* ``graph``                                     — nodes/edges JSON (graph)
* ``timings``                                   — wall seconds per stage
* ``cpu``                                       — CPU seconds per stage (the worker process,
                                                  all its threads: what the stage cost)
* ``llm_failures``                              — items a vLLM pass could not serve
"""
from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from typing import Any, Iterator

log = logging.getLogger(__name__)


def failed(row: dict[str, Any]) -> bool:
    return row.get("status") == "failed"


@contextmanager
def stage(row: dict[str, Any], name: str) -> Iterator[None]:
    """Time a stage (wall and process CPU) and turn its exception into a recorded failure
    for this row only."""
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        yield
    except Exception as err:  # noqa: BLE001 — one bad document must not stop the batch
        row["status"] = "failed"
        row["error"] = f"{name}: {type(err).__name__}: {err}"
        log.warning("%s failed in %s: %s", row.get("path"), name, err)
    finally:
        for key, spent in (("timings", time.perf_counter() - t0),
                           ("cpu", time.process_time() - c0)):
            acc = dict(row.get(key) or {})
            acc[name] = acc.get(name, 0.0) + spent
            row[key] = acc


def note_failures(row: dict[str, Any], backend: Any) -> None:
    """Move the item failures a backend recorded for this row into ``llm_failures``."""
    take = getattr(backend, "take_failures", None)
    if take is not None:
        found = take()
        if found:
            row["llm_failures"] = [*(row.get("llm_failures") or []),
                                   *({**f, "file": row.get("filename", "")} for f in found)]
