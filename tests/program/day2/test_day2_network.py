"""Day 2 for the network: no replacement nobody asked for, judged per URN with the providers'
own replace rules (not offline/report/diff.py's table):

- aws_vpc_security_group_ingress_rule (terraform-provider-aws internal/service/ec2/
  vpc_security_group_ingress_rule.go): only security_group_id RequiresReplace, and a change of the
  source kind (cidr_ipv4 vs referenced_security_group_id, ModifyPlan); CIDR, ports, description and
  tags are updated in place (ModifySecurityGroupRules, tags). AWS refuses a second rule identical
  to an existing one (InvalidPermission.Duplicate), which a create-before-delete of one would be.
- aws_ec2_tag (internal/service/ec2/tag.go): resource_id and key force a new resource; a new tag
  under another name is created before the old one is deleted, and that delete removes the key.
- aws_lb (internal/service/elbv2/load_balancer.go customizeDiffLoadBalancerNLB): a network load
  balancer that loses or swaps a subnet is replaced, one that only gains subnets is updated; a
  create with a name that exists fails ("already exists").
- The engine matches a registration to the state by its URN first, then its aliases, and refuses
  two registrations claiming one old resource (pulumi/pulumi pkg/resource/deploy/step_generator.go
  getOldResource).
"""

# split: this module mixes levels (issue 33 §7.2); the pure test -> tests/unit/plan.

from __future__ import annotations

import copy
import itertools
import json

import pulumi
import pytest

from rke_aws.aws.security import cidr_key, rule_plans
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support.configs import set_key
from tests.support.day2 import refused, run

INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
TAG = "aws:ec2/tag:Tag"
LB = "aws:lb/loadBalancer:LoadBalancer"
RULE_REPLACE_KEYS = ("securityGroupId",)
TAG_REPLACE_KEYS = ("resourceId", "key")


def engine_steps(old: dict[str, harness.Registration], new: harness.ProgramRun, replace_keys: dict[str, tuple]) -> dict:
    """What the engine does with `new` against a state holding `old` (URN -> registration):
    {"create": [...], "delete": [...], "replace": [...], "update": [...], "same": [...]}."""
    steps: dict[str, list] = {k: [] for k in ("create", "delete", "replace", "update", "same")}
    claimed: dict[str, str] = {}
    for reg in new.resources:
        match = next((u for u in [reg.urn, *reg.aliases] if u in old), None)
        if match is None:
            steps["create"].append(reg.urn)
            continue
        assert match not in claimed, f"{reg.urn} and {claimed[match]} both claim {match}"
        claimed[match] = reg.urn
        before = old[match]
        keys = replace_keys.get(reg.type, ())
        source = lambda i: "cidrIpv4" in i  # noqa: E731 - the rule's source kind
        if any(before.inputs.get(k) != reg.inputs.get(k) for k in keys) or (
                reg.type == INGRESS and source(before.inputs) != source(reg.inputs)):
            steps["replace"].append(reg.urn)
        elif {k: v for k, v in before.inputs.items()} != reg.inputs:
            steps["update"].append(reg.urn)
        else:
            steps["same"].append(reg.urn)
    steps["delete"] = sorted(set(old) - set(claimed))
    return steps


def state(r: harness.ProgramRun, typ: str) -> dict[str, harness.Registration]:
    return {x.urn: x for x in r.of_type(typ)}


def of(r: harness.ProgramRun, typ: str) -> harness.ProgramRun:
    sub = copy.copy(r)
    sub.resources = r.of_type(typ)
    return sub


def cidr_rules(r: harness.ProgramRun) -> dict[str, harness.Registration]:
    return {x.urn: x for x in r.of_type(INGRESS) if x.inputs.get("cidrIpv4")}


@pytest.fixture
def prod_nlb() -> dict:
    cfg = harness.stack_config("rke2-prod")
    set_key(cfg, "controlPlane", {"endpoint": "nlb"})
    return set_key(cfg, "access", {"adminCidrs": ["10.0.0.0/8", "192.168.10.0/24", "172.16.0.0/12"]})


# ---- admin rules ------------------------------------------------------------------------------

