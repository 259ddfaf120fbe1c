"""Run a main program (the real `__main__.py` or the bench's baseline) through the offline harness.

`rke_aws_offline.engine.harness.run_program(main=...)` evaluates the given module, so the baseline goes through
exactly the same machinery as the program: the same `_RecordingMonitor`, `MotoMocks`, config
handling, runpy execution and output resolution.
"""

from __future__ import annotations

import gc
import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pulumi.runtime import settings

from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks

PROGRAM_MAIN = harness.MAIN


def run_main(main: Path, config: dict[str, str], stack: str, mocks: MotoMocks | None = None) -> harness.ProgramRun:
    """One evaluation of `main` in a fresh emulated account. The program and its baselines run in the same kind of
    account (the baselines replay the program's IDs, which the account derives from each resource's type and
    name)."""
    mocks = mocks or MotoMocks(config.get("aws:region", "us-west-2"))
    run = harness.run_program(config, stack=stack, mocks=mocks, main=Path(main))
    _drop_logger(run)
    return run


def _drop_logger(run: harness.ProgramRun) -> None:
    """run_program registers a logger per run whose handler holds the ProgramRun; loggers are
    never freed, so without this every run's resources stay alive for the life of the process."""
    logger = logging.Logger.manager.loggerDict.pop(f"rke-aws.offline.{id(run)}", None)
    if isinstance(logger, logging.Logger):
        logger.handlers.clear()


def release() -> None:
    """Drop the previous run's global state (root stack resource, mock monitor, engine) and
    collect it, so a timed run never pays for collecting the previous run's garbage. (A real
    `pulumi up` evaluates the program once, in a fresh process.)"""
    settings.reset_options()
    gc.collect()


def ids_by_type_and_name(mocks: MotoMocks) -> dict[tuple[str, str], str]:
    """The ID the account gave each (type, name) of a run: the baseline needs them to turn an input holding
    another resource's ID back into that resource's `id` output."""
    return {(typ, name): rid for key, rid in mocks.ids.items() for typ, _, name in [key.partition("::")]}


@dataclass
class Timing:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    gc: list[float] = field(default_factory=list)  # seconds spent in the cyclic garbage collector
    gc_full: list[int] = field(default_factory=list)  # full (generation 2) collections

    @property
    def wall_median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def gc_median(self) -> float:
        return statistics.median(self.gc)

    @property
    def non_gc_median(self) -> float:
        return statistics.median(w - g for w, g in zip(self.wall, self.gc, strict=False))


class _GcClock:
    def __init__(self) -> None:
        self.total = 0.0
        self.full = 0
        self._t = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._t
            self.full += info["generation"] == 2


def timed(fn: Callable[[], object], timing: Timing) -> object:
    """Time fn() after releasing the previous run. Drop the result before the next timed run."""
    release()
    clock = _GcClock()
    gc.callbacks.append(clock)
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        timing.wall.append(time.perf_counter() - w0)
        timing.cpu.append(time.process_time() - c0)
    finally:
        gc.callbacks.remove(clock)
    timing.gc.append(clock.total)
    timing.gc_full.append(clock.full)
    return result
