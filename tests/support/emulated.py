"""Each stack built once per test session in the emulated AWS account (offline/engine/emulated_account.py).

The plan summary and the doctor's results are taken from the same build, then the account is
stopped: tests/emulated/test_snapshots.py and tests/emulated/test_doctor.py share these instead of building twice.
Under pytest-xdist the workers of one run share them too: the first worker to need a stack builds
it while holding a lock on its file in the workers' common directory, the others read the file.
"""

from __future__ import annotations

import fcntl
import functools
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from rke_aws.ops import doctor
from rke_aws_offline.engine import emulated_account
from rke_aws_offline.report import plan_report


@dataclass(frozen=True)
class Evaluated:
    stack: str
    snapshot: str  # what `make plan-json` prints, i.e. tests/snapshots/<stack>.json
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
    path = shared / f"emulated-{stack}.pickle"
    with open(shared / f"emulated-{stack}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            with open(path, "rb") as f:
                return pickle.load(f)  # noqa: S301 - written by this run's other worker
        built = _build(stack)
        with open(f"{path}.tmp", "wb") as f:
            pickle.dump(built, f)
        os.replace(f"{path}.tmp", path)
        return built
