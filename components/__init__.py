"""rke-aws as a library: `from rke_aws import RkeCluster, load_spec` (README, "Using RkeCluster from
another program"). Imported lazily, so the pure layers (rke_aws.settings, rke_aws.plan.names, ...)
stay importable without loading the Pulumi providers."""

from __future__ import annotations

from typing import Any

from ._version import __version__

__all__ = ["ClusterSpec", "RkeCluster", "__version__", "load_spec", "resolve"]


def __getattr__(name: str) -> Any:
    if name in ("RkeCluster", "load_spec"):
        from . import rke_cluster

        return getattr(rke_cluster, name)
    if name in ("ClusterSpec", "resolve"):
        from .plan import spec

        return getattr(spec, name)
    raise AttributeError(f"module 'rke_aws' has no attribute {name!r}")
