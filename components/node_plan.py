"""Plan-time node identities: address, AZ and Kubernetes node name of every node.

The CCM links a Node to its instance by name before the node has a providerID, so the node
name must equal the instance's EC2 private DNS name. AWS derives that name from the private
IP, so this program chooses each node's IP itself; the name is then known at preview time and
shows up in `pulumi preview`, cluster.yml and the RKE2 configs.

Address layout inside each subnet of size S: offsets [S/4, S/2) form the node range, reserved
with an explicit subnet CIDR reservation so AWS never hands those addresses to NAT gateways or
load balancer interfaces. The range is cut into MAX_POOL_BLOCKS equal blocks; a pool owns block
`ipBlock` (default: its position in `nodePools`). Node j of a pool sits in AZ j mod #AZs at slot
FIRST_SLOT + j div #AZs of its block. So a node's address depends only on its pool's block, its own index and
the AZ count: adding nodes at the end of a pool, or pools at the end of the list, moves nobody.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from .config import MAX_POOL_BLOCKS, NodePool, StackConfig
from .network_plan import SubnetPlan


@dataclass(frozen=True)
class NodePlan:
    pool: NodePool
    index: int
    resource_name: str
    private_ip: str
    name: str  # Kubernetes node name == EC2 private DNS name == OS hostname
    az: str
    az_index: int
    subnet: SubnetPlan
    is_first_server: bool

    @property
    def roles(self) -> tuple[str, ...]:
        return self.pool.roles

    @property
    def iam_role(self) -> str:
        """Nodes with controlplane use the controlplane role; etcd-only and workers the worker role."""
        return "controlplane" if self.pool.is_controlplane else "worker"

    @property
    def public(self) -> bool:
        return self.subnet.tier == "public"


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


def plan_nodes(cfg: StackConfig, subnets: list[SubnetPlan]) -> list[NodePlan]:
    """Every node of every pool, in config order. Raises CapacityError when a pool does not fit."""
    by_tier: dict[str, list[SubnetPlan]] = {"public": [], "private": []}
    for s in sorted(subnets, key=lambda s: s.az_index):
        by_tier[s.tier].append(s)
    plans: list[NodePlan] = []
    problems: list[str] = []
    first_server_seen = False
    for pool_index, pool in enumerate(cfg.node_pools):
        tier_subnets = by_tier[pool.subnet]
        n_az = len(tier_subnets)
        per_az = -(-pool.count // n_az) if n_az else 0
        capacity = min((block_capacity(s.cidr) for s in tier_subnets), default=0)
        if per_az > capacity:
            problems.append(
                f"rke-aws:nodePools[{pool_index}].count: {pool.count} nodes need {per_az} addresses per {pool.subnet} subnet, "
                f"but a pool block there holds {capacity}; use fewer nodes per pool, more zones or larger subnets"
            )
            continue
        for j in range(pool.count):
            subnet = tier_subnets[j % n_az]
            base = node_range(subnet.cidr).network_address
            ip = str(base + pool.ip_block * block_size(subnet.cidr) + FIRST_SLOT + j // n_az)
            is_first = cfg.distribution == "rke2" and pool.is_server and not first_server_seen
            first_server_seen = first_server_seen or is_first
            plans.append(
                NodePlan(
                    pool=pool,
                    index=j,
                    resource_name=f"{pool.name}-{j}",
                    private_ip=ip,
                    name=private_dns_name(ip, cfg.region),
                    az=subnet.az,
                    az_index=subnet.az_index,
                    subnet=subnet,
                    is_first_server=is_first,
                )
            )
    if problems:
        raise CapacityError(problems)
    return plans
