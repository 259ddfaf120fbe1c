"""rke-aws as a library: `from rke_aws import RkeCluster, RkeClusterArgs` (README, "In your own program").
The Pulumi components are imported lazily, so the pure layers (rke_aws.settings,
rke_aws.plan.names, rke_aws.state, ...) stay importable without loading the Pulumi providers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__
from .diagnostics import ConfigError, Diagnostic, Severity
from .settings.sections import Access, Identity, IdentityRole, Network, NodePool
from .state.model import ClusterState

if TYPE_CHECKING:
    from .rke_cluster import RkeAwsError, RkeCluster, RkeClusterArgs

__all__ = ["Access", "ClusterState", "ConfigError", "Diagnostic", "Identity", "IdentityRole", "Network", "NodePool",
           "RkeAwsError", "RkeCluster", "RkeClusterArgs", "Severity", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("RkeCluster", "RkeClusterArgs", "RkeAwsError"):
        from . import rke_cluster

        return getattr(rke_cluster, name)
    raise AttributeError(f"module 'rke_aws' has no attribute {name!r}")
