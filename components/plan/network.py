"""Deterministic subnet layout derived from the VPC CIDR.

The VPC is cut into 16 equal slots (four more prefix bits). The private subnet of the zone with
index i takes slot i, the public one slot 8 + i. A zone keeps its index for the life of the stack
(from the cluster's last state, components/state); a zone seen for the first time takes the
lowest index no zone used before. So adding, removing or reordering zones never renumbers, and so
never replaces, an existing subnet.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..diagnostics import ConfigError, Diagnostic, Severity
from ..settings.fields import CLUSTER_NETWORKS
from ..settings.resolve import ClusterConfig as StackConfig
from ..state.model import ClusterState
from .environment import Environment
from .lookups import LookupFailed, looked_up

SUBNET_NEWBITS = 4  # 16 slots: up to 8 zone indices per tier
PUBLIC_SLOT_OFFSET = 8
MAX_ZONE_INDEX = PUBLIC_SLOT_OFFSET - 1


@dataclass(frozen=True)
class PlannedSubnet:
    tier: str  # "public" | "private"
    az_index: int
    az: str
    cidr: str

    @property
    def key(self) -> str:
        return f"{self.tier}-{self.az_index}"


def default_subnet_cidr(vpc_cidr: str, tier: str, az_index: int) -> str:
    vpc = ipaddress.IPv4Network(vpc_cidr)
    slot = az_index + (PUBLIC_SLOT_OFFSET if tier == "public" else 0)
    size = vpc.num_addresses >> SUBNET_NEWBITS
    base = int(vpc.network_address) + slot * size
    return str(ipaddress.IPv4Network((base, vpc.prefixlen + SUBNET_NEWBITS)))


def zone_indices(azs: Sequence[str], previous: Mapping[str, str] | None = None) -> dict[str, int]:
    """Zone -> index. `previous`: subnet key ("private-1") -> zone, from the last outputs.

    Zones that had subnets keep their index; new zones take, in the order given, the lowest index
    that no zone had before (an index freed in this very update is not reused until the next one,
    because the old subnet is deleted only after the new one would be created).
    """
    before: dict[str, int] = {}
    for key, az in (previous or {}).items():
        before.setdefault(az, int(key.rsplit("-", 1)[1]))
    used = set(before.values())
    out: dict[str, int] = {}
    for az in azs:
        if az in before:
            out[az] = before[az]
            continue
        free = next(i for i in range(MAX_ZONE_INDEX + 2) if i not in used)
        if free > MAX_ZONE_INDEX:
            raise ValueError(f"no free subnet slot for zone {az}: indices 0-{MAX_ZONE_INDEX} are taken by {sorted(used)}")
        out[az] = free
        used.add(free)
    return out


def plan_subnets(vpc_cidr: str, azs: list[str], public: tuple[str, ...] | None = None,
                 private: tuple[str, ...] | None = None,
                 previous: Mapping[str, str] | None = None) -> list[PlannedSubnet]:
    """Explicit CIDR lists are one per zone in the order `azs` lists the zones."""
    index = zone_indices(azs, previous)
    plans = []
    for tier, explicit in (("public", public), ("private", private)):
        for pos, az in enumerate(azs):
            cidr = explicit[pos] if explicit else default_subnet_cidr(vpc_cidr, tier, index[az])
            plans.append(PlannedSubnet(tier, index[az], az, cidr))
    return plans


class _Placed(Protocol):
    """A planned node, as the network checks see it (plan/nodes.py PlannedNode)."""
    @property
    def private_ip(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def subnet(self) -> PlannedSubnet: ...


# ---- the planner's network step: zones and subnets, and what a brought network must offer ------------

@dataclass(frozen=True)
class Topology:
    """Where the nodes go: the zones (in subnet order), the subnets, and for a brought network each of its
    subnets as looked up (by subnet key)."""
    azs: tuple[str, ...]
    subnets: tuple[PlannedSubnet, ...]
    found: Mapping[str, Any] = field(default_factory=dict)

    @property
    def brought(self) -> bool:
        return bool(self.found)


def plan(cfg: StackConfig, previous: ClusterState | None, env: Environment) -> Topology:
    """The zones and subnets; a brought network's subnets looked up and checked. Refuses (ConfigError)."""
    if cfg.network.bring_your_own:
        _available_zones(cfg, env, regular_only=False)  # the first call to AWS: an unknown region shows here
        subnets, found = _existing_subnets(cfg, env)
        return Topology(tuple(s.az for s in subnets if s.tier == "private"), tuple(subnets), found)
    azs = _zones(cfg, env)
    assert cfg.network.vpc_cidr is not None  # unset only for a brought VPC (config.py)
    try:
        planned = plan_subnets(cfg.network.vpc_cidr, azs, cfg.network.public_subnet_cidrs,
                               cfg.network.private_subnet_cidrs, previous.subnet_zones if previous else None)
    except ValueError as err:
        raise ConfigError([Diagnostic("network.availabilityZones", str(err), "network.no-subnet-slot")]) from None
    if cfg.airgap is not None:
        # airgap: no way to the internet, so no public subnets (settings/rules/registry.py refuses public pools)
        planned = [p for p in planned if p.tier != "public"]
    return Topology(tuple(azs), tuple(planned))


