"""Spot worker pools (`nodePools[i].market: spot`, issue 26).

Facts from their owners, not from the program:
- EC2 User Guide, "Behavior of Spot Instance interruptions": `stop` needs a persistent request; a
  stopped spot instance keeps its instance (so its private IP and private DNS name) and EC2 starts it
  again when capacity returns; "While a Spot Instance is stopped, you can modify some of its instance
  attributes, but not the instance type".
- terraform-provider-aws internal/service/ec2/ec2_instance.go: instance_market_options and every field
  in it are ForceNew; resourceInstanceDelete cancels the spot request of a spot instance.
- EC2 User Guide, "Cancel a Spot Instance request" / "Terminate a Spot Instance": a persistent request
  launches its instance again when the instance is terminated (or interrupted) without the request
  being cancelled first; cancelling terminates nothing. "Tag your Spot Instance requests": what a
  request launches is not tagged from the request.
- EC2 API Reference, SpotMarketOptions.ValidUntil (botocore's ec2 2016-11-15 model, which the suite
  installs): for RunInstances a persistent request without ValidUntil stays active until cancelled; no
  default or maximum is given (RequestSpotInstances and launch templates still default to 7 days).
  terraform-provider-aws ec2_instance.go: valid_until is Optional, Computed and ForceNew, read back
  from DescribeSpotInstanceRequests.
- pulumi/pulumi pkg/resource/deploy/step_generator.go: processIgnoreChanges resets ignored inputs
  before the diff (so they never replace), and a targeted `--replace` checks the program's inputs.
- EC2 User Guide, "Public IPv4 addresses": released when an instance stops, a new one when it starts.
  rancher/rke hosts/dialer.go dials `address`; hosts.GetToDeleteHosts tells nodes apart by it.
"""

# split: this module mixes levels (issue 33 §7.2); the config-only refusals -> tests/unit.
from __future__ import annotations

import copy
import json

import pytest

from rke_aws import diagnostics
from rke_aws.settings import stackfile
from rke_aws.settings.messages import pool_labels
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from rke_aws_offline.report import diff
from tests.support.configs import config_problems, with_pools
from tests.support.diff import NLB_STACK, base_of, change_of, res
from tests.support.runs import run_after_cached, run_cached, run_stack_cached
from tests.support.stackconfig import parse_flat

# EC2's accepted combinations (User Guide): stop and hibernate only with persistent requests.
EC2_ALLOWED = {("one-time", "terminate"), ("persistent", "terminate"), ("persistent", "stop"),
               ("persistent", "hibernate")}
INSTANCE = "aws:ec2/instance:Instance"


def _pool_key(cfg: dict, index: int) -> str:
    """How messages name pool `index` of `cfg` (by name when valid and unique: settings/messages.py)."""
    raw = cfg["rke-aws:nodePools"]
    return f"nodePools[{pool_labels(json.loads(raw) if isinstance(raw, str) else raw)[index]}]"


def _problems(cfg: dict, stack: str) -> list[str]:
    try:
        parse_flat(cfg, project="rke-aws", stack=stack, region=cfg["aws:region"],
                     secret_keys=stackfile.secret_keys_of(cfg))
    except diagnostics.ConfigError as err:
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
    cfg = with_pools(stack, plant)
    problems = _problems(cfg, stack)
    mine = [p for p in problems if p.startswith(f"rke-aws:{_pool_key(cfg, index)}.market: 'spot' for a pool with")]
    assert mine, problems
    assert "worker-only pools" in mine[0]


def test_an_unknown_market_is_refused_naming_the_key():
    problems = _problems(with_pools("rke2-dev", lambda p: p[1].update(market="reserved")), "rke2-dev")
    assert any(p.startswith("rke-aws:nodePools[agents].market: \"reserved\" is not a market") for p in problems), problems