def test_removing_and_reordering_admin_cidrs_touches_only_their_own_rules(prod_nlb):
    """Whole program, base -> one CIDR removed and the others reordered in the same update (outputs fed back): only
    the removed CIDR's rules go, on the nodes' group and the load balancer's. Every order of the list is judged on the
    naming alone below (the rules are named by CIDR: aws/security.py rule_plans, aws/endpoint.py)."""
    before = run(prod_nlb)
    cidrs = ["172.16.0.0/12", "192.168.10.0/24"]  # 10.0.0.0/8 removed, the other two swapped
    after = run(set_key(copy.deepcopy(prod_nlb), "access", {"adminCidrs": cidrs}), before)
    steps = engine_steps(cidr_rules(before), of(after, INGRESS), {INGRESS: RULE_REPLACE_KEYS})
    removed = {u for u, r in cidr_rules(before).items() if r.inputs["cidrIpv4"] not in cidrs}
    assert removed and {u.rpartition("::")[2] for u in removed} == {u.rpartition("::")[2] for u in cidr_rules(before)
                                                                     if "10-0-0-0-8" in u}, removed
    assert set(steps["delete"]) == removed and not steps["replace"] and not steps["update"], steps
    assert not [u for u in steps["create"] if u in cidr_rules(after)], steps["create"]
    # The same names as the naming step gives, on the nodes' group.
    nodes_group = {u.rpartition("::")[2] for u, r in cidr_rules(after).items()
                   if r.inputs["securityGroupId"] == after.outputs["securityGroupId"]}
    assert nodes_group == {f"rke2-prod-nodes-{p.name}" for p in rule_plans(tuple(cidrs)) if p.cidr in cidrs}, nodes_group


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_every_order_of_admin_cidrs_names_the_same_rules(prod_nlb, order):
    cidrs = json.loads(prod_nlb["rke-aws:access"])["adminCidrs"]
    named = {p.name: p for p in rule_plans(tuple(cidrs))}
    reordered = {p.name: p for p in rule_plans(tuple(cidrs[i] for i in order))}
    assert reordered == named
    admin = {n: p for n, p in named.items() if p.cidr in cidrs}
    assert len(admin) == 2 * len(cidrs) and all(cidr_key(p.cidr) in n for n, p in admin.items()), admin


def test_admin_ingress_is_exactly_its_ports_never_the_range_between(prod_nlb):
    r = run(prod_nlb)
    node_group = r.outputs["securityGroupId"]
    for rule in cidr_rules(r).values():
        assert rule.inputs["fromPort"] == rule.inputs["toPort"], f"{rule.urn}: a port range"
    on_nodes = {(x.inputs["cidrIpv4"], x.inputs["fromPort"]) for x in cidr_rules(r).values()
                if x.inputs["securityGroupId"] == node_group}
    on_lb = {(x.inputs["cidrIpv4"], x.inputs["fromPort"]) for x in cidr_rules(r).values()
             if x.inputs["securityGroupId"] != node_group}
    cidrs = json.loads(prod_nlb["rke-aws:access"])["adminCidrs"]
    assert on_nodes == {(c, p) for c in cidrs for p in (22, 6443)}
    assert on_lb == {(c, 6443) for c in cidrs}
    lb_group = {x.inputs["securityGroupId"] for x in cidr_rules(r).values()} - {node_group}
    from_nodes = {(x.inputs["fromPort"], x.inputs["toPort"]) for x in r.of_type(INGRESS)
                  if x.inputs["securityGroupId"] in lb_group and x.inputs.get("referencedSecurityGroupId")}
    assert from_nodes == {(9345, 9345), (6443, 6443)}


def legacy_state(r: harness.ProgramRun, cidrs: list[str]) -> dict[str, harness.Registration]:
    """The state a release that numbered admin rules by list position left: the same rules under
    <cluster>-nodes-admin-<i>-<port> and <cluster>-endpoint-admin-<i>."""
    out = {}
    for reg in cidr_rules(r).values():
        i = cidrs.index(reg.inputs["cidrIpv4"])
        head, _, name = reg.urn.rpartition("::")
        old = (f"{name.split('-nodes-admin-')[0]}-nodes-admin-{i}-{int(reg.inputs['fromPort'])}" if "-nodes-admin-" in name
               else f"{name.split('-endpoint-admin-')[0]}-endpoint-admin-{i}")
        out[f"{head}::{old}"] = reg
    return out


