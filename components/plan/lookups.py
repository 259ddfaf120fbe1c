"""What the plan reads from outside the stack file (invokes: zones, subnets, route tables, network
interfaces, buckets, the account) and must judge before using; every failure names the key, what was
looked up and how to fix it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pulumi_aws as aws

from ..diagnostics import ConfigError
from ..settings.resolve import ClusterConfig as StackConfig
from .network import PlannedSubnet

# What an admin kubeconfig from RKE2 holds (k3s writeKubeConfig: one cluster, one client
# certificate). Anything else in a published copy was put there by someone else: `exec` and
# `auth-provider` run commands on the machine that uses it, file paths read its files.
KUBECONFIG_CLUSTER_KEYS = frozenset({"server", "certificate-authority-data"})


KUBECONFIG_USER_KEYS = frozenset({"client-certificate-data", "client-key-data"})


def published_kubeconfig_problem(text: str, api_url: str) -> str | None:
    """Why a published kubeconfig must not be used, or None: it must be exactly what RKE2 writes,
    pointed at this cluster's endpoint. Every server may overwrite the parameter (the first one
    publishes it), so its content is checked before anything runs with it."""
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return "it is not YAML"
    if not isinstance(doc, dict) or doc.get("kind") != "Config":
        return "it is not a kubeconfig"
    clusters = [c.get("cluster") or {} for c in doc.get("clusters") or [] if isinstance(c, dict)]
    users = [u.get("user") or {} for u in doc.get("users") or [] if isinstance(u, dict)]
    if len(clusters) != 1 or len(users) != 1:
        return f"it names {len(clusters)} clusters and {len(users)} users, RKE2 writes one of each"
    extra = sorted(set(clusters[0]) - KUBECONFIG_CLUSTER_KEYS) + sorted(set(users[0]) - KUBECONFIG_USER_KEYS)
    if extra:
        return f"it carries {', '.join(extra)}, which RKE2 never writes (exec and auth-provider run commands)"
    if clusters[0].get("server") != api_url:
        return f"its server is {clusters[0].get('server')!r}, not this cluster's {api_url}"
    return None


T = TypeVar("T")


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
    filters: list[Any] = [{"name": "opt-in-status", "values": ["opt-in-not-required"]}] if regular_only else []
    return _looked_up(
        "aws:region", f"looking up the availability zones of '{cfg.region}'",
        "check aws:region (a region your credentials can use, like us-west-2) and your AWS credentials",
        lambda: list(aws.get_availability_zones(state="available", filters=filters).names),
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


HOSTNAME_FIX = "aws ec2 modify-subnet-attribute --subnet-id {sid} --private-dns-hostname-type-on-launch ip-name"


def _existing_subnets(cfg: StackConfig) -> tuple[list[PlannedSubnet], dict[str, Any]]:
    """Bring-your-own subnets as SubnetPlans (keys follow the lists' order), and what was looked up."""
    plans: list[PlannedSubnet] = []
    found_by_key: dict[str, Any] = {}
    problems: list[str] = []
    zones: dict[str, dict[int, str]] = {"public": {}, "private": {}}
    for tier, ids in (("public", cfg.network.public_subnet_ids), ("private", cfg.network.private_subnet_ids)):
        for i, sid in enumerate(ids or ()):
            key = f"rke-aws:network.{tier}SubnetIds[{i}]"
            found = _looked_up(key, f"looking up subnet '{sid}' in {cfg.region}",
                               "list subnets that exist in this region and account",
                               lambda sid=sid: aws.ec2.get_subnet(id=sid))  # type: ignore[misc]
            if found.vpc_id != cfg.network.vpc_id:
                problems.append(f"{key}: '{sid}' is in {found.vpc_id}, not {cfg.network.vpc_id}; list subnets of that VPC")
            if found.availability_zone in zones[tier].values():
                other = next(j for j, z in zones[tier].items() if z == found.availability_zone)
                problems.append(f"{key}: '{sid}' is in {found.availability_zone} like {tier}SubnetIds[{other}]; give one "
                                f"{tier} subnet per zone")
            if (found.private_dns_hostname_type_on_launch or "ip-name") != "ip-name":
                # resource-name hostnames make node names i-....compute.internal: the CCM finds no instance.
                problems.append(f"{key}: '{sid}' launches instances with {found.private_dns_hostname_type_on_launch} "
                                "hostnames, so node names would not be ip-... private DNS names; set it to ip-name: "
                                + HOSTNAME_FIX.format(sid=sid))
            zones[tier][i] = found.availability_zone
            plans.append(PlannedSubnet(tier, i, found.availability_zone, found.cidr_block))
            found_by_key[f"{tier}-{i}"] = found
    for i, az in zones["private"].items():
        if zones["public"].get(i) not in (None, az):
            problems.append(
                f"rke-aws:network.privateSubnetIds[{i}]: in {az} but publicSubnetIds[{i}] is in {zones['public'][i]}; list both in the same zone order"
            )
    explicit = cfg.network.availability_zones
    if explicit and list(zones["private"].values()) != list(explicit):
        problems.append(f"rke-aws:network.availabilityZones: {list(explicit)}, but the private subnets are in "
                        f"{list(zones['private'].values())}; list the zones in the subnets' order, or leave them out")
    if problems:
        raise ConfigError(problems)
    return plans, found_by_key


def _route_table(cfg: StackConfig, key: str, sid: str) -> Any:
    """The subnet's route table: its own association, else the VPC's main table."""
    try:
        return aws.ec2.get_route_table(subnet_id=sid)
    except Exception:  # noqa: BLE001 - no explicit association: the main table applies
        return _looked_up(key, f"looking up the route table of '{sid}'", "check the VPC's route tables",
                          lambda: aws.ec2.get_route_table(vpc_id=cfg.network.vpc_id,
                                                          filters=[{"name": "association.main", "values": ["true"]}]))


def _default_route(table: Any) -> Any:
    return next((r for r in table.routes or [] if r.cidr_block == "0.0.0.0/0"), None)


def _interfaces(key: str, sid: str, addresses: list[str]) -> Any:
    return _looked_up(key, f"looking up network interfaces in '{sid}'", "check the subnet",
                      lambda: aws.ec2.get_network_interfaces(filters=[
                          {"name": "subnet-id", "values": [sid]},
                          {"name": "addresses.private-ip-address", "values": addresses}]))


def _own_node_holds(cfg: StackConfig, key: str, ip: str, name: str) -> bool:
    found = _looked_up(key, f"looking up the instance holding {ip}", "check the subnet",
                       lambda: aws.ec2.get_instances(
                           filters=[{"name": "private-ip-address", "values": [ip]},
                                    {"name": f"tag:{cfg.cluster_tag_key}", "values": ["owned"]},
                                    {"name": "tag:Name", "values": [name]}],
                           instance_state_names=["pending", "running", "stopping", "stopped"]))
    return bool(found.ids)


def _account(cfg: StackConfig) -> str:
    return _looked_up("aws:region", "looking up the AWS account (for names that must be unique, key policies)",
                      "check your AWS credentials", lambda: aws.get_caller_identity().account_id)


def _bucket_exists(bucket: str) -> bool:
    try:
        aws.s3.get_bucket(bucket=bucket)
    except Exception:  # noqa: BLE001 - not found (or not ours to see): it is created, and S3 says why if not
        return False
    return True


def _bucket_owned(bucket: str) -> bool:
    """ListBuckets shows only the caller's account's buckets (unlike HeadBucket)."""
    found = _looked_up("rke-aws:etcdBackup", f"listing this account's buckets named {bucket}",
                       "check your AWS credentials (s3:ListAllMyBuckets)",
                       lambda: aws.s3.get_buckets(prefix=bucket))
    return any(b.name == bucket for b in found.buckets or ())


def _collect(problems: list[str], key: str, what: str, fix: str, call: Callable[[], T]) -> T | None:
    """A look-up whose failure is one more problem (all of them are reported together), not the end."""
    try:
        return _looked_up(key, what, fix, call)
    except ConfigError as err:
        problems += err.problems
        return None


def vpc_cidrs(cfg: StackConfig) -> tuple[str, ...]:
    """The VPC's IPv4 CIDR blocks, for NO_PROXY: the configured one, or a brought VPC's primary and
    associated blocks (looked up only when a proxy is configured)."""
    if cfg.proxy is None:
        return ()
    if not cfg.network.bring_your_own:
        return (cfg.network.vpc_cidr,) if cfg.network.vpc_cidr else ()
    vpc = _looked_up("rke-aws:network.vpcId", f"looking up the CIDR blocks of '{cfg.network.vpc_id}' for proxy.noProxy",
                     "check the VPC ID", lambda: aws.ec2.get_vpc(id=cfg.network.vpc_id))
    blocks = [vpc.cidr_block] + [a.cidr_block for a in (vpc.cidr_block_associations or [])
                                 if getattr(a, "state", "associated") in (None, "associated")]
    return tuple(dict.fromkeys(b for b in blocks if b))