def test_spot_workers_ask_ec2_for_a_persistent_request_that_stops():
    run = run_stack_cached(NLB_STACK)
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
        # No end date: the request lasts until cancelled (SpotMarketOptions.ValidUntil); any date would
        # end it, after which EC2 never starts the interrupted node again.
        assert "validUntil" not in options["spotOptions"], name
        # A changed type would replace the node (EC2 keeps a spot instance's type): every spot node of
        # the pool at once. Running ones keep theirs; nothing turns a type change into a replacement.
        assert "instanceType" in r.ignore_changes and not r.replace_on_changes, name
        assert r.delete_before_replace, f"{name}: the new instance takes the old one's fixed address"
    for name, r in instances.items():
        if name not in spot:
            assert r.inputs.get("instanceMarketOptions") is None, f"{name}: on-demand pools ask for no market"
            assert not r.replace_on_changes, name
    markets = {n["pool"]: n["market"] for n in run.outputs["nodes"]}
    assert markets == {"servers": "on-demand", "agents": "on-demand", "spot": "spot"}


def test_a_spot_node_keeps_its_planned_name_and_address():
    run = run_stack_cached(NLB_STACK)
    for node in run.outputs["nodes"]:
        if node["pool"] == "spot":
            ip = node["privateIp"]
            assert node["name"] == f"ip-{ip.replace('.', '-')}.us-gov-west-1.compute.internal", node
            assert _instances(run)[f"{NLB_STACK}-spot-{node['index']}"].inputs["privateIp"] == ip


@pytest.mark.parametrize("strip_market", [False, True], ids=["outputs-with-market", "outputs-before-spot"])
def test_a_running_pool_keeps_its_market(strip_market):
    first = run_stack_cached("rke2-dev")
    outputs = copy.deepcopy(first.outputs)
    if strip_market:  # outputs of releases before spot pools: every node ran on-demand
        for n in outputs["nodes"]:
            n.pop("market")
    cfg = with_pools("rke2-dev", lambda p: p[1].update(market="spot"))
    with pytest.raises(Exception) as refused:
        harness.run_program(cfg, stack="rke2-dev", previous_outputs=outputs)
    assert "rke-aws:nodePools[agents].market: 'spot', but pool 'agents' runs 2 node(s) as on-demand" in str(refused.value)
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


def _engine_state(state: dict, head: dict) -> dict:
    """The state after an update of `state` to `head`: each resource's inputs are the program's, with the
    ignored ones reset to the state's (pulumi/pulumi step_generator.go processIgnoreChanges; the step
    stores the processed inputs)."""
    old = {r["urn"]: r for r in state["resources"]}
    out = copy.deepcopy(head)
    for r in out["resources"]:
        if r["urn"] in old:
            for key in r.get("ignore_changes") or ():
                if key in old[r["urn"]]["inputs"]:
                    r["inputs"][key] = old[r["urn"]]["inputs"][key]
                else:
                    r["inputs"].pop(key, None)
    return out


def _spot_type(new_type: str):
    def plant(pools):
        next(p for p in pools if p["name"] == "spot")["instanceType"] = new_type
    return plant


@pytest.mark.parametrize("new_type", ["m6i.2xlarge", "c6i.large", "m7g.large"])
def test_a_spot_pool_type_change_replaces_no_running_node_over_two_updates(new_type):
    """Issue 32: a spot pool's new instanceType replaced every node of the pool at once. Judged per URN
    as the engine does (ignore_changes, replaceOnChanges, the provider's ForceNew rules, offline/report/diff.py)
    over base -> type change -> a later change (one more node): no running spot node is replaced or
    stopped in either, both updates name the nodes still on the old type, and new nodes take the new
    type (m7g: another CPU architecture, which a replacement from the old image could not boot)."""
    base_cfg = harness.stack_config(NLB_STACK)
    base = run_cached(base_cfg, NLB_STACK)
    spot = sorted(n["name"] for n in base.outputs["nodes"] if n["pool"] == "spot")
    changed_cfg = with_pools(NLB_STACK, _spot_type(new_type))
    changed = harness.run_program(changed_cfg, stack=NLB_STACK, previous_outputs=base.outputs)

    def grown(pools):
        _spot_type(new_type)(pools)
        next(p for p in pools if p["name"] == "spot")["count"] += 1
    # The mocks echo the program's instanceType as the instance's; the engine kept the running one's
    # (its ignored input reset to the state's), so that is what the next update reads back.
    outputs = copy.deepcopy(changed.outputs)
    was = {n["name"]: n["instanceType"] for n in base.outputs["nodes"]}
    for n in outputs["nodes"]:
        n["instanceType"] = was.get(n["name"], n["instanceType"]) if n["pool"] in ("spot", "servers") else n["instanceType"]
    later = harness.run_program(with_pools(NLB_STACK, grown), stack=NLB_STACK, previous_outputs=outputs)
    state = diff.result_of(base)
    for after in (changed, later):
        head = diff.result_of(after)
        d = diff.compare(NLB_STACK, state, head)
        state = _engine_state(state, head)
        for i in (0, 1):
            c = change_of(d, f"{NLB_STACK}-spot-{i}")
            assert c.action == "unchanged" and "instanceType" in c.ignored, diff.render_text([d])
        assert not [c for c in d.changes if c.type == INSTANCE and c.action in ("replace", "update", "unknown")], \
            diff.render_text([d])
        warnings = [m for lvl, m in after.logs if lvl == "warning" and m.startswith("rke-aws:nodePools[spot].instanceType")]
        assert len(warnings) == 1, after.logs
        for name in spot:
            assert f"{name} (m6i.large)" in warnings[0], warnings[0]
        assert "--replace" in warnings[0] and "one at a time" in warnings[0], warnings[0]
    # What runs is reported as it is; the new node is launched with the new type.
    types = {(n["pool"], n["index"]): n["instanceType"] for n in later.outputs["nodes"]}
    new = _instances(later)[f"{NLB_STACK}-spot-2"]
    assert new.inputs["instanceType"] == new_type and types[("spot", 2)] == new_type


