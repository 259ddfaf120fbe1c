"""What is installed in the cluster, and how: the EBS CSI driver's choice, the manifests RKE2 servers mirror
(manifest mode) and the ones emptied, what this update installs through a kubeconfig (installedInCluster),
what it would uninstall, and the CCM manifest's size."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Severity, Statement
from ..settings.resolve import ClusterConfig as StackConfig
from ..state.model import ClusterState
from . import ccm_values, cluster_documents, rancher
from .cluster_documents import AGENT_PLAN, ETCD_PLAN, SERVER_PLAN, upgrade_manifests
from .day2.confirmations import Observed
from .proxy import ProxyEnv

# RKE2 manifest mode: the files the servers mirror (components/cluster/manifests.py), by base name, and the
# HelmChart each one creates (kube-system), which helm-controller uninstalls when it is deleted.
MANIFEST_HELMCHARTS = {"ccm": "aws-cloud-controller-manager", "ebs-csi": "aws-ebs-csi-driver",
                       "pod-identity-webhook": "amazon-eks-pod-identity-webhook",
                       "aws-load-balancer-controller": "aws-load-balancer-controller"}
# Workload identity (issue 36) in manifest mode: the webhook's HelmChart and TLS Secret, the controller's HelmChart.
WEBHOOK_MANIFESTS = ("pod-identity-webhook", "pod-identity-webhook-tls")
LBC_MANIFEST = "aws-load-balancer-controller"


def identity_manifests(cfg: StackConfig) -> tuple[str, ...]:
    if cfg.identity.service_accounts != "irsa":
        return ()
    return WEBHOOK_MANIFESTS + ((LBC_MANIFEST,) if cfg.addons.load_balancer_controller else ())

# What uninstalling each one means for the running cluster.
UNINSTALLED = {
    "amazon-eks-pod-identity-webhook": "amazon-eks-pod-identity-webhook (pods created afterwards no longer get their "
                                       "role's token; running pods keep theirs until they restart)",
    "aws-load-balancer-controller": "aws-load-balancer-controller (its load balancers stay but are no longer "
                                    "reconciled; Services of class service.k8s.aws/nlb get none)",
    "aws-cloud-controller-manager": "aws-cloud-controller-manager (nodes that join afterwards stay uninitialized and "
                                    "unschedulable, LoadBalancer Services are no longer reconciled; running nodes "
                                    "and load balancers stay)",
    "system-upgrade-controller": "system-upgrade-controller and its upgrade Plans (a version change no longer reaches "
                                 "running nodes; what they run stays)",
    "aws-ebs-csi-driver": "aws-ebs-csi-driver with its gp3 StorageClass (pods can no longer get, attach or detach "
                          "EBS volumes; the volumes and their PersistentVolumes stay, and volumes of reclaimPolicy "
                          "Delete are no longer deleted for you)",
}


@dataclass(frozen=True)
class ManifestPlan:
    """Manifest files this update delivers (base names) and the ones it empties.

    RKE2's deploy controller never deletes what a manifest created when the file disappears (k3s
    pkg/deploy/controller.go lists only the files present); applying a file with fewer objects
    prunes the rest (it applies with the Addon as owner). So a manifest that is no longer wanted
    becomes an empty one under the same Addon name (manifests.tombstone_name), kept for good:
    rke2-server re-applies every file at each start, and an emptied file applies nothing. A deleted
    HelmChart is uninstalled by helm-controller (k3s-io/helm-controller pkg/controllers/chart OnRemove).
    """
    live: tuple[str, ...]  # base names delivered with content
    emptied: tuple[str, ...]  # base names delivered empty
    removing: tuple[str, ...]  # emptied ones whose removal is not known done (rke2ManifestsRemoving)
    statement: Statement | None = None


def ebs_csi_wanted(cfg: StackConfig, previous: ClusterState | None) -> bool:
    """addons.ebsCsi; unset: on for a new stack, then whatever the stack last deployed; a cluster
    from before the option gains a storage driver only when asked."""
    if cfg.addons.ebs_csi is not None:
        return cfg.addons.ebs_csi
    if previous is None:
        return True
    return bool(previous.ebs_csi)


def planned_in_cluster(cfg: StackConfig, ebs_csi: bool, available: bool,
                       manifests: ManifestPlan | None) -> tuple[str, ...]:
    """What this update installs through the kubeconfig (installedInCluster)."""
    if cfg.ccm.install != "helm" or not available or (manifests is not None and manifests.removing):
        return ()
    return ("aws-cloud-controller-manager",) + (("system-upgrade-controller",) if rancher.program_upgrades(cfg) else ()) \
        + (("aws-ebs-csi-driver",) if ebs_csi else ()) + tuple(
            MANIFEST_HELMCHARTS[m] for m in identity_manifests(cfg) if m in MANIFEST_HELMCHARTS)


def in_cluster_problems(cfg: StackConfig, previous: ClusterState | None, available: bool) -> list[Diagnostic]:
    """Pulumi deletes what a program stops declaring: an update that would leave out what the last
    one installed in the cluster (installedInCluster) is refused unless allowUninstall says so."""
    if previous is None or not previous.has_cluster_releases or cfg.allow_uninstall:
        return []
    what = ", ".join(previous.installed_in_cluster) or "the CCM"
    if cfg.ccm.install == "manifest":
        return [Diagnostic(
            "ccm.install", f"manifest on a cluster where the last update installed {what} as Helm releases: Pulumi "
            "would uninstall them while the servers' helm-controller installs the same charts. To hand them over, "
            "remove them from this stack's state without uninstalling (`pulumi state delete --target-dependents <URN>` "
            "for the rke-aws:ccm:CloudControllerManager, rke-aws:upgrades:SystemUpgrades and rke-aws:addons:EbsCsiDriver "
            "components; `pulumi stack --show-urns`), then run this update once with allowUninstall: true",
            "ccm.install-switch", value="manifest")]
    if available:
        return []
    how = ("let these credentials read the published kubeconfig (ssm:GetParameter on "
           f"/rke-aws/{cfg.cluster_id}/admin-kubeconfig and kms:Decrypt on its key) or set it"
           if cfg.distribution == "rke2" and previous.has_kubeconfig_parameter else "set it")
    return [Diagnostic(
        "kubeconfig", f"the last update installed {what} in the cluster through a kubeconfig, but none is available "
        f"now; without one this update would uninstall them from the running cluster. {how[0].upper() + how[1:]} "
        "(`pulumi config set --secret kubeconfig < kubeconfig.yaml`); if the cluster is gone, `pulumi state delete` "
        "what was in it and set allowUninstall: true for one update", "kubeconfig.needed")]


def allow_uninstall_problems(cfg: StackConfig, previous: ClusterState | None,
                             in_cluster: Sequence[str]) -> list[Diagnostic]:
    """allowUninstall is for one update: set while nothing is left to uninstall, it would let a later
    update without a kubeconfig uninstall everything without a word."""
    if not cfg.allow_uninstall:
        return []
    left = [x for x in (previous.installed_in_cluster if previous else ()) if x not in in_cluster]
    if previous is not None and previous.has_cluster_releases and (left or not previous.installed_in_cluster):
        return []
    return [Diagnostic(
        "allowUninstall", "true, but this update uninstalls nothing (the last update installed "
        + ("nothing in the cluster" if previous is None or not previous.has_cluster_releases else
           "only what this one installs again") +
        "); remove it (`pulumi config rm allowUninstall`): left set, a later update without a kubeconfig would "
        "uninstall the CCM and everything else from the running cluster", "uninstall.nothing", value=True)]


def manifest_plan(cfg: StackConfig, previous: ClusterState | None, ebs_csi: bool,
                  observed: Observed) -> ManifestPlan | None:
    """RKE2: which manifests the servers get, which are emptied, and which removals are not yet
    known done. None when the cluster never used manifests."""
    if cfg.distribution != "rke2":
        return None
    live: tuple[str, ...] = ()
    if cfg.ccm.install == "manifest":
        live = ("ccm",) + tuple(f.split(".")[0] for f in rancher.upgrade_files(
                    cfg, upgrade_manifests(cfg.kubernetes_version))) + \
            (("ebs-csi", "ebs-csi-credentials") if ebs_csi else ()) + \
            ((rancher.REGISTRATION_MANIFEST,) if cfg.rancher is not None else ()) + identity_manifests(cfg)
    files = previous.rke2_manifests if previous else ()
    before = {f.split(".")[0] for f in files}
    if not live and not before:
        return None
    dropped = before - set(live)
    if f"{rancher.REGISTRATION_MANIFEST}.removed.yaml" not in files:
        # Never newly emptied: that would prune Rancher's agent while Rancher's cleanup still needs it; the
        # file is dropped, and the deploy controller forgets it (plan/rancher.py). An emptied one an earlier
        # release wrote stays (it deletes nothing more).
        dropped.discard(rancher.REGISTRATION_MANIFEST)
    emptied = tuple(sorted(dropped))
    was_live = {f.split(".")[0] for f in files if ".removed." not in f}
    pending = (set(previous.rke2_manifests_removing if previous else ()) | (was_live - set(live))) - set(live)
    # Nothing waits for the Rancher agent to be gone (Rancher's own cleanup Job removes it too).
    pending.discard(rancher.REGISTRATION_MANIFEST)
    charts = sorted(MANIFEST_HELMCHARTS[b] for b in pending if b in MANIFEST_HELMCHARTS)
    statement = Statement("manifests", f"the servers of cluster {cfg.cluster_id} no longer run what their emptied "
                                       f"manifests installed ({', '.join(sorted(pending)) or 'nothing'}; HelmCharts "
                                       f"gone: {', '.join(charts) or 'none'})") if pending else None
    live_read = observed.live
    if pending and live_read is not None and live_read.helm_charts is not None:
        plans_left = "upgrade-plans" in pending and any(p.name in (SERVER_PLAN, ETCD_PLAN, AGENT_PLAN) for p in live_read.plans or ())
        if not (set(charts) & live_read.helm_charts) and not plans_left:
            pending = set()
    elif pending and statement is not None and observed.confirmed(statement):
        pending = set()
    return ManifestPlan(tuple(sorted(live)), emptied, tuple(sorted(pending)), statement)


def removal_warnings(cfg: StackConfig, previous: ClusterState | None, manifests: ManifestPlan | None,
                     in_cluster: Sequence[str]) -> tuple[Diagnostic, ...]:
    """Say what an update uninstalls, and what stays."""
    if previous is None or not previous.nodes:
        return ()
    out = []
    gone = [x for x in previous.installed_in_cluster if x not in in_cluster]
    if gone and cfg.ccm.install == "helm" and not (manifests and manifests.removing):
        how = ("allowUninstall: true and no kubeconfig" if cfg.allow_uninstall else
               "rancher.upgrades: rancher" if cfg.rancher is not None and cfg.rancher.rancher_upgrades else "addons.ebsCsi: false")
        out.append(Diagnostic("", f"{cfg.project}: this update uninstalls from the cluster ({how}): "
                              + "; ".join(UNINSTALLED[x] for x in gone if x in UNINSTALLED)
                              + (". The driver's IAM user and key are deleted after it" if "aws-ebs-csi-driver" in gone
                                 else ""), "uninstall.what", Severity.WARNING))
    if manifests is not None and manifests.removing:
        pending = set(manifests.removing)
        charts = [MANIFEST_HELMCHARTS[b] for b in sorted(pending) if b in MANIFEST_HELMCHARTS]
        what = "; ".join(UNINSTALLED[c] for c in charts)
        if "upgrade-plans" in pending:
            what += ("; " if what else "") + UNINSTALLED["system-upgrade-controller"]
        how = ("once the cluster can be read and shows them gone (`kubectl -n kube-system get helmcharts`), or "
               + manifests.statement.how()) if manifests.statement else ""
        if cfg.ccm.install == "helm":
            out.append(Diagnostic(
                "ccm.install", "helm on a cluster whose servers installed the charts from manifests: the servers now "
                "get those manifests emptied, so their deploy controller deletes the HelmCharts and helm-controller "
                f"uninstalls: {what}. Helm releases with the same names can be installed only after that, so the CCM "
                f"is not running until a later `pulumi up` installs it, {how}", "manifests.to-helm", Severity.WARNING))
        elif not pending & {"ebs-csi", "ebs-csi-credentials"}:
            out.append(Diagnostic(
                "rancher.upgrades", "rancher: the servers get this program's system-upgrade-controller and Plan "
                "manifests emptied, so their deploy controller deletes them (the Plan CRD stays: Rancher's "
                f"controller uses it too). Known done {how}", "manifests.upgrades-removed", Severity.WARNING))
        else:
            out.append(Diagnostic(
                "addons.ebsCsi", f"false: the servers get the driver's manifests emptied, so their deploy controller "
                f"deletes its HelmChart and helm-controller uninstalls {what}. Its IAM user and key stay while it may "
                f"still run, until a `pulumi up` knows it is gone: {how}", "manifests.ebs-csi-removed",
                Severity.WARNING))
    return tuple(out)


# SSM parameters: 4 KB in the Standard tier, 8 KB in the Advanced tier (manifests.tier_for picks it).
ADVANCED_TIER_MAX = 8192


def manifest_size_problems(cfg: StackConfig, ccm_image: str, proxy: ProxyEnv | None = None) -> list[Diagnostic]:
    """Manifest mode: the CCM's HelmChart manifest becomes one SSM parameter, 4 KB in the Standard
    tier and 8 KB in the Advanced tier (AWS Systems Manager quotas, "Parameter value size"); a larger
    one fails at apply, after the network and roles exist. Rendered here exactly as the cluster's
    assembly renders it (components/assembly/boot.py)."""
    if cfg.ccm.install != "manifest":
        return []
    values = ccm_values.helm_values(cfg.distribution, cfg.node_pools, cfg.ccm.leader_migration, cfg.ccm.extra_args,
                                    ccm_image, proxy)
    text = cluster_documents.ccm(cfg.ccm.chart_version).located(*cluster_documents.chart_location(cfg.registry)).manifest(
        values.merged_for_manifest(), bootstrap=True)
    size = len(text.encode())
    if size <= ADVANCED_TIER_MAX:
        return []
    extra = sum(len(a.encode()) + 8 for a in cfg.ccm.extra_args)
    return [Diagnostic(
        "ccm.extraArgs", f"the CCM manifest (ccm.install manifest) is {size:,} bytes, of which about {extra:,} are "
        "ccm.extraArgs"
        + (f", {len(ccm_image)} ccm.image and about {sum(len(v) + 30 for v in proxy.variables().values()):,} the "
           "proxy (proxy.noProxy)" if proxy else f" and {len(ccm_image)} ccm.image")
        + f"; an SSM parameter holds at most {ADVANCED_TIER_MAX:,} bytes (Advanced tier): use fewer or shorter "
        "extraArgs, or ccm.install helm", "ccm.manifest-too-large", value=list(cfg.ccm.extra_args))]
