"""IAM policy documents for the node roles (domain.md section 2).

The action lists are data: the Rancher seed policies as published, then what upstream and the
current CCM code add. The published documents are built from these by pure functions that
deduplicate and sort, so the seed's duplicated `elasticloadbalancing:AddTags` collapses and a
diff of the policy in `pulumi preview` is stable.
"""

from __future__ import annotations

import json
from typing import Iterable

# Rancher's "IAM Policy for nodes with the controlplane role", verbatim (AddTags appears twice there).
SEED_CONTROLPLANE_ACTIONS = (
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeLaunchConfigurations",
    "autoscaling:DescribeTags",
    "ec2:DescribeInstances",
    "ec2:DescribeRegions",
    "ec2:DescribeRouteTables",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSubnets",
    "ec2:DescribeVolumes",
    "ec2:CreateSecurityGroup",
    "ec2:CreateTags",
    "ec2:CreateVolume",
    "ec2:ModifyInstanceAttribute",
    "ec2:ModifyVolume",
    "ec2:AttachVolume",
    "ec2:AuthorizeSecurityGroupIngress",
    "ec2:CreateRoute",
    "ec2:DeleteRoute",
    "ec2:DeleteSecurityGroup",
    "ec2:DeleteVolume",
    "ec2:DetachVolume",
    "ec2:RevokeSecurityGroupIngress",
    "ec2:DescribeVpcs",
    "elasticloadbalancing:AddTags",
    "elasticloadbalancing:AttachLoadBalancerToSubnets",
    "elasticloadbalancing:ApplySecurityGroupsToLoadBalancer",
    "elasticloadbalancing:CreateLoadBalancer",
    "elasticloadbalancing:CreateLoadBalancerPolicy",
    "elasticloadbalancing:CreateLoadBalancerListeners",
    "elasticloadbalancing:ConfigureHealthCheck",
    "elasticloadbalancing:DeleteLoadBalancer",
    "elasticloadbalancing:DeleteLoadBalancerListeners",
    "elasticloadbalancing:DescribeLoadBalancers",
    "elasticloadbalancing:DescribeLoadBalancerAttributes",
    "elasticloadbalancing:DetachLoadBalancerFromSubnets",
    "elasticloadbalancing:DeregisterInstancesFromLoadBalancer",
    "elasticloadbalancing:ModifyLoadBalancerAttributes",
    "elasticloadbalancing:RegisterInstancesWithLoadBalancer",
    "elasticloadbalancing:SetLoadBalancerPoliciesForBackendServer",
    "elasticloadbalancing:AddTags",
    "elasticloadbalancing:CreateListener",
    "elasticloadbalancing:CreateTargetGroup",
    "elasticloadbalancing:DeleteListener",
    "elasticloadbalancing:DeleteTargetGroup",
    "elasticloadbalancing:DescribeListeners",
    "elasticloadbalancing:DescribeLoadBalancerPolicies",
    "elasticloadbalancing:DescribeTargetGroups",
    "elasticloadbalancing:DescribeTargetHealth",
    "elasticloadbalancing:ModifyListener",
    "elasticloadbalancing:ModifyTargetGroup",
    "elasticloadbalancing:RegisterTargets",
    "elasticloadbalancing:SetLoadBalancerPoliciesOfListener",
    "iam:CreateServiceLinkedRole",
    "kms:DescribeKey",
)

# cloud-provider-aws docs/prerequisites.md adds these; without DescribeAvailabilityZones node
# initialisation fails outright.
UPSTREAM_CONTROLPLANE_ADDITIONS = (
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeInstanceTopology",
    "elasticloadbalancing:DeregisterTargets",
    "elasticloadbalancing:SetSecurityGroups",
)

# The current CCM calls these on every NLB sync; neither the seed nor upstream docs list them.
CCM_NLB_ACTIONS = (
    "elasticloadbalancing:DescribeTargetGroupAttributes",
    "elasticloadbalancing:ModifyTargetGroupAttributes",
)

