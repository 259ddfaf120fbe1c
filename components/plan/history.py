"""What this stack looked like after its last `pulumi up`, what is known to run, and the day-2 guards.

The stack's own last outputs (`nodes`, `subnets`, `kubernetesVersion`, ...) are read once, before
anything is planned, through the engine's `pulumi:pulumi:readStackOutputs` invoke (the same read a
StackReference does, but synchronous, so a refusal happens before any resource is registered).
A new stack has none; then nothing is compared.

Outputs say what the last update configured, not what runs: a version change rolls through the
nodes for a while after the update, and etcd keeps the members of removed servers until their
Nodes are deleted. The guards therefore judge against, in this order: the cluster itself when it
can be read (components/plan/running.py), what earlier updates recorded as confirmed
(`kubernetesVersionConfirmed`, `etcdMembersRemoved`, `etcdSnapshotsRunning`), and what the user
confirms with `confirmClusterState`. A confirmation is a code naming one exact statement ("every
node runs v1.34.1+rke2r1", "etcd lists exactly these members"); a refusal prints the statement and
its code, and a code left in the stack file confirms nothing once the state has moved on.

Everything but `read()` is pure: tests build `Previous` from a dict of outputs.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import CONFIRM_CLI_KEY, Statement  # noqa: F401 - part of this module's interface
from ..settings.model import number
from . import stale

READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"
# v1.X.Y, v1.X.Y+rke2rN (RKE2), v1.X.Y-rancherN-M (RKE1: RKE builds M of Rancher's build N; a later
# M ships fixed system images, so -rancher1-2 after -rancher1-3 is a downgrade: review finding 8).
_VERSION_RE = re.compile(r"^v1\.(\d+)\.(\d+)(?:-rancher(\d+)(?:-(\d+))?|\+rke2r(\d+))?", re.ASCII)
# What the engine stores for an output that was unknown when the stack's outputs were saved: the
# outputs of resources that failed under `pulumi up --continue-on-error` (pulumi/pulumi
# sdk/python/lib/pulumi/runtime/resource.py resolves them unknown; pkg/resource/stack/deployment.go
# serialises an unknown as this placeholder; read back it is this string, None in an update or an
# `Unknown` in a preview, sdk/python/lib/pulumi/runtime/rpc.py deserialize_property).
UNKNOWN_PLACEHOLDER = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
_NODE_NAME_RE = re.compile(r"^ip-(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})\.")
CONFIRM_KEY = "rke-aws:confirmClusterState"
ENDPOINT_RE = re.compile(r"^api\.([a-z][a-z0-9-]*)\.rke-aws\.internal$")


def _unknown(value: Any) -> bool:
    return value == UNKNOWN_PLACEHOLDER or type(value).__name__ == "Unknown"


def address_in_name(name: str) -> str | None:
    """The private IP an EC2 ip-name hostname encodes (ip-10-0-1-23.<domain> -> 10.0.1.23)."""
    m = _NODE_NAME_RE.match(name or "")
    if not m:
        return None
    try:
        return str(ipaddress.IPv4Address(".".join(m.groups())))
    except ValueError:
        return None


@dataclass(frozen=True)
class PreviousNode:
    pool: str
    index: int
    name: str
    roles: tuple[str, ...]
    private_ip: str
    availability_zone: str
    tier: str  # "public" | "private"
    ip_block: int | None
    key_name: str | None
    instance_type: str | None = None  # None for stacks from before it was exported
    # Outputs without `market` come from releases that launched on-demand instances only.
    market: str = "on-demand"
    instance_id: str | None = None
    # Spot nodes: their persistent request and the end date EC2 reports for it (None: none or unknown).
    spot_request_id: str | None = None
    spot_valid_until: str | None = None
    # What runs, by attribute (image, instance type, boot digest, root volume: plan/stale.py); None
    # where these outputs do not record it.
    running: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def key(self) -> tuple[str, int]:
        return (self.pool, self.index)

    @property
    def is_etcd(self) -> bool:
        return "etcd" in self.roles


@dataclass(frozen=True)
class RemovedMember:
    """An etcd member an earlier update removed from the stack, not yet known gone from etcd."""
    name: str
    private_ip: str


@dataclass(frozen=True)
class Snapshots:
    """Where and how servers take etcd snapshots. interval/retention None: not known (outputs of
    releases before they were exported)."""
    bucket: str
    folder: str
    interval_hours: int | None = None
    retention: int | None = None
    kms_key_arn: str | None = None

    @property
    def location(self) -> str:
        return f"s3://{self.bucket}/{self.folder}"

    def same_as(self, other: Snapshots) -> bool:
        def eq(a: Any, b: Any) -> bool:
            return a is None or b is None or a == b
        return (self.bucket, self.folder, self.kms_key_arn) == (other.bucket, other.folder, other.kms_key_arn) and \
            eq(self.interval_hours, other.interval_hours) and eq(self.retention, other.retention)

    def output(self) -> dict[str, Any]:
        return {"bucket": self.bucket, "folder": self.folder, "intervalHours": self.interval_hours,
                "retention": self.retention, "kmsKeyArn": self.kms_key_arn}

    @classmethod
    def from_output(cls, raw: Any) -> Snapshots | None:
        if not isinstance(raw, Mapping) or not raw.get("bucket"):
            return None
        return cls(str(raw["bucket"]), str(raw.get("folder") or ""), raw.get("intervalHours"), raw.get("retention"),
                   raw.get("kmsKeyArn") or None)

    @classmethod
    def from_location(cls, location: str | None) -> Snapshots | None:
        if not location or not location.startswith("s3://"):
            return None
        bucket, _, folder = location[len("s3://"):].partition("/")
        return cls(bucket, folder)


_MISSING = object()


@dataclass(frozen=True)
class Previous:
    distribution: str | None
    kubernetes_version: str | None
    nodes: tuple[PreviousNode, ...] = ()
    # subnet key ("private-0") -> availability zone, from the `subnets` output
    subnet_zones: Mapping[str, str] = field(default_factory=dict)
    has_agent_token: bool = False
    # addons.ebsCsi as last deployed; None for stacks from before the option existed
    ebs_csi: bool | None = None
    hardening: str | None = None  # None for stacks from before the option existed
    has_kubeconfig_parameter: bool = False  # RKE2: its first server publishes the admin kubeconfig
    # the CCM Release (and with it what needs the cluster) was installed through a kubeconfig
    has_cluster_releases: bool = False
    installed_in_cluster: tuple[str, ...] = ()
    manifest_mode: bool = False  # RKE2 ccm.install: manifest (the servers' helm-controller owns the charts)
    snapshot_location: str | None = None  # etcdSnapshotLocation: nodes were configured to snapshot to S3
    cluster_id: str | None = None
    # kubernetesVersionConfirmed: the version every node was last known to run. `legacy_version`:
    # outputs from before it was exported.
    version_confirmed: str | None = None
    legacy_version: bool = False
    ccm_image: str | None = None
    etcd_removed: tuple[RemovedMember, ...] = ()
    # etcdSnapshotsRunning: what the running servers snapshot with (None: no S3 snapshots)
    snapshots_running: Snapshots | None = None
    bucket_managed: bool | None = None  # etcdBucketManaged; None: outputs from before it existed
    subnet_ids: Mapping[str, str] = field(default_factory=dict)  # subnet key -> ID (for renamed children)
    manifest_files: tuple[str, ...] = ()  # rke2Manifests: file names under the manifest path
    manifests_removing: tuple[str, ...] = ()  # rke2ManifestsRemoving: removals not yet known done
    keyed_children: bool = False  # written by a release whose children are keyed by CIDR / subnet ID
    region: str | None = None
    endpoint_mode: str | None = None  # controlPlaneEndpointType: dns | nlb (None: not exported)
    version_assumed: bool = False  # kubernetesVersionAssumed: kubernetesVersionConfirmed is an assumption
    security_group_id: str | None = None  # securityGroupId: the node security group
    vpc_id: str | None = None  # vpcId
    # proxy: HTTP_PROXY, HTTPS_PROXY and NO_PROXY the nodes booted with last (None: no proxy, or outputs
    # from before the option existed, whose nodes had none)
    proxy: Mapping[str, str] | None = None
    # rancherCluster: {name, upgrades} of the imported cluster in Rancher (None: not registered)
    rancher_name: str | None = None
    rancher_upgrades: str | None = None
    # ingressController: the RKE2 ingress controller the servers' config.yaml names (None: outputs from
    # before it was exported, or not known then either: plan/ingress.py)
    ingress_controller: str | None = None
    # The helm-mode agent (the registration manifest's objects) was applied without retainOnDelete (a
    # release before rancherCluster.agentKeptOnDelete): deleting it would go before the cluster's.
    rancher_agent_unkept: bool = False
    # rancherCluster.url / registrationApplied (manifest mode: the servers' deploy controller is known to
    # have applied the registration manifest, and they skip it from then on: plan/rancher.py)
    rancher_url: str | None = None
    rancher_registration_applied: bool = False
    rancher_id: str | None = None  # rancherCluster.id: its ID there (c-xxxxx)
    # rancherCluster.agentEnvVars: the agent's environment set in Rancher (None: outputs from before it
    # was set, whose agent had none from this program)
    rancher_agent_env: Mapping[str, str] | None = None
    # podSecurityExemptions: the namespaces the Pod Security file of servers booted by the last update
    # exempts (hardening: cis; None: not exported)
    psa_exemptions: tuple[str, ...] | None = None

    @classmethod
    def from_outputs(cls, outputs: Mapping[str, Any]) -> Previous | None:
        """None for a stack without outputs (never deployed, or destroyed). Raises HistoryError when
        a value the guards need was saved unknown and cannot be recovered."""
        if not outputs or "nodes" not in outputs:
            return None
        unknown: list[str] = []
        nodes: list[PreviousNode] = []
        seen: dict[str, int] = {}
        raw_nodes = outputs.get("nodes")
        if _unknown(raw_nodes) or not isinstance(raw_nodes, (list, tuple)):
            unknown.append("nodes")
            raw_nodes = []
        for i, raw in enumerate(raw_nodes):
            if not isinstance(raw, Mapping):
                unknown.append(f"nodes[{i}]")
                continue
            for key in ("name", "pool", "roles", "availabilityZone"):
                if raw.get(key) is None or _unknown(raw.get(key)):
                    unknown.append(f"nodes[{i}].{key}")
            name, ip = str(raw.get("name")), raw.get("privateIp")
            if ip is None or _unknown(ip):
                # The instance failed (or its update did): its address is the one its name encodes,
                # which the program chose itself (plan/nodes.py).
                ip = address_in_name(name)
                if ip is None:
                    unknown.append(f"nodes[{i}].privateIp")
            pool = str(raw.get("pool"))
            # Outputs of the first releases had no `index`: nodes are listed in plan order.
            index = int(raw["index"]) if isinstance(raw.get("index"), int) else seen.get(pool, 0)
            seen[pool] = index + 1
            subnet = raw.get("subnet")
            subnet = str(subnet) if subnet and not _unknown(subnet) else ""
            public = raw.get("publicIp")
            tier = subnet.split("-")[0] if subnet else ("public" if public and not _unknown(public) else "private")
            nodes.append(PreviousNode(
                pool=pool, index=index, name=name,
                roles=tuple(raw.get("roles") or ()) if isinstance(raw.get("roles"), (list, tuple)) else (),
                private_ip=str(ip), availability_zone=str(raw.get("availabilityZone")),
                tier=tier, ip_block=raw["ipBlock"] if isinstance(raw.get("ipBlock"), int) else None,
                key_name=_known(raw.get("keyName")), instance_type=_known(raw.get("instanceType")),
                market=str(raw.get("market") or "on-demand"),
                instance_id=_known(raw.get("instanceId")), spot_request_id=_known(raw.get("spotRequestId")),
                spot_valid_until=_known(raw.get("spotValidUntil")),
                running={k: _known(v) for k, v in stale.running_values(raw).items()},
            ))
        for key in ("distribution", "kubernetesVersion"):
            if _unknown(outputs.get(key)):
                unknown.append(key)
        if unknown:
            raise HistoryError(
                f"this stack's last outputs hold values saved as unknown ({', '.join(unknown)}). The engine saves an "
                "output that way when the resource behind it failed during `pulumi up --continue-on-error`, but "
                "this program writes these values from its own plan, so these outputs were not written by it (or "
                "were edited). Running nodes are planned from them, so nothing was changed: look at "
                "`pulumi stack output --json`, and restore the outputs of the last good update (`pulumi stack "
                "history`, `pulumi stack export --version <n>`) before running `pulumi up` again"
            )
        given_subnets = outputs.get("subnets")
        subnets = given_subnets if isinstance(given_subnets, Mapping) else {}
        zones = {k: str(v.get("availabilityZone")) for k, v in subnets.items() if isinstance(v, Mapping)}
        ids = {k: str(v["id"]) for k, v in subnets.items()
               if isinstance(v, Mapping) and v.get("id") and not _unknown(v.get("id"))}
        cluster_id = _known(outputs.get("clusterId"))
        if cluster_id is None:  # outputs of releases that did not export it
            m = ENDPOINT_RE.match(str(outputs.get("controlPlaneEndpoint") or ""))
            cluster_id = m.group(1) if m else None
        location = _known(outputs.get("etcdSnapshotLocation"))
        running = outputs.get("etcdSnapshotsRunning", _MISSING)
        removed = []
        for raw in outputs.get("etcdMembersRemoved") or ():
            if isinstance(raw, Mapping) and raw.get("name"):
                ip = _known(raw.get("privateIp")) or address_in_name(str(raw["name"]))
                if ip:
                    removed.append(RemovedMember(str(raw["name"]), ip))
        rancher = outputs["rancherCluster"] if isinstance(outputs.get("rancherCluster"), Mapping) else {}
        return cls(
            distribution=outputs.get("distribution"),
            kubernetes_version=outputs.get("kubernetesVersion"),
            nodes=tuple(nodes),
            subnet_zones=zones,
            has_agent_token=bool(_known(outputs.get("rke2AgentTokenParameter"))),
            ebs_csi=bool(outputs["ebsCsi"]) if outputs.get("ebsCsi") is not None else None,
            hardening=outputs.get("hardening"),
            proxy=dict(outputs["proxy"]) if isinstance(outputs.get("proxy"), Mapping) and outputs["proxy"] else None,
            has_kubeconfig_parameter=bool(_known(outputs.get("rke2KubeconfigParameter"))),
            # ccmReleaseStatus: stacks deployed before installedInCluster existed
            has_cluster_releases=bool(outputs.get("installedInCluster")) or outputs.get("ccmReleaseStatus") is not None,
            snapshot_location=location,
            installed_in_cluster=tuple(outputs.get("installedInCluster") or ()),
            manifest_mode=bool(_known(outputs.get("rke2ManifestPath"))),
            cluster_id=cluster_id,
            version_confirmed=_known(outputs.get("kubernetesVersionConfirmed")),
            legacy_version="kubernetesVersionConfirmed" not in outputs,
            ccm_image=_known(outputs.get("ccmImage")),
            etcd_removed=tuple(removed),
            snapshots_running=(Snapshots.from_location(location) if running is _MISSING
                               else Snapshots.from_output(running)),
            bucket_managed=bool(outputs["etcdBucketManaged"]) if outputs.get("etcdBucketManaged") is not None else None,
            subnet_ids=ids,
            manifest_files=tuple(str(f) for f in outputs.get("rke2Manifests") or ()),
            manifests_removing=tuple(str(f) for f in outputs.get("rke2ManifestsRemoving") or ()),
            keyed_children="kubernetesVersionConfirmed" in outputs,
            region=_known(outputs.get("region")),
            endpoint_mode=_known(outputs.get("controlPlaneEndpointType")),
            version_assumed=outputs.get("kubernetesVersionAssumed") is True,
            security_group_id=_known(outputs.get("securityGroupId")),
            vpc_id=_known(outputs.get("vpcId")),
            rancher_name=_known((outputs.get("rancherCluster") or {}).get("name"))
            if isinstance(outputs.get("rancherCluster"), dict) else None,
            rancher_upgrades=_known((outputs.get("rancherCluster") or {}).get("upgrades"))
            if isinstance(outputs.get("rancherCluster"), dict) else None,
            ingress_controller=_known(outputs.get("ingressController")),
            rancher_agent_unkept=isinstance(outputs.get("rancherCluster"), dict) and bool(outputs.get("installedInCluster"))
            and outputs["rancherCluster"].get("agentKeptOnDelete") is not True,
            rancher_url=_known((outputs.get("rancherCluster") or {}).get("url"))
            if isinstance(outputs.get("rancherCluster"), dict) else None,
            rancher_registration_applied=isinstance(outputs.get("rancherCluster"), dict)
            and outputs["rancherCluster"].get("registrationApplied") is True,
            rancher_id=_known(rancher.get("id")),
            rancher_agent_env=(dict(rancher["agentEnvVars"]) if isinstance(rancher.get("agentEnvVars"), Mapping)
                               else None),
            psa_exemptions=(tuple(str(n) for n in outputs["podSecurityExemptions"])
                            if isinstance(outputs.get("podSecurityExemptions"), (list, tuple)) else None),
        )

    @property
    def has_snapshots(self) -> bool:
        return self.snapshot_location is not None

    def pool_nodes(self, pool: str) -> dict[int, PreviousNode]:
        return {n.index: n for n in self.nodes if n.pool == pool}

    @property
    def etcd_members(self) -> tuple[PreviousNode, ...]:
        return tuple(n for n in self.nodes if n.is_etcd)


def _known(value: Any) -> str | None:
    return None if value is None or _unknown(value) or value == "" else value


# ---- reading ----------------------------------------------------------------------------------

class HistoryError(Exception):
    pass


def read() -> Previous | None:
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


# ---- confirmations ----------------------------------------------------------------------------

def parse_codes(value: str | None) -> frozenset[str]:
    return frozenset(c for c in re.split(r"[\s,]+", value or "") if c)


@dataclass(frozen=True)
class Observed:
    """What this update can know beyond the last outputs: the cluster as read (or why not) and the
    user's confirmation codes."""
    live: Any = None  # running.LiveCluster, or None
    unreadable: str | None = None  # why the cluster was not read
    codes: frozenset[str] = frozenset()

    @property
    def source(self) -> str:
        return "the cluster" if self.live is not None else "this stack's last outputs"

    def confirmed(self, statement: Statement) -> bool:
        return statement.code in self.codes

    def no_read(self) -> str:
        return (f"the cluster could not be read ({self.unreadable})" if self.unreadable
                else "no kubeconfig reaches the cluster")


