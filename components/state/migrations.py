"""Every shape of the stack outputs a release of this program wrote, read as today's `ClusterState`.

Outputs are read back raw (a mapping of plain values, numbers as doubles); each `Migration` turns one older
shape into the next one, pure dict -> dict, in order, then the model validates the result. Each has a test
with outputs of the release that wrote that shape (tests/unit/state/test_migrations.py, tests/data/outputs/).

Values saved unknown: the engine stores an output that was unknown when the stack's outputs were saved
as UNKNOWN_PLACEHOLDER (the outputs of resources that failed under `pulumi up --continue-on-error`:
pulumi/pulumi sdk/python/lib/pulumi/runtime/resource.py resolves them unknown, pkg/resource/stack/
deployment.go serialises an unknown as this placeholder; read back it is this string, None in an update or
an `Unknown` in a preview, sdk/python/lib/pulumi/runtime/rpc.py deserialize_property). What only this
program's own plan writes (a node's name, pool, roles, zone and address, the distribution and version)
cannot be unknown in outputs it wrote: those refuse (HistoryError); anything else unknown reads as absent.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .model import STATE_VERSION, ClusterState

UNKNOWN_PLACEHOLDER = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
_NODE_NAME_RE = re.compile(r"^ip-(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})\.")
ENDPOINT_RE = re.compile(r"^api\.([a-z][a-z0-9-]*)\.rke-aws\.internal\Z")
# What manifest mode delivered before rke2Manifests recorded it (0.1 and earlier: 00b944d components/
# manifests.py): the CCM and the upgrade controller with its Plans, and the EBS CSI driver with its key.
LEGACY_MANIFESTS = ("ccm.yaml", "upgrade-plans.yaml", "system-upgrade-controller.yaml",
                    "system-upgrade-controller-crd.yaml")
LEGACY_EBS_MANIFESTS = ("ebs-csi.yaml", "ebs-csi-credentials.yaml")


class HistoryError(Exception):
    """The stack's last outputs cannot be read (nothing is registered)."""


def unknown(value: Any) -> bool:
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


Raw = dict[str, Any]


@dataclass(frozen=True)
class Migration:
    """One older shape: `applies` says whether raw outputs have it, `apply` returns them in the next shape."""
    name: str
    since: str  # the commit whose outputs no longer have this shape
    applies: Callable[[Raw], bool]
    apply: Callable[[Raw], Raw]


def _nodes(raw: Raw) -> list[Raw]:
    return [n for n in raw.get("nodes") or () if isinstance(n, dict)]


def _each_node(fix: Callable[[Raw, Raw], None]) -> Callable[[Raw], Raw]:
    def apply(raw: Raw) -> Raw:
        out = dict(raw)
        out["nodes"] = [dict(n) for n in _nodes(raw)]
        for node in out["nodes"]:
            fix(out, node)
        return out
    return apply


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# 1. Outputs of the first releases had no `index`: nodes are listed in plan order.
def _index(raw: Raw) -> Raw:
    out = dict(raw)
    seen: dict[str, int] = {}
    nodes = []
    for node in _nodes(raw):
        node = dict(node)
        pool = str(node.get("pool"))
        if not _number(node.get("index")):
            node["index"] = seen.get(pool, 0)
        seen[pool] = int(node["index"]) + 1
        nodes.append(node)
    out["nodes"] = nodes
    return out


# 2. A node whose address was saved unknown (or not at all): the one its name encodes, which the program
#    chose itself (components/plan/nodes.py); anything else refuses (io).
def _address(_: Raw, node: Raw) -> None:
    if node.get("privateIp") is None or unknown(node.get("privateIp")):
        node["privateIp"] = address_in_name(str(node.get("name")))


# 3. No `subnet` (the first releases): the tier alone, public where the node has a public address.
def _tier(_: Raw, node: Raw) -> None:
    if not node.get("subnet") or unknown(node.get("subnet")):
        public = node.get("publicIp")
        node["subnet"] = "public" if public and not unknown(public) else "private"


# 4. No `market`: those releases launched on-demand instances only (instanceType stays unknown: None).
def _market(_: Raw, node: Raw) -> None:
    if not node.get("market"):
        node["market"] = "on-demand"


