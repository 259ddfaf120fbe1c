"""IAM policy documents for the node roles (domain.md section 2), scoped to the cluster tag.

The controlplane role is the cloud-controller-manager's (CCM). Its policy is built from
`CCM_CALLS`: every AWS call the out-of-tree CCM makes with `--configure-cloud-routes=false`, read
from kubernetes/cloud-provider-aws `pkg/providers/v1` at commit 63ec440c (2026-07-07; the call set
is the same in the v1.31-v1.36 release lines apart from the NLB target-group attribute calls, added
in v1.32, and `SetSecurityGroups`, not yet in a release). How each kind of call is allowed follows
kops' strict CCM policy (kubernetes/kops `pkg/model/iam/iam_builder.go`, `AddCCMPermissions` and
`AddEC2CreateAction`), keyed on this program's `kubernetes.io/cluster/<clusterId>` tag instead of
kops' legacy `KubernetesCluster` tag (the CCM only writes the legacy tag when its own instance
carries one, tags.go `buildTags`; these nodes do not):

- read:   Describe*, no resource-level permissions -> Resource "*", unconditioned.
- create: a call that creates a taggable resource and passes its tags in the request (the CCM
          always adds `kubernetes.io/cluster/<id>=owned`, tags.go:324-342) -> allowed only when the
          request carries that tag: `aws:RequestTag/kubernetes.io/cluster/<id> = owned`.
          Where the call is also authorized on an existing resource (`parent`), that resource must
          carry the cluster tag as well (`aws:ResourceTag/...`): the VPC a security group is created
          in (owned, or shared for a bring-your-own VPC), the load balancer a listener is added to.
- mutate: a call on an existing resource -> `aws:ResourceTag/kubernetes.io/cluster/<id> = owned`.
          The node security groups this program creates carry that tag (components/aws/security.py),
          so the CCM's ingress rules for load balancer traffic on them are covered.
- tag:    tag-on-create authorization: EC2 authorizes TagSpecifications as `ec2:CreateTags` with
          `ec2:CreateAction`; ELB authorizes the Tags of CreateLoadBalancer/CreateTargetGroup/
          CreateListener as `elasticloadbalancing:AddTags` with `elasticloadbalancing:CreateAction`
          (ELB user guide, "Tag resources during creation"). Allowed only with that create action
          and the owned request tag, so neither can tag an existing resource.

`iam:CreateServiceLinkedRole` is not called by the CCM: ELB calls it on the caller's behalf on the
first load balancer of an account; it is allowed only for `elasticloadbalancing.amazonaws.com`.

Dropped (`DROPPED_ACTIONS` gives the evidence per action): the route controller's calls, which
`--configure-cloud-routes=false` switches off, and actions of the Rancher seed and upstream
`docs/prerequisites.md` policies that no code in pkg/providers/v1 calls any more. Calls the CCM can
make but this policy refuses on purpose are in `REFUSED_CALLS`.

The etcd/worker role keeps the Rancher seed's read-only policy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from ..settings.tags import CLUSTER_TAG_PREFIX, OWNED, SHARED, cluster_tag_key

# --- the CCM's calls -------------------------------------------------------------------------------

READ, CREATE, MUTATE, TAG = "read", "create", "mutate", "tag"

CCM_SOURCE = "kubernetes/cloud-provider-aws@63ec440c pkg/providers/v1"

# Service authorization reference resource types (names as in cfn-lint's Policies.json) -> the ARN
# pattern a statement uses for them. Classic and v2 load balancers share `loadbalancer/*`.
RESOURCE_ARNS = {
    "security-group": "arn:{p}:ec2:*:*:security-group/*",
    "vpc": "arn:{p}:ec2:*:*:vpc/*",
    "loadbalancer": "arn:{p}:elasticloadbalancing:*:*:loadbalancer/*",
    "loadbalancer/net/": "arn:{p}:elasticloadbalancing:*:*:loadbalancer/*",
    "targetgroup": "arn:{p}:elasticloadbalancing:*:*:targetgroup/*",
    "listener/net": "arn:{p}:elasticloadbalancing:*:*:listener/*",
}


@dataclass(frozen=True)
class CcmCall:
    action: str
    kind: str  # READ, CREATE, MUTATE or TAG
    source: str  # file:line function (what) in CCM_SOURCE
    # Resource types (service authorization reference names) the request is authorized on: for a
    # create, the resource it creates; empty for reads (no resource-level permissions).
    resources: tuple[str, ...] = ()
    # For a create: an existing resource the request is also authorized on, and the cluster tag
    # values it may carry.
    parent: str = ""
    parent_values: tuple[str, ...] = (OWNED,)


_CLB, _NLB, _TG, _LSN, _SG = "loadbalancer", "loadbalancer/net/", "targetgroup", "listener/net", "security-group"

CCM_CALLS: tuple[CcmCall, ...] = (
    # EC2, read
    CcmCall("ec2:DescribeInstances", READ, "aws.go:3540 describeInstances; instances.go:135 describeInstance (node <-> instance)"),
    CcmCall("ec2:DescribeInstanceTopology", READ, "topology.go:90 GetNodeTopology (optional: UnauthorizedOperation is tolerated)"),
    CcmCall("ec2:DescribeAvailabilityZones", READ, "zones.go:112 zoneCache.populate (node initialisation fails without it)"),
    CcmCall("ec2:DescribeSecurityGroups", READ, "aws.go:1262 findSecurityGroup, 1572 ensureSecurityGroup, 2957 getTaggedSecurityGroups"),
    CcmCall("ec2:DescribeSubnets", READ, "aws.go:1655 findSubnets, 1844 resolveSubnetNameOrIDs, 2139 getSubnetCidrs"),
    CcmCall("ec2:DescribeRouteTables", READ, "aws.go:1700 findELBSubnets (public vs private subnets for load balancers)"),
    # EC2, load balancer security groups and the node security group's ingress rules
    CcmCall("ec2:CreateSecurityGroup", CREATE, "aws.go:1611 ensureSecurityGroup (TagSpecifications security-group, owned)",
            (_SG,), parent="vpc", parent_values=(OWNED, SHARED)),
    CcmCall("ec2:CreateTags", TAG, "aws.go:1611 ensureSecurityGroup: TagSpecifications are authorized as CreateTags",
            (_SG,)),
    CcmCall("ec2:AuthorizeSecurityGroupIngress", MUTATE, "aws.go:1410 setSecurityGroupIngress, 1482 addSecurityGroupIngress",
            (_SG,)),
    CcmCall("ec2:RevokeSecurityGroupIngress", MUTATE,
            "aws.go:1421 setSecurityGroupIngress, 1542 removeSecurityGroupIngress; aws_loadbalancer.go:1971 revokeSecurityGroupReferences",
            (_SG,)),
    CcmCall("ec2:DeleteSecurityGroup", MUTATE, "aws.go:3125 deleteSecurityGroupsWithBackoff (after isOwnedSecurityGroup)",
            (_SG,)),
    # Classic load balancers
    CcmCall("elasticloadbalancing:DescribeLoadBalancers", READ, "aws.go:1153 describeLoadBalancer, 1203 describeLoadBalancerv2"),
    CcmCall("elasticloadbalancing:DescribeLoadBalancerAttributes", READ,
            "aws_loadbalancer.go:1408 ensureLoadBalancer, 483 reconcileLBAttributes"),
    CcmCall("elasticloadbalancing:DescribeLoadBalancerPolicies", READ, "aws_loadbalancer.go:1697 ensureSSLNegotiationPolicy"),
    CcmCall("elasticloadbalancing:CreateLoadBalancer", CREATE, "aws_loadbalancer.go:1215 ensureLoadBalancer (classic, Tags owned)",
            (_CLB,)),
    CcmCall("elasticloadbalancing:AddTags", MUTATE,
            "aws.go:1190 addLoadBalancerTags (additional-resource-tags annotation on an existing classic LB)", (_CLB,)),
    CcmCall("elasticloadbalancing:DetachLoadBalancerFromSubnets", MUTATE, "aws_loadbalancer.go:1252 ensureLoadBalancer", (_CLB,)),
    CcmCall("elasticloadbalancing:AttachLoadBalancerToSubnets", MUTATE, "aws_loadbalancer.go:1264 ensureLoadBalancer", (_CLB,)),
    CcmCall("elasticloadbalancing:ApplySecurityGroupsToLoadBalancer", MUTATE, "aws_loadbalancer.go:1280 ensureLoadBalancer", (_CLB,)),
    CcmCall("elasticloadbalancing:DeleteLoadBalancerListeners", MUTATE, "aws_loadbalancer.go:1304 ensureLoadBalancer", (_CLB,)),
    CcmCall("elasticloadbalancing:CreateLoadBalancerListeners", MUTATE, "aws_loadbalancer.go:1315 ensureLoadBalancer", (_CLB,)),
    CcmCall("elasticloadbalancing:ModifyLoadBalancerAttributes", MUTATE,
            "aws_loadbalancer.go:1423 ensureLoadBalancer (classic), 526 reconcileLBAttributes (NLB)", (_CLB, _NLB)),
    CcmCall("elasticloadbalancing:ConfigureHealthCheck", MUTATE, "aws_loadbalancer.go:1621 ensureLoadBalancerHealthCheck", (_CLB,)),
    CcmCall("elasticloadbalancing:RegisterInstancesWithLoadBalancer", MUTATE, "aws_loadbalancer.go:1662 ensureLoadBalancerInstances",
            (_CLB,)),
    CcmCall("elasticloadbalancing:DeregisterInstancesFromLoadBalancer", MUTATE, "aws_loadbalancer.go:1673 ensureLoadBalancerInstances",
            (_CLB,)),
    CcmCall("elasticloadbalancing:CreateLoadBalancerPolicy", MUTATE,
            "aws_loadbalancer.go:1720 ensureSSLNegotiationPolicy, 1765 createProxyProtocolPolicy", (_CLB,)),
    CcmCall("elasticloadbalancing:SetLoadBalancerPoliciesOfListener", MUTATE, "aws_loadbalancer.go:1745 setSSLNegotiationPolicy",
            (_CLB,)),
    CcmCall("elasticloadbalancing:SetLoadBalancerPoliciesForBackendServer", MUTATE, "aws_loadbalancer.go:1784 setBackendPolicies",
            (_CLB,)),
    CcmCall("elasticloadbalancing:DeleteLoadBalancer", MUTATE,
            "aws.go:3386 EnsureLoadBalancerDeleted (classic), 3320 (NLB)", (_CLB, _NLB)),
    # Network load balancers (ELBv2)
    CcmCall("elasticloadbalancing:DescribeListeners", READ, "aws_loadbalancer.go:243 ensureLoadBalancerv2"),
    CcmCall("elasticloadbalancing:DescribeTargetGroups", READ,
            "aws_loadbalancer.go:261 ensureLoadBalancerv2, 556 reconcileTargetGroupsAttributes, 867 ensureTargetGroup; aws.go:3307"),
    CcmCall("elasticloadbalancing:DescribeTargetGroupAttributes", READ, "aws_loadbalancer.go:593 ensureTargetGroupAttributes"),
    CcmCall("elasticloadbalancing:DescribeTargetHealth", READ, "aws_loadbalancer.go:924 obtainTargetGroupActualTargets"),
    CcmCall("elasticloadbalancing:CreateLoadBalancer", CREATE, "aws_loadbalancer.go:203 ensureLoadBalancerv2 (NLB, Tags owned)",
            (_NLB,)),
    CcmCall("elasticloadbalancing:CreateTargetGroup", CREATE, "aws_loadbalancer.go:805 ensureTargetGroup (Tags owned)", (_TG,)),
    # CreateListener is authorized on the load balancer it adds to (no listener resource yet).
    CcmCall("elasticloadbalancing:CreateListener", CREATE, "aws_loadbalancer.go:750 createListenerV2 (Tags owned)",
            (), parent=_NLB),
    CcmCall("elasticloadbalancing:AddTags", TAG,
            "aws_loadbalancer.go:203/750/805 and 1215: Tags on CreateLoadBalancer/CreateListener/CreateTargetGroup are authorized as AddTags",
            (_CLB, _NLB, _TG, _LSN)),
    CcmCall("elasticloadbalancing:SetSecurityGroups", MUTATE, "aws_loadbalancer.go:230 ensureLoadBalancerv2 (NLB managed security groups)",
            (_NLB,)),
    CcmCall("elasticloadbalancing:ModifyListener", MUTATE, "aws_loadbalancer.go:355 ensureLoadBalancerv2", (_LSN,)),
    CcmCall("elasticloadbalancing:DeleteListener", MUTATE, "aws_loadbalancer.go:759 deleteListenerV2", (_LSN,)),
    CcmCall("elasticloadbalancing:ModifyTargetGroup", MUTATE, "aws_loadbalancer.go:857 ensureTargetGroup", (_TG,)),
    CcmCall("elasticloadbalancing:ModifyTargetGroupAttributes", MUTATE, "aws_loadbalancer.go:610 ensureTargetGroupAttributes", (_TG,)),
    CcmCall("elasticloadbalancing:RegisterTargets", MUTATE, "aws_loadbalancer.go:901 ensureTargetGroupTargets", (_TG,)),
    CcmCall("elasticloadbalancing:DeregisterTargets", MUTATE, "aws_loadbalancer.go:889 ensureTargetGroupTargets", (_TG,)),
    CcmCall("elasticloadbalancing:DeleteTargetGroup", MUTATE,
            "aws_loadbalancer.go:362 ensureLoadBalancerv2, 763 deleteListenerV2; aws.go:3328 EnsureLoadBalancerDeleted", (_TG,)),
)

# Made by ELB on the CCM's behalf when the account has no AWSServiceRoleForElasticLoadBalancing yet.
ELB_SERVICE_NAME = "elasticloadbalancing.amazonaws.com"  # the same in aws, aws-us-gov and aws-cn
SERVICE_LINKED_ROLE_ACTION = "iam:CreateServiceLinkedRole"

# Actions of the seed / upstream policies this policy no longer grants, with the evidence (the tests
# check it against Rancher's document and cloud-provider-aws's docs/prerequisites.md).
_ROUTES = "route controller only, off with --configure-cloud-routes=false"
DROPPED_ACTIONS: dict[str, str] = {
    "ec2:CreateRoute": f"aws_routes.go:198 CreateRoute: {_ROUTES}",
    "ec2:DeleteRoute": f"aws_routes.go:186/218 DeleteRoute: {_ROUTES}",
    "ec2:ModifyInstanceAttribute": f"aws_routes.go:139 configureInstanceSourceDestCheck: {_ROUTES}",
    "ec2:DescribeVpcs": "aws_ec2.go:227 wrapper only; nothing in pkg/providers/v1 calls it",
    "ec2:DescribeRegions": "no call anywhere in pkg/providers/v1",
    "kms:DescribeKey": "KMS client built (aws_sdk.go:259-269) and interface declared (aws.go:388), but nothing calls it",
    **{f"autoscaling:{a}": "no autoscaling client since 67f0b821 '(cleanup): remove instance group handling' (v1.31.0) "
                           "and 462a4c30 'Removes unused autoscaling code' (v1.32.0)"
       for a in ("DescribeAutoScalingGroups", "DescribeLaunchConfigurations", "DescribeTags")},
    **{f"ec2:{a}": "volume code removed in ef79eb41 '(cleanup): remove unused volume handling' (v1.31.0); "
                   "EBS volumes are the EBS CSI driver's"
       for a in ("DescribeVolumes", "CreateVolume", "ModifyVolume", "AttachVolume", "DeleteVolume", "DetachVolume")},
}

# Calls the CCM can make that this policy refuses on purpose.
REFUSED_CALLS: dict[str, str] = {
    "ec2:CreateTags on an existing security group": (
        "tags.go:200 readRepairClusterTags (from aws.go:1581 ensureSecurityGroup) adds the cluster tag to a "
        "k8s-elb-* group that lacks it; the CCM creates its groups with the tag (TagSpecifications), so an "
        "untagged one was made by someone else and is not adopted"),
    "ec2:CreateTags / ec2:DeleteTags on instances": (
        "tags.go:357/397 TagResource/UntagResource: the tagging controller only, disabled by default "
        "(cmd/aws-cloud-controller-manager/main.go:76) and not enabled by this program"),
    "ec2:DescribeNetworkInterfaces": "variant/fargate/fargate.go:141: EKS Fargate nodes only",
}


# --- Rancher's worker policy -------------------------------------------------------------------------

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


# The policy documents only need the cluster ID for condition values; action lists do not.
_ANY_CLUSTER = "cluster-id"


def normalise(actions: Iterable[str]) -> list[str]:
    """Deduplicate case-insensitively (IAM actions are) and sort."""
    seen: dict[str, str] = {}
    for a in actions:
        seen.setdefault(a.lower(), a)
    return sorted(seen.values(), key=str.lower)


# --- documents ----------------------------------------------------------------------------------

def _request_tag(cluster_id: str) -> str:
    return f"aws:RequestTag/{cluster_tag_key(cluster_id)}"


def _resource_tag(cluster_id: str) -> str:
    return f"aws:ResourceTag/{cluster_tag_key(cluster_id)}"


def _one_or_list(values: list[str]) -> str | list[str]:
    return values[0] if len(values) == 1 else values


def _arns(resource_types: Iterable[str], partition: str) -> str | list[str]:
    return _one_or_list(sorted({RESOURCE_ARNS[r].format(p=partition) for r in resource_types}))


def _calls(kind: str, service: str, where=lambda c: True) -> list[CcmCall]:
    return [c for c in CCM_CALLS if c.kind == kind and c.action.startswith(f"{service}:") and where(c)]


def _statement(sid: str, calls: list[CcmCall], resource: str | list[str], condition: dict | None = None) -> dict:
    stmt = {"Sid": sid, "Effect": "Allow", "Action": normalise(c.action for c in calls), "Resource": resource}
    if condition:
        stmt["Condition"] = condition
    return stmt


def _create_statements(sid: str, parent_sids: dict[str, str], service: str, cluster_id: str, partition: str) -> list[dict]:
    """Creates of tagged resources; a create also authorized on an existing parent needs the parent's tag."""
    out = []
    creates = _calls(CREATE, service, lambda c: c.resources)
    if creates:
        out.append(_statement(sid, creates, _arns((r for c in creates for r in c.resources), partition),
                              {"StringEquals": {_request_tag(cluster_id): OWNED}}))
    for parent in sorted({c.parent for c in _calls(CREATE, service) if c.parent}):
        calls = _calls(CREATE, service, lambda c, parent=parent: c.parent == parent)
        values = sorted({v for c in calls for v in c.parent_values})
        equals: dict = {_resource_tag(cluster_id): _one_or_list(values)}
        if any(not c.resources for c in calls):
            # The parent is the only resource the call is authorized on: the request tag is checked here.
            equals[_request_tag(cluster_id)] = OWNED
        out.append(_statement(parent_sids[parent], calls, _arns([parent], partition), {"StringEquals": equals}))
    return out


