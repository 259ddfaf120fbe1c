"""Machines, checked before RunInstances would refuse them: each pool's instance type (it exists, is offered
where the pool's new nodes go, runs the image's architecture and virtualization), the default images per
CPU architecture, the key pair, arm64 support, and RKE2's documented server sizes. One look-up per distinct
type and image, one for all offerings, whatever the node count."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import ConfigError, Diagnostic, Severity
from ..settings import versions
from ..settings.fields import DEFAULT_OS
from ..settings.os_images import OS_IMAGES, os_problems
from ..settings.resolve import ClusterConfig as StackConfig
from ..state.model import ClusterState
from .environment import Environment
from .lookups import LookupFailed, collect, explain, instance_type_suggestion, looked_up
from .nodes import Machines, PlannedNode, booting_nodes
from .releases import parse_version

# EC2 CPU architecture (DescribeInstanceTypes' SupportedArchitectures) -> how images and RKE name it.
ARCH_NAMES = {"x86_64": "amd64", "arm64": "arm64"}


@dataclass(frozen=True)
class Architectures:
    """Pool name -> the CPU architecture its instance type runs, and the types looked up for it."""
    by_pool: Mapping[str, str]
    types: Mapping[str, Any] = field(default_factory=dict)


def pool_architectures(cfg: StackConfig, env: Environment) -> Architectures:
    """Pool name -> the CPU architecture its instance type runs (x86_64 or arm64), from EC2's own
    description of the type (DescribeInstanceTypes), not from its name; and the types looked up, for
    machine_problems to judge (one look-up per type). A type that cannot be looked up is left out:
    machine_problems looks it up again and reports it where it matters."""
    archs: dict[str, str] = {}
    infos: dict[str, Any] = {}
    for pool in cfg.node_pools:
        if not pool.count:
            continue
        if pool.instance_type not in infos:
            try:
                infos[pool.instance_type] = env.lookups.instance_type(pool.instance_type)
            except LookupFailed:
                infos[pool.instance_type] = None
        supported = list(getattr(infos[pool.instance_type], "supported_architectures", None) or [])
        arch = next((a for a in ARCH_NAMES if a in supported), None)
        if arch:
            archs[pool.name] = arch
    return Architectures(archs, {t: i for t, i in infos.items() if i is not None})


def architecture_problems(cfg: StackConfig, archs: Mapping[str, str]) -> list[Diagnostic]:
    """arm64 (Graviton) where the distribution publishes it: RKE2 from RKE2_ARM64_SINCE; not RKE1,
    whose arm64 nodes Rancher calls experimental and not for production (Rancher manager docs,
    "Running on ARM64 Mixed Architecture (Experimental)"), and which is end of life."""
    problems = []
    for pool in cfg.node_pools:
        if archs.get(pool.name) != "arm64":
            continue
        key = f"nodePools[{pool.name}].instanceType"
        if cfg.distribution == "rke":
            problems.append(Diagnostic(key, f"'{pool.instance_type}' is an arm64 (Graviton) type; RKE1 on arm64 is "
                                       "experimental and not for production (Rancher's docs), and RKE1 is end of "
                                       "life: use an x86_64 type, or RKE2", "pool.arm64-rke1", value=pool.instance_type))
        else:
            have, since = parse_version(cfg.kubernetes_version), parse_version(versions.RKE2_ARM64_SINCE)
            if have is not None and since is not None and have < since:
                problems.append(Diagnostic(
                    key, f"'{pool.instance_type}' is an arm64 (Graviton) type, and RKE2 {cfg.kubernetes_version} has no "
                    f"complete arm64 release (arm64 images from {versions.RKE2_ARM64_SINCE}): use an x86_64 type, or "
                    "upgrade first", "pool.arm64-too-old", value=pool.instance_type))
    return problems


def os_architecture_problems(cfg: StackConfig, archs: Mapping[str, str]) -> list[Diagnostic]:
    """What each arm64 pool's OS refuses on arm64 besides what settings/rules/operating_systems.py said for
    x86_64 before the architecture was known (settings/os_images.py os_problems: a vendor without arm64 images,
    FIPS on arm64). Air-gap: another branch's key (issue 35 items 1-2), False here."""
    problems = []
    for pool in cfg.node_pools:
        if archs.get(pool.name) != "arm64":
            continue
        partition, custom = cfg.partition.name, pool.ami is not None
        on_x86 = set(os_problems(pool.os, cfg.distribution, partition, "x86_64", cfg.fips, False, custom_image=custom))
        for sentence in os_problems(pool.os, cfg.distribution, partition, "arm64", cfg.fips, False, custom_image=custom):
            if sentence not in on_x86:
                # named by the pool's name, as settings/rules/operating_systems.py names it (names are unique)
                problems.append(Diagnostic(f"nodePools[{pool.name}].os", f"'{pool.os}' on '{pool.instance_type}' (arm64): "
                                           f"{sentence}", "pool.os-arm64", value=pool.os))
    return problems