# 5. No `clusterId` (releases that did not export it): the one the endpoint name holds.
def _cluster_id(raw: Raw) -> Raw:
    m = ENDPOINT_RE.match(str(raw.get("controlPlaneEndpoint") or ""))
    return {**raw, "clusterId": m.group(1) if m else None}


# 6. No `etcdSnapshotsRunning` (before 5e0c40f): what the servers were configured with last, interval and
#    retention unknown.
def _snapshots_running(raw: Raw) -> Raw:
    location = raw.get("etcdSnapshotLocation")
    if not isinstance(location, str) or not location.startswith("s3://"):
        return {**raw, "etcdSnapshotsRunning": None}
    bucket, _, folder = location[len("s3://"):].partition("/")
    return {**raw, "etcdSnapshotsRunning": {"bucket": bucket, "folder": folder}}


# 7. No `kubernetesVersionConfirmed` (before 5e0c40f): the version was not recorded as confirmed, and the
#    children were still named by list position.
def _legacy_version(raw: Raw) -> Raw:
    return {**raw, "versionRecorded": False, "childrenKeyed": False}


# 8. `ccmReleaseStatus` without `installedInCluster` (before 5195660): releases were installed through a
#    kubeconfig, which ones is not recorded.
def _releases_unnamed(raw: Raw) -> Raw:
    return {**raw, "releasesUnnamed": True}


# 9. `rke2ManifestPath` without `rke2Manifests` (before 5e0c40f): what manifest mode delivered then.
def _manifests(raw: Raw) -> Raw:
    files = LEGACY_MANIFESTS + (LEGACY_EBS_MANIFESTS if raw.get("ebsCsi") else ())
    return {**raw, "rke2Manifests": sorted(files)}


# 11. An `etcdMembersRemoved` entry without its address: the one its name encodes (else it is left out).
def _removed_addresses(raw: Raw) -> Raw:
    removed = []
    for entry in raw.get("etcdMembersRemoved") or ():
        if not isinstance(entry, Mapping) or not entry.get("name"):
            continue
        ip = entry.get("privateIp") or address_in_name(str(entry["name"]))
        if ip:
            removed.append({**entry, "privateIp": ip})
    return {**raw, "etcdMembersRemoved": removed}


# 12. `subnets` entries whose ID was saved unknown: the zone stays, the ID is left out (not a map: none).
def _subnets(raw: Raw) -> Raw:
    given = raw.get("subnets")
    subnets = {}
    for key, value in (given.items() if isinstance(given, Mapping) else ()):
        if isinstance(value, Mapping):
            subnets[key] = {k: v for k, v in value.items() if k != "id" or (v and not unknown(v))}
            subnets[key]["availabilityZone"] = str(value.get("availabilityZone"))
    return {**raw, "subnets": subnets}


# 13. `rancherCluster` that is not a map: not registered.
def _rancher(raw: Raw) -> Raw:
    return {**raw, "rancherCluster": None}


def _bad_removed(raw: Raw) -> bool:
    return any(not isinstance(e, Mapping) or not e.get("privateIp") for e in raw.get("etcdMembersRemoved") or ())


def _bad_subnets(raw: Raw) -> bool:
    given = raw.get("subnets")
    if given is None:
        return False
    return not isinstance(given, Mapping) or any(
        not isinstance(v, Mapping) or "id" in v and (not v["id"] or unknown(v["id"])) for v in given.values())


