"""Golden plans: tests/snapshots/<stack>.json is what `python3 -m offline.tasks plan <stack> --json` prints.

syrupy compares each stack's plan with its file (tests/support/golden.py) and shows a mismatch as a diff; if the
change is intended, `python3 -m offline.tasks snapshots` (or `pytest tests/emulated/test_snapshots.py
--snapshot-update`) rewrites the files.
"""

# split: this module mixes levels (issue 33 §7.2); the rendering tests -> tests/unit/report.

from __future__ import annotations

import functools
import ipaddress
import json
import re

import pytest
import yaml

from rke_aws.settings import stackfile
from rke_aws_offline import snapshots
from rke_aws_offline.engine import harness, stacks
from rke_aws_offline.report import plan_report
from tests.support.golden import GoldenPlan
from tests.support.runs import run_cached, run_stack_cached

ALL_STACKS = harness.stack_names()
# Test-only stacks (tests/stacks/) always have a golden plan; a stack in stacks/ has one once it is recorded
# (`python3 -m offline.tasks snapshots <stack>`): the tests over stacks/ hold for any valid stack a user keeps
# there, and a golden plan is a record of a stack, not a rule every stack meets.
STACKS = [s for s in ALL_STACKS if s not in stacks.environments() or snapshots.snapshot_path(s).exists()]


@pytest.mark.parametrize("stack", STACKS)
def test_plan_matches_its_golden_snapshot(stack, emulated, snapshot):
    # emulated(stack).snapshot = snapshots.render_snapshot(stack), built once per run. with_defaults, not
    # snapshot(extension_class=...), which holds for one comparison only (syrupy's README, "Overriding defaults"):
    # syrupy's report looks for unused files with the extension an assertion keeps.
    assert snapshot.with_defaults(extension_class=GoldenPlan) == emulated(stack).snapshot, \
        f"{stack}: if the change is intended, `python3 -m offline.tasks snapshots {stack}` rewrites its golden plan"


def test_a_stack_files_shared_run_is_its_emulated_build(emulated):
    """tests/support/runs.py: the shared run of a stack file (run_stack_cached, the program tier's stack_run) is the
    run of the stack's emulated build (tests/support/emulated.py), of that file's config: one evaluation serves the
    golden plan, the doctor and the program tier."""
    stack = STACKS[0]
    run = run_stack_cached(stack)
    assert run is emulated(stack).run, f"{stack}: the stack file was evaluated twice"
    assert run.stack == stack and run.config == harness.stack_config(stack) and run.previous_outputs is None


def test_every_stack_has_a_snapshot_and_no_snapshot_is_orphaned():
    """Also when only this file is named on the command line: syrupy reports unused snapshots in a run of the
    whole suite or one naming tests/snapshots, but ties a file to a test module named on the command line only
    through syrupy's own layout (__snapshots__/<module>/...), which tests/snapshots does not follow
    (syrupy/report.py _candidates: by the file's stem or its folder's name; tests/tooling/test_golden.py)."""
    stored = {p.stem for p in snapshots.SNAPSHOT_DIR.glob("*.json")}
    assert stored >= set(STACKS) and stored <= set(ALL_STACKS), \
        f"missing: {set(STACKS) - stored}, orphaned: {stored - set(ALL_STACKS)}"


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
    assert text == plan_report.to_json(json.loads(text)), f"{stack}: snapshot is not in canonical form (sorted keys)"
    for marker in ("/work/", "/home/", "/tmp/"):
        assert marker not in text, f"{stack}: snapshot holds a local path ({marker})"
    stamps = re.findall(r"\d{4}-\d\d-\d\dT\d\d:\d\d", text)
    assert not stamps, f"{stack}: snapshot holds timestamps {stamps[:3]}"


def entries(s: dict, typ: str) -> list[dict]:
    return [e for e in s["resources"] if e["type"] == typ]


