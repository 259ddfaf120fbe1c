"""`airgap` is decided when a cluster is created (issue 35). Set on a running cluster built online, the network
the update plans has no internet gateway, NAT gateways or public subnets, so the engine would delete them
(terraform-provider-aws: a removed aws_internet_gateway / aws_nat_gateway / aws_subnet is destroyed) while the
running nodes still install and pull online: refused before any resource, naming `airgap`."""

from __future__ import annotations

import json

from rke_aws_offline.engine import harness
from tests.support.day2 import refused, run


def _online(config: dict) -> dict:
    """The air-gapped fixture as an online cluster: the same registry, NAT, no airgap."""
    online = {k: v for k, v in config.items() if k != "rke-aws:airgap"}
    network = json.loads(online["rke-aws:network"])
    network["natGateways"] = "single"
    online["rke-aws:network"] = json.dumps(network)
    return online


def test_airgap_set_on_a_running_online_cluster_is_refused():
    airgapped = harness.stack_config("rke2-airgap")
    base = run(_online(airgapped))
    assert any(k.startswith("public-") for k in base.outputs["subnetIds"]), base.outputs["subnetIds"]
    message = refused(airgapped, base)
    assert "rke-aws:airgap: set on a running cluster built online" in message, message
    assert "public-0" in message and "new stack" in message, message


def test_the_online_cluster_keeps_planning_without_airgap():
    """The same online configuration after itself: nothing refused (the guard is about the change)."""
    online = _online(harness.stack_config("rke2-airgap"))
    base = run(online)
    again = run(online, base)
    assert again.outputs["subnetIds"] == base.outputs["subnetIds"]


def test_removing_airgap_from_a_running_cluster_keeps_every_node_and_private_subnet():
    """airgap removed from a running air-gapped cluster (the other direction): the update adds the internet
    gateway, NAT and public subnets and drops the interface endpoints, judged per URN with the providers' replace
    rules (offline/report/compare.py). No instance or private subnet may be replaced or deleted (an aws_subnet's
    cidr_block, vpc_id and availability_zone are ForceNew in terraform-provider-aws internal/service/ec2/
    vpc_subnet.go; an aws_instance's ami, subnet_id and private_ip are ForceNew in ec2_instance.go), and the running
    nodes keep what they booted (user data is ignored on running nodes; the rotation lists them as stale)."""
    from rke_aws_offline.report import compare, diff

    airgapped = harness.stack_config("rke2-airgap")
    base = run(airgapped, stack="rke2-airgap")
    assert not [k for k in base.outputs["subnetIds"] if k.startswith("public-")]
    online = run(_online(airgapped), base, stack="rke2-airgap")
    d = compare.compare("rke2-airgap", diff.result_of(base), diff.result_of(online))
    lost = [(c.type, c.name, c.action) for c in d.changes
            if c.action in ("replace", "delete", "unknown")
            and c.type in ("aws:ec2/instance:Instance", "aws:ec2/subnet:Subnet", "aws:ec2/vpc:Vpc",
                           "aws:ec2/securityGroup:SecurityGroup", "aws:iam/role:Role")]
    # What only the air-gapped network had goes: the interface endpoints and their security group.
    assert lost == [("aws:ec2/securityGroup:SecurityGroup", "rke2-airgap-endpoints", "delete")], lost
    added = {c.type for c in d.changes if c.action == "add"}
    assert {"aws:ec2/internetGateway:InternetGateway", "aws:ec2/natGateway:NatGateway"} <= added, added
    for key, subnet in base.outputs["subnetIds"].items():
        assert online.outputs["subnetIds"][key] == subnet, key
