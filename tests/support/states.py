"""Builders of a cluster's last state (components/state/model.py) for unit tests of the planner's steps:
nodes, the state itself, and the planned members the etcd guards compare with."""

from __future__ import annotations

from typing import Any

from rke_aws.plan.day2.etcd import PlannedMember
from rke_aws.state.model import ClusterState, NodeState

CID = "c"


def member(i: int, pool: str = "servers", *, etcd: bool = True, ip: str | None = None, key: str | None = None,
           az: str = "us-west-2a", tier: str = "private", block: int | None = 0, **fields: Any) -> NodeState:
    """Node `i` of `pool` as the last update recorded it (an etcd member unless `etcd=False`)."""
    ip = ip or f"10.0.1.{10 + i}"
    return NodeState(pool=pool, index=i, name=f"ip-{ip.replace('.', '-')}.us-west-2.compute.internal",
                     roles=("controlplane", "etcd") if etcd else ("worker",), private_ip=ip, availability_zone=az,
                     subnet=f"{tier}-0", ip_block=block, key_name=key, **fields)


def planned(n: NodeState, *, etcd: bool | None = None, ip: str | None = None, key: str | None = None) -> PlannedMember:
    """What the guard sees of node `n` planned again (unchanged, or with a changed address, key or role)."""
    return PlannedMember(n.pool, n.index, ip or n.private_ip, n.availability_zone, n.tier,
                         n.key_name if key is None else key, n.is_etcd if etcd is None else etcd, n.name)


def state(nodes: Any = (), **fields: Any) -> ClusterState:
    """A running RKE2 cluster `c` whose last update confirmed its version, with `fields` (ClusterState's)."""
    fields.setdefault("distribution", "rke2")
    fields.setdefault("kubernetes_version", "v1.33.5+rke2r1")
    fields.setdefault("kubernetes_version_confirmed", fields["kubernetes_version"])
    fields.setdefault("cluster_id", CID)
    return ClusterState(nodes=tuple(nodes), **fields)