def _available_zones(cfg: StackConfig, env: Environment, regular_only: bool) -> list[str]:
    """The region's available zones: the first call to AWS, so an unknown region surfaces here, named as such."""
    return looked_up("aws:region", f"looking up the availability zones of '{cfg.region}'",
                     "check aws:region (a region of this account, like us-west-2)",
                     lambda: env.lookups.zones(regular_only), env.offline)


def _zones(cfg: StackConfig, env: Environment) -> list[str]:
    explicit = cfg.network.availability_zones
    found = _available_zones(cfg, env, regular_only=not explicit)
    if explicit:
        missing = [z for z in explicit if z not in found]
        if missing:
            raise ConfigError([Diagnostic(
                "network.availabilityZones", f"{', '.join(repr(z) for z in missing)} not available in {cfg.region}; "
                f"available: {', '.join(sorted(found))}", "network.zone-unavailable", value=list(explicit))])
        return list(explicit)
    if len(found) < cfg.network.az_count:
        raise ConfigError([Diagnostic(
            "network.availabilityZones", f"{cfg.network.az_count} zones asked for, but {cfg.region} offers "
            f"{len(found)} ({', '.join(found)}); use at most {len(found)}", "network.too-few-zones",
            value=cfg.network.az_count)])
    return sorted(found)[: cfg.network.az_count]


HOSTNAME_FIX = "aws ec2 modify-subnet-attribute --subnet-id {sid} --private-dns-hostname-type-on-launch ip-name"


