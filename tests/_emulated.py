"""Each stack built once per test session in the emulated AWS account (offline/emulated_account.py).

The plan summary and the doctor's results are taken from the same build, then the account is
stopped: tests/test_snapshots.py and tests/test_doctor.py share these instead of building twice.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pytest

from offline import emulated_account, plan_report
from tools import doctor


@dataclass(frozen=True)
class Evaluated:
    stack: str
    snapshot: str  # what `make plan-json` prints, i.e. tests/snapshots/<stack>.json
    doctor: tuple[doctor.Result, ...]


@functools.cache
def evaluate(stack: str) -> Evaluated:
    run, account = emulated_account.build_stack(stack)
    try:
        results = doctor.check_account(account.doctor_clients(), doctor.Expectations.from_outputs(run.outputs, stack))
        return Evaluated(stack, plan_report.to_json(plan_report.summary(run)), tuple(results))
    finally:
        account.stop()


def per_stack(stacks: list[str]) -> list:
    """`stacks` as parameters that put every test of one stack's build on the same xdist worker
    (`--dist loadgroup`, offline/tasks.py): built once per session, not once per worker."""
    return [pytest.param(stack, marks=pytest.mark.xdist_group(f"emulated-{stack}")) for stack in stacks]