def default_images(cfg: StackConfig, archs: Mapping[str, str], env: Environment) -> dict[str, Any]:
    """Pool name -> the latest image of the pool's OS (`os`; settings/os_images.py: the vendor's publisher
    accounts and name pattern in the cluster's partition) for the pool's CPU architecture, for pools with
    nodes and no `ami` (one look-up per OS and architecture); nodes ignore later image changes (see
    nodes.py). Refuses (ConfigError) an image that cannot be found."""
    pools = [(i, p) for i, p in enumerate(cfg.node_pools) if p.ami is None and p.count]
    images: dict[tuple[str, str], Any] = {}
    out: dict[str, Any] = {}
    for _i, pool in pools:
        arch = archs.get(pool.name, "x86_64")
        wanted = (pool.os, arch)
        if wanted not in images:
            if pool.os == DEFAULT_OS:
                # Canonical publishes from another account per partition; asked exactly as before `os` existed.
                owners: str | tuple[str, ...] = cfg.partition.ubuntu_owner
                name = versions.UBUNTU_AMI_NAMES[arch]
            else:
                published = OS_IMAGES[pool.os].image(cfg.partition.name, arch)
                if published is None:  # refused by settings/rules/operating_systems.py (or architecture_problems)
                    continue
                owners, name = published
            shown = owners if isinstance(owners, str) else ", ".join(owners)
            users = ", ".join(f"nodePools[{p.name}]" for j, p in pools if (p.os, archs.get(p.name, "x86_64")) == wanted)
            images[wanted] = looked_up(
                "nodePools[].ami", f"looking up the default image ({name} by owner {shown}) in {cfg.region}",
                f"set `ami` on {users} to an image that exists in {cfg.region}",
                lambda owners=owners, name=name: env.lookups.latest_image(owners, name),  # type: ignore[misc]
                env.offline)
        out[pool.name] = images[wanted]
    return out


def key_pair_problems(cfg: StackConfig, env: Environment,
                      launching: bool = True) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """access.sshKeyName must name a key pair of this region and account: EC2 refuses RunInstances
    for every node otherwise (InvalidKeyPair.NotFound), after the network and roles exist. Only
    RunInstances reads it: when this update launches no instance, a key pair deleted since is a
    warning (the next node added would be refused), not a refusal of every later update: renaming
    the key replaces every node, which the quorum guard refuses, so re-importing it would be the
    only way out."""
    name = cfg.access.ssh_key_name
    if not name:
        return [], []
    found: list[Diagnostic] = []
    collect(found, "access.sshKeyName", f"looking up the key pair '{name}' in {cfg.region}",
            f"create or import it in {cfg.region} (aws ec2 import-key-pair --key-name ...), or fix the name",
            lambda: env.lookups.key_pair(name), env.offline)
    if launching:
        return found, []
    return [], [_softened(d, "no instance is launched by this update, so it goes ahead, but the next new or "
                             "replaced node would be refused") for d in found]


def _softened(problem: Diagnostic, reason: str) -> Diagnostic:
    """A problem that does not stop this update, with why: a warning."""
    return Diagnostic(problem.key, f"{problem.message}; {reason}", problem.code, Severity.WARNING, problem.value)


# RKE2's documented minimum for a server (docs.rke2.io install/requirements, "Hardware": "RAM: 4GB
# Minimum (we recommend at least 8GB), CPU: 2 Minimum"), and its VM sizing guide: how many agents a
# server of that size carries.
RKE2_SERVER_MIN_VCPUS, RKE2_SERVER_MIN_MIB = 2, 4096
RKE2_SIZING_GUIDE = ((2, 4096, 225), (4, 8192, 450), (8, 16384, 1300))


def _instance_type(problems: list[Diagnostic], cfg: StackConfig, env: Environment, key: str, itype: str) -> Any:
    """One instance type looked up; a type EC2 does not know gets the closest one the account offers."""
    try:
        return env.lookups.instance_type(itype)
    except LookupFailed as failure:
        fix = f"use an instance type EC2 offers in {cfg.region} (aws ec2 describe-instance-types)"
        if failure.kind == "not-found":
            near = instance_type_suggestion(itype, env.lookups.instance_types)
            if near:
                fix = f"did you mean {near}? Or {fix}"
        happened, todo = explain(failure, env.offline, fix)
        problems.append(Diagnostic(key, f"looking up instance type '{itype}' in {cfg.region} failed ({happened}); "
                                   f"{todo}", "lookup.instance-type", value=itype))
        return None