def _existing_subnets(cfg: StackConfig, env: Environment) -> tuple[list[PlannedSubnet], dict[str, Any]]:
    """Bring-your-own subnets as SubnetPlans (keys follow the lists' order), and what was looked up."""
    plans: list[PlannedSubnet] = []
    found_by_key: dict[str, Any] = {}
    problems: list[Diagnostic] = []
    zones: dict[str, dict[int, str]] = {"public": {}, "private": {}}
    for tier, ids in (("public", cfg.network.public_subnet_ids), ("private", cfg.network.private_subnet_ids)):
        for i, sid in enumerate(ids or ()):
            key = f"network.{tier}SubnetIds[{i}]"
            found = looked_up(key, f"looking up subnet '{sid}' in {cfg.region}",
                              "list subnets that exist in this region and account",
                              lambda sid=sid: env.lookups.subnet(sid), env.offline)  # type: ignore[misc]
            if found.vpc_id != cfg.network.vpc_id:
                problems.append(Diagnostic(key, f"'{sid}' is in {found.vpc_id}, not {cfg.network.vpc_id}; list "
                                           "subnets of that VPC", "network.subnet-other-vpc", value=sid))
            if found.availability_zone in zones[tier].values():
                other = next(j for j, z in zones[tier].items() if z == found.availability_zone)
                problems.append(Diagnostic(key, f"'{sid}' is in {found.availability_zone} like {tier}SubnetIds[{other}]; "
                                           f"give one {tier} subnet per zone", "network.subnet-zone-twice", value=sid))
            if (found.private_dns_hostname_type_on_launch or "ip-name") != "ip-name":
                # resource-name hostnames make node names i-....compute.internal: the CCM finds no instance.
                problems.append(Diagnostic(
                    key, f"'{sid}' launches instances with {found.private_dns_hostname_type_on_launch} hostnames, so "
                    "node names would not be ip-... private DNS names; set it to ip-name: " + HOSTNAME_FIX.format(sid=sid),
                    "network.subnet-hostnames", value=sid))
            zones[tier][i] = found.availability_zone
            plans.append(PlannedSubnet(tier, i, found.availability_zone, found.cidr_block))
            found_by_key[f"{tier}-{i}"] = found
    for i, az in zones["private"].items():
        if zones["public"].get(i) not in (None, az):
            problems.append(Diagnostic(
                f"network.privateSubnetIds[{i}]", f"in {az} but publicSubnetIds[{i}] is in {zones['public'][i]}; list "
                "both in the same zone order", "network.subnet-zone-order"))
    explicit = cfg.network.availability_zones
    if explicit and list(zones["private"].values()) != list(explicit):
        problems.append(Diagnostic(
            "network.availabilityZones", f"{list(explicit)}, but the private subnets are in "
            f"{list(zones['private'].values())}; list the zones in the subnets' order, or leave them out",
            "network.zones-not-subnets", value=list(explicit)))
    if problems:
        raise ConfigError(problems)
    return plans, found_by_key


def _route_table(cfg: StackConfig, env: Environment, key: str, sid: str) -> Any:
    """The subnet's route table: its own association, else the VPC's main table."""
    try:
        return env.lookups.subnet_route_table(sid)
    except LookupFailed:  # no explicit association: the main table applies
        assert cfg.network.vpc_id is not None
        vpc_id = cfg.network.vpc_id
        return looked_up(key, f"looking up the route table of '{sid}'", "check the VPC's route tables",
                         lambda: env.lookups.main_route_table(vpc_id), env.offline)


def _default_route(table: Any) -> Any:
    return next((r for r in table.routes or [] if r.cidr_block == "0.0.0.0/0"), None)


