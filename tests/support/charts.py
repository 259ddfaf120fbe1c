"""Readers of what the program hands Helm (the EBS CSI driver's release values)."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from rke_aws.settings import versions

RELEASE = "kubernetes:helm.sh/v3:Release"


def ebs_release_values(run) -> dict | None:
    for rel in run.of_type(RELEASE):
        if rel.inputs["chart"] == versions.EBS_CSI_CHART_NAME:
            return rel.inputs["values"]
    for param in run.of_type("aws:ssm/parameter:Parameter"):
        if param.inputs["name"].endswith("/manifests/ebs-csi.yaml"):
            return yaml.safe_load(yaml.safe_load(param.inputs["insecureValue"])["spec"]["valuesContent"])
    return None


# Helm and the scheduler, as the chart tests judge rendered values (tests/unit/test_identity_*.py).

def coalesce(user: Any, defaults: Any) -> Any:
    """Helm's CoalesceValues: user maps merge over default maps, a user null deletes, lists and
    scalars replace."""
    if isinstance(user, dict) and isinstance(defaults, dict):
        out = copy.deepcopy(defaults)
        for k, v in user.items():
            if v is None:
                out.pop(k, None)
            elif k in out:
                out[k] = coalesce(v, out[k])
            else:
                out[k] = copy.deepcopy(v)
        return out
    return copy.deepcopy(user)


def unknown_keys(user: Any, defaults: Any, path: str = "") -> list[str]:
    """Keys the chart does not define: Helm ignores them silently, so a misspelt one does nothing."""
    out = []
    if isinstance(user, dict):
        for k, v in user.items():
            if not isinstance(defaults, dict) or k not in defaults:
                out.append(f"{path}{k}")
            elif isinstance(v, dict) and isinstance(defaults[k], dict) and defaults[k]:
                out += unknown_keys(v, defaults[k], f"{path}{k}.")
    return out


# Nodes before the CCM initialises them (domain.md section 3).
UNINIT = {"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}
NODES = {
    "rke2": {"server": ({"node-role.kubernetes.io/control-plane": "true", "node-role.kubernetes.io/etcd": "true"},
                        [UNINIT]),
             "agent": ({}, [UNINIT])},
    "rke": {"controlplane+etcd": ({"node-role.kubernetes.io/controlplane": "true", "node-role.kubernetes.io/etcd": "true"},
                                  [UNINIT, {"key": "node-role.kubernetes.io/controlplane", "value": "true", "effect": "NoSchedule"},
                                   {"key": "node-role.kubernetes.io/etcd", "value": "true", "effect": "NoExecute"}]),
            "worker": ({"node-role.kubernetes.io/worker": "true"}, [UNINIT])},
}

def tolerates(tol: dict, taint: dict) -> bool:
    if tol.get("effect") and tol["effect"] != taint["effect"]:
        return False
    if not tol.get("key"):
        return tol.get("operator") == "Exists"
    if tol["key"] != taint["key"]:
        return False
    return tol.get("operator", "Equal") == "Exists" or tol.get("value", "") == taint.get("value", "")


def schedules(values: dict, labels: dict, taints: list) -> bool:
    selector = values.get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    return all(any(tolerates(t, taint) for t in values.get("tolerations") or []) for taint in taints
               if taint["effect"] in ("NoSchedule", "NoExecute"))