def machine_problems(cfg: StackConfig, nodes: Sequence[PlannedNode], previous: ClusterState | None,
                     default_images: Mapping[str, Any], env: Environment, booting: Sequence[PlannedNode] | None = None,
                     known_types: Mapping[str, Any] | None = None) -> tuple[list[Diagnostic], tuple[Diagnostic, ...]]:
    """Every pool's instance type and image, checked with look-ups before RunInstances would refuse
    them: the type exists in the region, is offered in the zones the pool's new nodes go to, runs
    the image's architecture and virtualization. One look-up per distinct type and image, one for
    all offerings, whatever the node count. RKE2 servers below RKE2's minimum are warned about, not
    refused: the documented figures are minimum recommendations, and a running cluster's servers
    keep their type, so a refusal would stop every later update of a small test cluster.

    Refused only where EC2 is asked for it: pools with `booting` (new or replaced) instances, and agent
    pools whose running instances run another type than the pool's: running nodes keep their type
    (nodes.IGNORED_ON_UPDATE), and rotation launches each of them with the pool's type and image
    (components/ops/rotate/; a targeted replacement creates from the program's inputs, so a type of
    another CPU architecture is no problem), so the type must be offered in their zones and run the
    pool's image before the first of them is replaced. Servers and spot workers that run another type
    are warned about (plan/nodes.py instance_type_warnings). The image is read by RunInstances only, so
    a deregistered image or a type since withdrawn on a pool that launches nothing is a warning."""
    problems: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    if booting is None:
        booting = booting_nodes(cfg, previous, nodes)
    pools = [(i, pool) for i, pool in enumerate(cfg.node_pools) if pool.count]
    launching = {n.pool.name for n in booting}
    running = {n.key: n for n in previous.nodes} if previous else {}
    booting_keys = {(n.pool.name, n.index) for n in booting}  # a set: a list made this quadratic in nodes
    retyped_nodes = [n for n in nodes if not n.pool.is_server and not n.pool.is_spot
                     and (n.pool.name, n.index) not in booting_keys
                     and (n.pool.name, n.index) in running
                     and running[(n.pool.name, n.index)].instance_type not in (None, n.pool.instance_type)]
    strict = launching | {n.pool.name for n in retyped_nodes}

    def judged(pool: Any, found: list[Diagnostic], reason: str) -> None:
        if pool.name in strict:
            problems.extend(found)
        else:
            warnings.extend(_softened(d, reason) for d in found)

    first_use: dict[str, tuple[int, Any]] = {}
    for i, pool in sorted(pools, key=lambda ip: ip[1].name not in strict):
        first_use.setdefault(pool.instance_type, (i, pool))
    types: dict[str, Any] = dict(known_types or {})
    for itype, (_i, pool) in first_use.items():
        if itype in types:
            continue
        found: list[Diagnostic] = []
        types[itype] = _instance_type(found, cfg, env, f"nodePools[{pool.name}].instanceType", itype)
        judged(pool, found, "no instance of the pool is launched or changes type in this update, so it goes ahead")
    images: dict[str, Any] = {}
    for _i, pool in sorted(pools, key=lambda ip: ip[1].name not in launching):
        if pool.ami and pool.ami not in images:
            found = []
            ami = pool.ami
            images[ami] = collect(found, f"nodePools[{pool.name}].ami", f"looking up image '{ami}' in {cfg.region}",
                                  f"use an image that exists in {cfg.region} and this account may launch",
                                  lambda ami=ami: env.lookups.image(ami), env.offline)  # type: ignore[misc]
            if pool.name in launching:
                problems.extend(found)
            else:
                warnings.extend(_softened(d, "running nodes ignore their image and this update launches none of the "
                                             "pool's, so it goes ahead, but the pool's next new node would be refused")
                                for d in found)
    new_zones: dict[str, set[str]] = {}
    for n in list(booting) + retyped_nodes:
        new_zones.setdefault(n.pool.name, set()).add(n.az)
    offered: set[tuple[str, str]] | None = None
    wanted_types = sorted({p.instance_type for _, p in pools if p.name in new_zones and types.get(p.instance_type)})
    zones = sorted(set().union(*new_zones.values())) if new_zones else []
    if wanted_types and zones:
        offered = collect(problems, "nodePools[].instanceType",
                          f"looking up where {', '.join(wanted_types)} are offered in {cfg.region}",
                          "check the instance types and zones (aws ec2 describe-instance-type-offerings)",
                          lambda: env.lookups.offerings(wanted_types, zones), env.offline)
    for _i, pool in pools:
        info = types.get(pool.instance_type)
        if info is None:
            continue
        key = f"nodePools[{pool.name}].instanceType"
        missing = sorted(z for z in new_zones.get(pool.name, ()) if offered is not None
                         and (pool.instance_type, z) not in offered)
        if missing:
            problems.append(Diagnostic(
                key, f"'{pool.instance_type}' is not offered in {', '.join(missing)}, where the pool's new nodes go; "
                "use a type offered there, or other zones (aws ec2 describe-instance-type-offerings --location-type "
                f"availability-zone --filters Name=instance-type,Values={pool.instance_type})", "pool.type-not-offered",
                value=pool.instance_type))
        image = images.get(pool.ami) if pool.ami else default_images.get(pool.name)
        if image is None:
            continue
        title = "Ubuntu 24.04" if pool.os == DEFAULT_OS else OS_IMAGES[pool.os].title
        which = (f"image {pool.ami}" if pool.ami else
                 f"default image {image.id} ({title} {ARCH_NAMES.get(image.architecture, image.architecture)})")
        found = []
        archs = list(info.supported_architectures or [])
        if image.architecture not in archs:
            found.append(Diagnostic(
                key, f"'{pool.instance_type}' runs {' or '.join(archs)}, but the pool's {which} is {image.architecture}; "
                f"use an instance type for {image.architecture}, or set nodePools[{pool.name}].ami to an image for "
                f"{' or '.join(archs)}", "pool.image-architecture", value=pool.instance_type))
        virt = list(info.supported_virtualization_types or [])
        if image.virtualization_type not in virt:
            found.append(Diagnostic(
                key, f"'{pool.instance_type}' supports {' or '.join(virt)} virtualization, but the pool's {which} is "
                f"{image.virtualization_type}; use another type or image", "pool.image-virtualization",
                value=pool.instance_type))
        judged(pool, found, "no instance of the pool is launched or changes type in this update, so it goes ahead, "
                            "but the pool's next new node would be refused")
        if cfg.distribution == "rke2" and pool.is_server:
            vcpus, mib = info.default_vcpus, info.memory_size
            agents = sum(p.count for p in cfg.node_pools if not p.is_server)
            warning = rke2_server_size_warning(key, pool.instance_type, vcpus, mib, agents)
            if warning:
                warnings.append(warning)
    return problems, tuple(warnings)


