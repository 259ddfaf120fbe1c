"""The test processes' cyclic garbage collector: what survives a full collection is frozen (gc.freeze).

A worker keeps for the whole session what it imported (the SDKs, moto) and what it shares (tests/support/runs.py): up
to ~2.5 M objects, which each full collection walked again. In one run of the suite (`-n 2`, --ignore=tests/unit,
gc.callbacks timing every pass) the workers' 24 and 28 full collections cost 21.5 s and 25.6 s, a sixth of their CPU.
What a full collection leaves is live, so it goes to the permanent generation and the next full collection walks only
what came after: those passes then cost 5.4 s and 5.3 s, and the run's wall time went 148 s -> 121 s (alternated with
the commit before). Reference counting still frees a frozen object; one that later dies in a cycle stays until the
process ends: the objects a program run holds when a full collection comes during it (its asyncio tasks among them,
so harness.drain_leftover_tasks' walk of asyncio's task registry costs ~1 s more per worker). Peak RSS per worker,
one run each: 683 and 738 MB with this, 704 and 678 MB without.

Freezing at fixed points (after each module, with a gc.collect() first) saved as much, but that extra collection
finalised some of the event loops Pulumi's executor threads leave open after the sockets they own (each with an
"Invalid file descriptor" in BaseEventLoop.__del__, twice in one run); with freezing only after the collector's own
full passes, five runs of the suite showed none.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


def freeze_survivors(phase: str, info: dict) -> None:
    """A gc.callbacks hook: after a full collection, everything still tracked is live; it goes to the permanent
    generation."""
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()


def install() -> None:
    """Once per process (tests/conftest.py)."""
    if freeze_survivors not in gc.callbacks:
        gc.callbacks.append(freeze_survivors)


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Without the hook for a while: a test that counts what some code froze."""
    installed = freeze_survivors in gc.callbacks
    if installed:
        gc.callbacks.remove(freeze_survivors)
    try:
        yield
    finally:
        if installed:
            install()
