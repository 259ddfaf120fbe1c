"""Each stack built once per test session in the emulated AWS account (offline/engine/emulated_account.py).

The plan summary, the doctor's results and the owners of the instances' images are taken from the same build, then
the account is stopped: tests/emulated/test_snapshots.py, test_doctor.py and test_partitions.py share these instead
of building again. The build's program run is the stack's shared run too (tests/support/runs.py run_stack_cached,
run_cached of a stack file's config): one evaluation per stack file serves both. Under pytest-xdist the workers of
one run share them: the first worker to need a stack builds it, the others read its result (tests/support/once.py).
A test that changes an account builds its own (emulated_account.build_stack); these accounts are stopped before any
test reads them.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path

from rke_aws.ops import doctor
from rke_aws_offline.engine import emulated_account, harness
from rke_aws_offline.report import plan_report
from tests.support.once import once_per_run


@dataclass(frozen=True)
class Evaluated:
    stack: str
    snapshot: str  # what `python3 -m offline.tasks plan <stack> --json` prints, i.e. tests/snapshots/<stack>.json
    doctor: tuple[doctor.Result, ...]
    image_owners: frozenset[str]  # the OwnerId EC2 describes for the images the stack's instances run
    run: harness.ProgramRun  # the build's program run (its account stopped; no account at all when shared)


def _build(stack: str, shared: bool) -> Evaluated:
    run, account = emulated_account.build_stack(stack)
    try:
        results = doctor.check_account(doctor.Clients.from_session(account), doctor.Expectations.from_outputs(run.outputs, stack))
        images = account.client("ec2").describe_images(
            ImageIds=sorted({i.inputs["ami"] for i in run.of_type("aws:ec2/instance:Instance")}))["Images"]
        owners = frozenset(img["OwnerId"] for img in images)
        snapshot = plan_report.to_json(plan_report.summary(run))
    finally:
        account.stop()
    # What another worker reads is data: the account (a live moto backend) stays with the process that made it.
    return Evaluated(stack, snapshot, tuple(results), owners, dataclasses.replace(run, mocks=None) if shared else run)


def evaluate(stack: str, shared: Path | None = None) -> Evaluated:
    """`stack` built once; `shared`: a directory every worker of this run sees (the `emulated` fixture
    in conftest.py gives the xdist workers' common temporary directory, which pytest cleans up)."""
    return _evaluate(stack, shared)  # one cache key however it is called (functools.cache keys keywords apart)


@functools.cache
def _evaluate(stack: str, shared: Path | None) -> Evaluated:
    if shared is None:
        return _build(stack, shared=False)
    return once_per_run(shared, f"emulated-{stack}", lambda: _build(stack, shared=True))
