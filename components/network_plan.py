"""Deterministic subnet layout derived from the VPC CIDR.

The VPC is cut into 16 equal slots (four more prefix bits). Private subnet of AZ i takes slot i,
public subnet of AZ i takes slot 8 + i. A subnet's CIDR therefore depends only on the VPC CIDR,
its tier and its AZ's position: adding an AZ at the end never renumbers an existing subnet.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Optional

SUBNET_NEWBITS = 4  # 16 slots: up to 6 AZs per tier with room to spare
PUBLIC_SLOT_OFFSET = 8


@dataclass(frozen=True)
class SubnetPlan:
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


def plan_subnets(vpc_cidr: str, azs: list[str], public: Optional[tuple[str, ...]] = None,
                 private: Optional[tuple[str, ...]] = None) -> list[SubnetPlan]:
    plans = []
    for tier, explicit in (("public", public), ("private", private)):
        for i, az in enumerate(azs):
            cidr = explicit[i] if explicit else default_subnet_cidr(vpc_cidr, tier, i)
            plans.append(SubnetPlan(tier, i, az, cidr))
    return plans
