"""A flat stack config (`"rke-aws:<key>" -> text`, as the Pulumi CLI hands it) read as the stack program
reads it: rke_aws.settings.resolve.from_flat, with the running cluster's facts as keywords."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from rke_aws.settings.resolve import ClusterConfig, Running, from_flat


def parse_flat(raw: dict[str, Any], *, project: str = "rke-aws", stack: str = "test", region: str | None = None,
               secret_keys: Collection[str] = (), running_version: str | None = None,
               running_etcd_members: int = 0) -> ClusterConfig:
    """`raw` read and resolved (every problem at once, as a ConfigError). `region`: aws:region when `raw` has
    none; `running_*`: the stack's last outputs (a running cluster's release and etcd member count)."""
    if region is not None and "aws:region" not in raw:
        raw = {**raw, "aws:region": region}
    running = Running(kubernetes_version=running_version, etcd_members=running_etcd_members) \
        if running_version is not None or running_etcd_members else None
    return from_flat(raw, project=project, stack=stack, secret_keys=secret_keys, running=running)