def _tag_on_create_statement(sid: str, service: str, cluster_id: str, partition: str) -> dict:
    calls = _calls(TAG, service)
    create_actions = sorted({c.action.split(":", 1)[1] for c in _calls(CREATE, service)})
    return _statement(sid, calls, _arns((r for c in calls for r in c.resources), partition), {
        "StringEquals": {f"{service}:CreateAction": create_actions, _request_tag(cluster_id): OWNED},
    })


def _mutate_statements(sid: str, service: str, cluster_id: str, partition: str) -> list[dict]:
    tagging = {"ec2:createtags", "elasticloadbalancing:addtags"}
    plain = _calls(MUTATE, service, lambda c: c.action.lower() not in tagging)
    out = [_statement(sid, plain, _arns((r for c in plain for r in c.resources), partition),
                      {"StringEquals": {_resource_tag(cluster_id): OWNED}})]
    retag = _calls(MUTATE, service, lambda c: c.action.lower() in tagging)
    if retag:
        # Tags on an owned resource, never a cluster tag (this cluster's or another's): as kops'
        # and the AWS Load Balancer Controller's `Null aws:RequestTag/<cluster key> = true`.
        out.append(_statement(f"{sid}Tags", retag, _arns((r for c in retag for r in c.resources), partition), {
            "StringEquals": {_resource_tag(cluster_id): OWNED},
            "Null": {_request_tag(cluster_id): "true"},
            "ForAllValues:StringNotLike": {"aws:TagKeys": f"{CLUSTER_TAG_PREFIX}*"},
        }))
    return out


