"""settle_heap: what is alive is frozen out of the collector's scans, garbage is not."""
import gc
import weakref

import pytest

from docray.engine import heap


class Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cyclic collector frees it


@pytest.fixture
def settled(monkeypatch):
    monkeypatch.setattr(heap, "_full_runs", 0)
    kept = [Node() for _ in range(1000)]
    before = gc.get_freeze_count()
    frozen = heap.settle_heap("test")
    yield kept, before, frozen
    heap._release()
    heap._installed = False


def test_live_objects_are_frozen_and_garbage_is_still_collected(settled):
    kept, before, frozen = settled
    assert frozen >= before + len(kept) and gc.get_freeze_count() >= len(kept)
    dropped = Node()
    gone = weakref.ref(dropped)
    later = [Node() for _ in range(500)]  # made after settling: frozen by the next full run
    del dropped
    count = gc.get_freeze_count()
    gc.collect()
    assert gone() is None  # garbage already: collected, not frozen
    assert gc.get_freeze_count() >= count + len(later)


def test_garbage_frozen_while_in_use_is_freed_by_the_periodic_full_walk(settled, monkeypatch):
    monkeypatch.setattr(heap, "FULL_SCAN_EVERY", 3)
    in_flight = Node()
    gone = weakref.ref(in_flight)
    gc.collect()  # full run 1: in_flight is alive, so it is frozen
    del in_flight  # now garbage, but out of the collector's reach
    gc.collect()  # run 2: frozen objects are not walked
    assert gone() is not None
    gc.collect()  # run 3: unfreezes after it ran
    assert gc.get_freeze_count() == 0
    gc.collect()  # run 4 walks everything
    assert gone() is None and gc.get_freeze_count() > 0


def test_release_unfreezes_and_uninstalls(settled):
    heap._release()
    assert gc.get_freeze_count() == 0 and heap._freeze_survivors not in gc.callbacks
