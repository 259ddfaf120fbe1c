"""Asserting on refusals as data (issue 33 §3): (key, code) pairs, not sentences."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rke_aws.diagnostics import ConfigError, Diagnostic, Severity
from tests.support.configs import parse_config


def refusal(cfg: dict[str, str], stack: str = "test", **kw) -> list[Diagnostic]:
    """The Diagnostics reading `cfg` refuses it with (it must be refused)."""
    with pytest.raises(ConfigError) as info:
        parse_config(cfg, stack, **kw)
    return info.value.diagnostics


def assert_refused(found: Sequence[Diagnostic], *expected: tuple[str, str]) -> None:
    """The errors of `found` are exactly the `(key, code)` pairs expected (each at least once)."""
    got = {(d.key, d.code) for d in found if d.severity == Severity.ERROR}
    assert got == set(expected), f"refused with {sorted(got)}, expected {sorted(expected)}"
