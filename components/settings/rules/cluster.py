"""Across sections: split RKE2 server roles need the NLB endpoint, the admin rules fit the security group,
the CIS profile is RKE2's; RKE1's end of life, and where RKE1 puts etcd snapshots' credentials."""

from __future__ import annotations

from ...diagnostics import Diagnostic
from . import access
from .base import Context, Keys, error, warning
from .pools import split_server_pools

RKE1_EOL = ("RKE1 reached end of life on 2025-07-31 and rancher/rke is archived (last release v1.8.14); plan a "
            "move to RKE2 (https://docs.rke2.io/install/migrate)")


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    distribution, pools = keys.valid.distribution, keys.complete_pools
    found: list[Diagnostic] = []
    split = split_server_pools(distribution, pools)
    if split and keys.valid.control_plane.endpoint == "dns":
        found.append(error("controlPlane.endpoint", f"'dns' cannot serve split RKE2 server roles (pools "
                                                    f"{', '.join(split)}): one DNS name answers every port with the "
                                                    "same addresses, but the API (6443) runs only on controlplane nodes "
                                                    "and joining servers need etcd nodes' supervisors (9345); use nlb (a "
                                                    "target group per port), or give every server pool both "
                                                    "controlplane and etcd", "endpoint.split-roles-dns"))
    found += access.rule_quota(keys, ctx)
    if keys.valid.hardening == "cis" and distribution == "rke":
        found.append(error("hardening", "'cis' applies RKE2's CIS profile; RKE1 clusters are hardened through "
                                        "cluster.yml by hand", "hardening.rke1"))
    if distribution == "rke":
        found.append(warning("distribution", f"rke: {RKE1_EOL}", "distribution.rke1-eol"))
        # RKE1 etcd nodes take the snapshots; etcd-only pools share the worker/etcd role.
        etcd_only = [pool.name or "" for pool in pools if pool.is_etcd and not pool.is_controlplane]
        if keys.valid.etcd_backup.enabled and etcd_only:
            found.append(warning("etcdBackup", f"pools {', '.join(etcd_only)} run etcd without controlplane and use the "
                                               "worker/etcd role, so every worker node's role may read the etcd "
                                               "snapshots (every Secret of the cluster); put etcd with controlplane to "
                                               "keep snapshots off worker nodes", "backups.rke1-etcd-only"))
    return found
