"""The doctor reads the stack's outputs through the typed state (rke_aws.state), as the planner and the diff
do (issue 33.1): a field the state spells differently or migrates reaches the checks the same way."""

from __future__ import annotations

import pytest

from rke_aws.ops import doctor

NODE = {"name": "ip-10-0-1-10.us-west-2.compute.internal", "pool": "servers", "index": 0.0,
        "roles": ["controlplane", "etcd"], "privateIp": "10.0.1.10", "availabilityZone": "us-west-2a",
        "instanceId": "i-0123456789abcdef0"}
OUTPUTS = {"clusterId": "c", "distribution": "rke2", "nodes": [NODE], "vpcId": "vpc-1", "securityGroupId": "sg-1",
           "subnetIds": {"private-0": "subnet-1"}, "instanceProfileNames": {"controlplane": "c-cp"},
           "rancherCluster": {"name": "c", "id": "c-abcde", "url": "https://rancher.example", "upgrades": "rke-aws"}}


def test_expectations_come_from_the_typed_state():
    exp = doctor.Expectations.from_outputs(OUTPUTS, "prod")
    assert exp.cluster_id == "c" and exp.vpc_id == "vpc-1" and exp.security_group_id == "sg-1"
    (node,) = exp.nodes
    assert (node.name, node.roles, node.instance_id, node.rke2) == (NODE["name"], ("controlplane", "etcd"),
                                                                    "i-0123456789abcdef0", True)
    assert exp.rancher == {"name": "c", "id": "c-abcde", "url": "https://rancher.example", "upgrades": "rke-aws"}


def test_a_rancher_cluster_that_is_not_a_map_is_no_rancher_cluster():
    """The state's migration (rke_aws.state.migrations) reads it as none; the doctor then checks no Rancher."""
    assert doctor.Expectations.from_outputs({**OUTPUTS, "rancherCluster": "c-abcde"}).rancher == {}


def test_outputs_without_a_cluster_say_to_deploy_first():
    with pytest.raises(ValueError, match="run `pulumi up` first"):
        doctor.Expectations.from_outputs({"clusterId": "c"})


class _PagedEc2:
    """DescribeInstances answering in two pages (EC2 returns a NextToken while more remain; the CCM reads on:
    kubernetes/cloud-provider-aws pkg/providers/v1/aws_sdk.go DescribeInstances)."""

    def __init__(self):
        self.asked: list[dict] = []

    def describe_instances(self, **kwargs):
        self.asked.append(kwargs)
        if "NextToken" not in kwargs:
            return {"Reservations": [{"Instances": [{"InstanceId": "i-other", "PrivateDnsName": "ip-10-0-1-11.x"}]}],
                    "NextToken": "page-2"}
        return {"Reservations": [{"Instances": [{"InstanceId": NODE["instanceId"], "PrivateDnsName": NODE["name"],
                                                 "VpcId": "vpc-1"}]}]}


def test_the_node_on_a_later_page_is_found():
    ec2 = _PagedEc2()
    found = doctor.node_instances(doctor.Clients(ec2, None), doctor.Expectations.from_outputs(OUTPUTS, "prod"))
    assert found[NODE["name"]]["InstanceId"] == NODE["instanceId"]
    assert [a.get("NextToken") for a in ec2.asked] == [None, "page-2"]
    assert ec2.asked[0]["Filters"][0] == {"Name": "private-dns-name", "Values": [NODE["name"]]}
