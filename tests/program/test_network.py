"""Network and security group: the tags and layout the CCM depends on, per stack."""

# split: this module mixes levels (issue 33 §7.2); the pure planner tests -> tests/unit/plan.

from __future__ import annotations

import ipaddress
import json

import pytest

from rke_aws.plan import network as network_plan
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support.configs import set_key

CLUSTER_PREFIX = "kubernetes.io/cluster/"
TAGGED_TYPES = ("aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/routeTable:RouteTable")


def cluster_tags(reg) -> dict[str, str]:
    return {k: v for k, v in (reg.inputs.get("tags") or {}).items() if k.startswith(CLUSTER_PREFIX)}


@pytest.mark.parametrize("typ", TAGGED_TYPES)
def test_vpc_subnets_route_tables_carry_exactly_the_owned_cluster_tag(stack_run, typ):
    regs = stack_run.of_type(typ)
    assert regs, f"{stack_run.stack}: no {typ} registered"
    expected = {f"{CLUSTER_PREFIX}{stack_run.outputs['clusterId']}": "owned"}
    for reg in regs:
        assert cluster_tags(reg) == expected, f"{reg.urn}: cluster tags {cluster_tags(reg)}"
        assert reg.inputs["tags"].get("Name") == reg.name, f"{reg.urn}: Name tag"


def test_subnet_role_tags(stack_run):
    for reg in stack_run.of_type("aws:ec2/subnet:Subnet"):
        t = reg.inputs["tags"]
        if "-public-" in reg.name:
            assert t.get("kubernetes.io/role/elb") == "1" and "kubernetes.io/role/internal-elb" not in t, reg.urn
        else:
            assert t.get("kubernetes.io/role/internal-elb") == "1" and "kubernetes.io/role/elb" not in t, reg.urn


def test_user_tags_everywhere_tags_are_accepted(stack_run):
    extra = json.loads(stack_run.config.get("rke-aws:tags", "{}"))
    assert extra, f"{stack_run.stack} sets no extra tags; this test needs some"
    for reg in stack_run.resources:
        if "tags" in reg.inputs and reg.type != "aws:ec2/tag:Tag":
            for k, v in extra.items():
                assert reg.inputs["tags"].get(k) == v, f"{reg.urn}: user tag {k} missing"


def test_vpc_dns_enabled(stack_run):
    (vpc,) = stack_run.of_type("aws:ec2/vpc:Vpc")
    assert vpc.inputs["enableDnsSupport"] is True and vpc.inputs["enableDnsHostnames"] is True, vpc.urn


def test_subnets_inside_vpc_one_public_one_private_per_az(stack_run):
    (vpc,) = stack_run.of_type("aws:ec2/vpc:Vpc")
    vpc_net = ipaddress.ip_network(vpc.inputs["cidrBlock"])
    per_az: dict[str, list[str]] = {}
    nets = []
    for reg in stack_run.of_type("aws:ec2/subnet:Subnet"):
        net = ipaddress.ip_network(reg.inputs["cidrBlock"])
        assert net.subnet_of(vpc_net), f"{reg.urn}: {net} outside {vpc_net}"
        assert not any(net.overlaps(o) for o in nets), f"{reg.urn}: overlaps another subnet"
        nets.append(net)
        per_az.setdefault(reg.inputs["availabilityZone"], []).append("public" if "-public-" in reg.name else "private")
    # An air-gapped cluster (issue 35) has no public subnets.
    wanted = ["private"] if "rke-aws:airgap" in stack_run.config else ["private", "public"]
    for az, tiers in per_az.items():
        assert sorted(tiers) == wanted, f"{stack_run.stack}: {az} has {tiers}"


def test_public_subnets_route_to_igw_private_to_nat(stack_run):
    routes = stack_run.of_type("aws:ec2/route:Route")
    public = [r for r in routes if r.name.endswith("public-default")]
    if "rke-aws:airgap" in stack_run.config:  # issue 35: no way out at all
        assert not routes and not stack_run.of_type("aws:ec2/internetGateway:InternetGateway"), routes
        return
    assert len(public) == 1 and public[0].inputs["gatewayId"].startswith("igw-"), public
    nat_mode = json.loads(stack_run.config["rke-aws:network"]).get("natGateways", "single")
    nat_routes = [r for r in routes if r.inputs.get("natGatewayId")]
    n_private = len([s for s in stack_run.of_type("aws:ec2/subnet:Subnet") if "-private-" in s.name])
    assert len(nat_routes) == (0 if nat_mode == "none" else n_private), stack_run.stack
    gateways = stack_run.of_type("aws:ec2/natGateway:NatGateway")
    assert len(gateways) == {"none": 0, "single": 1, "perAz": n_private}[nat_mode]


def test_exactly_one_cluster_tagged_security_group(stack_run):
    tagged = [r for r in stack_run.resources if cluster_tags(r) and r.type.startswith("aws:ec2/securityGroup")]
    assert len(tagged) == 1, f"{stack_run.stack}: cluster-tagged groups {[r.urn for r in tagged]}"
    for inst in stack_run.of_type("aws:ec2/instance:Instance"):
        assert inst.inputs["vpcSecurityGroupIds"] == [tagged[0].state["id"] if "id" in tagged[0].state else stack_run.outputs["securityGroupId"]], inst.urn