# ---- versions ---------------------------------------------------------------------------------

def parse_version(version: str) -> tuple[int, int, int, int] | None:
    """(minor, patch, build, RKE1 sub-build): ordered as the releases are."""
    m = _VERSION_RE.match(version or "")
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or m.group(5) or 0), int(m.group(4) or 0))


def runs_version(kubelet: str, target: str) -> bool:
    """A kubelet's reported version is `target` (minor and patch; RKE2's build when reported:
    kubelets report v1.X.Y+rke2rN, RKE1 kubelets v1.X.Y without RKE's -rancherN-N)."""
    k, t = parse_version(kubelet), parse_version(target)
    if k is None or t is None:
        return False
    return k[:2] == t[:2] and ("+rke2r" not in kubelet or k[2] == t[2])


def _image_minor(image: str | None) -> int | None:
    m = re.search(r":v1\.(\d+)\.", image or "")
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class VersionState:
    """Whether the last version change (to `target`) is known complete on every node."""
    target: str | None
    complete: bool
    confirmed: str | None  # the version every node is known to run (None: not known)
    servers_minor: int | None  # the lowest minor any server is known to run
    statement: Statement | None = None
    lagging: Mapping[str, str] = field(default_factory=dict)  # node -> version, as read from the cluster
    applying: tuple[str, ...] = ()
    how: str = ""  # how completeness is known
    # Complete only by assumption: outputs from before kubernetesVersionConfirmed (or an update that
    # kept that assumption, kubernetesVersionAssumed) say nothing about what the nodes run.
    assumed: bool = False


