"""tests/support/collector.py: after a full collection, what survived is frozen; garbage is still collected, and a
collection of the young generations freezes nothing."""

from __future__ import annotations

import gc
import weakref

from tests.support import collector


class _Node:
    """A cycle's member, weakly referenceable."""

    other: _Node | None = None


def _tracked(obj: object) -> bool:
    """Still in one of the collector's generations (gc.get_objects lists those, not the permanent one)."""
    return any(o is obj for o in gc.get_objects())


def test_the_hook_is_installed_in_the_test_process():
    assert collector.freeze_survivors in gc.callbacks


def test_a_full_collection_freezes_what_survived_and_frees_the_garbage():
    live = [object()]  # a list: tracked by the collector
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    dead = weakref.ref(a)
    del a, b
    gc.collect()
    assert dead() is None, "the cycle was frozen instead of collected (frozen before the pass, not after it)"
    assert not _tracked(live), "a full collection left a survivor in the generations it walks"


def test_a_young_collection_freezes_nothing():
    with collector.paused():
        gc.collect()  # an empty young generation to start from, nothing frozen by us
    live = [object()]
    frozen = gc.get_freeze_count()
    gc.collect(1)
    assert gc.get_freeze_count() == frozen and _tracked(live)


def test_paused_takes_the_hook_out_and_puts_it_back():
    with collector.paused():
        assert collector.freeze_survivors not in gc.callbacks
    assert gc.callbacks.count(collector.freeze_survivors) == 1