MIGRATIONS: tuple[Migration, ...] = (
    Migration("node index from list order", "00b944d",
              lambda raw: any(not _number(n.get("index")) for n in _nodes(raw)), _index),
    Migration("node address from its name", "b458892",
              lambda raw: any(n.get("privateIp") is None or unknown(n.get("privateIp")) for n in _nodes(raw)),
              _each_node(_address)),
    Migration("node subnet tier from its public address", "b458892",
              lambda raw: any(not n.get("subnet") or unknown(n.get("subnet")) for n in _nodes(raw)),
              _each_node(_tier)),
    Migration("node market on-demand", "02e3062", lambda raw: any(not n.get("market") for n in _nodes(raw)),
              _each_node(_market)),
    Migration("cluster ID from the endpoint name", "b458892", lambda raw: raw.get("clusterId") is None,
              _cluster_id),
    Migration("running snapshots from the snapshot location", "5e0c40f",
              lambda raw: "etcdSnapshotsRunning" not in raw, _snapshots_running),
    Migration("version not recorded, children by position", "5e0c40f",
              lambda raw: "kubernetesVersionConfirmed" not in raw, _legacy_version),
    Migration("cluster releases without their names", "5195660",
              lambda raw: raw.get("ccmReleaseStatus") is not None and not raw.get("installedInCluster"),
              _releases_unnamed),
    Migration("manifests of manifest mode before rke2Manifests", "5e0c40f",
              lambda raw: bool(raw.get("rke2ManifestPath")) and not raw.get("rke2Manifests"), _manifests),
    # 10: ebsCsi, hardening, etcdBucketManaged, proxy, rancherCluster, region, controlPlaneEndpointType and
    #     the other later keys, absent: the model's None (what those releases had: no such option).
    Migration("removed etcd members' addresses from their names", "5e0c40f", _bad_removed, _removed_addresses),
    Migration("subnets without a known ID", "b458892", _bad_subnets, _subnets),
    Migration("rancherCluster not a map", "e6229bc",
              lambda raw: raw.get("rancherCluster") is not None and not isinstance(raw.get("rancherCluster"), Mapping),
              _rancher),
)


def _known(value: Any) -> bool:
    return value is not None and value != "" and not unknown(value)


def _scrub(raw: Raw) -> Raw:
    """Values saved unknown, and empty strings (what some outputs hold for "none"), read as absent: at the
    top level, in each node, in rancherCluster and etcdSnapshotsRunning (maps written as given, like
    ccmValues or proxy, are kept as they are)."""
    out = {k: v for k, v in raw.items() if _known(v)}
    out["nodes"] = [{k: v for k, v in n.items() if _known(v)} for n in _nodes(raw)]
    for key in ("rancherCluster", "etcdSnapshotsRunning"):
        if isinstance(out.get(key), Mapping):
            out[key] = {k: v for k, v in out[key].items() if _known(v)}
    return out


def _refusals(raw: Raw) -> list[str]:
    """What only this program's plan writes and yet was saved unknown (module docstring)."""
    found: list[str] = []
    nodes = raw.get("nodes")
    if unknown(nodes) or not isinstance(nodes, (list, tuple)):
        return ["nodes"]
    for i, node in enumerate(nodes):
        if not isinstance(node, Mapping):
            found.append(f"nodes[{i}]")
            continue
        found += [f"nodes[{i}].{k}" for k in ("name", "pool", "roles", "availabilityZone")
                  if node.get(k) is None or unknown(node.get(k))]
        ip = node.get("privateIp")
        if (ip is None or unknown(ip)) and address_in_name(str(node.get("name"))) is None:
            found.append(f"nodes[{i}].privateIp")
    found += [k for k in ("distribution", "kubernetesVersion") if unknown(raw.get(k))]
    return found


def migrate(outputs: Mapping[str, Any]) -> Raw:
    """Raw outputs of any release, in today's shape (plain data, not validated yet)."""
    raw: Raw = dict(outputs)
    for migration in MIGRATIONS:
        if migration.applies(raw):
            raw = migration.apply(raw)
    raw["stateVersion"] = STATE_VERSION  # 14: the flat outputs of 0.x releases had no version
    return raw


def from_outputs(outputs: Mapping[str, Any] | None) -> ClusterState | None:
    """The state in a cluster's last outputs; None for a cluster without any (never deployed, or destroyed).
    Raises HistoryError when a value the planner needs was saved unknown and cannot be recovered."""
    if not outputs or "nodes" not in outputs:
        return None
    unknown_keys = _refusals(dict(outputs))
    if unknown_keys:
        raise HistoryError(
            f"this stack's last outputs hold values saved as unknown ({', '.join(unknown_keys)}). The engine saves an "
            "output that way when the resource behind it failed during `pulumi up --continue-on-error`, but "
            "this program writes these values from its own plan, so these outputs were not written by it (or "
            "were edited). Running nodes are planned from them, so nothing was changed: look at "
            "`pulumi stack output --json`, and restore the outputs of the last good update (`pulumi stack "
            "history`, `pulumi stack export --version <n>`) before running `pulumi up` again"
        )
    return ClusterState.model_validate(_scrub(migrate(outputs)))