def check_brought(cfg: StackConfig, topology: Topology, nodes: Sequence[_Placed],
                  previous: ClusterState | None, env: Environment) -> list[Diagnostic]:
    """What a bring-your-own VPC must offer the nodes and the CCM, checked with look-ups; each
    problem names the key, the subnet and the fix."""
    if not topology.brought:
        return []
    found = topology.found
    problems: list[Diagnostic] = []
    vpc_id = cfg.network.vpc_id
    assert vpc_id is not None
    vpc = looked_up("network.vpcId", f"looking up '{vpc_id}'", "check the VPC ID", lambda: env.lookups.vpc(vpc_id),
                    env.offline)
    for flag, attribute in (("enable_dns_support", "enable-dns-support"), ("enable_dns_hostnames", "enable-dns-hostnames")):
        if not getattr(vpc, flag):
            problems.append(Diagnostic(
                "network.vpcId", f"'{vpc_id}' has {attribute} off; node names are EC2 private DNS names and need it: "
                f"aws ec2 modify-vpc-attribute --vpc-id {vpc_id} --{attribute}", "network.vpc-dns", value=vpc_id))
    for planned in topology.subnets:
        sid = found[planned.key].id
        key = f"network.{planned.tier}SubnetIds[{planned.az_index}]"
        route = _default_route(_route_table(cfg, env, key, sid))
        if planned.tier == "public" and not (route and (route.gateway_id or "").startswith("igw-")):
            problems.append(Diagnostic(
                key, f"'{sid}' has no route to an internet gateway, so it is not public (the CCM puts internet-facing "
                "load balancers there); list a public subnet or add 0.0.0.0/0 via an igw-", "network.public-no-igw",
                value=sid))
        if planned.tier == "private" and cfg.airgap is None and not (route and (route.nat_gateway_id or route.transit_gateway_id or
                                                          route.network_interface_id or route.instance_id)):
            problems.append(Diagnostic(
                key, f"'{sid}' has no default route (NAT gateway, transit gateway or appliance); its nodes download "
                "RKE2/Docker at boot and call SSM: add 0.0.0.0/0 via a NAT gateway", "network.private-no-route",
                value=sid))
    # New nodes' planned addresses must be free (no reservation protects them in subnets not ours).
    running = {n.private_ip for n in previous.nodes} if previous else set()
    for planned in topology.subnets:
        names = {n.private_ip: n.name for n in nodes if n.subnet.key == planned.key and n.private_ip not in running}
        wanted = sorted(names)
        if not wanted:
            continue
        sid = found[planned.key].id
        key = f"network.{planned.tier}SubnetIds[{planned.az_index}]"
        used = _interfaces(env, key, sid, wanted)
        theirs = wanted
        if used.ids:
            # An update that failed after creating instances leaves the stack's outputs as they were
            # after the last successful one (pulumi/pulumi pkg/resource/deploy/step_executor.go keeps
            # the old outputs on error), while those instances run: an instance of this cluster named
            # as the planned node holds its address because it is that node.
            theirs = [ip for ip in wanted if not _own_node_holds(cfg, env, key, ip, names[ip])]
            used = _interfaces(env, key, sid, theirs) if theirs else None
        if used is not None and used.ids:
            problems.append(Diagnostic(
                key, f"planned node addresses in '{sid}' ({', '.join(theirs)}) are taken by {', '.join(sorted(used.ids))}; "
                "give the pools there another ipBlock", "network.addresses-taken", value=sid))
    return problems


def _interfaces(env: Environment, key: str, sid: str, addresses: list[str]) -> Any:
    return looked_up(key, f"looking up network interfaces in '{sid}'", "check the subnet",
                     lambda: env.lookups.network_interfaces(sid, addresses), env.offline)


def _own_node_holds(cfg: StackConfig, env: Environment, key: str, ip: str, name: str) -> bool:
    found = looked_up(key, f"looking up the instance holding {ip}", "check the subnet",
                      lambda: env.lookups.instances(
                          [{"name": "private-ip-address", "values": [ip]},
                           {"name": f"tag:{cfg.cluster_tag_key}", "values": ["owned"]},
                           {"name": "tag:Name", "values": [name]}],
                          ["pending", "running", "stopping", "stopped"]), env.offline)
    return bool(found.ids)


def airgap_change_problems(cfg: StackConfig, previous: ClusterState | None) -> list[Diagnostic]:
    """`airgap` set on a running cluster that was built online: its network has public subnets (the state's
    public-N keys), an internet gateway and NAT gateways, which an air-gapped network does not build, so the
    update would delete them, and the running nodes (booted to install and pull online) would lose their way
    out. Refused: an air-gapped cluster starts as a new stack."""
    if previous is None or not previous.nodes or cfg.airgap is None or cfg.network.bring_your_own:
        return []
    public = sorted(k for k in previous.subnet_zones if k.startswith("public-"))
    if not public:
        return []
    return [Diagnostic(
        "airgap", f"set on a running cluster built online: its network has public subnets ({', '.join(public)}), an "
        "internet gateway and NAT, which an air-gapped network does not have, so this update would delete them while "
        "the running nodes still install and pull online. Remove airgap; an air-gapped cluster is a new stack: create "
        "one with airgap, restore an etcd snapshot there (docs/operations/restore-snapshot.md, 'Restoring a snapshot "
        "onto new servers') and move the workloads", "airgap.running-online", value="set")]