def legacy_account(r: harness.ProgramRun, old_state: dict[str, harness.Registration]) -> MotoMocks:
    """The account as the old release left it: its rules, each with the Name tag it set to the
    rule's resource name (tags.named in 469ec91 components/security.py and endpoint.py), and the
    load balancer's group under its Name tag."""
    mocks = MotoMocks(r.outputs["region"])
    node_group = r.outputs["securityGroupId"]
    for i, (urn, reg) in enumerate(sorted(old_state.items())):
        mocks.security_group_rules[f"sgr-{i:017x}"] = {
            "groupId": reg.inputs["securityGroupId"], "ipProtocol": "tcp", "fromPort": int(reg.inputs["fromPort"]),
            "toPort": int(reg.inputs["toPort"]), "cidrIpv4": reg.inputs["cidrIpv4"],
            "tags": {"Name": urn.rpartition("::")[2]}}
        group = reg.inputs["securityGroupId"]
        mocks.security_groups[group] = {"vpcId": r.outputs["vpcId"], "tags": {} if group == node_group else
                                        {"Name": f"{r.outputs['clusterId']}-endpoint"}}
    return mocks


def light_run(cfg: dict, previous: harness.ProgramRun | None = None) -> harness.ProgramRun:
    """A run whose security groups the legacy account built from it (legacy_account) holds under the same IDs
    (a first run is the shared one, tests/support/day2.py run: read only here)."""
    if previous is None:
        return run(cfg)
    return harness.run_program(cfg, stack="day2", mocks=MotoMocks(cfg["aws:region"]),
                               previous_outputs=previous.outputs if previous else None)


def legacy(outputs: dict) -> dict:
    return {k: v for k, v in outputs.items() if k != "kubernetesVersionConfirmed"}


def test_a_stack_with_position_numbered_rules_sees_no_create_before_delete(prod_nlb):
    """The first update by this release over a state the old naming wrote: every rule is matched
    by an alias and stays; only its Name tag changes in place."""
    cidrs = json.loads(prod_nlb["rke-aws:access"])["adminCidrs"]
    current = light_run(prod_nlb)
    old_state = legacy_state(current, cidrs)
    legacy_outputs = legacy(current.outputs)
    after = harness.run_program(prod_nlb, stack="day2", previous_outputs=legacy_outputs,
                                mocks=legacy_account(current, old_state))
    steps = engine_steps(old_state, of(after, INGRESS), {INGRESS: RULE_REPLACE_KEYS})
    assert steps["delete"] == [] and steps["replace"] == [], steps
    assert not [u for u in steps["create"] if u in cidr_rules(after)], steps["create"]
    assert all(set(old_state[o].inputs) == set(after.by_urn(u).inputs) for o, u in
               ((next(a for a in after.by_urn(u).aliases if a in old_state), u) for u in steps["update"]))
    # A stack this release already wrote carries no aliases at all.
    assert not [x.aliases for x in cidr_rules(light_run(prod_nlb, current)).values() if x.aliases]


def test_legacy_rules_are_aliased_by_the_cidr_they_hold_not_by_list_position(prod_nlb):
    """Review finding 3: the old release had [10.0.0.0/8, 192.168.10.0/24]; this update lists
    [192.168.10.0/24] only. Aliasing by the current position would make 192.168.10.0/24's rule the
    old admin-0 (10.0.0.0/8) and update its cidrIpv4 while admin-1 still holds 192.168.10.0/24: AWS
    refuses duplicate rules. The rules are read from AWS instead (plan.admin_rule_aliases)."""
    old_cidrs = ["10.0.0.0/8", "192.168.10.0/24"]
    before = light_run(set_key(copy.deepcopy(prod_nlb), "access", {"adminCidrs": old_cidrs}))
    old_state = legacy_state(before, old_cidrs)
    cfg = set_key(copy.deepcopy(prod_nlb), "access", {"adminCidrs": ["192.168.10.0/24"]})
    after = harness.run_program(cfg, stack="day2", previous_outputs=legacy(before.outputs),
                                mocks=legacy_account(before, old_state))
    steps = engine_steps(old_state, of(after, INGRESS), {INGRESS: RULE_REPLACE_KEYS})
    assert not [u for u in steps["create"] if u in cidr_rules(after)], steps["create"]
    assert not steps["replace"], steps
    for urn in steps["update"]:
        (old,) = [a for a in after.by_urn(urn).aliases if a in old_state]
        assert old_state[old].inputs["cidrIpv4"] == after.by_urn(urn).inputs["cidrIpv4"], (old, urn)
    assert sorted(steps["delete"]) == sorted(u for u, r in old_state.items() if r.inputs["cidrIpv4"] == "10.0.0.0/8")
    assert all(u.rpartition("::")[2].split("-admin-")[1].startswith("0") for u in steps["delete"]), steps["delete"]


