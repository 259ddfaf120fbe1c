"""Asserting on refusals as data (issue 33 §3): (key, code) pairs, not sentences."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rke_aws.diagnostics import ConfigError, Diagnostic, Severity
from rke_aws.settings import stackfile
from rke_aws.settings.args import RkeClusterArgs
from rke_aws.settings.resolve import Running, resolve
from rke_aws_offline.engine.stacks import PROJECT  # not the harness: it loads the Pulumi runtime
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


def program_refusal(cfg: dict[str, str], stack: str = "test") -> tuple[str, ConfigError]:
    """What the program refuses a new stack's `cfg` with, by the two calls it makes before any resource exists,
    without the Pulumi runtime: `RkeClusterArgs.from_pulumi_config` reads the flat config with
    `from_flat_config` (stage "read"), then `RkeCluster` resolves it with `settings.resolve.resolve` (stage
    "resolve"; components/rke_cluster.py `resolve`: no previous outputs, so `Running()`, and the stack's name
    as the cluster ID's default). The engine shows the ConfigError's text as the RunError's (settings/args.py,
    rke_cluster.RkeAwsError). `cfg` must be refused; the secret keys are those the CLI decrypted, as the
    harness hands them to the program (harness.run_program). Plan-time refusals (look-ups, planner checks) are
    not reached here: they need a program run."""
    secret_keys = stackfile.secret_keys_of(cfg)
    try:
        args = RkeClusterArgs.from_flat_config(cfg, namespace=PROJECT, stack=stack, secret_keys=secret_keys)
    except ConfigError as err:
        return "read", err
    with pytest.raises(ConfigError) as info:
        resolve(args, project=PROJECT, stack=stack, running=Running())
    return "resolve", info.value
