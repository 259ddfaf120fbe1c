"""The aws-cloud-controller-manager Helm release (phase two of the `pulumi up` flow)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ..plan import cluster_documents
from ..plan.ccm_values import CcmValues
from . import charts


def cluster_identifier(cluster_id: str) -> str:
    """The Kubernetes provider's identity: one per cluster, whatever kubeconfig reaches it."""
    return f"rke-aws/{cluster_id}"


@dataclass(frozen=True)
class CloudControllerManagerArgs:
    kubeconfig: pulumi.Input[str]
    chart_version: str
    values: CcmValues
    cluster_id: str
    charts: tuple[str | None, str | None] = (None, None)  # registry.charts and its CA (cluster_documents.chart_location)


class CloudControllerManager(pulumi.ComponentResource):
    def __init__(self, name: str, args: CloudControllerManagerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:ccm:CloudControllerManager", name, None, opts)
        # pulumi-kubernetes replaces its Provider, and with it every Release, Secret and custom
        # resource it manages, when the kubeconfig's active cluster changes (server, CA, ...) unless
        # `clusterIdentifier` is set: then only a changed identifier replaces it, and adding one to a
        # Provider that had none is an update (provider/pkg/provider/provider.go, DiffConfig:
        # `diff.Updated(clusterIdentifierKey)` replaces, `diff.Same(...) && news.HasValue(...)` clears
        # every other replacement). A published kubeconfig swapped for an explicit one, a rotated CA
        # or a renamed context therefore updates the Provider in place.
        self.provider = provider = k8s.Provider(
            f"{name}-cluster",
            kubeconfig=pulumi.Output.secret(args.kubeconfig),
            cluster_identifier=cluster_identifier(args.cluster_id),
            opts=pulumi.ResourceOptions(parent=self),
        )
        overrides = args.values.overrides_yaml()
        self.release = charts.release(
            cluster_documents.ccm(args.chart_version).located(*args.charts),
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
