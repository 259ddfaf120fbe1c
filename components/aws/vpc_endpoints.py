"""The VPC endpoints an air-gapped cluster needs, derived from the IAM actions its nodes and add-ons are
granted: every AWS API a node or an in-cluster component calls is in one of the policy documents the
program already writes (components/aws/iam_policies.py, components/aws/backups.py,
components/node/airgap_artifacts.py), so the services those actions belong to are the endpoints it
needs. An action whose service is not in SERVICE_ENDPOINTS raises: a new call must be decided here,
never silently left without an endpoint. Pure.

Who calls what (read offline, research sheet 35 §7-§8):
- the CCM (kubernetes/cloud-provider-aws @ 63ec440c pkg/providers/v1 newAWSCloud2, aws_sdk.go): EC2, ELB
  and ELBv2 clients, and a KMS client that nothing calls; no autoscaling client (removed in v1.31/v1.32,
  iam_policies.DROPPED_ACTIONS); STS only with RoleARN in its cloud config, which this program never sets.
  ELB and ELBv2 share the elasticloadbalancing.<region> host (aws-sdk-go-v2 endpoint tables).
- EBS CSI's controller (kubernetes-sigs/aws-ebs-csi-driver @ 429e202e pkg/cloud/cloud.go): EC2 only (its
  SageMaker client and GetCallerIdentity are for HyperPod nodes); EBS calls KMS for encrypted volumes, the
  driver does not.
- the boot scripts (components/node/scripts/*.sh): SSM (tokens, init marker, kubeconfig, manifests), S3
  (the artifacts bucket, AWS's amazon-ssm-<region> agent bucket); KMS is used by SSM on the caller's behalf
  (SecureString decryption and PutParameter's KeyId), not called by the node.
- etcd snapshots (k3s/RKE2's minio client, RKE1's backup container): S3; SSE-KMS is done by S3.
- the SSM agent (AWS Systems Manager User Guide setup-create-vpc.md @ 03c7112c): `ssm`, `ec2messages`,
  `ssmmessages` (Session Manager); S3 for agent updates; `ec2` only for VSS snapshots (Windows); `kms`
  only for KMS-encrypted sessions, which this program does not configure.
- image pulls from ECR (only when a registry mirror is an ECR registry): ecr.api, ecr.dkr, and S3 for
  the layers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..node import airgap_artifacts
from . import backups
from . import iam_policies as iam

INTERFACE, GATEWAY = "Interface", "Gateway"


@dataclass(frozen=True)
class Calls:
    """An IAM service prefix and the endpoints its callers reach: (endpoint service, type)."""
    endpoints: tuple[tuple[str, str], ...]
    why: str
    when: str | None = None  # only under this condition of the cluster ("ecr": a mirror is an ECR registry)


SERVICE_ENDPOINTS: dict[str, Calls] = {
    "ec2": Calls((("ec2", INTERFACE),), "the CCM and EBS CSI's controller call EC2"),
    "elasticloadbalancing": Calls((("elasticloadbalancing", INTERFACE),),
                                  "the CCM's ELB and ELBv2 clients share elasticloadbalancing.<region>"),
    "ssm": Calls((("ssm", INTERFACE),), "boot scripts read and write parameters; the SSM agent registers"),
    "ssmmessages": Calls((("ssmmessages", INTERFACE),), "Session Manager's data and control channels"),
    "ec2messages": Calls((("ec2messages", INTERFACE),), "the SSM agent's message channel"),
    "s3": Calls((("s3", GATEWAY),), "artifacts, etcd snapshots, the SSM agent's own bucket"),
    "sts": Calls((("sts", INTERFACE),), "pods on IRSA exchange their service-account token at STS's regional "
                                      "endpoint (the webhook sets AWS_STS_REGIONAL_ENDPOINTS=regional)"),
    "ecr": Calls((("ecr.api", INTERFACE), ("ecr.dkr", INTERFACE), ("s3", GATEWAY)),
                 "pulls from an ECR mirror: the API, the registry, and the layers in S3", when="ecr"),
    # Called by another AWS service on the caller's behalf: no endpoint of its own.
    "kms": Calls((), "SSM (SecureStrings, KeyId) and S3 (SSE-KMS) call KMS for the caller; the CCM's KMS client is never used"),
    "iam": Calls((), "ELB creates its service-linked role for the CCM (iam:CreateServiceLinkedRole)"),
}

# Interface endpoints whose service name in the China regions starts with cn.com.amazonaws instead of
# com.amazonaws: aws/aws-cdk packages/aws-cdk-lib/aws-ec2/lib/vpc-endpoint.ts
# InterfaceVpcEndpointAwsService.getDefaultEndpointPrefix, VPC_ENDPOINT_SERVICE_EXCEPTIONS (the same for
# cn-north-1 and cn-northwest-1 for these services), restricted to the services this module can name.
# Gateway endpoints keep com.amazonaws everywhere (GatewayVpcEndpointAwsService: "com.amazonaws.<region>.s3").
CHINA_CN_PREFIX = frozenset({"ec2", "ecr.api", "ecr.dkr", "s3", "sts", "autoscaling", "ebs"})

# AWS_USE_FIPS_ENDPOINT makes the SDKs call ec2-fips.<region>... and elasticloadbalancing-fips.<region>...
# (aws-sdk-go-v2 endpoint tables); no interface endpoint (aws-cdk's service list has sts-fips, ssm-fips,
# kms-fips, no ec2-fips nor elasticloadbalancing-fips) gives those names private DNS. So an air-gapped
# cluster cannot use EBS CSI's `fips` value (it sets AWS_USE_FIPS_ENDPOINT): its EC2 calls would find no
# endpoint.
NO_FIPS_INTERFACE_ENDPOINT = ("ec2", "elasticloadbalancing")


@dataclass(frozen=True)
class Endpoint:
    service: str  # ec2, s3, ecr.api ...
    type: str  # Interface or Gateway
    service_name: str  # com.amazonaws.<region>.<service> (cn.com.amazonaws in China for some)
    actions: tuple[str, ...]  # the granted actions that need it

    @property
    def private_dns(self) -> bool:
        """Interface endpoints need private DNS (the callers use the services' regional names; the VPC
        needs enableDnsSupport and enableDnsHostnames); gateway endpoints are routes, not names."""
        return self.type == INTERFACE


def service_name(service: str, region: str, type_: str) -> str:
    prefix = "cn.com.amazonaws" if (region.startswith("cn-") and type_ == INTERFACE and service in CHINA_CN_PREFIX) \
        else "com.amazonaws"
    return f"{prefix}.{region}.{service}"


def vpc_endpoints(action_lists: Iterable[Iterable[str]], region: str, *, ecr: bool = False) -> list[Endpoint]:
    """The endpoints the granted `action_lists` need in `region`, sorted by service. `ecr`: a registry
    mirror is an ECR registry (otherwise the worker policy's ECR actions, kept from Rancher's seed, call
    nothing)."""
    needed: dict[tuple[str, str], list[str]] = {}
    conditions = {"ecr": ecr}
    for actions in action_lists:
        for action in actions:
            prefix = action.split(":", 1)[0].lower()
            calls = SERVICE_ENDPOINTS.get(prefix)
            if calls is None:
                raise ValueError(f"{action}: no decision about the VPC endpoint its service needs "
                                 f"(components/aws/vpc_endpoints.py SERVICE_ENDPOINTS)")
            if calls.when is not None and not conditions[calls.when]:
                continue
            for endpoint in calls.endpoints:
                needed.setdefault(endpoint, []).append(action)
    return [Endpoint(svc, type_, service_name(svc, region, type_), tuple(iam.normalise(actions)))
            for (svc, type_), actions in sorted(needed.items())]


# A private ECR registry's host (RKE's util/ecr.go matches the same shape for its credential plugin):
# <account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]
ECR_HOST = re.compile(r"^[0-9]{12}\.dkr\.ecr(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?(:[0-9]+)?\Z")


def is_ecr_registry(host: str) -> bool:
    return ECR_HOST.match(host) is not None


def document_actions(document: str | Mapping) -> list[str]:
    """Every allowed action of a policy document (JSON text or dict)."""
    return iam.document_actions(json.loads(document) if isinstance(document, str) else dict(document))


def program_action_lists(partition: str = "aws", *, session_manager: bool = True, snapshots: bool = True,
                         ebs_csi: bool = True, artifacts: bool = True, identity: bool = False) -> dict[str, list[str]]:
    """What the program grants, per grant, from the same functions that write the policies (placeholder
    ARNs: only the actions matter here)."""
    arn = f"arn:{partition}:ssm:region:account:parameter/x"
    key = f"arn:{partition}:kms:region:account:key/x"
    out = {
        "controlplane (CCM)": iam.controlplane_actions(),
        "worker (Rancher's seed)": iam.worker_actions(),
        "boot parameters": document_actions(iam.parameter_policy([arn], [arn], [arn], [key])),
    }
    if session_manager:
        out["Session Manager"] = document_actions(iam.session_manager_policy())
    if snapshots:
        out["etcd snapshots"] = document_actions(backups.node_policy(partition, "bucket", "folder", key))
    if ebs_csi:
        out["EBS CSI controller"] = document_actions(iam.ebs_csi_policy_document("cluster", partition))
    if identity:
        # Not a grant but the call every IRSA pod's SDK makes first (identity_roles.ASSUME_ACTION): the role's
        # trust policy admits it, STS answers it.
        out["workload identity (token exchange)"] = ["sts:AssumeRoleWithWebIdentity"]
    if artifacts:
        out["air-gap artifacts"] = document_actions(airgap_artifacts.artifacts_policy_document(partition, "bucket", "prefix"))
    return out
