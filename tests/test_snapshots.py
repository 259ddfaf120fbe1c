"""Golden plans: tests/snapshots/<stack>.json is what `make plan-json` prints for each stack.

A mismatch prints a unified diff; if the change is intended, `make snapshots` rewrites the files.
"""

from __future__ import annotations

import ipaddress
import json

import pytest

from components import iam_policy
from offline import harness, plan, snapshots

from ._emulated import evaluate

STACKS = harness.stack_names()


@pytest.mark.parametrize("stack", STACKS)
def test_plan_matches_its_golden_snapshot(stack):
    current = evaluate(stack).snapshot  # = snapshots.render_snapshot(stack), built once per session
    d = snapshots.diff(stack, current)
    assert not d, f"{stack}: the plan differs from tests/snapshots/{stack}.json; `make snapshots` if intended:\n{d}"


def test_every_stack_has_a_snapshot_and_no_snapshot_is_orphaned():
    stored = {p.stem for p in snapshots.SNAPSHOT_DIR.glob("*.json")}
    assert stored == set(STACKS), f"missing: {set(STACKS) - stored}, orphaned: {stored - set(STACKS)}"


def test_a_changed_plan_shows_as_a_readable_diff():
    stack = STACKS[0]
    stored = snapshots.snapshot_path(stack).read_text()
    assert snapshots.diff(stack, stored) == ""
    lines = snapshots.diff(stack, stored.replace('"clusterId"', '"clusterIdX"', 1)).splitlines()
    assert lines[0] == f"--- tests/snapshots/{stack}.json (stored)" and lines[1].startswith("+++ "), lines[:2]
    assert any(x.startswith("-") and '"clusterId"' in x for x in lines[2:]), lines
    assert any(x.startswith("+") and '"clusterIdX"' in x for x in lines[2:]), lines


def load(stack: str) -> dict:
    return json.loads(snapshots.snapshot_path(stack).read_text())


@pytest.mark.parametrize("stack", STACKS)
def test_snapshot_is_stable_text(stack):
    text = snapshots.snapshot_path(stack).read_text()
    assert text == plan.to_json(json.loads(text)), f"{stack}: snapshot is not in canonical form (sorted keys)"
    for marker in ("T00:00", "+00:00", "Z\"", "/work/", "/home/"):
        assert marker not in text, f"{stack}: snapshot holds a timestamp or a local path ({marker})"


@pytest.mark.parametrize("stack", STACKS)
def test_snapshot_shows_iam_ccm_values_and_generated_configs(stack):
    s = load(stack)
    dist = s["outputs"]["distribution"]
    extra = 1 if dist == "rke2" else 0  # ssm:GetParameter on the join token
    for kind in ("controlplane", "worker"):
        role = s["iam"][f"{s['outputs']['clusterId']}-{kind}"]
        assert role["actions"] == len(iam_policy.actions_for(kind)) + extra, f"{stack}: {kind} {role}"
        assert role["managedPolicies"] == ["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"], f"{stack}: {kind}"
        assert role["instanceProfiles"] == [s["outputs"]["instanceProfileNames"][kind]], f"{stack}: {kind}"
    assert s["ccmValues"] == s["outputs"]["ccmValues"], stack
    names = [n["name"] for n in s["nodes"]]
    configs = {plan.config_title(c): c["content"] for c in s["configs"]}
    if dist == "rke2":
        ips = [ipaddress.ip_address(c["privateIp"]) for c in s["configs"]]
        assert ips == sorted(ips), f"{stack}: node configs not ordered by address: {ips}"
        for node in names:
            doc = configs[f"{node}:/etc/rancher/rke2/config.yaml"]
            assert doc["node-name"] == node, f"{stack}: {node} config names {doc['node-name']}"
            assert "token" not in doc or doc["token"] == plan.MASK, f"{stack}: {node} config shows the token"
        assert s["outputs"]["rke2Token"] == plan.MASK, f"{stack}: rke2Token not masked"
    else:
        doc = configs["cluster.yml"]
        assert [n["hostname_override"] for n in doc["nodes"]] == names, f"{stack}: cluster.yml node names"
    for node in s["nodes"]:
        assert node["instanceId"].startswith("i-") and len(node["instanceId"]) == 19, f"{stack}: {node}"


@pytest.mark.parametrize("stack", STACKS)
def test_readable_plan_has_every_section(stack):
    s = load(stack)
    text = plan.render(s)
    for section in ("Nodes:", "Cluster-tagged:", "IAM (", "CCM values (", "Generated configuration (secrets masked):", "Outputs:"):
        assert section in text, f"{stack}: the readable plan lacks {section!r}"
    for entry in s["configs"]:
        assert f"  {plan.config_title(entry)}:" in text, f"{stack}: {plan.config_title(entry)} not printed"


def test_secret_config_keys_are_masked():
    doc = {"token": "s3cret", "node-name": "n", "nested": [{"ssh_key": "-----BEGIN", "user": "ubuntu"}], "agent-token": ""}
    assert plan.mask_config(doc) == {"token": plan.MASK, "node-name": "n",
                                     "nested": [{"ssh_key": plan.MASK, "user": "ubuntu"}], "agent-token": ""}
