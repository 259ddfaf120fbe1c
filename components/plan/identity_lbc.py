"""The AWS Load Balancer Controller (`addons.loadBalancerController`): its IAM policy (upstream's,
for the partition, scoped to this cluster) and its chart values. Pure.

Policy: upstream's `docs/install/iam_policy*.json`, vendored unchanged in
upstream/aws-load-balancer-controller-v3.5.0 (commit and digests in its README). The three files are
the same policy but for the ARN partition. Upstream conditions its creates and changes on the
*presence* of the tag `elbv2.k8s.aws/cluster` (`Null ...: "false"`); the controller writes that tag
with the cluster's name on everything it creates (pkg/deploy/tracking/provider.go: "elbv2.k8s.aws/
cluster: cluster-name will be applied on all AWS resources"), so each such condition becomes
`StringEquals <key>: <clusterName>`: this cluster's controller cannot change another cluster's load
balancers, target groups or security groups. Absence checks (`"true"`) and the statements upstream
leaves unconditioned stay as they are (reads, the WAF/Shield/ACM/Cognito group, listener and rule
changes, target registration, ingress rules on node security groups, which carry no such tag).

Chart (aws/eks-charts stable/aws-load-balancer-controller 3.5.0, values and Chart.yaml stored in
tests/data/upstream/aws-load-balancer-controller-3.5.0):
- `clusterName` (required) = the cluster ID: the controller keeps subnets whose
  `kubernetes.io/cluster/<name>` tags name it (docs/deploy/subnet_discovery.md), finds subnets by the
  `kubernetes.io/role/elb` / `internal-elb` tags the network already carries, and needs the target
  nodes' security group tagged `kubernetes.io/cluster/<clusterName>` (docs/guide/service/nlb.md):
  the tags the CCM needs too (domain.md section 1);
- `region` and `vpcId`: with IMDS hop limit 1 a pod on the pod network cannot read instance metadata
  (docs/deploy/installation.md: hop limit 2, or `--aws-region` and `--aws-vpc-id`);
- `enableServiceMutatorWebhook: false`: its default (true) gives every new LoadBalancer Service
  without a class `loadBalancerClass: service.k8s.aws/nlb`, with `failurePolicy: Fail`
  (webhooks/core/service_mutator.go `MutateCreate`) -- the CCM would stop serving new Services, and
  Service creation would fail while the controller is down. Off, the CCM stays the default and a
  Service opts in with `spec.loadBalancerClass: service.k8s.aws/nlb` (or the annotation
  `service.beta.kubernetes.io/aws-load-balancer-type: external`);
- the CCM is told nothing: its service controller skips every Service whose `loadBalancerClass` is
  set (kubernetes/cloud-provider controllers/service/controller.go `wantsLoadBalancer`), and the AWS
  provider skips type `external` and `nlb-ip` (cloud-provider-aws pkg/providers/v1/aws_loadbalancer.go
  `isLBExternal`);
- `keepTLSSecret: true`: without cert-manager the chart generates its webhook CA and certificate with
  `genCA` on every render (templates/_helpers.tpl) unless it may reuse the Secret it made (`lookup`),
  which Helm upgrades (Pulumi's Release, RKE2's helm-controller) can;
- the service account (named explicitly, for the trust policy) carries the role.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from ..settings import versions
from .ccm_values import node_selector, tolerations
from .cluster_documents import Chart
from .identity_roles import ROLE_ARN_ANNOTATION

UPSTREAM = Path(__file__).resolve().parent / "upstream" / "aws-load-balancer-controller-v3.5.0"
POLICY_FILES = {"aws": "iam_policy.json", "aws-us-gov": "iam_policy_us-gov.json", "aws-cn": "iam_policy_cn.json"}
CLUSTER_TAG = "elbv2.k8s.aws/cluster"
SCOPED_KEYS = (f"aws:RequestTag/{CLUSTER_TAG}", f"aws:ResourceTag/{CLUSTER_TAG}")

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "aws-load-balancer-controller"
LOAD_BALANCER_CLASS = "service.k8s.aws/nlb"  # what a Service names to be the controller's

CHART = Chart(versions.LOAD_BALANCER_CONTROLLER_CHART_NAME, versions.LOAD_BALANCER_CONTROLLER_CHART_REPO,
              versions.LOAD_BALANCER_CONTROLLER_CHART_VERSION, NAMESPACE)


@cache
def _upstream_text(partition: str) -> str:
    if partition not in POLICY_FILES:
        raise ValueError(f"no upstream policy for partition {partition!r}")
    return (UPSTREAM / POLICY_FILES[partition]).read_text(encoding="utf-8")


def upstream_policy(partition: str) -> dict[str, Any]:
    return json.loads(_upstream_text(partition))


def _scope(condition: dict[str, Any], cluster_name: str) -> dict[str, Any]:
    out = copy.deepcopy(condition)
    null = out.get("Null", {})
    for key in SCOPED_KEYS:
        if str(null.get(key, "")).lower() == "false":
            del null[key]
            out.setdefault("StringEquals", {})[key] = cluster_name
    if "Null" in out and not out["Null"]:
        del out["Null"]
    return out


def policy_document(cluster_name: str, partition: str) -> dict[str, Any]:
    """Upstream's policy for the partition, each presence check of the controller's cluster tag made a
    check of its value."""
    doc = upstream_policy(partition)
    for stmt in doc["Statement"]:
        if "Condition" in stmt:
            stmt["Condition"] = _scope(stmt["Condition"], cluster_name)
    return doc


def policy_json(cluster_name: str, partition: str) -> str:
    return json.dumps(policy_document(cluster_name, partition), indent=2, sort_keys=True)


def policy_compact_json(cluster_name: str, partition: str) -> str:
    """The policy without white space: a managed policy holds 6,144 characters (IAM quotas), and upstream's
    indented text passes that."""
    return json.dumps(policy_document(cluster_name, partition), separators=(",", ":"), sort_keys=True)


def values(cluster_name: str, region: str, vpc_id: str, role_arn: str, distribution: str, pools: Iterable[Any],
           image: str = versions.LOAD_BALANCER_CONTROLLER_IMAGE, proxy: dict[str, str] | None = None) -> dict[str, Any]:
    """The chart's values. `cluster_name`: the cluster ID (the kubernetes.io/cluster/<id> tag). `proxy`:
    HTTP(S)_PROXY / NO_PROXY for the controller's calls to AWS, as the chart's `env` map (values.yaml `env`:
    name -> value on the controller container)."""
    repository, _, tag = image.rpartition(":")
    if not repository or "/" in tag:
        raise ValueError(f"{image!r}: expected <registry>/<repository>:<tag>")
    return {
        "clusterName": cluster_name,
        "region": region,
        "vpcId": vpc_id,
        "image": {"repository": repository, "tag": tag},
        "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT, "annotations": {ROLE_ARN_ANNOTATION: role_arn}},
        "enableServiceMutatorWebhook": False,
        "keepTLSSecret": True,
        "nodeSelector": node_selector(distribution),
        "tolerations": tolerations(distribution, list(pools)),
        **({"env": dict(proxy)} if proxy else {}),
    }
