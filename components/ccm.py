"""The aws-cloud-controller-manager Helm release (phase two of the `pulumi up` flow)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from . import versions
from .ccm_values import CcmValues

CCM_NAMESPACE = "kube-system"


@dataclass(frozen=True)
class CloudControllerManagerArgs:
    kubeconfig: pulumi.Input[str]
    chart_version: str
    values: CcmValues


class CloudControllerManager(pulumi.ComponentResource):
    def __init__(self, name: str, args: CloudControllerManagerArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("rke-aws:ccm:CloudControllerManager", name, None, opts)
        self.provider = provider = k8s.Provider(
            f"{name}-cluster",
            kubeconfig=pulumi.Output.secret(args.kubeconfig),
            opts=pulumi.ResourceOptions(parent=self),
        )
        overrides = args.values.overrides_yaml()
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name=versions.CCM_CHART_NAME,
            chart=versions.CCM_CHART_NAME,
            version=args.chart_version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=versions.CCM_CHART_REPO),
            namespace=CCM_NAMESPACE,
            values=args.values.values,
            # Deleting a chart default takes an explicit null. The null travels as YAML text: the
            # provider (>= 4.30, pyproject.toml's floor) keeps nulls from these files and merges
            # them first, then `values` on top (Helm's mergeMaps); Helm then deletes the key.
            # `allowNullValues` is a deprecated no-op since 4.30 that warns on every preview.
            value_yaml_files=[pulumi.StringAsset(overrides)] if overrides else None,
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        self.status = self.release.status
        self.register_outputs({"releaseStatus": self.status})
