"""rke-aws as a library: `from components import RkeCluster, load_spec` (README, "Using RkeCluster from
another program"). Imported lazily, so the pure layers (components.settings, components.plan.names, ...)
stay importable without loading the Pulumi providers."""

from __future__ import annotations

from typing import Any

__all__ = ["ClusterSpec", "RkeCluster", "load_spec", "resolve"]


def __getattr__(name: str) -> Any:
    if name in ("RkeCluster", "load_spec"):
        from . import rke_cluster

        return getattr(rke_cluster, name)
    if name in ("ClusterSpec", "resolve"):
        from .plan import spec

        return getattr(spec, name)
    raise AttributeError(f"module 'components' has no attribute {name!r}")