@pytest.mark.parametrize("stack", STACKS)
def test_snapshot_shows_what_a_reviewer_needs(stack):
    s = load(stack)
    dist = s["outputs"]["distribution"]
    for inst in entries(s, "Instance"):
        i = inst["inputs"]
        assert {"instanceType", "ami", "rootBlockDevice", "metadataOptions", "tags", "privateIp", "subnetId"} <= set(i), inst["name"]
        assert {"volumeSize", "volumeType", "encrypted"} <= set(i["rootBlockDevice"]), inst["name"]
        assert i["userDataBase64"]["bootSettings"]["NODE_NAME"] == i["tags"]["Name"], inst["name"]
        assert inst["options"]["ignoreChanges"] and inst["options"]["deleteBeforeReplace"] is True, inst["name"]
    for rule in entries(s, "SecurityGroupIngressRule") + entries(s, "SecurityGroupEgressRule"):
        assert "ipProtocol" in rule["inputs"] and ({"cidrIpv4", "referencedSecurityGroupId"} & set(rule["inputs"])), rule
    policies = entries(s, "RolePolicy")
    assert policies and all(isinstance(p["inputs"]["policy"]["Statement"], list) for p in policies), stack
    cloud = next(p for p in policies if p["name"].endswith("controlplane-cloud-provider"))
    conditioned = [st for st in cloud["inputs"]["policy"]["Statement"] if st.get("Condition")]
    assert conditioned, f"{stack}: the CCM policy shows no conditions"
    assert any(lk["token"] == "aws:ec2/getAmi:getAmi" for lk in s["lookups"]), f"{stack}: the AMI look-up is not shown"
    assert s["ccm"]["image"].startswith("registry.k8s.io/provider-aws/cloud-controller-manager:v1."), stack
    names = [n["name"] for n in s["nodes"]]
    configs = {plan_report.config_title(c): c["content"] for c in s["configs"]}
    if dist == "rke2":
        ips = [ipaddress.ip_address(c["privateIp"]) for c in s["configs"]]
        assert ips == sorted(ips), f"{stack}: node configs not ordered by address: {ips}"
        for node in names:
            doc = configs[f"{node}:/etc/rancher/rke2/config.yaml"]
            assert doc["node-name"] == node, f"{stack}: {node} config names {doc['node-name']}"
        assert s["outputs"]["rke2Token"] == plan_report.MASK, f"{stack}: rke2Token not masked"
        if s["outputs"].get("rke2ManifestPath"):
            assert s["ccm"]["helmChart"]["kind"] == "HelmChart", f"{stack}: manifest mode HelmChart not shown"
    else:
        doc = configs["cluster.yml"]
        assert sorted(n["hostname_override"] for n in doc["nodes"]) == sorted(names), f"{stack}: cluster.yml node names"
    for node in s["nodes"]:
        assert node["instanceId"].startswith("i-") and len(node["instanceId"]) == 19, f"{stack}: {node}"


def test_encrypted_values_show_masked_and_the_release_is_planned():
    s = load("rke-phase2")
    (provider,) = [e for e in s["resources"] if e["type"] == "kubernetes"]
    assert provider["inputs"]["kubeconfig"] == plan_report.MASK
    assert s["ccm"]["release"]["chart"] == "aws-cloud-controller-manager"
    assert stackfile.SECURE_PLACEHOLDER not in json.dumps(s)


@pytest.mark.parametrize("stack", STACKS)
def test_readable_plan_has_every_section(stack):
    s = load(stack)
    text = plan_report.render(s, full=True)
    for section in ("Nodes:", "Cluster-tagged:", "Look-ups:", "CCM (", "Generated configuration (secrets masked):", "Outputs:"):
        assert section in text, f"{stack}: the readable plan lacks {section!r}"
    for entry in s["configs"]:
        assert f"  {plan_report.config_title(entry)}:" in text, f"{stack}: {plan_report.config_title(entry)} not printed"
    for e in s["resources"]:
        assert f"+ {e['type']} {e['name']}" in text, f"{stack}: {e['name']} not printed"


# --- a snapshot changes whenever anything a reviewer must see changes -------------------------------

