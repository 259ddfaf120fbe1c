"""A pinned chart (components/plan/cluster_documents.py: Chart) as a Helm release through the cluster's
kubeconfig; the other way in, a HelmChart manifest the servers' helm-controller installs, is pure text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..plan.cluster_documents import Chart


def release(chart: Chart, resource_name: str, values: pulumi.Input[Mapping[str, Any]], opts: pulumi.ResourceOptions,
            **extra: Any) -> k8s.helm.v3.Release:
    return k8s.helm.v3.Release(
        resource_name,
        name=chart.name,
        chart=chart.reference,
        version=chart.version,
        # An OCI chart is its full reference (oci://host/path/name) and takes no repository.
        repository_opts=None if chart.oci else k8s.helm.v3.RepositoryOptsArgs(repo=chart.repo),
        namespace=chart.namespace,
        values=values,
        opts=opts,
        **extra,
    )