def version_state(previous: Previous | None, observed: Observed, cluster_id: str) -> VersionState:
    if previous is None or previous.kubernetes_version is None:
        return VersionState(None, True, None, None)
    target = previous.kubernetes_version
    tv = parse_version(target)
    recorded = previous.version_confirmed
    assumed = False
    if previous.legacy_version:
        # Releases before kubernetesVersionConfirmed held the CCM one minor back in the update that
        # raised the minor (and moved it on the next): a held CCM means the rollout just started.
        # They did not hold it on a patch change, so otherwise the version is only assumed to run
        # (review finding 7): fine for what tolerates a patch skew, not for the etcd 3.6 rule.
        held = _image_minor(previous.ccm_image)
        recorded = None if (held is not None and tv and held < tv[0]) else target
        assumed = recorded == target
    elif previous.version_assumed and recorded == target:
        assumed = True
    names = ", ".join(sorted(n.name for n in previous.nodes)) or "none"
    statement = Statement("version", f"every node of cluster {cluster_id} runs Kubernetes {target} ({names})")
    live = observed.live
    if recorded == target and not (assumed and live is not None and live.nodes):
        if not assumed:
            return VersionState(target, True, target, tv[0] if tv else None, statement,
                                how="recorded by an earlier update")
        if observed.confirmed(statement):
            return VersionState(target, True, target, tv[0] if tv else None, statement, how="confirmed by you")
        return VersionState(target, True, target, tv[0] if tv else None, statement, assumed=True,
                            how="assumed from outputs that predate kubernetesVersionConfirmed")
    if live is not None and live.nodes:
        lagging = {n.name: n.kubelet_version for n in live.nodes if not runs_version(n.kubelet_version, target)}
        server_minors = [v[0] for v in (parse_version(n.kubelet_version) for n in live.nodes
                                        if n.control_plane or n.etcd) if v]
        servers_minor = min(server_minors) if server_minors else None
        complete = not lagging
        return VersionState(target, complete, target if complete else recorded, servers_minor, statement,
                            lagging=lagging, applying=live.applying, how="read from the cluster")
    if observed.confirmed(statement):
        return VersionState(target, True, target, tv[0] if tv else None, statement, how="confirmed by you")
    known = parse_version(recorded or "")
    servers_minor = known[0] if known else (tv[0] - 1 if tv else None)
    return VersionState(target, False, recorded, servers_minor, statement)