def controlplane_policy_document(cluster_id: str, partition: str = "aws") -> dict:
    statements = [
        _statement("DescribeForCloudProvider", [c for c in CCM_CALLS if c.kind == READ], "*"),
        *_create_statements("CreateOwnedSecurityGroups", {"vpc": "CreateSecurityGroupsInClusterVpc"},
                            "ec2", cluster_id, partition),
        _tag_on_create_statement("TagSecurityGroupsOnCreate", "ec2", cluster_id, partition),
        *_mutate_statements("ChangeOwnedSecurityGroups", "ec2", cluster_id, partition),
        *_create_statements("CreateOwnedLoadBalancersAndTargetGroups", {_NLB: "CreateListenersOnOwnedLoadBalancers"},
                            "elasticloadbalancing", cluster_id, partition),
        _tag_on_create_statement("TagLoadBalancersOnCreate", "elasticloadbalancing", cluster_id, partition),
        *_mutate_statements("ChangeOwnedLoadBalancers", "elasticloadbalancing", cluster_id, partition),
        {
            "Sid": "ElasticLoadBalancingServiceLinkedRole",
            "Effect": "Allow",
            "Action": [SERVICE_LINKED_ROLE_ACTION],
            # The role ELB creates (an AccessDenied for it names this ARN).
            "Resource": f"arn:{partition}:iam::*:role/aws-service-role/{ELB_SERVICE_NAME}/AWSServiceRoleForElasticLoadBalancing",
            "Condition": {"StringEquals": {"iam:AWSServiceName": ELB_SERVICE_NAME}},
        },
    ]
    return {"Version": "2012-10-17", "Statement": statements}


