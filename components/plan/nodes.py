"""Plan-time node identities: address, AZ and Kubernetes node name of every node.

The CCM links a Node to its instance by name before the node has a providerID, so the node
name must equal the instance's EC2 private DNS name. AWS derives that name from the private
IP, so this program chooses each node's IP itself; the name is then known at preview time and
shows up in `pulumi preview`, cluster.yml and the RKE2 configs.

Address layout inside each subnet of size S: offsets [S/4, S/2) form the node range, reserved
with an explicit subnet CIDR reservation so AWS never hands those addresses to NAT gateways or
load balancer interfaces. The range is cut into MAX_POOL_BLOCKS equal blocks; each pool owns one.

Placement is stable (components/state gives the cluster's last state):
- a running node keeps its zone, subnet and address; only new nodes are placed, and only nodes
  removed from the config (count lowered, pool removed) go away;
- a pool keeps its block; a new pool takes its `ipBlock`, or the lowest block no pool used before;
- a new node goes to the zone where its pool has the fewest nodes (ties: lowest zone index), at
  the lowest free slot of its pool's block there. On a new stack this is node j -> zone j mod #zones,
  slot FIRST_SLOT + j div #zones.
So adding a zone, adding or inserting a pool anywhere, or reordering pools moves nobody.
"""

from __future__ import annotations

import functools
import ipaddress
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..diagnostics import ConfigError, Diagnostic, Severity
from ..settings.fields import DEFAULT_OS, MAX_POOL_BLOCKS
from ..settings.resolve import ClusterConfig as StackConfig
from ..settings.resolve import PoolConfig as NodePool
from ..state.model import ClusterState
from .day2.etcd import PlannedMember
from .network import PlannedSubnet, Topology


@dataclass(frozen=True)
class PlannedNode:
    pool: NodePool
    index: int
    resource_name: str
    private_ip: str
    name: str  # Kubernetes node name == EC2 private DNS name == OS hostname
    az: str
    az_index: int
    subnet: PlannedSubnet
    is_first_server: bool
    ip_block: int = 0
    rke2: bool = False

    @property
    def roles(self) -> tuple[str, ...]:
        return self.pool.roles

    @property
    def iam_role(self) -> str:
        """Nodes with controlplane use the controlplane role. RKE2 etcd-only servers use the etcd role: the
        server's parameters (token, init marker, admin kubeconfig: one of them initialises the cluster) and
        the etcd snapshots, but the worker's read-only cloud-provider policy (no CCM runs there). RKE1
        etcd-only nodes and workers use the worker role."""
        if self.pool.is_controlplane:
            return "controlplane"
        return "etcd" if self.rke2 and self.pool.is_etcd else "worker"

    @property
    def runs_api_server(self) -> bool:
        """kube-apiserver runs here: RKE1 controlplane nodes, RKE2 servers with controlplane."""
        return self.pool.is_controlplane

    @property
    def runs_etcd_supervisor(self) -> bool:
        """An RKE2 server with etcd: its supervisor (9345) can take any joining node, servers included
        (rke2-docs install/server_roles.md: control-plane-only servers join at an etcd node's :9345)."""
        return self.rke2 and self.pool.is_etcd

    @property
    def public(self) -> bool:
        return self.subnet.tier == "public"

    def member(self, key_name: str | None) -> PlannedMember:
        return PlannedMember(self.pool.name, self.index, self.private_ip, self.az, self.subnet.tier, key_name,
                             self.pool.is_etcd, self.name)


def private_dns_name(ip: str, region: str) -> str:
    host = "ip-" + ip.replace(".", "-")
    domain = "ec2.internal" if region == "us-east-1" else f"{region}.compute.internal"
    return f"{host}.{domain}"


def node_range(cidr: str) -> ipaddress.IPv4Network:
    """The reserved node range of a subnet: its second quarter."""
    net = ipaddress.IPv4Network(cidr)
    quarter = net.num_addresses // 4
    return ipaddress.IPv4Network((int(net.network_address) + quarter, net.prefixlen + 2))


