"""What this stack looked like after its last `pulumi up`, and the guards that compare against it.

The stack's own last outputs (`nodes`, `subnets`, `kubernetesVersion`, ...) are read once, before
anything is planned, through the engine's `pulumi:pulumi:readStackOutputs` invoke (the same read a
StackReference does, but synchronous, so a refusal happens before any resource is registered).
A new stack has none; then nothing is compared.

Everything but `read()` is pure: tests build `Previous` from a dict of outputs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from . import versions

READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"
_VERSION_RE = re.compile(r"^v1\.(\d+)\.(\d+)(?:[-+](?:rancher|rke2r)(\d+))?")


@dataclass(frozen=True)
class PreviousNode:
    pool: str
    index: int
    name: str
    roles: tuple[str, ...]
    private_ip: str
    availability_zone: str
    tier: str  # "public" | "private"
    ip_block: Optional[int]
    key_name: Optional[str]
    instance_type: Optional[str] = None  # None for stacks from before it was exported

    @property
    def key(self) -> tuple[str, int]:
        return (self.pool, self.index)

    @property
    def is_etcd(self) -> bool:
        return "etcd" in self.roles


@dataclass(frozen=True)
class Previous:
    distribution: Optional[str]
    kubernetes_version: Optional[str]
    nodes: tuple[PreviousNode, ...] = ()
    # subnet key ("private-0") -> availability zone, from the `subnets` output
    subnet_zones: Mapping[str, str] = field(default_factory=dict)
    has_agent_token: bool = False
    # addons.ebsCsi as last deployed; None for stacks from before the option existed
    ebs_csi: Optional[bool] = None
    hardening: Optional[str] = None  # None for stacks from before the option existed
    has_kubeconfig_parameter: bool = False  # RKE2: its first server publishes the admin kubeconfig
    # the CCM Release (and with it what needs the cluster) was installed through a kubeconfig
    has_cluster_releases: bool = False
    installed_in_cluster: tuple[str, ...] = ()
    manifest_mode: bool = False  # RKE2 ccm.install: manifest (the servers' helm-controller owns the charts)
    snapshot_location: Optional[str] = None  # etcdSnapshotLocation: nodes were configured to snapshot to S3

    @classmethod
    def from_outputs(cls, outputs: Mapping[str, Any]) -> Optional["Previous"]:
        """None for a stack without outputs (never deployed, or destroyed)."""
        if not outputs or "nodes" not in outputs:
            return None
        nodes: list[PreviousNode] = []
        seen: dict[str, int] = {}
        for raw in outputs.get("nodes") or []:
            pool = str(raw.get("pool"))
            # Outputs of the first releases had no `index`: nodes are listed in plan order.
            index = int(raw["index"]) if raw.get("index") is not None else seen.get(pool, 0)
            seen[pool] = index + 1
            subnet = str(raw.get("subnet") or "")
            tier = subnet.split("-")[0] if subnet else ("public" if raw.get("publicIp") else "private")
            nodes.append(PreviousNode(
                pool=pool, index=index, name=str(raw.get("name")), roles=tuple(raw.get("roles") or ()),
                private_ip=str(raw.get("privateIp")), availability_zone=str(raw.get("availabilityZone")),
                tier=tier, ip_block=int(raw["ipBlock"]) if raw.get("ipBlock") is not None else None,
                key_name=raw.get("keyName") or None, instance_type=raw.get("instanceType") or None,
            ))
        zones = {k: str(v.get("availabilityZone")) for k, v in (outputs.get("subnets") or {}).items()
                 if isinstance(v, Mapping)}
        return cls(
            distribution=outputs.get("distribution"),
            kubernetes_version=outputs.get("kubernetesVersion"),
            nodes=tuple(nodes),
            subnet_zones=zones,
            has_agent_token=bool(outputs.get("rke2AgentTokenParameter")),
            ebs_csi=bool(outputs["ebsCsi"]) if outputs.get("ebsCsi") is not None else None,
            hardening=outputs.get("hardening"),
            has_kubeconfig_parameter=bool(outputs.get("rke2KubeconfigParameter")),
            # ccmReleaseStatus: stacks deployed before installedInCluster existed
            has_cluster_releases=bool(outputs.get("installedInCluster")) or outputs.get("ccmReleaseStatus") is not None,
            snapshot_location=outputs.get("etcdSnapshotLocation") or None,
            installed_in_cluster=tuple(outputs.get("installedInCluster") or ()),
            manifest_mode=bool(outputs.get("rke2ManifestPath")),
        )

    @property
    def has_snapshots(self) -> bool:
        return self.snapshot_location is not None

    def pool_nodes(self, pool: str) -> dict[int, PreviousNode]:
        return {n.index: n for n in self.nodes if n.pool == pool}

    @property
    def etcd_members(self) -> tuple[PreviousNode, ...]:
        return tuple(n for n in self.nodes if n.is_etcd)


# ---- reading ----------------------------------------------------------------------------------

class HistoryError(Exception):
    pass


def read() -> Optional[Previous]:
    """This stack's last outputs, through the engine (Pulumi Cloud and DIY backends alike)."""
    import pulumi
    from pulumi.runtime import invoke

    org = pulumi.get_organization() or "organization"  # DIY backends name the org literally so
    project, stack = pulumi.get_project(), pulumi.get_stack()
    errors = []
    # Fully qualified first; old-layout DIY backends know only the bare stack name.
    for name in (f"{org}/{project}/{stack}", stack):
        try:
            result = invoke(READ_STACK_OUTPUTS, {"name": name})
        except Exception as err:  # noqa: BLE001 - the engine's error text is all we get
            errors.append(" ".join(str(err).split()))
            continue
        return Previous.from_outputs(dict((result.value or {}).get("outputs") or {}))
    if all("unknown stack" in e for e in errors):
        return None
    raise HistoryError(
        f"could not read this stack's last outputs ({'; '.join(errors)}); they are needed to keep running "
        "nodes where they are and to guard etcd quorum and the Kubernetes version, so nothing was changed"
    )