def worker_policy_document(cluster_id: str, partition: str = "aws") -> dict:
    """The Rancher seed's etcd/worker policy: read-only, so Resource "*" and no conditions."""
    ec2 = [a for a in SEED_WORKER_ACTIONS if a.startswith("ec2:")]
    ecr = [a for a in SEED_WORKER_ACTIONS if a.startswith("ecr:")]
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "DescribeInstances", "Effect": "Allow", "Action": normalise(ec2), "Resource": "*"},
            {"Sid": "PullFromEcr", "Effect": "Allow", "Action": normalise(ecr), "Resource": "*"},
        ],
    }


def policy_document_for(role: str, cluster_id: str, partition: str = "aws") -> dict:
    builder = controlplane_policy_document if role == "controlplane" else worker_policy_document
    return builder(cluster_id, partition)


def document_actions(document: dict) -> list[str]:
    """Every action an Allow statement of the document names, deduplicated and sorted."""
    actions: list[str] = []
    for stmt in document["Statement"]:
        if stmt.get("Effect") == "Allow":
            act = stmt.get("Action", [])
            actions += [act] if isinstance(act, str) else list(act)
    return normalise(actions)


def actions_for(role: str) -> list[str]:
    return document_actions(policy_document_for(role, _ANY_CLUSTER))