def test_a_rule_the_old_release_did_not_name_is_not_duplicated(prod_nlb):
    """A rule for a listed CIDR and port whose Name tag is not the old release's: creating this
    release's rule next to it is InvalidPermission.Duplicate at apply, so the plan refuses."""
    cidrs = json.loads(prod_nlb["rke-aws:access"])["adminCidrs"]
    current = run(prod_nlb)
    mocks = legacy_account(current, legacy_state(current, cidrs))
    # A rule for a CIDR no longer listed is none of this update's business, whatever its name.
    mocks.security_group_rules["sgr-0ffffffffffffffff"] = {
        "groupId": current.outputs["securityGroupId"], "ipProtocol": "tcp", "fromPort": 22, "toPort": 22,
        "cidrIpv4": "198.51.100.0/24", "tags": {"Name": "someone-elses"}}
    assert harness.run_program(prod_nlb, stack="day2", previous_outputs=legacy(current.outputs), mocks=mocks).resources
    mocks = legacy_account(current, legacy_state(current, cidrs))
    next(iter(mocks.security_group_rules.values()))["tags"] = {"Name": "added-by-hand"}
    with pytest.raises(pulumi.RunError, match=r"rke-aws:access\.adminCidrs: security group \S+ already has rule "
                                              r"sgr-\w+ \(Name 'added-by-hand'\)"):
        harness.run_program(prod_nlb, stack="day2", previous_outputs=legacy(current.outputs), mocks=mocks)
    assert mocks.resources == []


# ---- bring-your-own subnet tags --------------------------------------------------------------

VPC = "vpc-0123456789abcdef0"
EXISTING = {
    "subnet-0aaaaaaaaaaaaaaa1": {"cidr": "172.31.0.0/20", "az": "us-east-1a", "vpc": VPC, "public": True},
    "subnet-0aaaaaaaaaaaaaaa2": {"cidr": "172.31.16.0/20", "az": "us-east-1b", "vpc": VPC, "public": True},
    "subnet-0bbbbbbbbbbbbbbb1": {"cidr": "172.31.32.0/20", "az": "us-east-1a", "vpc": VPC},
    "subnet-0bbbbbbbbbbbbbbb2": {"cidr": "172.31.48.0/20", "az": "us-east-1b", "vpc": VPC},
}


def byo(order: int = 1) -> dict:
    cfg = harness.stack_config("rke2-dev")
    pub, priv = ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0aaaaaaaaaaaaaaa2"], ["subnet-0bbbbbbbbbbbbbbb1", "subnet-0bbbbbbbbbbbbbbb2"]
    return set_key(cfg, "network", {"vpcId": VPC, "publicSubnetIds": pub[::order], "privateSubnetIds": priv[::order]})


def byo_run(cfg: dict, previous: harness.ProgramRun | None = None, mocks: MotoMocks | None = None) -> harness.ProgramRun:
    return harness.run_program(cfg, stack="byo", mocks=mocks or MotoMocks("us-east-1", existing_subnets=EXISTING),
                               previous_outputs=previous.outputs if previous else None)


_BYO_FIRST: list[harness.ProgramRun] = []


def byo_first() -> harness.ProgramRun:
    """byo()'s first run in the account holding EXISTING, made once: the tests below read it (and update from it)."""
    if not _BYO_FIRST:
        _BYO_FIRST.append(byo_run(byo()))
    return _BYO_FIRST[0]


