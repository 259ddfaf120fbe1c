"""RKE2 upgrades as a config change: system-upgrade-controller and its two Plans (docs.rke2.io,
"Automated upgrades"), carrying exactly the configured `kubernetesVersion`.

The server Plan upgrades control-plane nodes one at a time (concurrency 1, cordoned); the agent
Plan's `prepare` step waits until the server Plan has finished, then upgrades agents one at a time.
Nodes are upgraded in place by the rke2-upgrade image; no instance is replaced.

`plans()` (components/plan/cluster_documents.py) is pure. Two ways to the cluster:
- `SystemUpgrades` (ccm.install: helm): through the kubernetes provider, once `kubeconfig` is set;
- `upgrade_manifests()` (ccm.install: manifest): files the servers mirror from SSM into RKE2's
  manifests directory (components/cluster/manifests.py), no kubeconfig needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ..plan.cluster_documents import plans
from ..settings import versions


@dataclass(frozen=True)
class SystemUpgradesArgs:
    provider: k8s.Provider
    version: str
    etcd_only: bool = False  # split roles: etcd-only servers get their own Plan (cluster_documents.plans)
    # Only the Plan CRD (Rancher owns upgrades: its controller uses the same cluster-wide CRD, and
    # deleting a CRD deletes every object of it; components/plan/rancher.py).
    crd_only: bool = False


class SystemUpgrades(pulumi.ComponentResource):
    """system-upgrade-controller (pinned release manifests) and the Plans, through the kubernetes provider."""

    def __init__(self, name: str, args: SystemUpgradesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:upgrades:SystemUpgrades", name, None, opts)
        crd_url, controller_url = versions.SUC_MANIFEST_URLS
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        crd = k8s.yaml.v2.ConfigFile(f"{name}-suc-crd", file=crd_url, opts=child)
        self.plans: list[k8s.apiextensions.CustomResource] = []
        if args.crd_only:
            self.register_outputs({"version": None})
            return
        controller = k8s.yaml.v2.ConfigFile(
            f"{name}-suc", file=controller_url, opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[crd])))
        self.plans += [
            k8s.apiextensions.CustomResource(
                f"{name}-{plan['metadata']['name']}-plan",
                api_version=plan["apiVersion"],
                kind=plan["kind"],
                metadata=plan["metadata"],
                spec=plan["spec"],
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[controller])),
            )
            for plan in plans(args.version, args.etcd_only)
        ]
        self.register_outputs({"version": args.version})
