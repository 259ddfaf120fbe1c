"""A running cluster for day-2 program runs: a test installs a fake API (`TRANSPORT`, an Access -> get
function such as tests/support/day2.py fake_api's), and runs the program with `MAIN`, the stack program
whose RkeCluster reads the cluster through it (product code has no test hook: the reader is the
Environment's, components/plan/environment.py)."""

from __future__ import annotations

from pathlib import Path

from rke_aws.plan import running

MAIN = Path(__file__).resolve().parent / "programs" / "fake_cluster_main.py"
TRANSPORT: running.Transport | None = None  # None: no cluster answers (as offline)


def reader(kubeconfig: str | None, rke2: bool) -> running.Reading:
    """What the program reads: through TRANSPORT, or nothing (an offline run)."""
    if TRANSPORT is None:
        access = running.parse_kubeconfig(kubeconfig)
        return running.Unreadable(access if isinstance(access, str) else "offline run: the cluster is not read")
    return running.read(kubeconfig, rke2, transport=TRANSPORT)


def main() -> Path | None:
    """The program to run: MAIN while a fake API is installed, else the stack program (None)."""
    return MAIN if TRANSPORT is not None else None