def test_reordering_bring_your_own_subnets_re_creates_no_tag():
    before = byo_first()
    after = byo_run(byo(order=-1), before)
    steps = engine_steps(state(before, TAG), of(after, TAG), {TAG: TAG_REPLACE_KEYS})
    assert steps["create"] == [] and steps["delete"] == [] and steps["replace"] == [] and steps["update"] == [], steps


def test_a_stack_with_position_numbered_subnet_tags_keeps_every_tag():
    """The old naming (<cluster>-<tier>-<i>-cluster/-role) from the last outputs' subnets, also when
    the lists are reordered in the same update."""
    before = byo_first()
    old_state = {}
    by_id = {v["id"]: k for k, v in before.outputs["subnets"].items()}
    for reg in before.of_type(TAG):
        head, _, name = reg.urn.rpartition("::")
        sid = reg.inputs["resourceId"]
        old = name if sid not in by_id else name.replace(sid, by_id[sid])
        old_state[f"{head}::{old}"] = reg
    legacy_outputs = {k: v for k, v in before.outputs.items() if k != "kubernetesVersionConfirmed"}
    for order in (1, -1):
        after = harness.run_program(byo(order), stack="byo", mocks=MotoMocks("us-east-1", existing_subnets=EXISTING),
                                    previous_outputs=legacy_outputs)
        steps = engine_steps(old_state, of(after, TAG), {TAG: TAG_REPLACE_KEYS})
        assert steps["create"] == [] and steps["delete"] == [] and steps["replace"] == [], (order, steps)


def test_a_subnet_the_last_outputs_do_not_know_claims_no_old_tag():
    """Review finding 6: with position-numbered tags in the state, a subnet ID the last outputs do
    not name has no old tag. Falling back to its list position would give it another subnet's old
    name (here private-1, the tags of subnet ...b2 it replaces), so the engine would "replace" ...b2's
    tags onto it, and where a listed subnet kept that name two registrations would claim one old
    resource, which the engine refuses (pulumi/pulumi pkg/resource/deploy/step_generator.go
    getOldResource, "Duplicate resource alias"). New tags are created; ...b2's are deleted."""
    existing = {**EXISTING, "subnet-0bbbbbbbbbbbbbbb3": {"cidr": "172.31.64.0/20", "az": "us-east-1b", "vpc": VPC}}
    before = byo_run(byo(), mocks=MotoMocks("us-east-1", existing_subnets=existing))
    by_id = {v["id"]: k for k, v in before.outputs["subnets"].items()}
    old_state = {}
    for reg in before.of_type(TAG):
        head, _, name = reg.urn.rpartition("::")
        sid = reg.inputs["resourceId"]
        old_state[f"{head}::{name if sid not in by_id else name.replace(sid, by_id[sid])}"] = reg
    cfg = set_key(byo(), "network", {"vpcId": VPC, "publicSubnetIds": ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0aaaaaaaaaaaaaaa2"],
                                     "privateSubnetIds": ["subnet-0bbbbbbbbbbbbbbb1", "subnet-0bbbbbbbbbbbbbbb3"]})
    after = harness.run_program(cfg, stack="byo", mocks=MotoMocks("us-east-1", existing_subnets=existing),
                                previous_outputs={k: v for k, v in before.outputs.items()
                                                  if k != "kubernetesVersionConfirmed"})
    new_tags = [r for r in after.of_type(TAG) if r.inputs["resourceId"] == "subnet-0bbbbbbbbbbbbbbb3"]
    assert new_tags and not [r.aliases for r in new_tags if r.aliases], [r.aliases for r in new_tags]
    steps = engine_steps(old_state, of(after, TAG), {TAG: TAG_REPLACE_KEYS})  # asserts one claimant per old URN
    assert not steps["replace"], steps
    assert {old_state[u].inputs["resourceId"] for u in steps["delete"]} == {"subnet-0bbbbbbbbbbbbbbb2"}, steps["delete"]


# ---- bring-your-own addresses after a failed update -------------------------------------------

