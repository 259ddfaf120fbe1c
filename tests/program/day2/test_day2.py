"""Day 2: what the next `pulumi up` does to running nodes. Each test evaluates a stack, then the
changed config with the first run's outputs as the stack's last outputs (what the engine's
readStackOutputs answers), and compares the registrations before and after.
"""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from rke_aws.plan.day2 import versions as day2_versions
from rke_aws.plan.day2.confirmations import Observed
from rke_aws.plan.network import plan_subnets
from rke_aws.settings import versions
from rke_aws.state.migrations import from_outputs
from rke_aws_offline.engine import harness
from tests.support.configs import parse_config, set_key
from tests.support.day2 import INSTANCE, KUBECONFIG, by_name, changed_instances, placement, pools, refused, run

SUBNET = "aws:ec2/subnet:Subnet"


def network(config: dict) -> dict:
    return json.loads(config["rke-aws:network"])


@pytest.fixture
def prod() -> dict:
    """rke2-prod without a kubeconfig, whatever the user set (the scenarios add one where they need it)."""
    config = harness.stack_config("rke2-prod")
    config.pop("rke-aws:kubeconfig", None)
    return config


# ---- stable placement ---------------------------------------------------------------------------

def test_adding_a_zone_moves_nothing_and_new_nodes_fill_it(prod):
    before = run(prod)
    cfg = set_key(copy.deepcopy(prod), "network", {**network(prod), "availabilityZones": 4})
    p = pools(cfg)
    p[1]["count"] += 1
    set_key(cfg, "nodePools", p)
    after = run(cfg, before)
    assert changed_instances(before, after) == {}
    old_subnets, new_subnets = by_name(before, SUBNET), by_name(after, SUBNET)
    assert all(new_subnets[n].inputs == s.inputs for n, s in old_subnets.items()), "an existing subnet changed"
    added = set(by_name(after, INSTANCE)) - set(by_name(before, INSTANCE))
    assert added == {"rke2-prod-agents-3"}, added
    node = next(n for n in after.outputs["nodes"] if n["pool"] == "agents" and n["index"] == 3)
    assert node["availabilityZone"] == "us-west-2d", "the new node did not go to the empty zone"


GPU = {"name": "gpu", "roles": ["worker"], "count": 2, "instanceType": "g5.xlarge"}


def with_gpu(prod: dict, where: int) -> dict:
    p = pools(prod)
    p.insert(where, dict(GPU))
    return set_key(copy.deepcopy(prod), "nodePools", p)


def placed(cfg: dict, previous: harness.ProgramRun) -> list[dict]:
    """The placement step the program calls (tests/support/day2.py placement) after `previous`; as node outputs."""
    _, _, planned = placement(cfg, previous.outputs)
    return [{"name": n.name, "pool": n.pool.name, "index": n.index, "privateIp": n.private_ip,
             "availabilityZone": n.az, "ipBlock": n.ip_block} for n in planned]


def test_inserting_a_pool_moves_nothing(prod):
    """Whole program, base -> a pool inserted between the running ones (its outputs fed back). Every other
    position is judged on the placement step alone (below), which is shown here to be what the program ran."""
    before = run(prod)
    cfg = with_gpu(prod, 1)
    after = run(cfg, before)
    assert changed_instances(before, after) == {}
    assert set(by_name(after, INSTANCE)) - set(by_name(before, INSTANCE)) == {"rke2-prod-gpu-0", "rke2-prod-gpu-1"}
    keys = ("name", "pool", "index", "privateIp", "availabilityZone", "ipBlock")
    assert placed(cfg, before) == [{k: n[k] for k in keys} for n in after.outputs["nodes"]]


@pytest.mark.parametrize("where", [0, 1, 2])
def test_inserting_a_pool_anywhere_moves_nothing(prod, where):
    before = run(prod)
    after = placed(with_gpu(prod, where), before)
    running = {(n["pool"], n["index"]): n for n in before.outputs["nodes"]}
    kept = {(n["pool"], n["index"]): n for n in after if n["pool"] != "gpu"}
    assert kept.keys() == running.keys()
    for key, n in kept.items():
        assert n == {k: running[key][k] for k in n}, f"{key} moved: {running[key]} -> {n}"
    assert [n["index"] for n in after if n["pool"] == "gpu"] == [0, 1]
    used = {n["ipBlock"] for n in before.outputs["nodes"]}
    gpu_blocks = {n["ipBlock"] for n in after if n["pool"] == "gpu"}
    assert gpu_blocks and not gpu_blocks & used, f"the new pool took a running pool's block: {gpu_blocks} vs {used}"