def test_a_spot_worker_type_change_in_the_review_is_ignored():
    """The offline review (make diff) shows a new type as ignored on spot and on-demand nodes alike
    (running nodes keep their type: nodes.IGNORED_ON_UPDATE), and both nodes stale until rotated."""
    base = base_of(NLB_STACK)
    head = copy.deepcopy(base)
    res(head, diff.INSTANCE, f"{NLB_STACK}-spot-0")["inputs"]["instanceType"] = "m6i.2xlarge"
    res(head, diff.INSTANCE, f"{NLB_STACK}-agents-0")["inputs"]["instanceType"] = "m6i.2xlarge"
    d = diff.compare(NLB_STACK, base, head)
    assert change_of(d, f"{NLB_STACK}-spot-0").action == "unchanged", diff.render_text([d])
    assert "instanceType" in change_of(d, f"{NLB_STACK}-spot-0").ignored
    assert change_of(d, f"{NLB_STACK}-agents-0").action == "unchanged", diff.render_text([d])
    assert sorted(x.split(" (")[1].split(")")[0] for x in d.stale) == [f"{NLB_STACK}-agents-0", f"{NLB_STACK}-spot-0"]


# ---- the persistent request's life outside Pulumi ------------------------------------------------

def _spot_nodes(r) -> list[dict]:
    return [n for n in r.outputs["nodes"] if n["pool"] == "spot"]


def _warnings(r, text: str) -> list[str]:
    return [m for lvl, m in r.logs if lvl == "warning" and text in m]


def test_spot_nodes_export_their_request_and_no_end_date():
    run = run_cached(harness.stack_config(NLB_STACK), NLB_STACK)
    for n in _spot_nodes(run):
        assert n["spotRequestId"].startswith("sir-") and n["spotValidUntil"] == "", n
    assert all("spotRequestId" not in n for n in run.outputs["nodes"] if n["pool"] != "spot")


