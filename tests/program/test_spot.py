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
from tests.support.day2 import placement
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


# The types a spot pool changes to. Only instanceType differs between them in what the program registers for a running
# node (an ignored input: nodes.IGNORED_ON_UPDATE; every spot instance's ignore_changes is checked above), except
# m7g (another CPU architecture: the pool's image changes too), so m7g is the row the whole program walks through
# (base -> type change -> one more node, each run's outputs fed back); every row is judged on the planner's
# steps (plan/nodes.py plan_nodes, instance_type_warnings), which that walk shows to be what the program ran.
SPOT_TYPES = ["m6i.2xlarge", "c6i.large", "m7g.large"]
WALKED_TYPE = "m7g.large"


def _grown(new_type: str):
    def plant(pools):
        _spot_type(new_type)(pools)
        next(p for p in pools if p["name"] == "spot")["count"] += 1
    return plant


def _types_kept(base_outputs: dict, outputs: dict) -> dict:
    """The outputs the next update reads after a type change: the mocks echo the program's instanceType as the
    instance's, the engine kept the running one's (its ignored input reset to the state's)."""
    outputs = copy.deepcopy(outputs)
    was = {n["name"]: n["instanceType"] for n in base_outputs["nodes"]}
    for n in outputs["nodes"]:
        n["instanceType"] = was.get(n["name"], n["instanceType"]) if n["pool"] in ("spot", "servers") else n["instanceType"]
    return outputs


def _planned(cfg: dict, outputs: dict) -> tuple[dict, list[str]]:
    """The planner's steps for `cfg` after `outputs`, as the program calls them (plan/planner.py): placement
    (tests/support/day2.py placement) and the kept-type warnings (plan/nodes.py instance_type_warnings). Returns
    each planned node's type and the warnings as logged."""
    from rke_aws.plan.nodes import instance_type_warnings

    stack, state, nodes = placement(cfg, outputs, NLB_STACK)
    return ({n.resource_name: n.pool.instance_type for n in nodes},
            [d.render() for d in instance_type_warnings(stack, state, nodes)])


def _judge_warnings(warnings: list[str], spot: list[str]) -> None:
    mine = [m for m in warnings if m.startswith("rke-aws:nodePools[spot].instanceType")]
    assert len(mine) == 1, warnings
    for name in spot:
        assert f"{name} (m6i.large)" in mine[0], mine[0]
    assert "--replace" in mine[0] and "one at a time" in mine[0], mine[0]


def test_a_spot_pool_type_change_replaces_no_running_node_over_two_updates():
    """Issue 32: a spot pool's new instanceType replaced every node of the pool at once. Judged per URN
    as the engine does (ignore_changes, replaceOnChanges, the provider's ForceNew rules, offline/report/diff.py)
    over base -> type change -> a later change (one more node): no running spot node is replaced or
    stopped in either, both updates name the nodes still on the old type, and new nodes take the new
    type (m7g: another CPU architecture, which a replacement from the old image could not boot). The
    planner's steps (_planned) give what each run logged and launched: the other types are judged on them."""
    new_type = WALKED_TYPE
    base_cfg = harness.stack_config(NLB_STACK)
    base = run_cached(base_cfg, NLB_STACK)
    spot = sorted(n["name"] for n in base.outputs["nodes"] if n["pool"] == "spot")
    changed_cfg = with_pools(NLB_STACK, _spot_type(new_type))
    changed = harness.run_program(changed_cfg, stack=NLB_STACK, previous_outputs=base.outputs)
    outputs = _types_kept(base.outputs, changed.outputs)
    later_cfg = with_pools(NLB_STACK, _grown(new_type))
    later = harness.run_program(later_cfg, stack=NLB_STACK, previous_outputs=outputs)
    state = diff.result_of(base)
    for after, cfg, before in ((changed, changed_cfg, base.outputs), (later, later_cfg, outputs)):
        head = diff.result_of(after)
        d = diff.compare(NLB_STACK, state, head)
        state = _engine_state(state, head)
        for i in (0, 1):
            c = change_of(d, f"{NLB_STACK}-spot-{i}")
            assert c.action == "unchanged" and "instanceType" in c.ignored, diff.render_text([d])
        assert not [c for c in d.changes if c.type == INSTANCE and c.action in ("replace", "update", "unknown")], \
            diff.render_text([d])
        logged = [m for lvl, m in after.logs if lvl == "warning" and m.startswith("rke-aws:nodePools[")
                  and ".instanceType" in m]
        _judge_warnings(logged, spot)
        # The planner's steps are what this run ran: the same warnings, the same type for every instance.
        types, warned = _planned(cfg, before)
        assert sorted(logged) == sorted(warned), (logged, warned)
        assert {n: i.inputs["instanceType"] for n, i in _instances(after).items()} == \
            {f"{NLB_STACK}-{n}": t for n, t in types.items()}
    # What runs is reported as it is; the new node is launched with the new type.
    types = {(n["pool"], n["index"]): n["instanceType"] for n in later.outputs["nodes"]}
    new = _instances(later)[f"{NLB_STACK}-spot-2"]
    assert new.inputs["instanceType"] == new_type and types[("spot", 2)] == new_type


@pytest.mark.parametrize("new_type", SPOT_TYPES)
def test_every_spot_type_change_names_the_running_nodes_and_launches_new_ones_with_it(new_type):
    """The same two updates for every type, on the planner's steps (the walk above shows they are the program's):
    both name the spot nodes still on the old type and say how to roll them; the new node takes the new type."""
    base = run_cached(harness.stack_config(NLB_STACK), NLB_STACK)
    spot = sorted(n["name"] for n in base.outputs["nodes"] if n["pool"] == "spot")
    types, warned = _planned(with_pools(NLB_STACK, _spot_type(new_type)), base.outputs)
    _judge_warnings(warned, spot)
    assert {n: t for n, t in types.items() if n.startswith("spot-")} == {f"spot-{i}": new_type for i in (0, 1)}
    # The next update reads the running nodes' old types back (their ignored input kept) and adds a node.
    changed = copy.deepcopy(base.outputs)
    for n in changed["nodes"]:
        if n["pool"] == "spot":
            n["instanceType"] = new_type  # what the mocks echo; _types_kept restores what runs
    types, warned = _planned(with_pools(NLB_STACK, _grown(new_type)), _types_kept(base.outputs, changed))
    _judge_warnings(warned, spot)
    assert types["spot-2"] == new_type


def test_the_spot_type_walk_is_one_of_the_rows():
    """Guard: the whole-program walk covers a row of the table, the one whose image changes too."""
    assert WALKED_TYPE in SPOT_TYPES and WALKED_TYPE.startswith("m7g")


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
