"""nodePools: each pool complete, names and address blocks unique, roles listed once, the IMDS hop limit with a
reason, spot for workers only; together a control plane, etcd with quorum and workers, and a way out for
private pools."""

from __future__ import annotations

import re
from collections.abc import Callable

from ...diagnostics import Diagnostic
from ..fields import MAX_POOL_BLOCKS, REASON_PATTERN, json_text, shown
from ..messages import missing
from ..sections import ROLES, NodePool
from .base import Context, Keys, PoolEntry, error, given, warning
from .network import BYO_KEYS
from .tags import tag_value_problem

# etcd: "an etcd cluster probably should have no more than seven nodes" (etcd FAQ, "What is maximum
# cluster size?"; k3s's maintainers say the same for RKE2/k3s servers, k3s-io/k3s discussions #8082,
# #9552): every member slows every write. It also bounds user data: each RKE2 server's boot script
# lists the other servers (PEER_IPS), and EC2 takes 16 KiB of user data (node/cloud_init.py USER_DATA_LIMIT).
MAX_ETCD_MEMBERS = 7
REASON_RE = re.compile(REASON_PATTERN)


def _pool(entry: PoolEntry, distribution: str | None, names: dict[str, int], blocks: dict[int, str]) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    key, item, pool = entry.key, entry.raw, entry.pool
    if pool is None:
        return found
    for required in ("name", "roles", "count"):
        if required not in item and required not in entry.nulls:
            found.append(error(f"{key}.{required}", missing(NodePool, required), "pool.missing"))
    if pool.name is not None:
        if pool.name in names:
            found.append(error(f"{key}.name", f"'{pool.name}' is already used by nodePools[{names[pool.name]}]; pool "
                                              "names are unique", "pool.name-twice", pool.name))
        names[pool.name] = entry.index
    given_roles = item.get("roles")
    raw_roles = list(given_roles) if isinstance(given_roles, (list, tuple)) else []
    for r in [r for r in ROLES if raw_roles.count(r) > 1]:
        found.append(error(f"{key}.roles", f"'{r}' is listed twice; list each role once", "pool.role-twice", r))
    roles = tuple(r for r in ROLES if r in (pool.roles or ()))
    if pool.ip_block is not None:
        if pool.ip_block in blocks:
            found.append(error(f"{key}.ipBlock", f"{pool.ip_block} is already used by pool '{blocks[pool.ip_block]}'; "
                                                 f"give each pool its own ipBlock (0 to {MAX_POOL_BLOCKS - 1})",
                               "pool.block-twice", pool.ip_block))
        blocks[pool.ip_block] = pool.name or key
    hop, reason = pool.imds_hop_limit, pool.imds_hop_limit_reason
    if "imdsHopLimitReason" in item and reason is None:
        pass  # not a string: the model said so
    elif reason is not None and not REASON_RE.fullmatch(reason):
        if not reason.strip(" "):
            found.append(error(f"{key}.imdsHopLimitReason", f"{shown(reason)} is blank; state why pods on the pool's "
                                                            "nodes need the node role's credentials (it becomes the "
                                                            "instance tag rke-aws/imds-hop-limit-reason)",
                               "pool.imds-reason", reason))
        else:
            found.append(error(f"{key}.imdsHopLimitReason", f"becomes an instance tag value and "
                                                            f"{tag_value_problem(reason)}", "pool.imds-reason", reason))
    elif hop == 2 and reason is None:
        found.append(error(f"{key}.imdsHopLimitReason", "missing; imdsHopLimit 2 lets every pod on the pool's nodes "
                                                        "take the node role's credentials: state why in "
                                                        "imdsHopLimitReason, or keep 1", "pool.imds-reason"))
    elif reason is not None and hop != 2:
        found.append(error(f"{key}.imdsHopLimitReason", "is set but imdsHopLimit is not 2; remove it", "pool.imds-reason"))
    elif hop == 2 and reason is not None:  # always set here: a missing reason is refused above
        found.append(warning(f"{key}.imdsHopLimit", f"2: pods on the pool's nodes can read the node role's credentials "
                                                    f"from IMDS (reason given: {reason.strip()})", "pool.imds-hop-2", hop))
    if pool.market == "spot" and {"controlplane", "etcd"} & set(roles):
        found.append(error(f"{key}.market", f"'spot' for a pool with {json_text([r for r in roles if r != 'worker'])}: "
                                            "AWS takes spot capacity back at two minutes' notice, and servers hold etcd "
                                            "quorum and the API; spot is for worker-only pools: put the workers in a "
                                            "pool of their own", "pool.spot-server", pool.market))
    elif pool.market == "spot" and distribution == "rke" and pool.subnet == "public" and pool.count:
        # EC2 User Guide, "Public IPv4 addresses": released when the instance stops, a new one when
        # it starts. rke dials each node at its cluster.yml `address` (rancher/rke hosts/dialer.go)
        # and tells nodes apart by it (hosts.GetToDeleteHosts), and cluster.yml writes a public
        # node's public address (node/rke1_cluster.py).
        found.append(error(f"{key}.market", "'spot' for an RKE1 pool in public subnets: a spot interruption stops the "
                                            "instance and EC2 gives it a new public IP when it starts again, while `rke "
                                            "up` reaches and identifies each node by the address in the stored "
                                            "rkeClusterYml (its public IP), which then names no node; put the spot pool "
                                            "in private subnets (subnet: private, addressed by its fixed private IP) or "
                                            "keep it on-demand (a running pool: add the new pool, then set this one's "
                                            "count to 0)", "pool.spot-rke1-public", pool.market))
    return found