# ---- etcd membership --------------------------------------------------------------------------

@dataclass(frozen=True)
class PlannedMember:
    """What the guard needs of a planned node: identity and the inputs whose change replaces it."""
    pool: str
    index: int
    private_ip: str
    availability_zone: str
    tier: str
    key_name: str | None
    is_etcd: bool
    name: str = ""


@dataclass(frozen=True)
class EtcdState:
    """etcd's membership as far as this update knows it."""
    listed: tuple[str, ...]  # members etcd lists
    down: tuple[str, ...]  # listed members that do not run (removed instances, Nodes not Ready)
    exact: bool  # read from the cluster or confirmed: more than one member may go in one update
    statement: Statement | None = None
    how: str = "this stack's last outputs"


def etcd_state(previous: Previous | None, observed: Observed, cluster_id: str) -> EtcdState:
    if previous is None:
        return EtcdState((), (), True)
    running = sorted(n.name for n in previous.etcd_members)
    statement = Statement("etcd", f"etcd of cluster {cluster_id} lists exactly these members, all healthy: "
                                  f"{', '.join(running) or 'none'}")
    live = observed.live
    if live is not None:
        listed = live.etcd_members
        # A removed server's Node stays NotReady until it is deleted (then etcd drops the member).
        gone = set(live.not_ready) | {m.name for m in previous.etcd_removed}
        down = tuple(n for n in listed if n in gone)
        return EtcdState(listed, down, True, statement, "the cluster")
    if observed.confirmed(statement):
        return EtcdState(tuple(running), (), True, statement, "your confirmation")
    pending = sorted({m.name for m in previous.etcd_removed} - set(running))
    return EtcdState(tuple(sorted(set(running) | set(pending))), tuple(pending), False, statement)