# Rancher's "IAM policy for nodes with the etcd or worker role", verbatim.
SEED_WORKER_ACTIONS = (
    "ec2:DescribeInstances",
    "ec2:DescribeRegions",
    "ecr:GetAuthorizationToken",
    "ecr:BatchCheckLayerAvailability",
    "ecr:GetDownloadUrlForLayer",
    "ecr:GetRepositoryPolicy",
    "ecr:DescribeRepositories",
    "ecr:ListImages",
    "ecr:BatchGetImage",
)



def normalise(actions: Iterable[str]) -> list[str]:
    """Deduplicate case-insensitively (IAM actions are) and sort."""
    seen: dict[str, str] = {}
    for a in actions:
        seen.setdefault(a.lower(), a)
    return sorted(seen.values(), key=str.lower)


def controlplane_actions() -> list[str]:
    return normalise(SEED_CONTROLPLANE_ACTIONS + UPSTREAM_CONTROLPLANE_ADDITIONS + CCM_NLB_ACTIONS)


def worker_actions() -> list[str]:
    return normalise(SEED_WORKER_ACTIONS)


def actions_for(role: str) -> list[str]:
    return controlplane_actions() if role == "controlplane" else worker_actions()


def policy_document(actions: Iterable[str]) -> dict:
    # Resource "*": these Describe/Create calls act on resources the CCM discovers at run time.
    return {
        "Version": "2012-10-17",
        "Statement": [{"Sid": "CloudProviderAws", "Effect": "Allow", "Action": normalise(actions), "Resource": "*"}],
    }


def policy_json(role: str) -> str:
    return json.dumps(policy_document(actions_for(role)), indent=2, sort_keys=True)


def ec2_assume_role_policy(principal: str = "ec2.amazonaws.com") -> str:
    """Trust for EC2; `principal` is the partition's (China: ec2.amazonaws.com.cn)."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": principal}, "Action": "sts:AssumeRole"}
            ],
        },
        indent=2,
        sort_keys=True,
    )


def parameter_policy(read: list[str], write: list[str] = (), read_path: list[str] = ()) -> str:
    """The SSM parameters a node role uses at boot, and nothing else in Parameter Store: GetParameter
    on `read` (its tokens, the init marker), PutParameter on `write` (the marker, first server),
    GetParametersByPath on the manifest path (servers in manifest mode)."""
    statements = [{"Sid": "ReadOwnParameters", "Effect": "Allow", "Action": ["ssm:GetParameter"],
                   "Resource": sorted(read)}]
    if write:
        statements.append({"Sid": "WriteInitMarker", "Effect": "Allow", "Action": ["ssm:PutParameter"],
                           "Resource": sorted(write)})
    if read_path:
        # GetParametersByPath is authorised on the path itself; the parameters under it too.
        statements.append({"Sid": "ReadManifests", "Effect": "Allow", "Action": ["ssm:GetParametersByPath"],
                           "Resource": sorted({r for arn in read_path for r in (arn, f"{arn}/*")})})
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, indent=2, sort_keys=True)


# Session Manager without AmazonSSMManagedInstanceCore, which also allows ssm:GetParameter(s) on
# every parameter of the account (other clusters' tokens included). These are what the SSM agent
# needs to register and to carry sessions (AWS Systems Manager docs, "Create a custom IAM role for
# Session Manager"; domain.md section 6): no parameter reads.
SESSION_MANAGER_ACTIONS = (
    "ssm:UpdateInstanceInformation",
    "ssmmessages:CreateControlChannel",
    "ssmmessages:CreateDataChannel",
    "ssmmessages:OpenControlChannel",
    "ssmmessages:OpenDataChannel",
    "ec2messages:AcknowledgeMessage",
    "ec2messages:DeleteMessage",
    "ec2messages:FailMessage",
    "ec2messages:GetEndpoint",
    "ec2messages:GetMessages",
    "ec2messages:SendReply",
)


def session_manager_policy() -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "SessionManager", "Effect": "Allow", "Action": list(SESSION_MANAGER_ACTIONS), "Resource": "*"}]},
        indent=2, sort_keys=True)