def _pools(cfg: dict) -> list:
    return json.loads(cfg["rke-aws:nodePools"])


def _mutated(cfg: dict, key: str, value) -> dict:
    cfg = dict(cfg)
    cfg[key] = value if isinstance(value, str) else json.dumps(value)
    return cfg


def _pool_change(field: str, value):
    def apply(cfg: dict) -> dict:
        pools = _pools(cfg)
        pools[1][field] = value
        return _mutated(cfg, "rke-aws:nodePools", pools)
    return apply


MUTATIONS = {
    "instance type": (_pool_change("instanceType", "m6i.4xlarge"), "m6i.4xlarge"),
    "root volume": (_pool_change("rootVolumeGb", 321), "\"volumeSize\": 321"),  # not a bare 321: IDs hold digits
    "ami": (_pool_change("ami", "ami-0123456789abcdef0"), "ami-0123456789abcdef0"),
    "imds": (lambda c: _pool_change("imdsHopLimitReason", "legacy sdk")(_pool_change("imdsHopLimit", 2)(c)), "legacy sdk"),
    "tag": (lambda c: _mutated(c, "rke-aws:tags", {"environment": "prod", "owner": "team-a"}), "team-a"),
    "admin cidr": (lambda c: _mutated(c, "rke-aws:access", {"adminCidrs": ["198.51.100.0/24"]}), "198.51.100.0/24"),
    "iam (cluster id in conditions)": (lambda c: _mutated(c, "rke-aws:clusterId", "other-name"), "kubernetes.io/cluster/other-name"),
    "ccm args": (lambda c: _mutated(c, "rke-aws:ccm", {"extraArgs": ["--v=5"]}), "--v=5"),
    "ccm image": (lambda c: _mutated(c, "rke-aws:ccm", {"image": "example.com/ccm:v1.33.9"}), "example.com/ccm"),
    "node config / version": (lambda c: _mutated(c, "rke-aws:kubernetesVersion", "v1.33.9+rke2r1"), "v1.33.9+rke2r1"),
    "endpoint": (lambda c: _mutated(c, "rke-aws:controlPlane", {"endpoint": "nlb"}), '"type": "LoadBalancer"'),
}


@functools.cache
def _plan_text(stack: str) -> str:
    return plan_report.to_json(plan_report.summary(run_stack_cached(stack)))


@pytest.mark.parametrize("what", sorted(MUTATIONS))
def test_every_attribute_class_changes_the_plan(what):
    base = harness.stack_config("rke2-prod")
    before = _plan_text("rke2-prod")
    mutate, marker = MUTATIONS[what]
    # The changed config's first run, shared (only its summary is read): tests/program/test_endpoint.py reads the NLB one.
    after = plan_report.to_json(plan_report.summary(run_cached(mutate(base), stack="rke2-prod")))
    assert after != before, f"changing the {what} left the plan unchanged"
    assert marker in after and marker not in before, f"the {what} change ({marker}) is not visible in the plan"


def test_manifest_mode_change_shows_in_the_helmchart():
    base = harness.stack_config("rke2-dev")
    before = plan_report.summary(run_stack_cached("rke2-dev"))  # base is the stack file's config: its shared run
    after = plan_report.summary(harness.run_program(_mutated(base, "rke-aws:ccm", {"install": "manifest", "extraArgs": ["--v=6"]}),
                                             stack="rke2-dev"))
    values = lambda s: yaml.safe_load(s["ccm"]["helmChart"]["spec"]["valuesContent"])  # noqa: E731
    assert "--v=6" in values(after)["args"] and "--v=6" not in values(before)["args"]


def test_secret_config_keys_are_masked():
    doc = {"token": "s3cret", "node-name": "n", "nested": [{"ssh_key": "-----BEGIN", "user": "ubuntu"}], "agent-token": ""}
    assert plan_report.mask_config(doc) == {"token": plan_report.MASK, "node-name": "n",
                                     "nested": [{"ssh_key": plan_report.MASK, "user": "ubuntu"}], "agent-token": ""}