def rke2_server_size_warning(key: str, instance_type: str, vcpus: int, mib: int, agents: int) -> Diagnostic | None:
    """What RKE2's requirements and VM sizing guide say about servers of this size carrying `agents`."""
    if vcpus < RKE2_SERVER_MIN_VCPUS or mib < RKE2_SERVER_MIN_MIB:
        return Diagnostic(key, f"'{instance_type}' has {vcpus} vCPU and {mib / 1024:g} GiB; RKE2 servers need at "
                          f"least {RKE2_SERVER_MIN_VCPUS} vCPU and {RKE2_SERVER_MIN_MIB // 1024} GiB "
                          "(docs.rke2.io install/requirements): etcd and the API server may not keep up",
                          "pool.server-below-minimum", Severity.WARNING, value=instance_type)
    carried = max((n for v, m, n in RKE2_SIZING_GUIDE if vcpus >= v and mib >= m), default=0)
    if carried and agents > carried and carried != RKE2_SIZING_GUIDE[-1][2]:
        return Diagnostic(key, f"{agents} agents; RKE2's sizing guide gives servers of '{instance_type}' ({vcpus} vCPU, "
                          f"{mib / 1024:g} GiB) up to {carried} (docs.rke2.io install/requirements, VM sizing guide): "
                          "use larger servers", "pool.servers-undersized", Severity.WARNING, value=instance_type)
    return None


@dataclass(frozen=True)
class MachineChecks:
    """The planner's machine step: architectures, default images, and what the checks found."""
    archs: Architectures
    default_images: Mapping[str, Any]
    problems: tuple[Diagnostic, ...]
    warnings: tuple[Diagnostic, ...]


def architectures_and_images(cfg: StackConfig, env: Environment) -> tuple[Architectures, list[Diagnostic],
                                                                           dict[str, Any]]:
    """Each pool's CPU architecture, what is refused about it, and the default images (an image not found
    is one more problem, reported with the rest)."""
    archs = pool_architectures(cfg, env)
    problems = architecture_problems(cfg, archs.by_pool) + os_architecture_problems(cfg, archs.by_pool)
    try:
        images = default_images(cfg, archs.by_pool, env)
    except ConfigError as err:  # reported with the rest
        problems, images = problems + err.diagnostics, {}
    return archs, problems, images


def judge(cfg: StackConfig, previous: ClusterState | None, machines: Machines, archs: Architectures,
          images: Mapping[str, Any], env: Environment) -> MachineChecks:
    """The key pair and every pool's type and image (machine_problems), for the nodes `machines` launches."""
    keys, key_warnings = key_pair_problems(cfg, env, launching=bool(machines.booting))
    problems, warnings = machine_problems(cfg, machines.nodes, previous, images, env, machines.booting, archs.types)
    return MachineChecks(archs, images, tuple(keys + problems), tuple(key_warnings) + warnings)
