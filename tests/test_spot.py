"""Spot worker pools (`nodePools[i].market: spot`, issue 26).

Facts from their owners, not from the program:
- EC2 User Guide, "Behavior of Spot Instance interruptions": `stop` needs a persistent request; a
  stopped spot instance keeps its instance (so its private IP and private DNS name) and EC2 starts it
  again when capacity returns; "While a Spot Instance is stopped, you can modify some of its instance
  attributes, but not the instance type".
- terraform-provider-aws internal/service/ec2/ec2_instance.go: instance_market_options and every field
  in it are ForceNew; resourceInstanceDelete cancels the spot request of a spot instance.
- pulumi/pulumi pkg/resource/deploy/step_generator.go applyReplaceOnChanges: an option that turns a
  diff of the listed inputs into a replacement.
"""
from __future__ import annotations

import copy

import pytest

from components.settings import config
from offline import diff, harness
from tests.conftest import with_pools
from tests.test_diff import NLB_STACK, base_of, change_of, res

# EC2's accepted combinations (User Guide): stop and hibernate only with persistent requests.
EC2_ALLOWED = {("one-time", "terminate"), ("persistent", "terminate"), ("persistent", "stop"),
               ("persistent", "hibernate")}
INSTANCE = "aws:ec2/instance:Instance"


def _problems(cfg: dict, stack: str) -> list[str]:
    try:
        config.parse(cfg, project="rke-aws", stack=stack, region=cfg["aws:region"],
                     secret_keys=harness.secret_keys_of(cfg))
    except config.ConfigError as err:
        return err.problems
    return []


def _instances(run) -> dict:
    return {r.name: r for r in run.resources if r.type == INSTANCE}


@pytest.mark.parametrize("stack, index, roles", [
    ("rke2-govcloud", 0, ["controlplane", "etcd"]),  # RKE2 servers
    ("rke2-govcloud", 0, ["controlplane", "etcd", "worker"]),
    ("rke-phase2", 0, None),  # RKE1: the first pool as written in the fixture (has etcd or controlplane)
])
def test_spot_is_refused_for_pools_with_server_roles(stack, index, roles):
    def plant(pools):
        pools[index]["market"] = "spot"
        if roles:
            pools[index]["roles"] = roles
    problems = _problems(with_pools(stack, plant), stack)
    mine = [p for p in problems if p.startswith(f"rke-aws:nodePools[{index}].market: 'spot' for a pool with")]
    assert mine, problems
    assert "worker-only pools" in mine[0]


def test_an_unknown_market_is_refused_naming_the_key():
    problems = _problems(with_pools("rke2-dev", lambda p: p[1].update(market="reserved")), "rke2-dev")
    assert any(p.startswith("rke-aws:nodePools[1].market: \"reserved\" is not a market") for p in problems), problems


def test_spot_workers_ask_ec2_for_a_persistent_request_that_stops():
    run = harness.run_stack(NLB_STACK)
    instances = _instances(run)
    spot = {n: r for n, r in instances.items() if "-spot-" in n}
    assert len(spot) == 2, sorted(instances)
    for name, r in spot.items():
        options = r.inputs.get("instanceMarketOptions")
        assert options and options["marketType"] == "spot", name
        kind = options["spotOptions"]["spotInstanceType"]
        behaviour = options["spotOptions"]["instanceInterruptionBehavior"]
        assert (kind, behaviour) in EC2_ALLOWED, f"{name}: EC2 refuses {kind} with {behaviour}"
        # Only `stop` keeps the instance, so the node's address and name survive an interruption.
        assert behaviour == "stop", name
        assert r.replace_on_changes == ["instanceType"], name
        assert r.delete_before_replace, f"{name}: the new instance takes the old one's fixed address"
    for name, r in instances.items():
        if name not in spot:
            assert r.inputs.get("instanceMarketOptions") is None, f"{name}: on-demand pools ask for no market"
            assert not r.replace_on_changes, name
    markets = {n["pool"]: n["market"] for n in run.outputs["nodes"]}
    assert markets == {"servers": "on-demand", "agents": "on-demand", "spot": "spot"}


def test_a_spot_node_keeps_its_planned_name_and_address():
    run = harness.run_stack(NLB_STACK)
    for node in run.outputs["nodes"]:
        if node["pool"] == "spot":
            ip = node["privateIp"]
            assert node["name"] == f"ip-{ip.replace('.', '-')}.us-gov-west-1.compute.internal", node
            assert _instances(run)[f"{NLB_STACK}-spot-{node['index']}"].inputs["privateIp"] == ip


@pytest.mark.parametrize("strip_market", [False, True], ids=["outputs-with-market", "outputs-before-spot"])
def test_a_running_pool_keeps_its_market(strip_market):
    first = harness.run_stack("rke2-dev")
    outputs = copy.deepcopy(first.outputs)
    if strip_market:  # outputs of releases before spot pools: every node ran on-demand
        for n in outputs["nodes"]:
            n.pop("market")
    cfg = with_pools("rke2-dev", lambda p: p[1].update(market="spot"))
    with pytest.raises(Exception) as refused:
        harness.run_program(cfg, stack="rke2-dev", previous_outputs=outputs)
    assert "rke-aws:nodePools[1].market: 'spot', but pool 'agents' runs 2 node(s) as on-demand" in str(refused.value)
    # A new pool may be spot; the running one stays as it is.
    cfg = with_pools("rke2-dev", lambda p: p.append({"name": "spot", "roles": ["worker"], "count": 1,
                                                       "market": "spot"}))
    again = harness.run_program(cfg, stack="rke2-dev", previous_outputs=outputs)
    assert {n["pool"]: n["market"] for n in again.outputs["nodes"]}["spot"] == "spot"


def test_a_spot_pool_going_on_demand_is_refused_too():
    cfg = with_pools("rke2-dev", lambda p: p[1].update(market="spot"))
    first = harness.run_program(cfg, stack="rke2-dev")
    with pytest.raises(Exception) as refused:
        harness.run_program(harness.stack_config("rke2-dev"), stack="rke2-dev", previous_outputs=first.outputs)
    assert "market: 'on-demand', but pool 'agents' runs 2 node(s) as spot" in str(refused.value)


@pytest.mark.parametrize("new_type", ["m6i.2xlarge", "m7a.large"])
def test_a_spot_worker_type_change_is_a_replacement_in_the_review(new_type):
    """Within one architecture an on-demand worker is updated by stop/start (test_diff); a spot
    worker cannot change type, so replaceOnChanges replaces it and the diff says so."""
    base = base_of(NLB_STACK)
    head = copy.deepcopy(base)
    res(head, diff.INSTANCE, f"{NLB_STACK}-spot-0")["inputs"]["instanceType"] = new_type
    res(head, diff.INSTANCE, f"{NLB_STACK}-agents-0")["inputs"]["instanceType"] = new_type
    d = diff.compare(NLB_STACK, base, head)
    assert change_of(d, f"{NLB_STACK}-spot-0").action == "replace", diff.render_text([d])
    assert "instanceType" in change_of(d, f"{NLB_STACK}-spot-0").replaced_by
    assert change_of(d, f"{NLB_STACK}-agents-0").action == "update", diff.render_text([d])