# ---- guards -----------------------------------------------------------------------------------

def parse_version(version: str) -> Optional[tuple[int, int, int]]:
    m = _VERSION_RE.match(version or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


def version_problems(previous: Optional[Previous], distribution: str, version: str) -> list[str]:
    """A distribution change, a downgrade, or a skipped minor, compared with what runs now."""
    if previous is None or previous.kubernetes_version is None:
        return []
    if previous.distribution and previous.distribution != distribution:
        return [f"rke-aws:distribution: '{distribution}' but this stack runs {previous.distribution}; a running "
                "cluster cannot change distribution: create a new stack for the new cluster and move workloads"]
    old, new = parse_version(previous.kubernetes_version), parse_version(version)
    if old is None or new is None or new == old:
        return []
    running = f"the cluster runs {previous.kubernetes_version} (this stack's last outputs)"
    if new < old:
        return [f"rke-aws:kubernetesVersion: {version} is a downgrade: {running}, and Kubernetes does not "
                f"support downgrades; set kubernetesVersion back to {previous.kubernetes_version} or a later release"]
    if new[0] > old[0] + 1:
        return [f"rke-aws:kubernetesVersion: {version} skips a minor: {running}, and Kubernetes upgrades one minor "
                f"at a time; set v1.{old[0] + 1}.x first, `pulumi up`, wait until every node reports it "
                f"(`kubectl get nodes`), then v1.{new[0]}.x"]
    if distribution == "rke2":
        return etcd_stepping_stone_problems(previous.kubernetes_version, version)
    return []


def _etcd(release: Optional[str]) -> Optional[tuple[int, ...]]:
    """The etcd version an RKE2 release runs (versions.RKE2_RELEASES), or None for an unknown release."""
    etcd = versions.RKE2_RELEASES.get(release or "")
    return tuple(int(n) for n in etcd.split(".")) if etcd else None


def _etcd_text(release: str) -> str:
    return versions.RKE2_RELEASES[release]


def etcd_stepping_stone_problems(running: str, version: str) -> list[str]:
    """RKE2 releases carrying etcd 3.6 must not follow one carrying etcd older than 3.5.26 (rancher/rke2-docs
    docs/release-notes/v1.33.X.md, "RKE2 v1.34 Upgrade Warning" under v1.33.7+rke2r3: "there is NO safe path
    from etcd 3.5 to 3.6 except by upgrading to v3.5.26 first", or removed members come back as zombies and
    the cluster loses quorum). Names the release to go through first: the newest one carrying 3.5.26 or a
    later 3.5 on the running minor, else on the next one."""
    old, new = _etcd(running), _etcd(version)
    if new is None or new[:2] < (3, 6) or (old is not None and old >= versions.ETCD_SAFE_BEFORE_3_6):
        return []
    start, target = parse_version(running) or (0, 0, 0), parse_version(version)

    def stone(release: str) -> bool:  # reachable from what runs, leads to the target, carries 3.5.26+
        at = parse_version(release)
        return (versions.ETCD_SAFE_BEFORE_3_6 <= _etcd(release) < (3, 6) and at[0] in (start[0], start[0] + 1)
                and start < at < target)

    # the newest on the running minor (a patch upgrade), else the newest on the next minor
    stones = sorted(filter(stone, versions.RKE2_RELEASES),
                    key=lambda r: (parse_version(r)[0] != start[0], tuple(-n for n in parse_version(r))))
    first = next(iter(stones), None)
    via = (f"set kubernetesVersion to {first} (etcd {_etcd_text(first)}) first, `pulumi up`, wait "
           f"until every server runs it (`kubectl get nodes`), then {version}" if first else
           "no release this program knows leads there; go through an RKE2 release with etcd 3.5.26 or a later 3.5 first")
    what = (f"which runs etcd {_etcd_text(running)}" if old is not None else
            "whose etcd version this program does not know (add it to components/versions.py RKE2_RELEASES from "
            "its release notes if it already runs etcd 3.5.26 or later)")
    return [f"rke-aws:kubernetesVersion: {version} runs etcd {_etcd_text(version)}, but the cluster runs "
            f"{running}, {what}; etcd goes from 3.5 to 3.6 safely only from 3.5.26 (RKE2's release notes: removed "
            f"members can come back and cost quorum): {via}"]


@dataclass(frozen=True)
class PlannedMember:
    """What the guard needs of a planned node: identity and the inputs whose change replaces it."""
    pool: str
    index: int
    private_ip: str
    availability_zone: str
    tier: str
    key_name: Optional[str]
    is_etcd: bool


def etcd_changes(previous: Optional[Previous], planned: Iterable[PlannedMember]) -> tuple[list[str], list[str]]:
    """(deleted, replaced) etcd members, by node name."""
    if previous is None:
        return [], []
    by_key = {(p.pool, p.index): p for p in planned}
    deleted, replaced = [], []
    for member in previous.etcd_members:
        p = by_key.get(member.key)
        if p is None or not p.is_etcd:
            deleted.append(member.name)
        elif (p.private_ip, p.availability_zone, p.tier, p.key_name) != (
                member.private_ip, member.availability_zone, member.tier, member.key_name):
            replaced.append(member.name)
    return deleted, replaced


def quorum_problems(previous: Optional[Previous], planned: Sequence[PlannedMember]) -> list[str]:
    """Refuse an update that takes more than a minority of the current etcd members away at once.

    Instances are replaced delete-before-create (their fixed address cannot be held twice), so a
    replaced member is gone while its successor boots, exactly like a deleted one.
    """
    deleted, replaced = etcd_changes(previous, planned)
    assert previous is not None or not (deleted or replaced)
    lost = len(deleted) + len(replaced)
    if not lost:
        return []
    members = len(previous.etcd_members)
    tolerable = (members - 1) // 2  # members that can be lost while the rest keep quorum
    if lost <= tolerable:
        return []
    what = ", ".join(f"{n} (deleted)" for n in deleted) + (", " if deleted and replaced else "") + \
        ", ".join(f"{n} (replaced)" for n in replaced)
    quorum = members // 2 + 1
    return [
        f"rke-aws:nodePools: this update would take {lost} of the {members} etcd members away at once ({what}); "
        f"etcd keeps quorum only with {quorum} of {members} running, so at most {tolerable} may go per update. "
        "Take an etcd snapshot, then go one member per `pulumi up`: lower the pool's count by one (or change one "
        "node), `pulumi up`, wait until the remaining servers are Ready (`kubectl get nodes`) and etcd is healthy, "
        "then the next. Keep an odd number of members."
        + (" A single-member cluster cannot lose its only member: it holds all cluster state; add members first."
           if members == 1 else "")
    ]
