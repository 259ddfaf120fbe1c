"""The VPC endpoints of an air-gapped cluster, derived from the actions the program's own policy documents
grant (components/aws/vpc_endpoints.py), not from a second list of services."""

from __future__ import annotations

import pytest

from rke_aws.aws import iam_policies as iam
from rke_aws.aws import vpc_endpoints as vpce


def endpoints(region="us-east-1", **kwargs):
    ecr = kwargs.pop("ecr", False)
    return {e.service: e for e in vpce.vpc_endpoints(vpce.program_action_lists(**kwargs).values(), region, ecr=ecr)}


def test_every_granted_action_has_a_decision():
    for name, actions in vpce.program_action_lists().items():
        for action in actions:
            assert action.split(":")[0].lower() in vpce.SERVICE_ENDPOINTS, f"{name}: {action}"


def test_a_new_service_in_a_policy_forces_a_decision():
    with pytest.raises(ValueError, match="autoscaling:DescribeAutoScalingGroups: no decision"):
        vpce.vpc_endpoints([["autoscaling:DescribeAutoScalingGroups"]], "us-east-1")


def test_the_endpoints_a_cluster_needs():
    """The CCM calls EC2 and ELB (one host for ELB and ELBv2); EBS CSI EC2; the boot scripts and the SSM agent
    SSM, ec2messages, ssmmessages; artifacts and snapshots S3 (gateway). KMS is called by SSM and S3 for the
    caller, IAM's service-linked role by ELB: no endpoint. No STS (no RoleARN), no autoscaling (no client since
    cloud-provider-aws v1.31/v1.32)."""
    found = endpoints()
    assert set(found) == {"ec2", "elasticloadbalancing", "ssm", "ssmmessages", "ec2messages", "s3"}
    assert found["s3"].type == vpce.GATEWAY and not found["s3"].private_dns
    assert all(e.type == vpce.INTERFACE and e.private_dns for k, e in found.items() if k != "s3")
    assert "sts" not in found and "kms" not in found and "autoscaling" not in found


def test_each_endpoint_comes_from_the_actions_that_need_it():
    found = endpoints()
    assert set(found["elasticloadbalancing"].actions) == {a for a in iam.controlplane_actions()
                                                          if a.startswith("elasticloadbalancing:")}
    assert "ec2:CreateVolume" in found["ec2"].actions  # EBS CSI
    assert "ec2:DescribeAvailabilityZones" in found["ec2"].actions  # the CCM
    assert {"ssm:GetParameter", "ssm:UpdateInstanceInformation"} <= set(found["ssm"].actions)
    assert {"s3:GetObject", "s3:PutObject"} <= set(found["s3"].actions)


def test_without_session_manager_no_message_endpoints():
    found = endpoints(session_manager=False)
    assert "ssmmessages" not in found and "ec2messages" not in found and "ssm" in found  # tokens come from SSM


def test_ecr_only_when_a_mirror_is_ecr():
    assert "ecr.api" not in endpoints()
    found = endpoints(ecr=True)
    assert found["ecr.api"].type == found["ecr.dkr"].type == vpce.INTERFACE
    assert "ecr:GetAuthorizationToken" in found["ecr.api"].actions


@pytest.mark.parametrize("region, service, name", [
    ("us-east-1", "ec2", "com.amazonaws.us-east-1.ec2"),
    ("us-gov-west-1", "ssm", "com.amazonaws.us-gov-west-1.ssm"),
    # aws-cdk vpc-endpoint.ts: China's exception list takes cn.com.amazonaws for ec2, ecr.*, s3 (interface),
    # not for elasticloadbalancing, ssm, ssmmessages, ec2messages; gateway endpoints keep com.amazonaws
    ("cn-north-1", "ec2", "cn.com.amazonaws.cn-north-1.ec2"),
    ("cn-northwest-1", "elasticloadbalancing", "com.amazonaws.cn-northwest-1.elasticloadbalancing"),
    ("cn-north-1", "ssm", "com.amazonaws.cn-north-1.ssm"),
    ("cn-north-1", "s3", "com.amazonaws.cn-north-1.s3"),
])
def test_service_names_per_partition(region, service, name):
    found = endpoints(region)
    assert found[service].service_name == name


def test_china_ecr_takes_the_cn_prefix():
    found = endpoints("cn-north-1", ecr=True)
    assert found["ecr.api"].service_name == "cn.com.amazonaws.cn-north-1.ecr.api"
    assert found["ecr.dkr"].service_name == "cn.com.amazonaws.cn-north-1.ecr.dkr"