def cluster_network_problems(cfg: StackConfig, topology: Topology) -> list[Diagnostic]:
    """Bring-your-own subnets (looked up) must stay clear of the cluster's pod and service networks,
    as network.vpcCidr and the subnet CIDRs this program creates must (config.py)."""
    if not topology.brought:
        return []
    problems = []
    for planned in topology.subnets:
        net = ipaddress.ip_network(planned.cidr)
        for cluster_net in map(ipaddress.ip_network, CLUSTER_NETWORKS):
            if net.overlaps(cluster_net):
                problems.append(Diagnostic(
                    f"network.{planned.tier}SubnetIds[{planned.az_index}]", f"the subnet's {planned.cidr} overlaps "
                    f"{cluster_net}, the cluster's pod or service network (RKE2 and RKE1 default): its nodes would "
                    "send traffic for those addresses into the cluster; use subnets outside "
                    f"{' and '.join(CLUSTER_NETWORKS)}", "network.overlaps-cluster", value=planned.cidr))
    return problems


def vpc_cidrs(cfg: StackConfig, env: Environment) -> tuple[str, ...]:
    """The VPC's IPv4 CIDR blocks, for NO_PROXY: the configured one, or a brought VPC's primary and
    associated blocks (looked up only when a proxy is configured)."""
    if cfg.proxy is None:
        return ()
    if not cfg.network.bring_your_own:
        return (cfg.network.vpc_cidr,) if cfg.network.vpc_cidr else ()
    vpc_id = cfg.network.vpc_id
    assert vpc_id is not None
    vpc = looked_up("network.vpcId", f"looking up the CIDR blocks of '{vpc_id}' for proxy.noProxy",
                    "check the VPC ID", lambda: env.lookups.vpc(vpc_id), env.offline)
    blocks = [vpc.cidr_block] + [a.cidr_block for a in (vpc.cidr_block_associations or [])
                                 if getattr(a, "state", "associated") in (None, "associated")]
    return tuple(dict.fromkeys(b for b in blocks if b))


def endpoint_warnings(cfg: StackConfig, previous: ClusterState | None, topology: Topology) -> tuple[Diagnostic, ...]:
    """A Network Load Balancer cannot lose a subnet: the provider replaces it (terraform-provider-aws
    internal/service/elbv2/load_balancer.go customizeDiffLoadBalancerNLB: ForceNew when subnets are
    removed or swapped, in place when only added). It keeps its fixed name, so it is replaced
    delete-first (endpoint.py); say what that means while it happens."""
    if cfg.endpoint != "nlb" or previous is None or not previous.nodes or previous.control_plane_endpoint_type == "dns":
        return ()
    private = [s for s in topology.subnets if s.tier == "private"]
    if cfg.network.bring_your_own:
        before = {v for k, v in previous.known_subnet_ids.items() if k.startswith("private-")}
        now = {topology.found[s.key].id for s in private if s.key in topology.found}
    else:
        before = {k for k in previous.subnet_zones if k.startswith("private-")}
        now = {s.key for s in private}
    lost = sorted(before - now)
    if not before or not lost:
        return ()
    return (Diagnostic(
        "network", f"the control-plane load balancer leaves subnet(s) {', '.join(lost)}; AWS cannot remove a subnet "
        "from a Network Load Balancer, so it is replaced: deleted first and created again under its name, with new "
        "addresses behind the same endpoint name. For those few minutes the endpoint does not answer: kubectl and "
        "nodes joining wait, running nodes keep talking to the servers directly", "endpoint.nlb-replaced",
        Severity.WARNING),)
