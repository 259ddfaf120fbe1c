"""distribution: required (nothing else has a default that fits both RKE and RKE2)."""

from __future__ import annotations

from ...diagnostics import Diagnostic
from ..messages import missing
from ..sections import ClusterKeys
from .base import Context, Keys, error


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    if "distribution" in keys.written or keys.valid.distribution is not None:
        return []
    return [error("distribution", missing(ClusterKeys, "distribution"), "config.missing")]