# Slots start a little into each block and end one short of it, so a block of at most 256 addresses (a subnet of
# /19 or smaller) gives no node an address ending in .0 or .255, which some firewalls and tools mistake for network
# or broadcast addresses. A larger block's later slots do cross them (ordinary host addresses in AWS).
FIRST_SLOT = 10


def block_size(cidr: str) -> int:
    return node_range(cidr).num_addresses // MAX_POOL_BLOCKS


def block_capacity(cidr: str) -> int:
    return max(block_size(cidr) - FIRST_SLOT - 1, 0)


def block_of(ip: str, cidr: str) -> int | None:
    """The pool block an address lies in, or None outside the node range."""
    addr, rng = ipaddress.IPv4Address(ip), node_range(cidr)
    if addr not in rng:
        return None
    return (int(addr) - int(rng.network_address)) // block_size(cidr)


@functools.lru_cache(maxsize=256)
def _slot_ips(cidr: str, block: int) -> tuple[str, ...]:
    """A block's node addresses in slot order (once per subnet and block: every node of a pool scans them)."""
    base = node_range(cidr).network_address + block * block_size(cidr)
    return tuple(str(base + FIRST_SLOT + k) for k in range(block_capacity(cidr)))


def _pool_blocks(cfg: StackConfig, previous: ClusterState | None, subnets: Sequence[PlannedSubnet],
                 problems: list[Diagnostic]) -> dict[str, int]:
    """Pool name -> block: kept from the last outputs, else `ipBlock`, else the lowest unused."""
    cidr_of = {(s.tier, s.az): s.cidr for s in subnets}
    before: dict[str, int] = {}
    for n in previous.nodes if previous else ():
        block = n.ip_block
        if block is None and (n.tier, n.availability_zone) in cidr_of:  # outputs of the first releases
            block = block_of(n.private_ip, cidr_of[(n.tier, n.availability_zone)])
        if block is not None:
            before.setdefault(n.pool, block)
    blocks: dict[str, int] = {}
    taken = set(before.values()) | {p.ip_block for p in cfg.node_pools if p.ip_block is not None and p.name not in before}
    for pool in cfg.node_pools:
        if pool.name in before:
            blocks[pool.name] = before[pool.name]
            if pool.ip_block is not None and pool.ip_block != before[pool.name]:
                problems.append(Diagnostic(f"nodePools[{pool.name}].ipBlock", f"{pool.ip_block}, but pool '{pool.name}' runs in "
                                           f"block {before[pool.name]}; a running pool keeps its addresses: set "
                                           f"{before[pool.name]} or remove ipBlock", "pool.block-changed",
                                           value=pool.ip_block))
        elif pool.ip_block is not None:
            owner = next((n for n, b in before.items() if b == pool.ip_block), None)
            if owner is not None:
                problems.append(Diagnostic(f"nodePools[{pool.name}].ipBlock", f"{pool.ip_block} holds pool '{owner}' (running); "
                                           "choose a free block or remove ipBlock", "pool.block-taken",
                                           value=pool.ip_block))
            blocks[pool.name] = pool.ip_block
        else:
            free = next((b for b in range(MAX_POOL_BLOCKS) if b not in taken), None)
            if free is None:
                problems.append(Diagnostic(f"nodePools[{pool.name}]", f"no free address block (0-{MAX_POOL_BLOCKS - 1} are used "
                                           "by running or configured pools); remove a pool first", "pool.no-block"))
                continue
            blocks[pool.name] = free
            taken.add(free)
    return blocks


