"""aws-ebs-csi-driver (`addons.ebsCsi`): the chart's values, its RKE2 HelmChart, its Release.

Placement, given IMDS hop limit 1 everywhere else (domain.md section 6):
- the node plugin runs on every node (the chart's `tolerateAllTaints`) on the host network, so it
  reads instance metadata at hop limit 1 and needs no AWS credentials;
- the controller needs the controlplane role's credentials but the chart cannot put it on the host
  network (its schema rejects controller.hostNetwork). It therefore runs only on *dedicated*
  control-plane nodes (pools without the worker role), labelled `rke-aws/dedicated-control-plane`,
  which get hop limit 2 (with the reason tag) and are tainted so workloads stay off: RKE1 taints
  them itself; RKE2 servers get `CriticalAddonsOnly=true:NoExecute` (bootstrap.py).

Helm merges maps and replaces lists (domain.md section 4): the tolerations below are the whole list.
Kubernetes applies the first toleration matching a taint, so the etcd NoExecute toleration (no
tolerationSeconds) comes before the chart's catch-all NoExecute (300 s) one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

import pulumi
import pulumi_kubernetes as k8s

from . import versions
from .bootstrap import DEDICATED_LABEL, dump_yaml
from .ccm_values import RKE_CONTROLPLANE_TAINT, RKE_ETCD_TAINT
from .config import NodePool

NAMESPACE = "kube-system"
RKE2_DEDICATED_TAINT = {"key": "CriticalAddonsOnly", "value": "true", "effect": "NoExecute"}
IMDS_REASON = "aws-ebs-csi-driver controller: on the pod network, uses the node role (addons.ebsCsi)"
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


def dedicated(pool: NodePool) -> bool:
    """A control-plane pool that runs no workloads: where the controller may hold node credentials."""
    return pool.is_controlplane and not pool.is_worker


def controller_tolerations(distribution: str) -> list[dict[str, Any]]:
    tols: list[dict[str, Any]] = []
    if distribution == "rke":
        tols += [dict(RKE_CONTROLPLANE_TAINT), dict(RKE_ETCD_TAINT)]
    else:
        tols.append(dict(RKE2_DEDICATED_TAINT))
    return tols + [dict(t) for t in CHART_CONTROLLER_TOLERATIONS]


def values(distribution: str, cluster_id: str, region: str) -> dict[str, Any]:
    return {
        "controller": {
            "region": region,  # no metadata look-up for the region
            "k8sTagClusterId": cluster_id,  # volumes carry kubernetes.io/cluster/<id>: the IAM policy's scope
            "nodeSelector": {DEDICATED_LABEL: "true"},
            "tolerations": controller_tolerations(distribution),
        },
        "node": {"hostNetwork": True, "tolerateAllTaints": True},
        "storageClasses": [dict(DEFAULT_STORAGE_CLASS)],
    }


def helm_chart_manifest(vals: dict[str, Any]) -> str:
    """RKE2 `helm.cattle.io/v1` HelmChart (manifest mode)."""
    return dump_yaml({
        "apiVersion": "helm.cattle.io/v1",
        "kind": "HelmChart",
        "metadata": {"name": versions.EBS_CSI_CHART_NAME, "namespace": "kube-system"},
        "spec": {
            "chart": versions.EBS_CSI_CHART_NAME,
            "repo": versions.EBS_CSI_CHART_REPO,
            "version": versions.EBS_CSI_CHART_VERSION,
            "targetNamespace": NAMESPACE,
            "valuesContent": dump_yaml(vals, sort_keys=True),
        },
    })


def problem(pools: Iterable[NodePool]) -> Optional[str]:
    if not any(dedicated(p) and p.count for p in pools):
        return ("addons.ebsCsi: true needs a control-plane pool without the worker role (the driver's controller "
                "runs there with the node role's credentials); add one, or set addons.ebsCsi false")
    return None


@dataclass(frozen=True)
class EbsCsiDriverArgs:
    provider: k8s.Provider
    values: dict[str, Any]


class EbsCsiDriver(pulumi.ComponentResource):
    def __init__(self, name: str, args: EbsCsiDriverArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("rke-aws:addons:EbsCsiDriver", name, None, opts)
        self.release = k8s.helm.v3.Release(
            f"{name}-ebs-csi",
            name=versions.EBS_CSI_CHART_NAME,
            chart=versions.EBS_CSI_CHART_NAME,
            version=versions.EBS_CSI_CHART_VERSION,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=versions.EBS_CSI_CHART_REPO),
            namespace=NAMESPACE,
            values=args.values,
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider),
        )
        self.register_outputs({"status": self.release.status})