def controlplane_actions() -> list[str]:
    return actions_for("controlplane")


def worker_actions() -> list[str]:
    return actions_for("worker")


def policy_json(role: str, cluster_id: str, partition: str = "aws") -> str:
    return json.dumps(policy_document_for(role, cluster_id, partition), indent=2, sort_keys=True)


def ec2_assume_role_policy(principal: str = "ec2.amazonaws.com") -> str:
    """Trust for EC2; `principal` is the partition's (ec2.amazonaws.com in every partition, China included)."""
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


def parameter_policy(read: list[str], write: list[str] = (), read_path: list[str] = (),
                     encrypt_keys: list[str] = ()) -> str:
    """The SSM parameters a node role uses at boot, and nothing else in Parameter Store: GetParameter
    on `read` (its tokens, the init marker), PutParameter on `write` (the marker and the admin
    kubeconfig, first server), GetParametersByPath on the manifest path (servers in manifest mode),
    and encrypt-only use of `encrypt_keys` (the kubeconfig's key: the writer cannot read it back)."""
    statements = [{"Sid": "ReadOwnParameters", "Effect": "Allow", "Action": ["ssm:GetParameter"],
                   "Resource": sorted(read)}]
    if write:
        statements.append({"Sid": "PublishOwnParameters", "Effect": "Allow", "Action": ["ssm:PutParameter"],
                           "Resource": sorted(write)})
    if read_path:
        # GetParametersByPath is authorised on the path itself; the parameters under it too.
        statements.append({"Sid": "ReadManifests", "Effect": "Allow", "Action": ["ssm:GetParametersByPath"],
                           "Resource": sorted({r for arn in read_path for r in (arn, f"{arn}/*")})})
    if encrypt_keys:
        statements.append({"Sid": "EncryptPublishedSecrets", "Effect": "Allow",
                           "Action": ["kms:Encrypt", "kms:GenerateDataKey"], "Resource": sorted(encrypt_keys)})
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


