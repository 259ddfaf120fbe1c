"""The aws-cloud-controller-manager Helm release (phase two of the `pulumi up` flow)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from . import charts
from .ccm_values import CcmValues

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
        self.release = charts.ccm(args.chart_version).release(
            f"{name}-release",
            args.values.values,
            pulumi.ResourceOptions(parent=self, provider=provider),
            # Deleting a chart default takes an explicit null. The null travels as YAML text: the
            # provider (>= 4.30, pyproject.toml's floor) keeps nulls from these files and merges
            # them first, then `values` on top (Helm's mergeMaps); Helm then deletes the key.
            # `allowNullValues` is a deprecated no-op since 4.30 that warns on every preview.
            value_yaml_files=[pulumi.StringAsset(overrides)] if overrides else None,
        )
        self.status = self.release.status
        self.register_outputs({"releaseStatus": self.status})