def test_reordering_pools_and_zones_moves_nothing(prod):
    """On the planner's steps (the placement family's whole-program test is test_inserting_a_pool_moves_nothing): the
    stack's three zones (us-west-2a to c, what it ran with) listed in another order, the pools reversed."""
    before = run(prod)
    assert sorted(before.outputs["subnets"][k]["availabilityZone"] for k in before.outputs["subnets"]
                  if k.startswith("private-")) == ["us-west-2a", "us-west-2b", "us-west-2c"]
    later = set_key(copy.deepcopy(prod), "nodePools", list(reversed(pools(prod))))
    set_key(later, "network", {**network(prod), "availabilityZones": ["us-west-2c", "us-west-2a", "us-west-2b"]})
    keys = ("name", "pool", "index", "privateIp", "availabilityZone", "ipBlock")
    assert sorted(placed(later, before), key=str) == sorted(({k: n[k] for k in keys} for n in before.outputs["nodes"]),
                                                            key=str)
    state = from_outputs(before.outputs)
    assert state is not None
    subnets = plan_subnets(network(prod)["vpcCidr"], ["us-west-2c", "us-west-2a", "us-west-2b"],
                           previous=state.subnet_zones)
    assert {f"{s.tier}-{s.az_index}": (s.az, s.cidr) for s in subnets} == \
        {k: (v["availabilityZone"], v["cidr"]) for k, v in before.outputs["subnets"].items()}


def test_new_stack_layout_is_round_robin_over_zones(prod):
    """Without history, placement is what it always was: node j in zone j mod #zones."""
    r = run(prod)
    for pool in pools(prod):
        zones = [n["availabilityZone"] for n in r.outputs["nodes"] if n["pool"] == pool["name"]]
        assert zones == ["us-west-2a", "us-west-2b", "us-west-2c"][:len(zones)], zones


def test_running_pool_keeps_its_block_against_ipblock(prod):
    before = run(prod)
    p = pools(prod)
    block = next(n["ipBlock"] for n in before.outputs["nodes"] if n["pool"] == p[1]["name"])
    p[1]["ipBlock"] = block + 3
    message = refused(set_key(copy.deepcopy(prod), "nodePools", p), before)
    assert f"rke-aws:nodePools[agents].ipBlock: {block + 3}, but pool 'agents' runs in block {block}" in message


def test_changing_a_running_pools_tier_is_refused(prod):
    before = run(prod)
    p = pools(prod)
    p[1]["subnet"] = "public"
    message = refused(set_key(copy.deepcopy(prod), "nodePools", p), before)
    assert "rke-aws:nodePools[agents].subnet: 'public', but pool 'agents' runs in private subnets" in message


# ---- the quorum guard ----------------------------------------------------------------------------

def test_three_to_one_servers_is_refused_with_the_procedure(prod):
    before = run(prod)
    p = pools(prod)
    p[0]["count"] = 1
    message = refused(set_key(copy.deepcopy(prod), "nodePools", p), before)
    assert "this update would take 2 of the 3 etcd members away at once" in message, message
    # It names the members that go, as their node names, and not the one that stays.
    servers = [n for n in before.outputs["nodes"] if "etcd" in n["roles"]]
    stays, go = servers[0]["name"], [n["name"] for n in servers[1:]]
    assert all(f"{name} (deleted)" in message for name in go) and stays not in message, message
    assert "one member per `pulumi up`" in message and "etcd snapshot" in message, message


def test_three_to_two_servers_is_allowed(prod):
    before = run(prod)
    p = pools(prod)
    p[0]["count"] = 2
    after = run(set_key(copy.deepcopy(prod), "nodePools", p), before)
    assert set(by_name(before, INSTANCE)) - set(by_name(after, INSTANCE)) == {"rke2-prod-servers-2"}
    assert changed_instances(before, after) == {}


def test_a_change_that_replaces_every_etcd_member_is_refused():
    cfg = harness.stack_config("rke-prod")
    before = run(cfg)
    later = set_key(copy.deepcopy(cfg), "access", {**json.loads(cfg["rke-aws:access"]), "sshKeyName": "rotated"})
    message = refused(later, before)
    assert "3 of the 3 etcd members" in message and "(replaced)" in message, message


