"""network: CIDRs inside the VPC and clear of the cluster's own networks, bring-your-own completeness, zones
(a count or names of the cluster's region)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from ...diagnostics import Diagnostic
from ..fields import (
    AZ_PATTERN,
    CLUSTER_NETWORKS,
    DEFAULT_AZ_COUNT,
    MAX_AZ_COUNT,
    MAX_SUBNET_PREFIX,
    MAX_VPC_PREFIX,
    MIN_SUBNET_PREFIX,
    MIN_VPC_PREFIX,
    POD_CIDR,
    REGION_PATTERN,
    RFC1918_CIDRS,
    SUBNET_ID_PATTERN,
    json_text,
    numeric_string,
    shown,
)
from ..sections import Network
from .base import Context, Keys, error, given

BYO_KEYS = ("vpcId", "publicSubnetIds", "privateSubnetIds")
CIDR_KEYS = ("vpcCidr", "publicSubnetCidrs", "privateSubnetCidrs", "natGateways")
RFC1918 = tuple(ipaddress.IPv4Network(n) for n in RFC1918_CIDRS)
CLUSTER_NETS = tuple(ipaddress.IPv4Network(n) for n in CLUSTER_NETWORKS)
SUBNET_ID_RE = re.compile(SUBNET_ID_PATTERN)
AZ_RE = re.compile(AZ_PATTERN)
REGION_RE = re.compile(REGION_PATTERN)


def canonical_cidr(found: list[Diagnostic], key: str, value: str, example: str) -> ipaddress.IPv4Network | None:
    """An IPv4 CIDR written the one way AWS stores it, or None (the problem recorded, naming the canonical
    form when there is one: netmask, host-mask, host-bits or bare-address forms)."""
    try:
        net = ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        try:
            loose = ipaddress.IPv4Network(value, strict=False)
        except ValueError:
            found.append(error(key, f"{shown(value)} is not an IPv4 CIDR ({exc}); write it like {example}",
                               "network.cidr", value))
            return None
        found.append(error(key, f"{shown(value)} is not a network address (host bits set); the network is {loose}: "
                                "write that, or the CIDR you meant", "network.cidr-host-bits", value))
        return None
    if str(net) != value:
        found.append(error(key, f"{shown(value)} is not in canonical form; write {net}", "network.cidr-form", value))
        return None
    return net


def _private_net(found: list[Diagnostic], key: str, value: str, prefixes: tuple[int, int],
                 what: str) -> ipaddress.IPv4Network | None:
    """A canonical RFC 1918 CIDR of a prefix in `prefixes`, clear of the cluster's own networks."""
    net = canonical_cidr(found, key, value, "10.0.0.0/16")
    if net is None:
        return None
    if not any(net.subnet_of(r) for r in RFC1918):
        found.append(error(key, f"{shown(value)} is not a private (RFC 1918) range; use a block inside 10.0.0.0/8, "
                                "172.16.0.0/12 or 192.168.0.0/16", "network.not-private", value))
        return None
    if not prefixes[0] <= net.prefixlen <= prefixes[1]:
        found.append(error(key, f"{shown(value)} has prefix /{net.prefixlen}; {what} /{prefixes[0]} to /{prefixes[1]}",
                           "network.prefix", value))
        return None
    for cluster_net in CLUSTER_NETS:
        if net.overlaps(cluster_net):
            which = "pod" if str(cluster_net) == POD_CIDR else "service"
            found.append(error(key, f"{shown(value)} overlaps {cluster_net}, the cluster's {which} network (RKE2 and "
                                    "RKE1 default): nodes would send traffic for those addresses into the cluster; use "
                                    f"a block outside {' and '.join(CLUSTER_NETWORKS)}", "network.cluster-overlap", value))
            return None
    return net


def zones(raw: Any) -> tuple[tuple[str, ...] | None, int, list[Diagnostic]]:
    """network.availabilityZones: a count (looked up at plan time) or zone names: (names or None, count,
    problems). The model's schema has both forms; the check is here (one key, two types)."""
    key = "network.availabilityZones"
    found: list[Diagnostic] = []
    if raw is None:
        return None, DEFAULT_AZ_COUNT, found
    if not isinstance(raw, (list, tuple)):
        n = numeric_string(raw)
        if isinstance(n, bool) or not isinstance(n, int):
            found.append(error(key, f"{json_text(raw)} is not a whole number; use an integer from 1 to {MAX_AZ_COUNT}",
                               "config.type", raw))
        elif not 1 <= n <= MAX_AZ_COUNT:
            found.append(error(key, f"{n} is out of range; use an integer from 1 to {MAX_AZ_COUNT}", "config.range", raw))
        else:
            return None, n, found
        return None, DEFAULT_AZ_COUNT, found
    if not all(isinstance(n, str) for n in raw):
        found.append(error(key, f"{json_text(list(raw))} is not a list of strings; expected a list of availability zone "
                                "names like us-west-2a", "config.type", raw))
        return None, DEFAULT_AZ_COUNT, found
    for n in raw:
        if not AZ_RE.fullmatch(n):
            found.append(error(key, f"{shown(n)} is not an availability zone name; write it like us-west-2a",
                               "network.zone-name", n))
    if len(set(raw)) != len(raw):
        found.append(error(key, f"{json_text(list(raw))} lists a zone twice; each zone once", "network.zone-twice", raw))
    if not 1 <= len(raw) <= MAX_AZ_COUNT:
        found.append(error(key, f"{len(raw)} zones listed; list 1 to {MAX_AZ_COUNT}", "network.zone-count", raw))
    return tuple(raw), len(raw), found


