"""access: admin CIDRs canonical, listed once, not the internet without consent, and within the node security
group's rule quota."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from ...diagnostics import Diagnostic
from ..fields import CCM_RULE_HEADROOM, SG_INBOUND_RULE_QUOTA, WORLD_ADMIN_DESCRIPTION, WORLD_ADMIN_PUBLIC_ADDRESSES
from .base import Context, Keys, error, warning
from .network import canonical_cidr

# Address space nobody on the internet sends from (IANA special-purpose registry, "globally
# reachable: false"): admin CIDRs there do not count towards the world-admin threshold.
NOT_PUBLIC = tuple(ipaddress.IPv4Network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
    "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3"))
WORLD_TEXT = (f"more than {WORLD_ADMIN_DESCRIPTION} ({WORLD_ADMIN_PUBLIC_ADDRESSES:,}): that is the "
              "internet, not your networks")


def public_addresses(nets: Iterable[ipaddress.IPv4Network]) -> int:
    """How many public addresses the union of `nets` covers (overlaps counted once)."""
    union = list(ipaddress.collapse_addresses(nets))
    total = sum(n.num_addresses for n in union)
    private = list(ipaddress.collapse_addresses(NOT_PUBLIC))
    for u in union:
        for q in private:
            if u.overlaps(q):
                total -= (u if u.subnet_of(q) else q).num_addresses
    return total


def node_group_inbound_rules(admin_cidrs: int, endpoint: str, distribution: str | None) -> int:
    """Inbound rules this program puts on the node security group: one for the nodes, two per admin
    CIDR (22 and 6443; security.rule_plans) and, with the NLB endpoint, one per endpoint port
    (9345 and 6443 for RKE2, 6443 for RKE1; endpoint.py). The NLB's own group holds fewer (one per
    port and one per admin CIDR). tests/program/test_hostile.py counts the registered rules against it."""
    ports = (2 if distribution == "rke2" else 1) if endpoint == "nlb" else 0
    return 1 + 2 * admin_cidrs + ports


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    acc = keys.valid.access
    found: list[Diagnostic] = []
    seen: dict[str, int] = {}
    nets: list[ipaddress.IPv4Network] = []
    world = WORLD_ADMIN_PUBLIC_ADDRESSES
    consent = "list your networks, or set access.allowWorldAdmin true if that is really meant"
    for i, c in enumerate(acc.admin_cidrs):
        key = f"access.adminCidrs[{i}]"
        net = canonical_cidr(found, key, c, "203.0.113.0/24")
        if net is None:
            continue
        if c in seen:
            found.append(error(key, f"'{c}' is already listed as access.adminCidrs[{seen[c]}]; list each CIDR once",
                               "access.cidr-twice", c))
            continue
        seen[c] = i
        nets.append(net)
        alone = public_addresses([net])
        if alone > world:
            reach = "the whole internet" if net.prefixlen == 0 else f"{alone:,} public addresses, {WORLD_TEXT}"
            if acc.allow_world_admin:
                found.append(warning(key, f"'{c}' opens SSH (22) and the Kubernetes API (6443) to {reach} "
                                          "(access.allowWorldAdmin is true)", "access.world-admin", c))
            else:
                found.append(error(key, f"'{c}' opens SSH (22) and the Kubernetes API (6443) to {reach}; {consent}",
                                   "access.world-admin", c))
    together = public_addresses(nets)
    if together > world and all(public_addresses([n]) <= world for n in nets):
        # The internet in pieces (0.0.0.0/1 + 128.0.0.0/1, or many /4s): judged as a whole.
        text = f"together open SSH (22) and the Kubernetes API (6443) to {together:,} public addresses, {WORLD_TEXT}"
        if acc.allow_world_admin:
            found.append(warning("access.adminCidrs", f"{text} (access.allowWorldAdmin is true)", "access.world-admin"))
        else:
            found.append(error("access.adminCidrs", f"{text}; {consent}", "access.world-admin"))
    return found


def rule_quota(keys: Keys, ctx: Context) -> list[Diagnostic]:
    """The node security group's inbound rules within AWS's default quota, with room for the CCM's."""
    n = len(keys.valid.access.admin_cidrs)
    endpoint, distribution = keys.valid.control_plane.endpoint, keys.valid.distribution
    rules = node_group_inbound_rules(n, endpoint, distribution)
    room = SG_INBOUND_RULE_QUOTA - CCM_RULE_HEADROOM
    if rules <= room:
        return []
    most = max(i for i in range(n + 1) if node_group_inbound_rules(i, endpoint, distribution) <= room)
    return [error("access.adminCidrs", f"{n} CIDRs need {rules} inbound rules on the node security group (one for the "
                                       "nodes, two per CIDR for ports 22 and 6443"
                                       + (", one per load balancer port" if endpoint == "nlb" else "")
                                       + f"); AWS allows {SG_INBOUND_RULE_QUOTA} per group by default and "
                                       f"{CCM_RULE_HEADROOM} stay free for the rules the CCM adds for LoadBalancer "
                                       f"Services: list at most {most} (merge neighbouring ranges into larger CIDRs)",
                  "access.rule-quota")]
