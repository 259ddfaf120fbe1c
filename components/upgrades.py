"""RKE2 upgrades as a config change: system-upgrade-controller and its two Plans (docs.rke2.io,
"Automated upgrades"), carrying exactly the configured `kubernetesVersion`.

The server Plan upgrades control-plane nodes one at a time (concurrency 1, cordoned); the agent
Plan's `prepare` step waits until the server Plan has finished, then upgrades agents one at a time.
Nodes are upgraded in place by the rke2-upgrade image; no instance is replaced.

`plans()` is pure. Two ways to the cluster:
- `SystemUpgrades` (ccm.install: helm): through the kubernetes provider, once `kubeconfig` is set;
- `upgrade_manifests()` (ccm.install: manifest): files the servers mirror from SSM into RKE2's
  manifests directory (components/manifests.py), no kubeconfig needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from . import versions
from .bootstrap import dump_yaml

NAMESPACE = "system-upgrade"  # the controller's namespace: Plans must live there
SERVICE_ACCOUNT = "system-upgrade"
SERVER_PLAN = "rke2-server"
AGENT_PLAN = "rke2-agent"
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"


def plans(version: str) -> list[dict[str, Any]]:
    """The server and agent Plans for RKE2 `version` (as in RKE2's documented example, with
    `version` instead of a channel, so the cluster runs what the stack says)."""
    upgrade = {"image": versions.RKE2_UPGRADE_IMAGE}
    common = {"concurrency": 1, "cordon": True, "serviceAccountName": SERVICE_ACCOUNT, "version": version,
              "upgrade": upgrade}
    server = {
        **common,
        "nodeSelector": {"matchExpressions": [{"key": CONTROL_PLANE_LABEL, "operator": "In", "values": ["true"]}]},
        # Servers carry no taint by default, but a dedicated control plane may (CriticalAddonsOnly).
        "tolerations": [{"operator": "Exists"}],
    }
    agent = {
        **common,
        "nodeSelector": {"matchExpressions": [{"key": CONTROL_PLANE_LABEL, "operator": "DoesNotExist"}]},
        # Agents only after every server runs the new version.
        "prepare": {"image": versions.RKE2_UPGRADE_IMAGE, "args": ["prepare", SERVER_PLAN]},
    }
    return [
        {"apiVersion": "upgrade.cattle.io/v1", "kind": "Plan",
         "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec}
        for name, spec in ((SERVER_PLAN, server), (AGENT_PLAN, agent))
    ]


def upgrade_manifests(version: str) -> dict[str, str]:
    """Manifest-mode files (name -> content; `.url`: a manifest to download), for the servers' sync."""
    crd, controller = versions.SUC_MANIFEST_URLS
    return {
        "system-upgrade-controller-crd.url": crd,
        "system-upgrade-controller.url": controller,
        "upgrade-plans.yaml": "---\n".join(dump_yaml(p, sort_keys=True) for p in plans(version)),
    }


@dataclass(frozen=True)
class SystemUpgradesArgs:
    provider: k8s.Provider
    version: str


class SystemUpgrades(pulumi.ComponentResource):
    """system-upgrade-controller (pinned release manifests) and the Plans, through the kubernetes provider."""

    def __init__(self, name: str, args: SystemUpgradesArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("rke-aws:upgrades:SystemUpgrades", name, None, opts)
        crd_url, controller_url = versions.SUC_MANIFEST_URLS
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        crd = k8s.yaml.v2.ConfigFile(f"{name}-suc-crd", file=crd_url, opts=child)
        controller = k8s.yaml.v2.ConfigFile(
            f"{name}-suc", file=controller_url, opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[crd])))
        self.plans = [
            k8s.apiextensions.CustomResource(
                f"{name}-{plan['metadata']['name']}-plan",
                api_version=plan["apiVersion"],
                kind=plan["kind"],
                metadata=plan["metadata"],
                spec=plan["spec"],
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[controller])),
            )
            for plan in plans(args.version)
        ]
        self.register_outputs({"version": args.version})