def test_a_new_server_type_stops_no_running_server_and_says_how_to_roll(prod):
    """EC2 changes an instance type by stopping the instance, and Pulumi would update every server at
    once: running servers must not take the new type in an update, only when replaced one by one."""
    before = run(prod)
    p = pools(prod)
    # Servers and agents get a new type in the same update (one run judges both pools).
    old_type, p[0]["instanceType"] = p[0]["instanceType"], "m6i.2xlarge"
    agent_type, p[1]["instanceType"] = p[1]["instanceType"], "m6i.4xlarge"
    after = run(set_key(copy.deepcopy(prod), "nodePools", p), before)
    servers = [n["name"] for n in before.outputs["nodes"] if "etcd" in n["roles"]]
    assert len(servers) == 3 and {n["instanceType"] for n in before.outputs["nodes"]} >= {old_type}
    for inst in after.of_type(INSTANCE):
        # What the engine compares: inputs minus the registration's own ignore_changes. Every running node
        # keeps its type (agents too: one update would stop every agent of a pool at once, undrained);
        # rotation rolls it (components/plan/stale.py, components/ops/rotate/).
        assert "instanceType" in inst.ignore_changes, f"{inst.urn}: ignore_changes {inst.ignore_changes}"
    (warning,) = [m for lvl, m in after.logs if lvl == "warning" and m.startswith(f"rke-aws:nodePools[{p[0]['name']}].instanceType")]
    for name in servers:
        assert f"{name} ({old_type})" in warning, warning
    assert "--replace" in warning and "one at a time" in warning, warning
    # Agents keep their type too; no warning (no etcd on them), a `stale:` note per node instead.
    assert not [m for lvl, m in after.logs if lvl == "warning" and m.startswith(f"rke-aws:nodePools[{p[1]['name']}]")]
    agents = [n["name"] for n in before.outputs["nodes"] if n["pool"] == p[1]["name"]]
    notes = [m for lvl, m in after.logs if lvl == "info" and m.startswith("stale: ")]
    for name in agents:
        assert any(m.startswith(f"stale: {name} ") and f"instance type {agent_type} → m6i.4xlarge" in m for m in notes), notes


def test_removing_the_server_pool_is_refused(prod):
    before = run(prod)
    p = [x for x in pools(prod) if x["name"] != "servers"] + [{"name": "cp", "roles": ["controlplane", "etcd"], "count": 3}]
    message = refused(set_key(copy.deepcopy(prod), "nodePools", p), before)
    assert "3 of the 3 etcd members" in message, message
    for node in (n["name"] for n in before.outputs["nodes"] if "etcd" in n["roles"]):
        assert f"{node} (deleted)" in message, message


# ---- versions and upgrades -----------------------------------------------------------------------

def with_kubeconfig(cfg: dict) -> dict:
    return set_key(copy.deepcopy(cfg), "kubeconfig", KUBECONFIG)


def release(minor: int) -> str:
    """The newest RKE2 release of a minor that components/settings/versions.py knows."""
    known = [r for r in versions.RKE2_RELEASES if r.startswith(f"v1.{minor}.")]
    assert known, f"no known 1.{minor} release"
    return max(known, key=lambda r: tuple(int(n) for n in r[1:].replace("+rke2r", ".").split(".")))


def upgradable(cfg: dict) -> dict:
    """`cfg` on a release with a next minor this program knows (whatever the default is)."""
    return set_key(copy.deepcopy(cfg), "kubernetesVersion", release(35))


def test_minor_upgrade_registers_plans_and_replaces_nothing(prod):
    prod = upgradable(prod)
    before = run(with_kubeconfig(prod))
    old = before.outputs["kubernetesVersion"]
    minor = int(old.split(".")[1])
    new = release(minor + 1)
    after = run(set_key(with_kubeconfig(prod), "kubernetesVersion", new), before)
    assert changed_instances(before, after) == {}
    assert set(by_name(after, INSTANCE)) == set(by_name(before, INSTANCE))
    for inst in after.of_type(INSTANCE):
        assert "userData" in inst.ignore_changes, inst.urn
    plans = {r.inputs["metadata"]["name"]: r for r in after.of_type("kubernetes:upgrade.cattle.io/v1:Plan")}
    assert set(plans) == {"rke2-server", "rke2-agent"}, set(plans)
    for plan in plans.values():
        spec = plan.inputs["spec"]
        assert spec["version"] == new and spec["concurrency"] == 1 and spec["cordon"] is True, plan.urn
    assert plans["rke2-agent"].inputs["spec"]["prepare"]["args"] == ["prepare", "rke2-server"]
    suc = [r for r in after.resources if r.type == "kubernetes:yaml/v2:ConfigFile"]
    assert sorted(r.inputs["file"] for r in suc) == sorted(versions.SUC_MANIFEST_URLS)
    # The CCM stays on the running minor until every server is known to run the new one ...
    assert after.outputs["ccmImage"].endswith(versions.CCM_IMAGE_TAGS[minor])
    assert any("the CCM stays on" in m for _, m in after.logs), after.logs
    # ... which the next `pulumi up` does not know without a way to the cluster (tests/program/day2/test_day2_running.py
    # covers the cluster read and the confirmation that move it on, through the whole program): the planner's CCM step
    # (plan/day2/versions.py ccm_image) on this update's outputs, nothing read or confirmed.
    state = from_outputs(after.outputs)
    assert state is not None
    # (the step reads no kubeconfig: what the cluster answered is in vstate, here nothing)
    stack = parse_config(set_key(copy.deepcopy(prod), "kubernetesVersion", new), "day2",
                       running_version=state.kubernetes_version, running_etcd_members=len(state.etcd_members))
    vstate = day2_versions.version_state(state, Observed(), stack.cluster_id)
    image, _ = day2_versions.ccm_image(stack, state, vstate)
    assert not vstate.complete and image.endswith(versions.CCM_IMAGE_TAGS[minor]), (vstate, image)


