"""Each stack built once per test session in the emulated AWS account (offline/moto_mocks.py).

The plan summary and the doctor's results are taken from the same build, then the account is
stopped: tests/test_snapshots.py and tests/test_doctor.py share these instead of building twice.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from offline import doctor, moto_mocks, plan


@dataclass(frozen=True)
class Evaluated:
    stack: str
    snapshot: str  # what `make plan-json` prints, i.e. tests/snapshots/<stack>.json
    doctor: tuple[doctor.Result, ...]


@functools.cache
def evaluate(stack: str) -> Evaluated:
    run, account = moto_mocks.build_stack(stack)
    try:
        results = doctor.check_account(account.doctor_clients(), doctor.Expectations.from_outputs(run.outputs, stack))
        return Evaluated(stack, plan.to_json(plan.summary(run)), tuple(results))
    finally:
        account.stop()
