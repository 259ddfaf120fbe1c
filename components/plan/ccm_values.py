"""Helm values for aws-cloud-controller-manager that really schedule on each distribution's
control plane (domain.md sections 3 and 4).

Two merge rules shape everything here:
- Helm merges maps: the chart's default nodeSelector key `node-role.kubernetes.io/control-plane: ""`
  survives any user nodeSelector unless the user value sets it to null. RKE1 nodes never carry
  that label, so for RKE the key is deleted with an explicit null.
- Helm replaces lists: tolerations, args and clusterRoleRules given here are the whole list,
  so the chart's defaults we still need are carried over explicitly.
And one Pulumi rule: a null meant to delete a chart default travels as YAML text in
`valueYamlFiles`. pulumi-kubernetes >= 4.30 (PR #4293; pyproject.toml's floor) keeps nulls from
those files and merges them under `values`; before 4.30 it dropped them whatever
`allowNullValues` said (now a deprecated no-op), and `None` inside `values` is not a documented
way to send a null from Python.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..settings.resolve import PoolConfig as NodePool
from .cluster_documents import dump_yaml
from .proxy import ProxyEnv

UNINITIALIZED_TAINT_KEY = "node.cloudprovider.kubernetes.io/uninitialized"

# Labels and taints each distribution puts on its control-plane nodes (domain.md section 3).
RKE_CONTROLPLANE_LABEL = "node-role.kubernetes.io/controlplane"
RKE_CONTROLPLANE_TAINT = {"key": "node-role.kubernetes.io/controlplane", "value": "true", "effect": "NoSchedule"}
RKE_ETCD_TAINT = {"key": "node-role.kubernetes.io/etcd", "value": "true", "effect": "NoExecute"}
RKE2_CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
# Not set by RKE2 itself, but the documented way to dedicate servers; tolerated so it never strands the CCM.
RKE2_CRITICAL_ADDONS_TAINT_KEY = "CriticalAddonsOnly"

# The chart's default key we must delete for RKE1 (its value is "").
CHART_DEFAULT_SELECTOR_KEY = "node-role.kubernetes.io/control-plane"

# aws-cloud-controller-manager chart 0.0.11 default clusterRoleRules (charts/aws-cloud-controller-manager/values.yaml).
CHART_DEFAULT_CLUSTER_ROLE_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch", "update"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["*"]},
    {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]},
    {"apiGroups": [""], "resources": ["services"], "verbs": ["list", "patch", "update", "watch"]},
    {"apiGroups": [""], "resources": ["services/status"], "verbs": ["list", "patch", "update", "watch"]},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "update", "watch"]},
    {"apiGroups": [""], "resources": ["endpoints"], "verbs": ["create", "get", "list", "watch", "update"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create", "get", "list", "watch", "update"]},
    {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
]

BASE_ARGS = (
    "--v=2",
    "--cloud-provider=aws",
    # The route controller needs --cluster-cidr and crash-loops without it; nodes route via the CNI.
    "--configure-cloud-routes=false",
    # Each controller acts with its own service account (Rancher's documented setting).
    "--use-service-account-credentials=true",
)
LEADER_MIGRATION_ARG = "--enable-leader-migration=true"


@dataclass(frozen=True)
class CcmValues:
    values: dict[str, Any]  # sent as Release `values`
    null_overrides: dict[str, Any] | None  # keys to delete from chart defaults, sent as a YAML file

    def overrides_yaml(self) -> str | None:
        return dump_yaml(self.null_overrides, sort_keys=True) if self.null_overrides else None

    def merged_for_manifest(self) -> dict[str, Any]:
        """One values document (HelmChart valuesContent): the overrides with values on top."""
        merged = copy.deepcopy(self.null_overrides or {})
        for k, v in self.values.items():
            if isinstance(v, dict) and isinstance(merged.get(k), dict):
                merged[k] = {**merged[k], **v}
            else:
                merged[k] = copy.deepcopy(v)
        return merged


def ccm_args(leader_migration: bool, extra_args: Iterable[str]) -> list[str]:
    args = list(BASE_ARGS)
    if leader_migration:
        args.append(LEADER_MIGRATION_ARG)
    args.extend(extra_args)
    return args


def cluster_role_rules() -> list[dict[str, Any]]:
    """The chart's defaults (a list replaces them) with `get` added on serviceaccounts."""
    rules = copy.deepcopy(CHART_DEFAULT_CLUSTER_ROLE_RULES)
    for rule in rules:
        if rule["resources"] == ["serviceaccounts"] and "get" not in rule["verbs"]:
            rule["verbs"].append("get")
    return rules


def node_selector(distribution: str) -> dict[str, str]:
    if distribution == "rke":
        return {RKE_CONTROLPLANE_LABEL: "true"}
    return {RKE2_CONTROL_PLANE_LABEL: "true"}


def control_plane_tolerations(distribution: str, pools: Iterable[NodePool]) -> list[dict[str, str]]:
    """The taints the distribution puts on control-plane nodes (shared with the EBS CSI controller)."""
    if distribution == "rke":
        # Controlplane nodes that are also etcd (and not worker) carry the etcd NoExecute taint.
        etcd = any(p.is_controlplane and p.is_etcd and not p.is_worker for p in pools)
        return [dict(RKE_CONTROLPLANE_TAINT)] + ([dict(RKE_ETCD_TAINT)] if etcd else [])
    return [{"key": RKE2_CONTROL_PLANE_LABEL, "operator": "Exists", "effect": "NoSchedule"}]


def tolerations(distribution: str, pools: Iterable[NodePool]) -> list[dict[str, str]]:
    tols = [{"key": UNINITIALIZED_TAINT_KEY, "value": "true", "effect": "NoSchedule"}]
    tols += control_plane_tolerations(distribution, pools)
    if distribution == "rke2":
        tols.append({"key": RKE2_CRITICAL_ADDONS_TAINT_KEY, "operator": "Exists"})
    return tols


def image_values(image: str) -> dict[str, str]:
    """`repository:tag` as the chart's image.repository / image.tag (a registry port stays in the repository)."""
    repository, _, tag = image.rpartition(":")
    return {"repository": repository, "tag": tag}


def helm_values(distribution: str, pools: Iterable[NodePool], leader_migration: bool,
                extra_args: Iterable[str], image: str, proxy: ProxyEnv | None = None) -> CcmValues:
    """`image`: the CCM image for the cluster's Kubernetes minor (versions.CCM_IMAGE_TAGS, or
    ccm.image); the chart's default image (v1.35.0) would be newer than most clusters, which the
    version-skew policy forbids. `proxy`: the CCM's calls to AWS go through it (chart 0.0.11's `env`,
    which templates/daemonset.yaml puts on the container as given)."""
    pools = list(pools)
    values = {
        "image": image_values(image),
        # On the host network the CCM needs no pod network (which may wait on the CCM) and one IMDS hop.
        "hostNetworking": True,
        "args": ccm_args(leader_migration, extra_args),
        "nodeSelector": node_selector(distribution),
        "tolerations": tolerations(distribution, pools),
        "clusterRoleRules": cluster_role_rules(),
    }
    if proxy is not None:
        values["env"] = proxy.pod_env()
    nulls = None
    if distribution == "rke":
        nulls = {"nodeSelector": {CHART_DEFAULT_SELECTOR_KEY: None}}
    return CcmValues(values, nulls)
