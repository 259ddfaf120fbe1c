"""Deterministic subnet layout derived from the VPC CIDR.

The VPC is cut into 16 equal slots (four more prefix bits). The private subnet of the zone with
index i takes slot i, the public one slot 8 + i. A zone keeps its index for the life of the stack
(from the stack's last outputs, components/plan/history.py); a zone seen for the first time takes the
lowest index no zone used before. So adding, removing or reordering zones never renumbers, and so
never replaces, an existing subnet.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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
