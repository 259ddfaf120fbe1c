"""aws-ebs-csi-driver (`addons.ebsCsi`): its credentials, the chart's values, its RKE2 HelmChart, its Release.

Credentials, given IMDS hop limit 1 on every node (domain.md section 6):
- the node plugin runs on every node (the chart's `tolerateAllTaints`) on the host network, so it
  reads instance metadata at hop limit 1 and needs no AWS credentials;
- the controller calls EC2 from the pod network, where hop limit 1 keeps it from the node role,
  and the chart cannot put it on the host network (its schema rejects controller.hostNetwork).
  Raising the hop limit would hand the node role (the server join token, the etcd snapshots) to
  every pod on those nodes, monitoring DaemonSets included. So the controller gets its own IAM
  user, allowed nothing but EBS on volumes tagged for this cluster, whose access key reaches it
  through the Secret the chart reads (`awsAccessSecret`): a Kubernetes Secret (helm mode) or a
  SecureString manifest the servers mirror (manifest mode). Rotate it with
  `pulumi up --replace <AccessKey URN>`, then restart the controller (docs/operations/rotate-keys.md).

Placement: the controller runs on control-plane nodes like the CCM (ccm_values.node_selector).
Helm merges maps and replaces lists (domain.md section 4): the tolerations below are the whole
list. Kubernetes applies the first toleration matching a taint, so the etcd NoExecute toleration
(no tolerationSeconds) comes before the chart's catch-all NoExecute (300 s) one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from ..aws import iam_policies as iam_policy
from ..plan.ccm_values import control_plane_tolerations, node_selector
from ..plan.cluster_documents import EBS_CSI, dump_yaml
from ..plan.proxy import ProxyEnv
from ..settings import tags
from ..settings.resolve import PoolConfig as NodePool
from . import charts

NAMESPACE = EBS_CSI.namespace
# The Secret the chart's controller reads AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from.
CREDENTIALS_SECRET = {"name": "aws-ebs-csi-driver-credentials", "keyId": "key_id", "accessKey": "access_key"}
# The chart's own controller tolerations (values.yaml), kept because a list replaces them.
CHART_CONTROLLER_TOLERATIONS = [
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"effect": "NoExecute", "operator": "Exists", "tolerationSeconds": 300},
]
DEFAULT_STORAGE_CLASS = {
    "name": "gp3",
    "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
    "parameters": {"type": "gp3", "encrypted": "true"},
    "volumeBindingMode": "WaitForFirstConsumer",
    "allowVolumeExpansion": True,
    "reclaimPolicy": "Delete",
}


def controller_tolerations(distribution: str, pools: Iterable[NodePool]) -> list[dict[str, Any]]:
    """The control-plane taints of the distribution, then the chart's defaults."""
    return control_plane_tolerations(distribution, pools) + [dict(t) for t in CHART_CONTROLLER_TOLERATIONS]


def values(distribution: str, pools: Iterable[NodePool], cluster_id: str, region: str,
           proxy: ProxyEnv | None = None) -> dict[str, Any]:
    """`proxy`: the controller's calls to EC2 go through it (the chart's `proxy` value sets HTTP_PROXY,
    HTTPS_PROXY and NO_PROXY on the controller and node containers)."""
    out: dict[str, Any] = {
        "awsAccessSecret": dict(CREDENTIALS_SECRET),
        "controller": {
            "region": region,  # no metadata look-up for the region
            "k8sTagClusterId": cluster_id,  # volumes carry kubernetes.io/cluster/<id>: the IAM policy's scope
            "nodeSelector": node_selector(distribution),
            "tolerations": controller_tolerations(distribution, list(pools)),
        },
        "node": {"hostNetwork": True, "tolerateAllTaints": True},
        "storageClasses": [dict(DEFAULT_STORAGE_CLASS)],
    }
    if proxy is not None:
        out["proxy"] = proxy.ebs_csi_values()
    return out


def credentials_secret_manifest(key_id: str, secret: str) -> str:
    """The Secret the controller reads, as a manifest (manifest mode: a SecureString the servers mirror)."""
    return dump_yaml({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": CREDENTIALS_SECRET["name"], "namespace": NAMESPACE},
        "stringData": {CREDENTIALS_SECRET["keyId"]: key_id, CREDENTIALS_SECRET["accessKey"]: secret},
    })


@dataclass(frozen=True)
class EbsCsiCredentialsArgs:
    cluster_id: str
    partition: str
    extra_tags: Mapping[str, str] = field(default_factory=dict)


class EbsCsiCredentials(pulumi.ComponentResource):
    """An IAM user for the driver's controller: EBS on this cluster's volumes and nothing else."""

    def __init__(self, name: str, args: EbsCsiCredentialsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:addons:EbsCsiCredentials", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        uname = f"{name}-ebs-csi"
        owned = tags.cluster_owned(args.cluster_id, uname, args.extra_tags)
        # Auto-named (a random suffix): IAM names are account-wide, and stacks of one cluster ID may
        # exist in several regions.
        user = aws.iam.User(uname, path="/rke-aws/", tags=owned, opts=child)
        # A managed policy: a user's inline policies may hold 2,048 characters, which the document
        # passes with a long cluster ID in GovCloud; a managed policy holds 6,144.
        policy = aws.iam.Policy(uname, path="/rke-aws/", description=f"aws-ebs-csi-driver of cluster {args.cluster_id}",
                                policy=iam_policy.ebs_csi_policy_json(args.cluster_id, args.partition), tags=owned,
                                opts=child)
        aws.iam.UserPolicyAttachment(uname, user=user.name, policy_arn=policy.arn, opts=child)
        key = aws.iam.AccessKey(uname, user=user.name, opts=child)
        self.user_name = user.name
        self.key_id = key.id
        self.secret = pulumi.Output.secret(key.secret)
        self.register_outputs({"userName": user.name})


@dataclass(frozen=True)
class EbsCsiDriverArgs:
    provider: k8s.Provider
    values: dict[str, Any]
    credentials: EbsCsiCredentials | None  # None: the controller runs on its IRSA role (no key Secret)
    null_overrides: dict[str, Any] | None = None  # chart defaults deleted (awsAccessSecret: null on IRSA)
    depends_on: tuple[pulumi.Resource, ...] = ()  # the role and its grant, before the release names it
    charts: tuple[str | None, str | None] = (None, None)  # registry.charts and its CA (cluster_documents.chart_location)


class EbsCsiDriver(pulumi.ComponentResource):
    def __init__(self, name: str, args: EbsCsiDriverArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:addons:EbsCsiDriver", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider)
        before: list[pulumi.Resource] = list(args.depends_on)
        if args.credentials is not None:
            before.append(k8s.core.v1.Secret(
                f"{name}-ebs-csi-credentials",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=CREDENTIALS_SECRET["name"], namespace=NAMESPACE),
                type="Opaque",
                string_data={CREDENTIALS_SECRET["keyId"]: args.credentials.key_id,
                             CREDENTIALS_SECRET["accessKey"]: args.credentials.secret},
                opts=in_cluster,
            ))
        # The controller reads the Secret when it starts. A null deletes a chart default (components/cluster/
        # ccm.py says how it travels).
        nulls = dump_yaml(args.null_overrides, sort_keys=True) if args.null_overrides else None
        self.release = charts.release(
            EBS_CSI.located(*args.charts), f"{name}-ebs-csi", args.values,
            pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=before),
            **({"value_yaml_files": [pulumi.StringAsset(nulls)]} if nulls else {}))
        self.register_outputs({"status": self.release.status})
