"""The unit tier's guard: pure functions only, so `python3 -m offline.tasks test --fast` stays an inner loop.

A unit test that runs the program (the harness, a Pulumi mock monitor) or touches the emulated account (moto)
fails here, at collection when its module imports them and after the test when the test itself did; such a test
belongs in tests/program or tests/emulated. Importing the Pulumi SDK's types is allowed: the policy pack
(policies/rules.py) and some product modules import `pulumi` for its types; running a program is what costs.
"""

from __future__ import annotations

import sys

import pytest
from hypothesis import settings

from tests.support import properties

# The inner loop's property tests (tests/support/properties.py): Hypothesis's default count scaled as the tests'
# own counts are (`examples(n)`), when `python3 -m offline.tasks test --fast` runs the tier.
if properties.fast():
    settings.register_profile("fast", max_examples=properties.examples(settings.default.max_examples))
    settings.load_profile("fast")

# What a unit test may not load: moto (the emulated account) and the offline engine that runs programs.
FORBIDDEN = ("moto", "rke_aws_offline.engine.harness", "rke_aws_offline.engine.emulated_account")


def loaded() -> set[str]:
    return {m for m in FORBIDDEN if m in sys.modules}


def program_ran() -> bool:
    """A Pulumi program ran in this process: the runtime's settings hold a monitor (mocks or an engine)."""
    settings = sys.modules.get("pulumi.runtime.settings")
    return settings is not None and getattr(getattr(settings, "SETTINGS", None), "monitor", None) is not None


def _refuse(what: str, where: str) -> None:
    pytest.fail(f"{where}: the unit tier is pure (no program runs, no moto), but {what} got loaded; "
                "move the test to tests/program or tests/emulated", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A unit module whose import loads moto or the engine fails to collect."""
    before = loaded()
    outcome = yield
    new = loaded() - before
    report = outcome.get_result()
    if new and isinstance(collector, pytest.Module) and report.outcome != "failed":
        report.outcome = "failed"
        report.longrepr = (f"{collector.nodeid}: the unit tier is pure (no program runs, no moto), but importing it "
                           f"loaded {', '.join(sorted(new))}; move the test to tests/program or tests/emulated")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    before, ran = loaded(), program_ran()
    result = yield
    new = loaded() - before
    if new:
        _refuse(", ".join(sorted(new)), item.nodeid)
    if program_ran() and not ran:
        _refuse("a Pulumi program run", item.nodeid)
    return result