def az_count(net: Network) -> int:
    """How many zones the cluster spans: the count or names given, else (bring-your-own) one per private
    subnet, else the default."""
    names, count, _ = zones(net.availability_zones)
    if names is None and net.availability_zones is None and net.vpc_id is not None and net.public_subnet_ids \
            and net.private_subnet_ids is not None:
        return len(net.private_subnet_ids) or count
    return count


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    net = keys.valid.network
    raw = keys.section("network")
    written = raw if isinstance(raw, dict) else {}
    have = given(net)
    found: list[Diagnostic] = []
    az_names, count, problems = zones(net.availability_zones)
    found += problems

    byo_given = [k for k in BYO_KEYS if k in have]
    if byo_given:
        for k in CIDR_KEYS:
            if k in have:
                found.append(error(f"network.{k}", f"cannot be combined with bring-your-own network "
                                                  f"({', '.join(byo_given)}); remove {k} or the IDs", "network.byo-mixed"))
        for k in BYO_KEYS:
            if k == "publicSubnetIds" and keys.valid.airgap is not None:
                continue  # airgap: no public subnets (settings/rules/registry.py)
            if k not in have and k not in written:
                found.append(error(f"network.{k}", f"missing; bring-your-own network needs all of {', '.join(BYO_KEYS)}",
                                   "network.byo-missing"))
        ids = {"publicSubnetIds": tuple(net.public_subnet_ids or ()), "privateSubnetIds": tuple(net.private_subnet_ids or ())}
        for k, lst in ids.items():
            for s in lst:
                if not SUBNET_ID_RE.fullmatch(s):
                    found.append(error(f"network.{k}", f"{shown(s)} is not a subnet ID; write it like "
                                                      "subnet-0123456789abcdef0", "network.subnet-id", s))
        # The zones are the subnets' (looked up at plan time); availabilityZones, when given, must agree.
        zones_given = net.availability_zones is not None
        if not zones_given and (ids["publicSubnetIds"] or keys.valid.airgap is not None) and "privateSubnetIds" in have:
            count = len(ids["privateSubnetIds"]) or count
        for k in ("publicSubnetIds", "privateSubnetIds"):
            if k in have and len(ids[k]) != count:
                source = "availability zone(s)" if zones_given else "private subnet(s), one per zone"
                found.append(error(f"network.{k}", f"{len(ids[k])} subnet(s) for {count} {source}; give one per zone, "
                                                  "in zone order", "network.subnet-count"))
        seen_ids: dict[str, str] = {}
        for k, lst in ids.items():
            for i, s in enumerate(lst):
                here = f"network.{k}[{i}]"
                if s in seen_ids:
                    found.append(error(here, f"'{s}' is already listed as {seen_ids[s]}; each subnet is either public "
                                             "or private, once", "network.subnet-twice", s))
                else:
                    seen_ids[s] = here
    else:
        vpc_net = _private_net(found, "network.vpcCidr", net.vpc_cidr, (MIN_VPC_PREFIX, MAX_VPC_PREFIX), "use") \
            if net.vpc_cidr is not None else None
        seen: list[tuple[str, ipaddress.IPv4Network]] = []
        for key, cidrs in (("publicSubnetCidrs", net.public_subnet_cidrs), ("privateSubnetCidrs", net.private_subnet_cidrs)):
            if cidrs is None:
                continue
            if len(cidrs) != count:
                found.append(error(f"network.{key}", f"{len(cidrs)} CIDR(s) for {count} availability zone(s); give one per "
                                                  "zone, in zone order", "network.subnet-count"))
            for i, c in enumerate(cidrs):
                sub = _private_net(found, f"network.{key}[{i}]", c, (MIN_SUBNET_PREFIX, MAX_SUBNET_PREFIX), "AWS subnets are")
                if sub is None:
                    continue
                if vpc_net is not None and not sub.subnet_of(vpc_net):
                    found.append(error(f"network.{key}[{i}]", f"'{c}' is outside the VPC {net.vpc_cidr}; use a block "
                                                           "inside it", "network.outside-vpc", c))
                for other_key, other_net in seen:
                    if sub.overlaps(other_net):
                        found.append(error(f"network.{key}[{i}]", f"'{c}' overlaps {other_key} ({other_net}); subnets "
                                                               "must not overlap", "network.subnet-overlap", c))
                seen.append((f"network.{key}[{i}]", sub))
        cidrs_given = [k for k in ("publicSubnetCidrs", "privateSubnetCidrs") if k in written]
        if len(cidrs_given) == 1:
            other = "privateSubnetCidrs" if cidrs_given[0] == "publicSubnetCidrs" else "publicSubnetCidrs"
            found.append(error(f"network.{other}", f"missing; network.{cidrs_given[0]} is set, and derived {other} could "
                                                   "overlap it: give both lists or neither", "network.subnets-half"))

    region = ctx.region
    if az_names and region and REGION_RE.fullmatch(region):
        for n in az_names:
            if AZ_RE.fullmatch(n) and n[:-1] != region:
                found.append(error("network.availabilityZones", f"'{n}' is not a zone of {region}; use zones like "
                                                                f"{region}a", "network.zone-region", n))
    return found
