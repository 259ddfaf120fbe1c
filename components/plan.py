"""Everything decided before the first resource is registered: zones, subnets, node identities.

Look-ups (availability zones, existing subnets) are plain invokes, so their answers are
ordinary values at preview time and every node name is known in `pulumi preview`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, TypeVar

import pulumi_aws as aws

from . import versions
from .config import ConfigError, StackConfig
from .network_plan import SubnetPlan, plan_subnets
from .node_plan import CapacityError, NodePlan, plan_nodes

T = TypeVar("T")


@dataclass(frozen=True)
class ClusterPlan:
    azs: tuple[str, ...]
    subnets: tuple[SubnetPlan, ...]
    nodes: tuple[NodePlan, ...]
    default_ami: str = ""

    @property
    def registration_ip(self) -> str | None:
        return next((n.private_ip for n in self.nodes if n.is_first_server), None)


def _looked_up(key: str, what: str, fix: str, call: Callable[[], T]) -> T:
    """Run one look-up (an invoke); a failure becomes a ConfigError naming the key and the fix.

    The provider's answer for an unknown region, missing credentials or a missing object is an
    exception from deep inside the SDK; the user needs the key that caused it and what to do.
    """
    try:
        return call()
    except ConfigError:
        raise
    except Exception as err:  # noqa: BLE001 - any invoke failure ends the same way
        detail = " ".join(str(err).split()).replace(" ()", "")  # an invoke failure names no property
        raise ConfigError([f"{key}: {what} failed ({detail}); {fix}"]) from None


def _available_zones(cfg: StackConfig, regular_only: bool) -> list[str]:
    """The region's available zones: the first call to AWS, so an unknown region or missing
    credentials surface here, named as such."""
    # Local and wavelength zones need opt-in; only regular zones host a cluster's subnets by default.
    filters = [{"name": "opt-in-status", "values": ["opt-in-not-required"]}] if regular_only else []
    return _looked_up(
        "aws:region", f"looking up the availability zones of '{cfg.region}'",
        "check aws:region (a region your credentials can use, like us-west-2) and your AWS credentials",
        lambda: aws.get_availability_zones(state="available", filters=filters).names,
    )


def _zones(cfg: StackConfig) -> list[str]:
    explicit = cfg.network.availability_zones
    found = _available_zones(cfg, regular_only=not explicit)
    if explicit:
        missing = [z for z in explicit if z not in found]
        if missing:
            raise ConfigError([
                f"rke-aws:network.availabilityZones: {', '.join(repr(z) for z in missing)} not available in "
                f"{cfg.region}; available: {', '.join(sorted(found))}"
            ])
        return list(explicit)
    if len(found) < cfg.network.az_count:
        raise ConfigError([
            f"rke-aws:network.availabilityZones: {cfg.network.az_count} zones asked for, but {cfg.region} offers "
            f"{len(found)} ({', '.join(found)}); use at most {len(found)}"
        ])
    return sorted(found)[: cfg.network.az_count]


def _existing_subnets(cfg: StackConfig) -> list[SubnetPlan]:
    plans: list[SubnetPlan] = []
    problems: list[str] = []
    zones: dict[str, dict[int, str]] = {"public": {}, "private": {}}
    for tier, ids in (("public", cfg.network.public_subnet_ids), ("private", cfg.network.private_subnet_ids)):
        for i, sid in enumerate(ids or ()):
            found = _looked_up(
                f"rke-aws:network.{tier}SubnetIds[{i}]", f"looking up subnet '{sid}' in {cfg.region}",
                "list subnets that exist in this region and account",
                lambda sid=sid: aws.ec2.get_subnet(id=sid),
            )
            if found.vpc_id != cfg.network.vpc_id:
                problems.append(f"rke-aws:network.{tier}SubnetIds[{i}]: '{sid}' is in {found.vpc_id}, not {cfg.network.vpc_id}; list subnets of that VPC")
            zones[tier][i] = found.availability_zone
            plans.append(SubnetPlan(tier, i, found.availability_zone, found.cidr_block))
    for i, az in zones["private"].items():
        if zones["public"].get(i) not in (None, az):
            problems.append(
                f"rke-aws:network.privateSubnetIds[{i}]: in {az} but publicSubnetIds[{i}] is in {zones['public'][i]}; list both in the same zone order"
            )
    if problems:
        raise ConfigError(problems)
    return plans


def build(cfg: StackConfig) -> ClusterPlan:
    if cfg.network.bring_your_own:
        _available_zones(cfg, regular_only=False)
        subnets = _existing_subnets(cfg)
        azs = [s.az for s in subnets if s.tier == "private"]
    else:
        azs = _zones(cfg)
        subnets = plan_subnets(cfg.network.vpc_cidr, azs, cfg.network.public_subnet_cidrs, cfg.network.private_subnet_cidrs)
    try:
        nodes = plan_nodes(cfg, subnets)
    except CapacityError as exc:
        raise ConfigError(exc.problems) from None
    return ClusterPlan(tuple(azs), tuple(subnets), tuple(nodes), _default_ami(cfg))


def _default_ami(cfg: StackConfig) -> str:
    """Latest Canonical Ubuntu 24.04 LTS; nodes ignore later AMI changes (see nodes.py)."""
    if not any(p.ami is None and p.count for p in cfg.node_pools):
        return ""
    pools = ", ".join(f"nodePools[{i}]" for i, p in enumerate(cfg.node_pools) if p.ami is None and p.count)
    return _looked_up(
        "rke-aws:nodePools[].ami", f"looking up the default image ({versions.UBUNTU_AMI_NAME} by owner "
        f"{versions.UBUNTU_AMI_OWNER}) in {cfg.region}",
        f"set `ami` on {pools} to an image that exists in {cfg.region}",
        lambda: aws.ec2.get_ami(
            most_recent=True,
            owners=[versions.UBUNTU_AMI_OWNER],
            filters=[
                {"name": "name", "values": [versions.UBUNTU_AMI_NAME]},
                {"name": "state", "values": ["available"]},
            ],
        ).id,
    )
