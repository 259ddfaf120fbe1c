"""The rules that span keys: each module's `check(keys, ctx)` returns Diagnostics (errors, warnings), every
problem at once, judged on what of the configuration is valid (settings/stackconfig.py's partial validation
hands over the rest as written). `RULES` is the order they run in (the order warnings are logged).

Adding a section with cross-key rules: a model in settings/sections.py, a field for it on ClusterKeys, and a
module here whose `check` reads `keys.valid.<section>` (and `keys.gave(...)` for what was written but
refused); then one line in RULES. Nothing else reads the section's keys by name.
"""

from __future__ import annotations

from ...diagnostics import Diagnostic
from . import (
    access,
    backups,
    ccm,
    cluster,
    distribution,
    identity,
    ingress,
    network,
    operating_systems,
    pools,
    proxy,
    rancher,
    registry,
    secrets,
    tags,
    versions,
)
from .base import Context, Keys, PoolEntry, Rule, Running

__all__ = ["RULES", "Context", "Keys", "PoolEntry", "Rule", "Running", "judge"]

RULES: tuple[Rule, ...] = (
    distribution.check, network.check, access.check, pools.check, versions.check, ccm.check, tags.check,
    backups.check, proxy.check, cluster.check, ingress.check, rancher.check, secrets.check,
    operating_systems.check,
    identity.check,
    registry.check,
)


def judge(keys: Keys, ctx: Context) -> list[Diagnostic]:
    """Every rule's findings, in order."""
    found: list[Diagnostic] = []
    for rule in RULES:
        found += rule(keys, ctx)
    return found