# aws-ebs-csi-driver's controller (addons.ebsCsi), on its own IAM user (addons.py). The calls of
# AmazonEBSCSIDriverPolicyV2 (kubernetes-sigs/aws-ebs-csi-driver docs) scoped to this cluster: the
# driver tags what it creates with kubernetes.io/cluster/<id>=owned (controller.k8sTagClusterId),
# so creates and copies need that request tag, and changes, attachments and deletes that resource
# tag; tags change on this cluster's volumes and snapshots only, never the cluster tag itself.
EBS_CSI_READ_ACTIONS = (
    "ec2:DescribeAvailabilityZones", "ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "ec2:DescribeSnapshots",
    "ec2:DescribeVolumes", "ec2:DescribeVolumesModifications", "ec2:DescribeVolumeStatus",
)
EBS_CSI_CREATE_ACTIONS = ("ec2:CreateVolume", "ec2:CreateSnapshot", "ec2:CopyVolumes")
EBS_CSI_MANAGE_ACTIONS = ("ec2:AttachVolume", "ec2:DetachVolume", "ec2:ModifyVolume", "ec2:DeleteVolume",
                          "ec2:DeleteSnapshot", "ec2:EnableFastSnapshotRestores", "ec2:LockSnapshot")


def ebs_csi_policy_document(cluster_id: str, partition: str = "aws") -> dict:
    owned_request = {"StringEquals": {f"aws:RequestTag/{cluster_tag_key(cluster_id)}": OWNED}}
    owned_resource = {"StringEquals": {f"aws:ResourceTag/{cluster_tag_key(cluster_id)}": OWNED}}
    ec2 = f"arn:{partition}:ec2:*:*"
    ebs = [f"{ec2}:volume/*", f"{ec2}:snapshot/*"]
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "EbsRead", "Effect": "Allow", "Action": list(EBS_CSI_READ_ACTIONS), "Resource": "*"},
        {"Sid": "EbsCreateOwned", "Effect": "Allow", "Action": list(EBS_CSI_CREATE_ACTIONS), "Resource": ebs,
         "Condition": owned_request},
        {"Sid": "EbsFromOwned", "Effect": "Allow", "Action": list(EBS_CSI_CREATE_ACTIONS), "Resource": ebs,
         "Condition": owned_resource},
        {"Sid": "EbsTagOnCreate", "Effect": "Allow", "Action": ["ec2:CreateTags"], "Resource": ebs,
         "Condition": {"StringEquals": {"ec2:CreateAction": [a.split(":")[1] for a in EBS_CSI_CREATE_ACTIONS]}}},
        {"Sid": "EbsManageOwned", "Effect": "Allow", "Action": list(EBS_CSI_MANAGE_ACTIONS), "Resource": ebs,
         "Condition": owned_resource},
        # VolumeAttributesClass tag changes: on this cluster's volumes, never the cluster tag.
        {"Sid": "EbsRetagOwned", "Effect": "Allow", "Action": ["ec2:CreateTags", "ec2:DeleteTags"], "Resource": ebs,
         "Condition": {**owned_resource,
                       "ForAllValues:StringNotEquals": {"aws:TagKeys": [cluster_tag_key(cluster_id)]}}},
        # Attachments also authorise on the instance: only this cluster's nodes.
        {"Sid": "EbsAttachToOwnNodes", "Effect": "Allow", "Action": ["ec2:AttachVolume", "ec2:DetachVolume"],
         "Resource": f"{ec2}:instance/*", "Condition": owned_resource},
    ]}


def ebs_csi_policy_json(cluster_id: str, partition: str = "aws") -> str:
    return json.dumps(ebs_csi_policy_document(cluster_id, partition), indent=2, sort_keys=True)
