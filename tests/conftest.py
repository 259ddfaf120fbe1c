"""Fixtures only (shared helpers live in tests/support, the only test code tests import): every stack in
stacks/ evaluated once, offline, under AWS-like mocks; and each test's tier marker, from its directory.

The mocks (offline/engine/fake_aws.py) behave like AWS where the program can observe it: IDs and ARNs per
type, an instance's private DNS name derived from its private IP and the region, public IPs only
when asked for, AZ and AMI look-ups, and AWS's refusals (address outside the subnet, reserved or
taken addresses).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rke_aws_offline.engine import harness  # noqa: E402
from tests.support.runs import STACKS, run_stack_cached  # noqa: E402

# ---- tiers -------------------------------------------------------------------------------------------
# A test's tier is its directory: tests/unit (pure functions: no Pulumi runtime, no moto), tests/program (the
# program under the mocks), tests/emulated (whole-account behaviour in moto), tests/tooling (commands, files,
# the package). `python3 -m offline.tasks test --fast` runs the unit tier (`-m unit`).
TIERS = {
    "unit": "pure functions, no Pulumi runtime, no moto (tests/unit)",
    "program": "the program evaluated under the mocks (tests/program)",
    "emulated": "whole-account behaviour in the emulated AWS account (tests/emulated)",
    "tooling": "commands, generated files, workflows, the package (tests/tooling)",
}

# ---- tests over stacks/ ------------------------------------------------------------------------------
# A test over the user's environments (the stacks/ files) must hold for any valid stack there:
# tests/tooling/test_user_stacks.py runs every test marked `reads_stacks` against a copy of stacks/ whose files carry
# a `secure:` kubeconfig. The marker is set here on every test parametrized with an environment's name (how
# tests go over stacks/: STACKS, stack_run), so a new one is covered without a list; a test that reads one
# environment by name marks itself (`@pytest.mark.reads_stacks`).
READS_STACKS = "reads_stacks"
_ENVIRONMENTS = frozenset(harness.stack_names(include_fixtures=False))


def pytest_configure(config):
    config.addinivalue_line("markers", f"{READS_STACKS}: goes over stacks/ (tests/tooling/test_user_stacks.py runs "
                                       "it against stacks carrying a kubeconfig)")
    for tier, what in TIERS.items():
        config.addinivalue_line("markers", f"{tier}: {what}")


def tier_of(path: Path) -> str | None:
    """The tier of a test file: the directory under tests/ it sits in."""
    try:
        parts = path.resolve().relative_to(ROOT / "tests").parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 and parts[0] in TIERS else None


def pytest_collection_modifyitems(config, items):
    for item in items:
        tier = tier_of(Path(str(item.path)))
        if tier is not None:
            item.add_marker(tier)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if any(isinstance(v, str) and v in _ENVIRONMENTS for v in params.values()):
            item.add_marker(READS_STACKS)


@pytest.fixture(scope="session")
def emulated(tmp_path_factory):
    """`emulated(stack)`: the stack built once in the emulated account (tests/support/emulated.py), shared by
    every xdist worker of the run through their common temporary directory."""
    import functools
    import os

    from tests.support import emulated as _emulated

    shared = tmp_path_factory.getbasetemp().parent if os.environ.get("PYTEST_XDIST_WORKER") else None
    return functools.partial(_emulated.evaluate, shared=shared)


@pytest.fixture(params=STACKS)
def stack_run(request) -> harness.ProgramRun:
    """The registered resources and outputs of one stack file (each stack evaluated once per session)."""
    return run_stack_cached(request.param)


@pytest.fixture
def base_config() -> dict[str, str]:
    """A copy of a valid flat config (rke2-dev) that tests mutate to plant one mistake. Without a
    kubeconfig, whether or not the user has set one in stacks/ (README, phase two)."""
    config = copy.deepcopy(harness.stack_config("rke2-dev"))
    config.pop("rke-aws:kubeconfig", None)
    return config


