"""What a rotation drives (the stack's Engine, a Clock), how long it waits (Timing), where it stopped (Stop),
and what it reports (Step, Summary)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .nodes import NodeView

# kops' defaults (cmd/kops/rolling-update_cluster.go; pkg/instancegroups): drain timeout 15 min, eviction
# retry 5 s, validation timeout 15 min; RKE2 removes an etcd member within its 1 min member-removal timeout
# (k3s pkg/etcd/etcd.go memberRemovalTimeout), retried by the controller.
DRAIN_SECONDS = 900.0
EVICTION_RETRY_SECONDS = 5.0
READY_SECONDS = 900.0
MEMBER_SECONDS = 300.0
HEALTH_SECONDS = 300.0
POLL_SECONDS = 10.0
PROGRESS_SECONDS = 60.0  # a progress line at least this often while waiting


# ---- what the rotation drives -----------------------------------------------------------------

class EngineBusy(Exception):
    """Another update holds the stack's lock (Automation API ConcurrentUpdateError)."""


class EngineFailed(Exception):
    """The update failed (the CLI's error text)."""


class Engine(Protocol):
    def outputs(self) -> Mapping[str, Any]:
        """The stack's outputs as the last update left them."""

    def pending(self) -> list[tuple[str, str]]:
        """(operation, URN) of every resource a plain `pulumi up` would change now (a preview)."""

    def replace(self, urns: Sequence[str]) -> None:
        """One update that replaces exactly these resources: `up(target=urns, replace=urns)`."""


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class RealClock:
    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@dataclass(frozen=True)
class Timing:
    drain: float = DRAIN_SECONDS
    eviction_retry: float = EVICTION_RETRY_SECONDS
    ready: float = READY_SECONDS
    member: float = MEMBER_SECONDS
    health: float = HEALTH_SECONDS
    poll: float = POLL_SECONDS
    progress: float = PROGRESS_SECONDS


class Stop(Exception):
    """Where the rotation stopped, why, and how to go on. The cluster keeps quorum and every old node
    runs or is cleanly replaced; rotate again resumes."""

    def __init__(self, where: str, why: str, how: str):
        self.where, self.why, self.how = where, why, how
        super().__init__(f"rotation stopped {where}: {why}.\n{how}")


@dataclass
class Step:
    nodes: list[NodeView]
    started: float
    phase: str = "starting"


@dataclass
class Summary:
    rotated: list[tuple[str, float]] = field(default_factory=list)  # node label, seconds
    seconds: float = 0.0

    def text(self) -> str:
        if not self.rotated:
            return "rotation: nothing was stale; nothing was replaced"
        per = ", ".join(f"{n} {duration(s)}" for n, s in self.rotated)
        return (f"rotation complete: {len(self.rotated)} node(s) replaced in {duration(self.seconds)} "
                f"({per}); every node now runs what the configuration asks")


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def last_lines(text: str, n: int = 3) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-n:]) if lines else text.strip()
