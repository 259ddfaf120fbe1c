"""Every AWS partition: GovCloud and China stacks plan in an emulated account of their partition,
with every ARN, the EC2 principal, the SSM endpoint and the image owner of that partition.

The expectations are written out here from the partitions' documentation (domain.md section 6;
Canonical's "Find Ubuntu images on AWS"), independent of components/settings/partitions.py.
"""

# split: this module mixes levels (issue 33 §7.2); the pure tests -> tests/unit.

from __future__ import annotations

import json

import pytest
from pulumi.runtime import MockCallArgs

from rke_aws_offline.engine import emulated_account, harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support.partitions import ARN
from tests.support.userdata import cloud_config

EXPECTED = {
    # stack: (partition, EC2 principal, SSM host, Canonical's publisher account)
    "rke2-govcloud": ("aws-us-gov", "ec2.amazonaws.com", "ssm.us-gov-west-1.amazonaws.com", "513442679011"),
    # IAM service principals are <service>.amazonaws.com in China too (aws-cdk region-info default.ts,
    # terraform-provider-aws names.ServicePrincipalNameForPartition); only API endpoints take .cn.
    "rke2-china": ("aws-cn", "ec2.amazonaws.com", "ssm.cn-north-1.amazonaws.com.cn", "837727238323"),
    "rke2-prod": ("aws", "ec2.amazonaws.com", "ssm.us-west-2.amazonaws.com", "099720109477"),
}


@pytest.fixture(params=sorted(EXPECTED))
def built(request, emulated):
    """The stack's shared emulated build (tests/support/emulated.py): its run, and the owners of the images its
    instances use, read from its account before it stopped."""
    e = emulated(request.param)
    return request.param, e.run, e.image_owners


def test_every_arn_is_of_the_stacks_partition(built):
    stack, run, _ = built
    partition = EXPECTED[stack][0]
    text = json.dumps([[r.inputs, r.state] for r in run.resources] + [run.outputs], default=str)
    found = ARN.findall(text)
    assert found, f"{stack}: no ARN at all"
    wrong = sorted({p for p in found if p != partition})
    assert not wrong, f"{stack}: ARNs of partition(s) {wrong} in a {partition} stack"


def test_trust_policy_names_the_partitions_ec2_principal(built):
    stack, run, _ = built
    for role in run.of_type("aws:iam/role:Role"):
        (stmt,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
        assert stmt["Principal"] == {"Service": EXPECTED[stack][1]}, role.urn


def test_boot_scripts_call_the_partitions_ssm_endpoint(built):
    stack, run, _ = built
    for inst in run.of_type("aws:ec2/instance:Instance"):
        script = next(f["content"] for f in cloud_config(inst)["write_files"] if f["path"].endswith("rke-aws-bootstrap"))
        assert f"SSM_HOST='{EXPECTED[stack][2]}'" in script, inst.urn
        assert "amazonaws.com'" not in script or EXPECTED[stack][2].endswith(".com"), inst.urn


def test_nodes_run_canonicals_image_of_the_partition(built):
    stack, _, owners = built
    assert owners == {EXPECTED[stack][3]}, stack


@pytest.mark.parametrize("region, owner", [("us-gov-west-1", "099720109477"), ("cn-north-1", "099720109477"),
                                          ("us-west-2", "513442679011")])
def test_the_emulated_account_has_no_ubuntu_under_another_partitions_owner(region, owner):
    """So a program asking the wrong owner fails its plan."""
    with MotoMocks(region) as account:
        answer = account.call(MockCallArgs("aws:ec2/getAmi:getAmi", {
            "mostRecent": True, "owners": [owner],
            "filters": [{"name": "name", "values": ["ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*"]}]}, ""))
    assert isinstance(answer, tuple) and "no results" in answer[1][0][1], answer


def test_a_policy_naming_another_partition_is_refused_like_iam_does():
    config = harness.stack_config("rke2-govcloud")
    with MotoMocks("us-gov-west-1") as account:
        account.new_resource(_role_args())
        with pytest.raises(emulated_account.EmulatedAwsError, match=r'MalformedPolicyDocument: .*Partition "aws" is not valid'):
            account.new_resource(_policy_args('{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", '
                                              '"Action": "ssm:GetParameter", "Resource": "arn:aws:ssm:us-gov-west-1:1:parameter/x"}]}'))
    assert config["aws:region"] == "us-gov-west-1"


def _role_args():
    from pulumi.runtime import MockResourceArgs

    return MockResourceArgs("aws:iam/role:Role", "r", {"name": "r", "assumeRolePolicy": "{}"}, custom=True)


def _policy_args(policy: str):
    from pulumi.runtime import MockResourceArgs

    return MockResourceArgs("aws:iam/rolePolicy:RolePolicy", "p", {"role": "r", "policy": policy}, custom=True)
