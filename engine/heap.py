"""Keep the cyclic garbage collector off what a query process loads once.

A process on the query path holds millions of long-lived objects (graph names, parsed
chunks, model modules). Python's full (generation-2) collection walks all of them: over
300 questions on the qa.jsonl corpus the in-process engine paused 1.7 s in two full
collections, one of 1.0 s. Freezing the heap once it is loaded, and the survivors of each
full collection after it, keeps those objects out of the collector's walks (reference
counting still frees them): the same 300 questions paused 0.36 s in 14 full collections
(the longest 176 ms, the first after the caches filled) and ran in 24.0 instead of 30.2 s.
"""
from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import functools
import gc
import logging

log = logging.getLogger(__name__)
FULL_SCAN_EVERY = 50
_installed = False
_full_runs = 0


def _freeze_survivors(phase: str, info: dict) -> None:
    """After a full collection every object left is reachable: freeze them too, so the
    next full collection walks only what was made since. Every ``FULL_SCAN_EVERY``-th
    time unfreeze instead: what was frozen while in use and is garbage now (the reference
    cycles of requests in flight) is freed by the next collection, which walks it all."""
    global _full_runs
    if phase != "stop" or info.get("generation") != 2:
        return
    _full_runs += 1
    if _full_runs % FULL_SCAN_EVERY:
        gc.freeze()
    else:
        gc.unfreeze()


def _release() -> None:
    if _freeze_survivors in gc.callbacks:
        gc.callbacks.remove(_freeze_survivors)
    gc.unfreeze()
    gc.collect()


def settle_heap(owner: str) -> int:
    """Collect once, then freeze every object alive; returns how many are frozen.

    Call it when ``owner`` has loaded what it keeps for its lifetime. What it loads later
    (caches filled by the first queries) is frozen after the full collection that first
    finds it alive. At exit the heap is unfrozen, so shutdown frees those objects as usual
    (native bindings report frozen ones as leaks)."""
    global _installed
    gc.collect()
    gc.freeze()
    if not _installed:
        gc.callbacks.append(_freeze_survivors)
        atexit.register(_release)
        _installed = True
    frozen = gc.get_freeze_count()
    log.info("%s: %d long-lived objects moved out of the garbage collector's scans", owner, frozen)
    return frozen


@functools.lru_cache(maxsize=1)
def _libc():
    """glibc, found once (``find_library`` runs ``ldconfig``); None elsewhere."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


def trim_heap() -> None:
    """Give the heap's free pages back to the OS (glibc ``malloc_trim``): after a large
    document an ingest worker's freed batches otherwise stay in its RSS for the whole run."""
    trim = getattr(_libc(), "malloc_trim", None)  # not glibc: nothing to trim
    if trim is not None:
        trim(0)