def etcd_changes(previous: Previous | None, planned: Iterable[PlannedMember]) -> tuple[list[str], list[str]]:
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


def etcd_removed_after(previous: Previous | None, planned: Sequence[PlannedMember], state: EtcdState,
                       observed: Observed) -> list[dict[str, str]]:
    """etcdMembersRemoved for this update's outputs: members etcd may still list that the stack no
    longer runs (the next update counts them, and never gives their address to a new node)."""
    if previous is None:
        return []
    planned_etcd = {p.name for p in planned if p.is_etcd}
    deleted, _ = etcd_changes(previous, planned)
    if observed.live is not None:
        still = set(observed.live.etcd_members) - planned_etcd
    elif state.exact:
        still = set()
    else:
        still = {m.name for m in previous.etcd_removed}
    names = sorted((still | set(deleted)) - planned_etcd)
    known = {m.name: m.private_ip for m in previous.etcd_removed} | {n.name: n.private_ip for n in previous.nodes}
    out = []
    for name in names:
        ip = known.get(name) or address_in_name(name)
        if ip:
            out.append({"name": name, "privateIp": ip})
    return out


# ---- what a running stack must not change -----------------------------------------------------



# ---- etcd snapshots ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SnapshotTransition:
    """What the running servers snapshot with after this update, and what their role must reach."""
    running: Snapshots | None  # etcdSnapshotsRunning after this update
    grant: tuple[Snapshots, ...]  # locations the snapshotting role may write (running ones included)
    warning: str | None = None
    statement: Statement | None = None


