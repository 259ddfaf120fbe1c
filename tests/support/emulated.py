"""Each stack built once per test session in the emulated AWS account (offline/engine/emulated_account.py).

The plan summary and the doctor's results are taken from the same build, then the account is
stopped: tests/emulated/test_snapshots.py and tests/emulated/test_doctor.py share these instead of building twice.
Under pytest-xdist the workers of one run share them too: the first worker to need a stack builds
it, the others read its result (tests/support/once.py).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from rke_aws.ops import doctor
from rke_aws_offline.engine import emulated_account
from rke_aws_offline.report import plan_report
from tests.support.once import once_per_run


@dataclass(frozen=True)
class Evaluated:
    stack: str
    snapshot: str  # what `python3 -m offline.tasks plan <stack> --json` prints, i.e. tests/snapshots/<stack>.json
    doctor: tuple[doctor.Result, ...]


def _build(stack: str) -> Evaluated:
    run, account = emulated_account.build_stack(stack)
    try:
        results = doctor.check_account(doctor.Clients.from_session(account), doctor.Expectations.from_outputs(run.outputs, stack))
        return Evaluated(stack, plan_report.to_json(plan_report.summary(run)), tuple(results))
    finally:
        account.stop()


@functools.cache
def evaluate(stack: str, shared: Path | None = None) -> Evaluated:
    """`stack` built once; `shared`: a directory every worker of this run sees (the `emulated` fixture
    in conftest.py gives the xdist workers' common temporary directory, which pytest cleans up)."""
    if shared is None:
        return _build(stack)
    return once_per_run(shared, f"emulated-{stack}", lambda: _build(stack))