def test_skipping_a_minor_and_downgrading_are_refused(prod):
    prod = set_key(prod, "kubernetesVersion", release(34))
    before = run(with_kubeconfig(prod))
    old = before.outputs["kubernetesVersion"]
    minor = int(old.split(".")[1])
    message = refused(set_key(with_kubeconfig(prod), "kubernetesVersion", release(minor + 2)), before)
    assert "skips a minor" in message and f"set v1.{minor + 1}.x first" in message, message
    message = refused(set_key(with_kubeconfig(prod), "kubernetesVersion", release(minor - 1)), before)
    assert "is a downgrade" in message and old in message, message


def test_version_change_needs_a_way_to_the_cluster_and_comes_alone(prod):
    prod = upgradable(prod)
    before = run(prod)
    minor = int(before.outputs["kubernetesVersion"].split(".")[1])
    later = set_key(copy.deepcopy(prod), "kubernetesVersion", release(minor + 1))
    assert "reach the cluster through its kubeconfig" in refused(later, before)
    p = pools(prod)
    p[1]["count"] += 1
    message = refused(set_key(with_kubeconfig(later), "nodePools", p), before)
    assert "together with new or replaced nodes (ip-" in message, message


def test_manifest_mode_upgrades_without_kubeconfig():
    cfg = upgradable(harness.stack_config("rke2-dev"))  # ccm.install: manifest
    before = run(cfg)
    minor = int(before.outputs["kubernetesVersion"].split(".")[1])
    new = release(minor + 1)
    after = run(set_key(copy.deepcopy(cfg), "kubernetesVersion", new), before)
    assert changed_instances(before, after) == {}
    params = {p.inputs["name"]: p.inputs.get("insecureValue") for p in after.of_type("aws:ssm/parameter:Parameter")}
    plans = list(yaml.safe_load_all(params[f"{after.outputs['rke2ManifestPath']}/upgrade-plans.yaml"]))
    assert [p["spec"]["version"] for p in plans] == [new, new]
    helm_chart = yaml.safe_load(params[f"{after.outputs['rke2ManifestPath']}/ccm.yaml"])
    image = yaml.safe_load(helm_chart["spec"]["valuesContent"])["image"]
    assert image["tag"] == versions.CCM_IMAGE_TAGS[minor], "the CCM moved before the servers"


def test_distribution_change_is_refused(prod):
    before = run(prod)
    cfg = set_key(copy.deepcopy(prod), "distribution", "rke")
    set_key(cfg, "kubernetesVersion", versions.RKE_KUBERNETES_VERSION)
    assert "a running cluster cannot change distribution" in refused(cfg, before)


def test_previous_outputs_of_the_first_release_still_keep_nodes_in_place(prod):
    """Outputs written before `index`, `subnet`, `ipBlock` and `subnets` existed."""
    before = run(prod)
    old = copy.deepcopy(before.outputs)
    for node in old["nodes"]:
        for key in ("index", "subnet", "ipBlock", "keyName"):
            node.pop(key)
    old.pop("subnets")
    p = pools(prod)
    p.insert(0, {"name": "extra", "roles": ["worker"], "count": 1})
    cfg = set_key(copy.deepcopy(prod), "nodePools", p)
    after = harness.run_program(cfg, stack="day2", previous_outputs=old)
    assert changed_instances(before, after) == {}