def _settings(s: Snapshots | None) -> str:
    if s is None:
        return "no S3 snapshots"
    every = f" every {number(s.interval_hours)} h" if s.interval_hours else ""
    keep = f", {number(s.retention)} kept" if s.retention else ""
    return f"snapshots to {s.location}{every}{keep}"


def snapshot_transition(previous: Previous | None, configured: Snapshots | None, observed: Observed,
                        cluster_id: str, distribution: str, steps: str = "") -> SnapshotTransition:
    """Servers read their snapshot settings at start (RKE2 config.yaml; RKE1 `rke up`), so a change
    on a running cluster reaches them only by hand. Until the user confirms they run the new
    settings, their role keeps its grant on where they still write, and every update says so."""
    if previous is None or not previous.nodes:
        return SnapshotTransition(configured, (configured,) if configured else ())
    running = previous.snapshots_running
    if running is None and configured is None:
        return SnapshotTransition(None, ())
    if running is not None and configured is not None and running.same_as(configured):
        return SnapshotTransition(configured, (configured,))
    statement = Statement("snapshots", f"every server of cluster {cluster_id} runs {_settings(configured)}")
    if observed.confirmed(statement):
        return SnapshotTransition(configured, (configured,) if configured else (), statement=statement)
    grant = tuple(s for s in (running, configured) if s is not None)
    where = ("`rke up` with the new rkeClusterYml reconfigures every etcd node" if distribution == "rke" else
             f"on each server, one at a time: {steps or 'edit /etc/rancher/rke2/config.yaml'}, then "
             "`systemctl restart rke2-server` and wait until the node is Ready before the next")
    keep = (f"; until then their role keeps its grant on {running.location}, where they still write, and "
            "`etcdSnapshotsRunning` names it (snapshots to restore from are there)" if running is not None else "")
    warning = (f"rke-aws:etcdBackup: the running servers take {_settings(running)}, and this stack now configures "
               f"{_settings(configured)}; servers read these settings only when they start, so only servers booted "
               f"from now on have them. To move the running ones: {where}. Then {statement.how()}{keep}")
    return SnapshotTransition(running, grant, warning, statement)