def topology(pools: tuple[NodePool, ...], running_etcd_members: int | None) -> list[Diagnostic]:
    """A control plane, etcd and workers; an odd etcd count, at most MAX_ETCD_MEMBERS for a new cluster (a
    running one above it goes down one member at a time). `running_etcd_members` None: not known yet."""
    found: list[Diagnostic] = []

    def members(pred: Callable[[NodePool], bool]) -> int:
        return sum(pl.count or 0 for pl in pools if pred(pl))

    if members(lambda pl: pl.is_controlplane) == 0:
        found.append(error("nodePools", "no node has the controlplane role; add a pool with controlplane and count >= 1",
                           "pools.no-controlplane"))
    etcd = members(lambda pl: pl.is_etcd)
    if etcd == 0:
        found.append(error("nodePools", "no node has the etcd role; add a pool with etcd and count >= 1", "pools.no-etcd"))
    elif etcd % 2 == 0:
        # etcd tolerates (m - 1) // 2 failed members: 4 tolerate 1, like 3, with one more that can fail.
        found.append(warning("nodePools", f"{etcd} etcd members tolerate {(etcd - 1) // 2} failure(s), like {etcd - 1}: "
                                          "the extra member adds no tolerance, only one more that can fail; use an odd "
                                          f"count ({etcd - 1} or {etcd + 1})", "pools.etcd-even", etcd))
    if etcd > MAX_ETCD_MEMBERS and running_etcd_members is not None:
        which = ", ".join(f"{pl.name}: {pl.count}" for pl in pools if pl.is_etcd and pl.count)
        why = (f"etcd recommends no more than {MAX_ETCD_MEMBERS} (etcd FAQ, \"What is maximum cluster size?\"): every "
               "member slows every write, and every RKE2 server's user data lists the others (EC2 takes 16 KiB)")
        if etcd > running_etcd_members:
            found.append(error("nodePools", f"{etcd} etcd members (pools with etcd: {which}); at most {MAX_ETCD_MEMBERS}: "
                                            f"{why}; use 3, 5 or 7", "pools.etcd-too-many", etcd))
        else:  # a running cluster from before the limit: it may keep its members and go down one at a time
            found.append(warning("nodePools", f"{etcd} etcd members ({which}); {why}: lower the count one member per "
                                              f"`pulumi up` to {MAX_ETCD_MEMBERS} or fewer", "pools.etcd-too-many", etcd))
    if members(lambda pl: pl.is_worker) == 0:
        found.append(error("nodePools", "no node can run workloads; add a pool with the worker role and count >= 1",
                           "pools.no-worker"))
    return found


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    if not keys.pools_judged:
        return []
    found: list[Diagnostic] = []
    names: dict[str, int] = {}
    blocks: dict[int, str] = {}
    for entry in keys.pools:
        found += _pool(entry, keys.valid.distribution, names, blocks)
    # Topology is judged only on a complete pool list: a pool rejected above would otherwise show up again as
    # "no controlplane" or "no worker".
    if keys.pools and all(e.complete for e in keys.pools):
        pools = keys.complete_pools
        found += topology(pools, ctx.running.etcd_members if ctx.running is not None else None)
        net = keys.valid.network
        # airgap: private nodes without a way out are the point (settings/rules/registry.py)
        if not (given(net) & set(BYO_KEYS)) and net.nat_gateways == "none" and keys.valid.airgap is None:
            for entry in keys.pools:
                pool = entry.pool
                if pool is not None and pool.subnet == "private" and pool.count:
                    found.append(error(f"{entry.key}.subnet", "'private' needs a way out for the bootstrap downloads, "
                                                              "but network.natGateways is none; use single or perAz, or "
                                                              "subnet public", "pool.private-without-nat"))
    return found


def split_server_pools(distribution: str | None, pools: tuple[NodePool, ...]) -> list[str]:
    """RKE2 server pools that run only etcd or only the control plane (rke2-docs install/server_roles.md:
    etcd-only servers set disable-apiserver/-controller-manager/-scheduler, control-plane-only ones
    disable-etcd and always `server:`)."""
    if distribution != "rke2":
        return []
    return [pl.name or "" for pl in pools if pl.is_controlplane != pl.is_etcd]