@pytest.mark.parametrize("how", ["by-request", "by-tags"])
def test_an_instance_relaunched_by_a_spot_request_is_named_with_the_way_out(how):
    """A spot node's instance was terminated outside Pulumi (console, CLI) without cancelling its
    request: EC2 launches it again (same launch specification: address, user data), not in the state.
    The plan finds it by the requests the outputs record (DescribeInstances spot-instance-request-id),
    or by the node's Name and cluster tags (instances launched by a request need not carry tags), and
    says: cancel the request first, terminate the duplicate, then refresh."""
    base = run_cached(harness.stack_config(NLB_STACK), NLB_STACK)
    node = _spot_nodes(base)[0]
    # The same update in an account without the relaunched instance says nothing (one run for both rows).
    quiet = run_after_cached(harness.stack_config(NLB_STACK), base, NLB_STACK)
    assert not _warnings(quiet, "is not among this stack's instances") and not _warnings(quiet, "spot request of")
    mocks = MotoMocks("us-gov-west-1")
    if how == "by-request":
        mocks.instances[node["privateIp"]] = {}  # untagged, at the node's address
        mocks.spot_requests_at[node["privateIp"]] = node["spotRequestId"]
    else:
        mocks.instances["10.70.5.99"] = {"Name": node["name"], f"kubernetes.io/cluster/{base.outputs['clusterId']}": "owned"}
    after = harness.run_program(harness.stack_config(NLB_STACK), stack=NLB_STACK, mocks=mocks,
                                previous_outputs=base.outputs)
    (warning,) = _warnings(after, "but are not among this stack's instances")
    if how == "by-request":
        assert f"node {node['name']}" in warning, warning
        assert f"cancel-spot-instance-requests --spot-instance-request-ids {node['spotRequestId']}" in warning, warning
    assert "terminate-instances --instance-ids i-" in warning and "pulumi up --refresh" in warning, warning
    assert warning.index("cancel-spot-instance-requests") < warning.index("terminate-instances"), \
        "the request must be cancelled before the instance is terminated, or it launches another"


def test_another_clusters_instance_with_a_nodes_name_is_none_of_this_stacks_business():
    """The by-tags search of the test above matches the cluster's tag too: another account's or cluster's instance
    with a spot node's Name is not reported (a row of its own: the same for both ways the plan searches)."""
    base = run_cached(harness.stack_config(NLB_STACK), NLB_STACK)
    node = _spot_nodes(base)[0]
    mocks = MotoMocks("us-gov-west-1")
    mocks.instances["10.70.5.99"] = {"Name": node["name"], "kubernetes.io/cluster/other": "owned"}
    other = harness.run_program(harness.stack_config(NLB_STACK), stack=NLB_STACK, mocks=mocks,
                                previous_outputs=base.outputs)
    assert not _warnings(other, "is not among this stack's instances") and not _warnings(other, "but are not among")


def test_a_spot_request_with_an_end_date_is_warned_about():
    """The provider reads the request's ValidUntil back (ec2_instance.go resourceInstanceRead); once it
    passes, the request is gone and EC2 never starts the interrupted node again."""
    base = run_cached(harness.stack_config(NLB_STACK), NLB_STACK)
    outputs = copy.deepcopy(base.outputs)
    node = next(n for n in outputs["nodes"] if n["pool"] == "spot")
    node["spotValidUntil"] = "2026-12-01T00:00:00Z"
    after = harness.run_program(harness.stack_config(NLB_STACK), stack=NLB_STACK, previous_outputs=outputs)
    (warning,) = _warnings(after, "spot request of")
    assert node["name"] in warning and "2026-12-01T00:00:00Z" in warning and "--replace" in warning, warning


# ---- RKE1: the address rke reaches a node at ------------------------------------------------------

def test_rke1_spot_workers_in_public_subnets_are_refused():
    """A spot interruption stops the instance; it starts again with a new public IP, and cluster.yml's
    `address` (what rke dials and tells nodes apart by) is the public IP of public nodes."""
    def plant(subnet: str, count: int = 2):
        def mutate(pools):
            pools[1].update(market="spot", subnet=subnet, count=count)
        return with_pools("rke-dev", mutate)
    problems = config_problems(plant("public"), "rke-dev")
    (mine,) = [p for p in problems if p.startswith(f"rke-aws:{_pool_key(plant('public'), 1)}.market: 'spot' for an RKE1 pool in public")]
    assert "subnet: private" in mine and "new public IP" in mine, mine
    # Private nodes are addressed by their fixed private IP; a drained pool (count 0) launches nothing.
    for cfg in (plant("private"), plant("public", 0)):
        _problems_of = _problems(cfg, "rke-dev")
        assert not [p for p in _problems_of if ".market:" in p], _problems_of
    # RKE2 nodes are addressed by their private IP whatever the tier.
    rke2 = with_pools("rke2-dev", lambda p: p[1].update(market="spot", subnet="public"))
    assert not [p for p in _problems(rke2, "rke2-dev") if ".market:" in p]
