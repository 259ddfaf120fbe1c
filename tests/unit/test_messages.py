"""Messages show values as the user wrote them: `every 6 h, 28 kept`, never `6.0 h, 28.0 kept` or
`True`/`False` (house rules; issue 32, "Done when").

Where the floats come from: the stack's last outputs are read back through the engine's
readStackOutputs invoke as a protobuf Struct, whose numbers are doubles (pulumi/pulumi
sdk/python/lib/pulumi/runtime/rpc.py serialises every int as `number_value=float(value)` and hands
`number_value` back as it is), so a number the last update exported (etcdSnapshotsRunning's
intervalHours and retention) comes back as 6.0. A message must render it as the user wrote it.

The scan: every problem and warning of a set of configurations, the hostile ones of
tests/program/test_hostile.py included, and of day-2 runs that feed a run's outputs back as the next run's
previous outputs (the harness serialises them the same way).
"""

# split: this module mixes levels (issue 33 §7.2); the program runs -> tests/program.

from __future__ import annotations

import copy
import json
import re

import pytest

from rke_aws.settings.config import ConfigError
from rke_aws_offline.engine import harness
from tests.support.configs import both, parse_config, pool, put, set_key
from tests.support.hostile import ALLOWED, PROGRAM_ROWS
from tests.support.runs import run_cached

# An integral value rendered as a Python float: " 6.0 h", "28.0 kept", "(30.0)". Not a part of a dotted
# version or address (v1.35.0, 3.6.0, 10.0.0.0/16): no digit or dot on either side.
FLOAT = re.compile(r"(?<![\w.])\d+\.0(?![\w.])")
# A Python boolean (or None) where the user wrote true/false.
PYTHON_LITERAL = re.compile(r"\b(True|False|None)\b")


def offenders(messages: list[str]) -> list[str]:
    return [m for m in messages if FLOAT.search(m) or PYTHON_LITERAL.search(m)]


def test_the_patterns_catch_what_they_are_for():
    assert offenders(["snapshots every 6.0 h, 28.0 kept", "ebsCsi True -> False", "(30.0)"]) == [
        "snapshots every 6.0 h, 28.0 kept", "ebsCsi True -> False", "(30.0)"]
    assert not offenders(["v1.35.0+rke2r1 runs etcd 3.6.0", "10.0.0.0/16 and 0.0.0.0/0", "every 6 h, 28 kept",
                          "ingress-nginx v1.14.5-hardened2", "use true or false"])


# Numbers and booleans written in ways the model refuses, beside the hostile rows: each message must
# show the value as written. (A value written 28.0 is shown 28.0, as written; and the CLI hands a
# nested 28.0 over as `28`, Go's float text: offline/engine/harness.py.)
NUMBERS_AND_BOOLEANS = [
    put("etcdBackup", {"intervalHours": 5}), put("etcdBackup", {"intervalHours": 6.5}),
    put("etcdBackup", {"intervalHours": True}), put("etcdBackup", {"retention": 0}),
    put("etcdBackup", {"retention": 1001}), put("etcdBackup", {"expireDays": 0}),
    put("etcdBackup", {"enabled": "yes"}), put("etcdBackup", {"enabled": 1}),
    pool(0, count=-1), pool(0, count=True), pool(0, rootVolumeGb=7),
    put("access", {"ssm": "True"}), put("addons", {"ebsCsi": 0}), put("protectServers", "yes"),
    both(put("etcdBackup", {"intervalHours": 7}), pool(1, count=1000)),
]


def _messages(cfg: dict) -> list[str]:
    try:
        return list(parse_config(cfg).warnings)
    except ConfigError as err:
        return list(err.problems)


def test_configuration_messages_show_values_as_written(base_config):
    mutations = [p.values[0] for p in PROGRAM_ROWS] + [p.values[0] for p in ALLOWED] + NUMBERS_AND_BOOLEANS
    found: list[str] = []
    for mutate in mutations:
        cfg = copy.deepcopy(base_config)
        mutate(cfg)
        found += offenders(_messages(cfg))
    assert not found, found


def _backup(cfg: dict, **keys) -> dict:
    current = json.loads(cfg.get("rke-aws:etcdBackup", "{}"))
    return set_key(copy.deepcopy(cfg), "etcdBackup", {**current, **keys})


@pytest.mark.parametrize("stack", ["rke2-prod", "rke-prod"])
def test_day2_messages_show_the_last_outputs_as_written(stack):
    """A snapshot change says what the running servers keep, read from the last outputs (numbers that
    crossed the wire as doubles): `every 6 h, 28 kept`."""
    cfg = harness.stack_config(stack)
    cfg.pop("rke-aws:kubeconfig", None)
    base = run_cached(cfg, stack)
    changed = _backup(cfg, intervalHours=12, retention=10)
    after = harness.run_program(changed, stack=stack, previous_outputs=base.outputs)
    said = [m for _, m in after.logs]
    assert any("etcdBackup" in m for m in said), said
    assert not offenders(said), offenders(said)
    backup = json.loads(cfg["rke-aws:etcdBackup"]) if "rke-aws:etcdBackup" in cfg else {}
    every, kept = backup.get("intervalHours", 6), backup.get("retention", 28)
    assert any(f"every {every} h, {kept} kept" in m for m in said), said


def test_every_stack_plan_says_values_as_written(stack_run):
    """What every stack file's plan logs (its warnings and notes)."""
    assert not offenders([m for _, m in stack_run.logs])