def plan_nodes(cfg: StackConfig, subnets: Sequence[PlannedSubnet],
               previous: ClusterState | None = None) -> list[PlannedNode]:
    """Every node of every pool, in config order. Raises ConfigError listing every problem."""
    by_tier: dict[str, list[PlannedSubnet]] = {"public": [], "private": []}
    for s in sorted(subnets, key=lambda s: s.az_index):
        by_tier[s.tier].append(s)
    problems: list[Diagnostic] = []
    blocks = _pool_blocks(cfg, previous, subnets, problems)
    # Addresses of the last run are never handed to a new node in this update: a removed node's
    # address is freed only after its instance is gone. Nor are those of etcd members removed
    # earlier and maybe still listed: a server with the same name could not join (RKE2 refuses a
    # duplicate node name while etcd lists it).
    taken = ({n.private_ip for n in previous.nodes} | {m.private_ip for m in previous.etcd_members_removed}
             if previous else set())
    plans: list[PlannedNode] = []
    first_server_seen = False
    for pool in cfg.node_pools:
        if pool.name not in blocks:
            continue
        block = blocks[pool.name]
        tier_subnets = by_tier[pool.subnet]
        running = previous.pool_nodes(pool.name) if previous else {}
        placed: dict[int, tuple[PlannedSubnet, str]] = {}
        for j, old in sorted(running.items()):
            if j >= pool.count:
                continue  # explicitly removed: count lowered
            if old.tier != pool.subnet:
                problems.append(Diagnostic(f"nodePools[{pool.name}].subnet", f"'{pool.subnet}', but pool '{pool.name}' "
                                           f"runs in {old.tier} subnets; changing the tier would replace every node: "
                                           "add a new pool instead", "pool.tier-changed", value=pool.subnet))
                break
            here = next((s for s in tier_subnets if s.az == old.availability_zone), None)
            if here is None:
                # A pool's nodes go only from its highest index down (count lowered), or with the pool.
                problems.append(Diagnostic(
                    "network.availabilityZones", f"{old.availability_zone} is gone, but node {old.name} "
                    f"(pool '{pool.name}', index {j}) runs there, and a pool loses its "
                    f"highest-numbered nodes first: {old.name} goes only once nodePools[{pool.name}].count is "
                    f"{j} or less. Keep the zone until then: add a pool with the same roles if the cluster "
                    "needs the capacity (servers: one etcd member per update), lower this pool's count, "
                    "`pulumi up`, then remove the zone", "network.zone-still-used", value=old.availability_zone))
                continue
            if ipaddress.IPv4Address(old.private_ip) in ipaddress.IPv4Network(here.cidr):
                placed[j] = (here, old.private_ip)
        per_zone = Counter(s.az for s, _ in placed.values())
        used = taken | {ip for _, ip in placed.values()} | {p.private_ip for p in plans}
        for j in range(pool.count):
            if j in placed or not tier_subnets:
                continue
            # The zone where this pool has the fewest nodes (ties: the lowest zone index) ...
            for subnet in sorted(tier_subnets, key=lambda s: (per_zone[s.az], s.az_index)):
                # ... at its lowest free slot.
                ip = next((ip for ip in _slot_ips(subnet.cidr, block) if ip not in used), None)
                if ip is not None:
                    break
            if ip is None:
                capacity = min((block_capacity(s.cidr) for s in tier_subnets), default=0)
                per_az = -(-pool.count // len(tier_subnets))
                problems.append(Diagnostic(
                    f"nodePools[{pool.name}].count", f"{pool.count} nodes need {per_az} addresses per {pool.subnet} "
                    f"subnet, but a pool block there holds {capacity}; use fewer nodes per pool, more zones or larger "
                    "subnets", "pool.capacity", value=pool.count))
                break
            placed[j] = (subnet, ip)
            per_zone[subnet.az] += 1
            used.add(ip)
        if not tier_subnets and pool.count:
            problems.append(Diagnostic(f"nodePools[{pool.name}].subnet", f"no {pool.subnet} subnet to place the pool in",
                                       "pool.no-subnet", value=pool.subnet))
        for j in sorted(placed):
            subnet, ip = placed[j]
            # The initialising server must run etcd: a control-plane-only server cannot be the first
            # (rke2-docs install/server_roles.md).
            is_first = cfg.distribution == "rke2" and pool.is_etcd and not first_server_seen
            first_server_seen = first_server_seen or is_first
            plans.append(PlannedNode(
                pool=pool, index=j, resource_name=f"{pool.name}-{j}", private_ip=ip, name=private_dns_name(ip, cfg.region),
                az=subnet.az, az_index=subnet.az_index, subnet=subnet, is_first_server=is_first, ip_block=block,
                rke2=cfg.distribution == "rke2",
            ))
    if problems:
        raise ConfigError(problems)
    return plans


# ---- the planner's nodes step: placement, what boots, and what running nodes keep ---------------------

@dataclass(frozen=True)
class Machines:
    """Every planned node, and the ones this update launches (new, or replaced)."""
    nodes: tuple[PlannedNode, ...]
    booting: tuple[PlannedNode, ...]

    def members(self, key_name: str | None) -> list[PlannedMember]:
        return [n.member(key_name) for n in self.nodes]


def plan(cfg: StackConfig, previous: ClusterState | None, topology: Topology) -> Machines:
    """Placement (plan_nodes) and what boots; refuses (ConfigError) what cannot be placed."""
    nodes = plan_nodes(cfg, topology.subnets, previous)
    return Machines(tuple(nodes), tuple(booting_nodes(cfg, previous, nodes)))


def booting_nodes(cfg: StackConfig, previous: ClusterState | None, nodes: Sequence[PlannedNode]) -> list[PlannedNode]:
    """The instances this update launches: new ones, and running ones replaced because their address,
    zone, tier or key pair changes (privateIp, subnetId, keyName force a new instance:
    terraform-provider-aws internal/service/ec2/ec2_instance.go, ForceNew on each). Only these call
    RunInstances, so only these need the key pair, the image and the zone's offering."""
    if previous is None:
        return list(nodes)
    member = {n.key: (n.private_ip, n.availability_zone, n.tier, n.key_name) for n in previous.nodes}
    return [n for n in nodes if (n.pool.name, n.index) not in member
            or member[(n.pool.name, n.index)] != (n.private_ip, n.az, n.subnet.tier, cfg.access.ssh_key_name)]


def role_problems(previous: ClusterState | None, pools: Sequence[Any]) -> list[Diagnostic]:
    """A running node keeps the roles it booted with (user data is read at first boot only), so a
    pool whose roles change would be counted, routed and guarded by roles its nodes do not have."""
    if previous is None:
        return []
    problems = []
    for pool in pools:
        kept = [n for j, n in previous.pool_nodes(pool.name).items() if j < pool.count]
        was = sorted({r for n in kept for r in n.roles})
        if kept and was != sorted(pool.roles):
            problems.append(Diagnostic(
                f"nodePools[{pool.name}].roles", f"{sorted(pool.roles)}, but pool '{pool.name}' runs {len(kept)} node(s) as "
                f"{was}, and a running node keeps the roles it booted with: set the roles back. Nodes with other roles "
                "are a new pool: add one, and lower this pool's count (one etcd member per update)",
                "pool.roles-changed", value=list(pool.roles)))
    return problems


def market_problems(previous: ClusterState | None, pools: Sequence[Any]) -> list[Diagnostic]:
    """Every instance_market_options field forces a new instance (terraform-provider-aws
    internal/service/ec2/ec2_instance.go, ForceNew on each), and Pulumi replaces a pool's instances
    together: switching a running pool's market would replace all its nodes at once."""
    if previous is None:
        return []
    problems = []
    for pool in pools:
        kept = [n for j, n in previous.pool_nodes(pool.name).items() if j < pool.count]
        was = sorted({n.market for n in kept})
        if kept and was != [pool.market]:
            problems.append(Diagnostic(
                f"nodePools[{pool.name}].market", f"'{pool.market}', but pool '{pool.name}' runs {len(kept)} node(s) as "
                f"{'/'.join(was)}, and AWS cannot change an instance's market: the change would replace every node "
                "of the pool at once. Set it back; for the other market add a new pool, then lower this one's count",
                "pool.market-changed", value=pool.market))
    return problems


def os_problems(previous: ClusterState | None, distribution: str, pools: Sequence[Any]) -> list[Diagnostic]:
    """RKE1: a running pool keeps its `os`. The instance ignores a new image (nodes.IGNORED_ON_UPDATE), so its
    nodes would keep running the old OS while cluster.yml named the new OS's login user for them, and `rke up`
    could no longer log in; and `rke-aws rotate` replaces RKE2 nodes only (components/ops/rotate/). RKE2
    pools may change it: their nodes are stale (image, boot digest: plan/stale.py) until rotation replaces
    them one at a time."""
    if previous is None or distribution != "rke":
        return []
    problems = []
    for i, pool in enumerate(pools):
        kept = [n for j, n in previous.pool_nodes(pool.name).items() if j < pool.count]
        was = sorted({n.os or DEFAULT_OS for n in kept})
        if kept and was != [pool.os]:
            problems.append(Diagnostic(
                f"nodePools[{i}].os", f"'{pool.os}', but RKE1 pool '{pool.name}' runs {len(kept)} node(s) on "
                f"{'/'.join(was)}: running instances keep their image, `rke up` would log in to them as another OS's "
                "user, and rotation replaces RKE2 nodes only. Set it back; for another OS add a new pool, run `rke up`, "
                "then lower this one's count", "pool.os-changed", value=pool.os))
    return problems


def instance_type_warnings(cfg: StackConfig, previous: ClusterState | None,
                           nodes: Sequence[PlannedNode]) -> tuple[Diagnostic, ...]:
    """Running nodes keep their instance type (nodes.IGNORED_ON_UPDATE): say which servers and spot workers
    differ from their pool, why a type never changes in place there, and how to roll them, on every update
    until they are replaced (every stale node, agents included, also gets a `stale:` note: plan/stale.py)."""
    if previous is None:
        return ()
    before = {n.key: n for n in previous.nodes}
    out = []
    for pool in cfg.node_pools:
        if not (pool.is_server or pool.is_spot):
            continue
        running_nodes = [before.get((pool.name, n.index)) for n in nodes if n.pool.name == pool.name]
        stale = [(r.name, r.instance_type) for r in running_nodes
                 if r is not None and r.instance_type not in (None, pool.instance_type)]
        if stale:
            names = ", ".join(f"{name} ({old})" for name, old in stale)
            why = ("EC2 changes it by stopping the instance, and one update would stop every server of the pool "
                   "together (etcd quorum, the API)" if pool.is_server else
                   "EC2 cannot change a spot instance's type (a stopped spot instance keeps it), so the new type "
                   "would replace the node, and one update would replace every spot node of the pool at once")
            out.append(Diagnostic(
                f"nodePools[{pool.name}].instanceType", f"{pool.instance_type}, but the running {names} keep their type: {why}. "
                f"Replace them one at a time: `rke-aws rotate <stack>` (`python3 -m offline.tasks rotate <stack>` in "
                f"rke-aws' repository; docs/operations/rotate.md, 'Patching nodes by rotation'; by hand `pulumi up "
                f"--replace <urn>`, docs/operations/replace-node.md, 'Replacing a node'); nodes created from now on are {pool.instance_type}", "pool.type-kept", Severity.WARNING,
                value=pool.instance_type))
    return tuple(out)


def hardening_warnings(cfg: StackConfig, previous: ClusterState | None) -> tuple[Diagnostic, ...]:
    """Node configuration is read at first boot only: a changed profile reaches new nodes only."""
    before = previous.hardening if previous else None
    if previous is None or before is None or before == cfg.hardening or not previous.nodes:
        return ()
    return (Diagnostic("hardening", f"{before} -> {cfg.hardening} applies to nodes as they first boot; the running "
                       f"{len(previous.nodes)} keep '{before}' until replaced (servers one at a time, then agents: "
                       "docs/operations/replace-node.md, 'Replacing a node'); until then the cluster mixes both",
                       "hardening.first-boot", Severity.WARNING, value=cfg.hardening),)