def test_an_address_held_by_this_clusters_own_node_is_planned_on():
    """The update that created the node failed later: its outputs are the last successful update's
    (pulumi/pulumi pkg/resource/deploy/step_executor.go keeps the old stack outputs on error)."""
    cfg = byo()
    before = byo_first()
    pools = json.loads(cfg["rke-aws:nodePools"])
    pools[1]["count"] += 1
    grown = set_key(copy.deepcopy(cfg), "nodePools", pools)
    planned = byo_run(grown, before)
    new = ({n["name"]: n for n in planned.outputs["nodes"]}.keys() - {n["name"] for n in before.outputs["nodes"]}).pop()
    ip = next(n["privateIp"] for n in planned.outputs["nodes"] if n["name"] == new)
    # The update that planned it launched it, then failed: the engine holds it and does not launch it again.
    held = [r.name for r in planned.of_type("aws:ec2/instance:Instance") if r.state.get("privateIp") == ip]
    mocks = MotoMocks("us-east-1", existing_subnets=EXISTING, created_before=held)
    mocks.taken_ips.add(ip)
    own = f"kubernetes.io/cluster/{before.outputs['clusterId']}"
    mocks.instances[ip] = {"Name": new, own: "owned"}
    again = byo_run(grown, before, mocks)
    assert next(n["privateIp"] for n in again.outputs["nodes"] if n["name"] == new) == ip
    # Held by anything else (another cluster's instance, or one named otherwise): refused as before.
    for tags in ({"Name": new, "kubernetes.io/cluster/other": "owned"}, {"Name": "someone", own: "owned"}):
        mocks = MotoMocks("us-east-1", existing_subnets=EXISTING)
        mocks.taken_ips.add(ip)
        mocks.instances[ip] = tags
        with pytest.raises(Exception, match=rf"planned node addresses in '.*' \({ip}\) are taken"):
            byo_run(grown, before, mocks)


# ---- the control-plane load balancer ----------------------------------------------------------

def test_an_nlb_that_loses_a_zone_is_replaced_delete_first_and_the_update_says_so(prod_nlb):
    four = set_key(copy.deepcopy(prod_nlb), "network", {**json.loads(prod_nlb["rke-aws:network"]), "availabilityZones": 4})
    before = run(four)
    (lb,) = before.of_type(LB)
    assert lb.delete_before_replace, "its fixed name cannot exist twice: create-before-delete fails"
    after = run(prod_nlb, before)  # back to three zones: no node ran in the fourth
    (lb_after,) = after.of_type(LB)
    lost = set(lb.inputs["subnets"]) - set(lb_after.inputs["subnets"])
    assert lost and lb_after.delete_before_replace  # customizeDiffLoadBalancerNLB: ForceNew
    (w,) = [m for lvl, m in after.logs if lvl == "warning" and "control-plane load balancer" in m]
    assert "private-3" in w and "deleted first" in w
    grown = run(four, run(prod_nlb))  # only subnets added: updated in place, nothing said
    assert not [m for _, m in grown.logs if "control-plane load balancer leaves" in m]


def test_removing_a_zone_with_running_nodes_names_a_real_way(prod_nlb):
    four = set_key(copy.deepcopy(prod_nlb), "network", {**json.loads(prod_nlb["rke-aws:network"]), "availabilityZones": 4})
    pools = json.loads(four["rke-aws:nodePools"])
    pools[1]["count"] = 4
    grown = set_key(copy.deepcopy(four), "nodePools", pools)
    before = run(grown)
    message = refused(set_key(copy.deepcopy(grown), "network", json.loads(prod_nlb["rke-aws:network"])), before)
    assert "us-west-2d is gone" in message and "index 3" in message and f"nodePools[{pools[1]['name']}].count is 3 or less" in message


@pytest.mark.parametrize("count, ok", [(4, True), (5, False)])
def test_the_zone_count_limit_at_its_boundary(count, ok):
    cfg = set_key(harness.stack_config("rke2-prod"), "network",
                  {**json.loads(harness.stack_config("rke2-prod")["rke-aws:network"]), "availabilityZones": count})
    mocks = MotoMocks("us-west-2")  # four zones (usw2-az1 to az4; moto's us-west-2a to d)
    if ok:
        assert len(harness.run_program(cfg, stack="day2", mocks=mocks).outputs["subnets"]) == 2 * count
    else:
        with pytest.raises(Exception, match="5 zones asked for, but us-west-2 offers 4"):
            harness.run_program(cfg, stack="day2", mocks=mocks)