def test_nothing_open_to_the_internet_unless_listed(stack_run):
    admin = json.loads(stack_run.config.get("rke-aws:access", "{}")).get("adminCidrs", [])
    ingress = stack_run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    groups = {g.state.get("id") or g.name for g in stack_run.of_type("aws:ec2/securityGroup:SecurityGroup")}
    # An air-gapped cluster's endpoint group admits HTTPS from the VPC only (issue 35; test_airgap.py).
    vpc_cidr = json.loads(stack_run.config.get("rke-aws:network", "{}")).get("vpcCidr")
    endpoints = [r for r in ingress if r.name.endswith("-endpoints-https")]
    assert all((r.inputs["cidrIpv4"], r.inputs["fromPort"], r.inputs["toPort"]) == (vpc_cidr, 443, 443) for r in endpoints)
    ingress = [r for r in ingress if r not in endpoints]
    groups -= {g.state.get("id") or g.name for g in stack_run.of_type("aws:ec2/securityGroup:SecurityGroup")
               if g.name.endswith("-endpoints")}
    # The node group, and with controlPlane.endpoint nlb the load balancer's group.
    own_groups = {r.inputs.get("securityGroupId") for r in ingress}
    for rule in ingress:
        cidr = rule.inputs.get("cidrIpv4")
        if cidr is None:
            assert rule.inputs.get("referencedSecurityGroupId") in own_groups, rule.urn
        else:
            assert cidr in admin, f"{rule.urn}: ingress from {cidr} not in adminCidrs"
            assert rule.inputs["fromPort"] in (22, 6443), rule.urn
    nlb = json.loads(stack_run.config.get("rke-aws:controlPlane", "{}")).get("endpoint") == "nlb"
    assert len([r for r in ingress if r.inputs.get("cidrIpv4")]) == (3 if nlb else 2) * len(admin)
    assert len(own_groups) == (2 if nlb else 1) and len(groups) == len(own_groups)


def test_no_admin_cidrs_means_no_cidr_ingress(base_config):
    run = harness.run_program(set_key(base_config, "access", {"adminCidrs": []}), stack="closed")
    cidr_rules = [r.urn for r in run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule") if r.inputs.get("cidrIpv4")]
    assert cidr_rules == []


def test_adding_an_az_does_not_renumber_subnets():
    three = network_plan.plan_subnets("10.0.0.0/16", ["a", "b", "c"])
    four = network_plan.plan_subnets("10.0.0.0/16", ["a", "b", "c", "d"])
    before = {(s.tier, s.az_index): s.cidr for s in three}
    after = {(s.tier, s.az_index): s.cidr for s in four}
    assert all(after[k] == v for k, v in before.items())
    assert network_plan.default_subnet_cidr("10.0.0.0/16", "private", 0) == "10.0.0.0/20"
    assert network_plan.default_subnet_cidr("10.0.0.0/16", "public", 0) == "10.0.128.0/20"


def test_subnet_layout_never_overlaps_for_six_azs():
    plans = network_plan.plan_subnets("10.0.0.0/24", [f"z{i}" for i in range(6)])
    nets = [ipaddress.ip_network(p.cidr) for p in plans]
    assert all(not a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1:])
    assert all(n.subnet_of(ipaddress.ip_network("10.0.0.0/24")) for n in nets)


def test_bring_your_own_network_only_tags(base_config):
    cfg = set_key(base_config, "network", {
        "vpcId": "vpc-0123456789abcdef0",
        "availabilityZones": 2,
        "publicSubnetIds": ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0aaaaaaaaaaaaaaa2"],
        "privateSubnetIds": ["subnet-0bbbbbbbbbbbbbbb1", "subnet-0bbbbbbbbbbbbbbb2"],
    })
    vpc = "vpc-0123456789abcdef0"
    existing = {
        "subnet-0aaaaaaaaaaaaaaa1": {"cidr": "172.31.0.0/20", "az": "us-east-1a", "vpc": vpc, "public": True},
        "subnet-0aaaaaaaaaaaaaaa2": {"cidr": "172.31.16.0/20", "az": "us-east-1b", "vpc": vpc, "public": True},
        "subnet-0bbbbbbbbbbbbbbb1": {"cidr": "172.31.32.0/20", "az": "us-east-1a", "vpc": vpc},
        "subnet-0bbbbbbbbbbbbbbb2": {"cidr": "172.31.48.0/20", "az": "us-east-1b", "vpc": vpc},
    }
    run = harness.run_program(cfg, stack="byo", mocks=MotoMocks("us-east-1", existing_subnets=existing))
    created = {r.type for r in run.resources}
    for typ in ("aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/routeTable:RouteTable",
                "aws:ec2/route:Route", "aws:ec2/routeTableAssociation:RouteTableAssociation", "aws:ec2/natGateway:NatGateway"):
        assert typ not in created, f"bring-your-own created {typ}"
    tags = {(r.inputs["resourceId"], r.inputs["key"]): r.inputs["value"] for r in run.of_type("aws:ec2/tag:Tag")}
    assert tags[("vpc-0123456789abcdef0", "kubernetes.io/cluster/byo")] == "shared"
    for sid in ("subnet-0aaaaaaaaaaaaaaa1", "subnet-0aaaaaaaaaaaaaaa2"):
        assert tags[(sid, "kubernetes.io/cluster/byo")] == "shared" and tags[(sid, "kubernetes.io/role/elb")] == "1"
    for sid in ("subnet-0bbbbbbbbbbbbbbb1", "subnet-0bbbbbbbbbbbbbbb2"):
        assert tags[(sid, "kubernetes.io/cluster/byo")] == "shared" and tags[(sid, "kubernetes.io/role/internal-elb")] == "1"
    assert len(tags) == 1 + 2 * 4
    # Nodes land inside the given subnets, with names derived from their addresses there.
    for node in run.outputs["nodes"]:
        assert any(ipaddress.ip_address(node["privateIp"]) in ipaddress.ip_network(s["cidr"]) for s in existing.values()), node
