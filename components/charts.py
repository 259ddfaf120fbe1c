"""A pinned Helm chart, installed one of two ways: a Helm release through the cluster's kubeconfig,
or (RKE2, `ccm.install: manifest`) a `helm.cattle.io/v1` HelmChart that the servers'
helm-controller installs. Both name the same chart, repository, version and namespace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import pulumi
import pulumi_kubernetes as k8s

from . import versions
from .bootstrap import dump_yaml


@dataclass(frozen=True)
class Chart:
    name: str  # chart name, and the release / HelmChart name
    repo: str
    version: str
    namespace: str

    def manifest(self, values: Mapping[str, Any], *, bootstrap: bool = False) -> str:
        """The HelmChart; `bootstrap`: installed before the cluster has a pod network or initialised nodes."""
        spec: dict[str, Any] = {"chart": self.name, "repo": self.repo, "version": self.version,
                                "targetNamespace": self.namespace}
        if bootstrap:
            spec["bootstrap"] = True
        spec["valuesContent"] = dump_yaml(dict(values), sort_keys=True)
        return dump_yaml({"apiVersion": "helm.cattle.io/v1", "kind": "HelmChart",
                          "metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec})

    def release(self, resource_name: str, values: pulumi.Input[Mapping[str, Any]], opts: pulumi.ResourceOptions,
                **extra: Any) -> k8s.helm.v3.Release:
        return k8s.helm.v3.Release(
            resource_name,
            name=self.name,
            chart=self.name,
            version=self.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=self.repo),
            namespace=self.namespace,
            values=values,
            opts=opts,
            **extra,
        )


def ccm(version: str) -> Chart:
    """The CCM at the configured chart version (ccm.chartVersion)."""
    return Chart(versions.CCM_CHART_NAME, versions.CCM_CHART_REPO, version, "kube-system")


EBS_CSI = Chart(versions.EBS_CSI_CHART_NAME, versions.EBS_CSI_CHART_REPO, versions.EBS_CSI_CHART_VERSION, "kube-system")
