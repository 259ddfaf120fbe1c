"""Fixtures only (shared helpers live in tests/support, the only test code tests import): every stack in
stacks/ evaluated once, offline (in the emulated account unless a test passes other mocks); and each test's
tier marker, from its directory. Nothing here imports the harness at module level: the unit tier
(tests/unit/conftest.py) loads no program runtime.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from typing import TYPE_CHECKING  # noqa: E402

from rke_aws_offline.engine import stacks  # noqa: E402 - not the harness: the unit tier loads no program runtime
from tests.support import collector, stacks_read  # noqa: E402

if TYPE_CHECKING:
    from rke_aws_offline.engine import harness

STACKS = stacks.stack_names()

# ---- the collector -----------------------------------------------------------------------------------
# What survives a full collection goes to the permanent generation, so the next one walks only what came after
# (tests/support/collector.py: a sixth of the workers' CPU went to walking the same ~2 M objects again).
collector.install()

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
_ENVIRONMENTS = frozenset(stacks.stack_names(include_fixtures=False))


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


# ---- order ---------------------------------------------------------------------------------------------
# Files whose single tests run for tens of seconds (a whole pytest or bench in a subprocess) start first: xdist
# (`--dist load`) hands the last tests out a few at a time, so one of them collected last (tests/tooling sorts
# late) keeps one core busy while the other has nothing left. Replaying this morning's per-test durations through
# xdist 3.8's LoadScheduling on 2 workers: 408 s -> 392 s for the busier worker (the other 376 s -> 392 s).
FIRST = ("tests/tooling/test_user_stacks.py", "tests/tooling/test_bench.py")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in FIRST)  # stable: the rest keep their order
    tiers: dict[str, str | None] = {}  # per file, not per test: resolving a path 5,000 times costs ~0.5 s
    for item in items:
        path = str(item.path)
        tier = tiers[path] if path in tiers else tiers.setdefault(path, tier_of(Path(path)))
        if tier is not None:
            item.add_marker(tier)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if any(isinstance(v, str) and v in _ENVIRONMENTS for v in params.values()):
            item.add_marker(READS_STACKS)
    # For test_user_stacks.py: the modules collected and those going over stacks/, before -m/-k/--deselect drop any.
    config.stash[stacks_read.COLLECTED] = stacks_read.Collected(
        frozenset(Path(p).resolve() for p in tiers),
        frozenset(Path(p).resolve() for p in {str(i.path) for i in items if i.get_closest_marker(READS_STACKS)}))


@pytest.fixture(scope="session", autouse=True)
def _shared_between_workers(tmp_path_factory):
    """What xdist workers would each make alike, made once per run and read by the others: the emulated account's TLS
    keys (seeded, ~0.5 s of CPU each: offline/engine/emulated/provider_checks.py share_keys), also read by the
    interpreters tests start (a run nested in this one keeps the outer run's directory), and the shared program
    runs (tests/support/runs.py run_cached)."""
    import os

    from rke_aws_offline.engine.emulated import provider_checks
    from tests.support.once import workers_dir

    shared = workers_dir(tmp_path_factory)
    inherited = os.environ.get(provider_checks.KEYS_ENV)
    provider_checks.share_keys(Path(inherited) if inherited else (shared or tmp_path_factory.getbasetemp()) / "tls-keys")
    if shared is None:  # one process: its own runs are enough
        yield
        provider_checks.share_keys(Path(inherited) if inherited else None)
        return
    from tests.support import runs

    runs.SHARED = shared
    yield
    provider_checks.share_keys(Path(inherited) if inherited else None)
    runs.SHARED = None


@pytest.fixture(scope="session")
def emulated(tmp_path_factory):
    """`emulated(stack)`: the stack built once in the emulated account (tests/support/emulated.py), shared by
    every xdist worker of the run through their common temporary directory."""
    import functools

    from tests.support import emulated as _emulated
    from tests.support.once import workers_dir

    return functools.partial(_emulated.evaluate, shared=workers_dir(tmp_path_factory))


@pytest.fixture(params=STACKS)
def stack_run(request) -> harness.ProgramRun:
    """The registered resources and outputs of one stack file (each stack evaluated once per session)."""
    from tests.support.runs import run_stack_cached

    return run_stack_cached(request.param)


@pytest.fixture
def base_config() -> dict[str, str]:
    """A copy of a valid flat config (the shipped rke2-dev, tests/data/scenarios) that tests mutate to plant one
    mistake; never the user's stacks/rke2-dev. Without a kubeconfig (README, phase two)."""
    from tests.support.configs import scenario_config

    config = copy.deepcopy(scenario_config("rke2-dev"))
    config.pop("rke-aws:kubeconfig", None)
    return config


