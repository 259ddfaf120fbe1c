"""Plan-time node identities: address, AZ and Kubernetes node name of every node.

The CCM links a Node to its instance by name before the node has a providerID, so the node
name must equal the instance's EC2 private DNS name. AWS derives that name from the private
IP, so this program chooses each node's IP itself; the name is then known at preview time and
shows up in `pulumi preview`, cluster.yml and the RKE2 configs.

Address layout inside each subnet of size S: offsets [S/4, S/2) form the node range, reserved
with an explicit subnet CIDR reservation so AWS never hands those addresses to NAT gateways or
load balancer interfaces. The range is cut into MAX_POOL_BLOCKS equal blocks; each pool owns one.

Placement is stable (components/plan/history.py gives the stack's last outputs):
- a running node keeps its zone, subnet and address; only new nodes are placed, and only nodes
  removed from the config (count lowered, pool removed) go away;
- a pool keeps its block; a new pool takes its `ipBlock`, or the lowest block no pool used before;
- a new node goes to the zone where its pool has the fewest nodes (ties: lowest zone index), at
  the lowest free slot of its pool's block there. On a new stack this is node j -> zone j mod #zones,
  slot FIRST_SLOT + j div #zones.
So adding a zone, adding or inserting a pool anywhere, or reordering pools moves nobody.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass

from ..settings.fields import MAX_POOL_BLOCKS
from ..settings.resolve import ClusterConfig as StackConfig
from ..settings.resolve import PoolConfig as NodePool
from .history import PlannedMember, Previous
from .network import PlannedSubnet


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


class CapacityError(Exception):
    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


def private_dns_name(ip: str, region: str) -> str:
    host = "ip-" + ip.replace(".", "-")
    domain = "ec2.internal" if region == "us-east-1" else f"{region}.compute.internal"
    return f"{host}.{domain}"


def node_range(cidr: str) -> ipaddress.IPv4Network:
    """The reserved node range of a subnet: its second quarter."""
    net = ipaddress.IPv4Network(cidr)
    quarter = net.num_addresses // 4
    return ipaddress.IPv4Network((int(net.network_address) + quarter, net.prefixlen + 2))


# Slots start a little into each block so no node gets an address ending in .0 or .255, which
# some firewalls and tools mistake for network or broadcast addresses.
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


def _slot_ips(subnet: PlannedSubnet, block: int) -> list[str]:
    base = node_range(subnet.cidr).network_address + block * block_size(subnet.cidr)
    return [str(base + FIRST_SLOT + k) for k in range(block_capacity(subnet.cidr))]


def _pool_blocks(cfg: StackConfig, previous: Previous | None, subnets: list[PlannedSubnet],
                 problems: list[str]) -> dict[str, int]:
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
    for i, pool in enumerate(cfg.node_pools):
        if pool.name in before:
            blocks[pool.name] = before[pool.name]
            if pool.ip_block is not None and pool.ip_block != before[pool.name]:
                problems.append(f"rke-aws:nodePools[{i}].ipBlock: {pool.ip_block}, but pool '{pool.name}' runs in block "
                                f"{before[pool.name]}; a running pool keeps its addresses: set {before[pool.name]} or remove ipBlock")
        elif pool.ip_block is not None:
            owner = next((n for n, b in before.items() if b == pool.ip_block), None)
            if owner is not None:
                problems.append(f"rke-aws:nodePools[{i}].ipBlock: {pool.ip_block} holds pool '{owner}' (running); "
                                "choose a free block or remove ipBlock")
            blocks[pool.name] = pool.ip_block
        else:
            free = next((b for b in range(MAX_POOL_BLOCKS) if b not in taken), None)
            if free is None:
                problems.append(f"rke-aws:nodePools[{i}]: no free address block (0-{MAX_POOL_BLOCKS - 1} are used by "
                                "running or configured pools); remove a pool first")
                continue
            blocks[pool.name] = free
            taken.add(free)
    return blocks


def plan_nodes(cfg: StackConfig, subnets: list[PlannedSubnet], previous: Previous | None = None) -> list[PlannedNode]:
    """Every node of every pool, in config order. Raises CapacityError listing every problem."""
    by_tier: dict[str, list[PlannedSubnet]] = {"public": [], "private": []}
    for s in sorted(subnets, key=lambda s: s.az_index):
        by_tier[s.tier].append(s)
    problems: list[str] = []
    blocks = _pool_blocks(cfg, previous, subnets, problems)
    # Addresses of the last run are never handed to a new node in this update: a removed node's
    # address is freed only after its instance is gone. Nor are those of etcd members removed
    # earlier and maybe still listed: a server with the same name could not join (RKE2 refuses a
    # duplicate node name while etcd lists it).
    taken = ({n.private_ip for n in previous.nodes} | {m.private_ip for m in previous.etcd_removed}) if previous else set()
    plans: list[PlannedNode] = []
    first_server_seen = False
    for pool_index, pool in enumerate(cfg.node_pools):
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
                problems.append(f"rke-aws:nodePools[{pool_index}].subnet: '{pool.subnet}', but pool '{pool.name}' runs in "
                                f"{old.tier} subnets; changing the tier would replace every node: add a new pool instead")
                break
            here = next((s for s in tier_subnets if s.az == old.availability_zone), None)
            if here is None:
                # A pool's nodes go only from its highest index down (count lowered), or with the pool.
                problems.append(f"rke-aws:network.availabilityZones: {old.availability_zone} is gone, but node {old.name} "
                                f"(nodePools[{pool_index}] '{pool.name}', index {j}) runs there, and a pool loses its "
                                f"highest-numbered nodes first: {old.name} goes only once nodePools[{pool_index}].count is "
                                f"{j} or less. Keep the zone until then: add a pool with the same roles if the cluster "
                                "needs the capacity (servers: one etcd member per update), lower this pool's count, "
                                "`pulumi up`, then remove the zone")
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
                ip = next((ip for ip in _slot_ips(subnet, block) if ip not in used), None)
                if ip is not None:
                    break
            if ip is None:
                capacity = min((block_capacity(s.cidr) for s in tier_subnets), default=0)
                per_az = -(-pool.count // len(tier_subnets))
                problems.append(
                    f"rke-aws:nodePools[{pool_index}].count: {pool.count} nodes need {per_az} addresses per {pool.subnet} subnet, "
                    f"but a pool block there holds {capacity}; use fewer nodes per pool, more zones or larger subnets"
                )
                break
            placed[j] = (subnet, ip)
            per_zone[subnet.az] += 1
            used.add(ip)
        if not tier_subnets and pool.count:
            problems.append(f"rke-aws:nodePools[{pool_index}].subnet: no {pool.subnet} subnet to place the pool in")
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
        raise CapacityError(problems)
    return plans
