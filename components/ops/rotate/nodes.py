"""What rotation reads on Nodes and Pods (the objects the Kubernetes API answers with), and one node as the
stack's outputs and the cluster show it (NodeView). Pure: plain mappings in, facts out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...plan import stale

# On a Node this rotation cordoned: "<holder> <unix time>" (resume finds it; a new Node never has it).
ROTATION_ANNOTATION = "rke-aws/rotation"
ETCD_LABEL = "node-role.kubernetes.io/etcd"
VOTER_CONDITION = "EtcdIsVoter"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def _conditions(node: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(c.get("type")): c for c in (node.get("status") or {}).get("conditions") or [] if isinstance(c, Mapping)}


def is_ready(node: Mapping[str, Any] | None) -> bool:
    return node is not None and (_conditions(node).get("Ready") or {}).get("status") == "True"


def kubelet_version(node: Mapping[str, Any] | None) -> str:
    return str(((node or {}).get("status") or {}).get("nodeInfo", {}).get("kubeletVersion") or "")


def is_etcd(node: Mapping[str, Any]) -> bool:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return str(labels.get(ETCD_LABEL, "")).lower() == "true"


def member_status(node: Mapping[str, Any]) -> str | None:
    """voter | learner | unhealthy | not-member from EtcdIsVoter; None without the condition (releases
    before it: then a Ready etcd Node counts as a voter)."""
    cond = _conditions(node).get(VOTER_CONDITION)
    if cond is None:
        return None
    if cond.get("status") == "True":
        return "voter"
    return {"MemberIsLearner": "learner", "Unhealthy": "unhealthy", "NotAMember": "not-member"}.get(
        str(cond.get("reason")), "unhealthy")


def is_member(node: Mapping[str, Any]) -> bool:
    return is_etcd(node) and member_status(node) != "not-member"


def is_voter(node: Mapping[str, Any]) -> bool:
    status = member_status(node)
    return status == "voter" or (status is None and is_ready(node))


def terminating(node: Mapping[str, Any] | None) -> bool:
    return bool(((node or {}).get("metadata") or {}).get("deletionTimestamp"))


def annotation(node: Mapping[str, Any] | None) -> str | None:
    return (((node or {}).get("metadata") or {}).get("annotations") or {}).get(ROTATION_ANNOTATION)


def _owner_kinds(pod: Mapping[str, Any]) -> set[str]:
    return {str(o.get("kind")) for o in (pod.get("metadata") or {}).get("ownerReferences") or [] if isinstance(o, Mapping)}


def left_alone(pod: Mapping[str, Any]) -> bool:
    """Pods a drain does not evict (kubectl pkg/drain/filters.go): DaemonSet pods (their controller puts
    them back at once), mirror pods (the kubelet's static pods: RKE2's control plane) and finished pods."""
    meta = pod.get("metadata") or {}
    return ("DaemonSet" in _owner_kinds(pod) or MIRROR_ANNOTATION in (meta.get("annotations") or {})
            or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"))


def pod_name(pod: Mapping[str, Any]) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return str(meta.get("namespace") or "default"), str(meta.get("name"))


@dataclass
class NodeView:
    """One node as the stack's outputs and the cluster show it."""
    out: Mapping[str, Any]
    live: Mapping[str, Any] | None
    stale: stale.StaleNode | None

    @property
    def name(self) -> str:
        return str(self.out.get("name"))

    @property
    def label(self) -> str:
        return f"{self.name} ({self.out.get('pool')}-{self.out.get('index')})"

    @property
    def urn(self) -> str | None:
        urn = self.out.get("urn")
        return str(urn) if urn else None

    @property
    def is_server(self) -> bool:
        return "etcd" in (self.out.get("roles") or ()) or "controlplane" in (self.out.get("roles") or ())

    @property
    def is_etcd(self) -> bool:
        return "etcd" in (self.out.get("roles") or ())

    @property
    def first_server(self) -> bool:
        return bool(self.out.get("firstServer"))

    @property
    def cordoned_by_rotation(self) -> bool:
        return annotation(self.live) is not None
