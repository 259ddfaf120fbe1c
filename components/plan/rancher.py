"""Registering the cluster in Rancher (`rancher`): who writes the RKE2 upgrade Plans, and what a change
of the registration does to the running cluster. Pure; components/cluster/rancher.py wires it.

Facts (upstream, read for this module):
- An imported cluster is a `rancher2_cluster` with no driver configuration (terraform-provider-rancher2
  v13.1.4 rancher2/structure_cluster.go expandCluster: no driver -> "imported").
- Leaving out `rke2_config` does not keep Rancher away: once the agent reports an RKE2 version Rancher
  fills `Spec.Rke2Config.Version` itself (rancher/rancher pkg/controllers/management/clusterprovisioner/
  provisioner.go) and, with version management on, installs its own system-upgrade-controller (Helm
  app `system-upgrade-controller` in `cattle-system`, pkg/controllers/dashboard/systemcharts/
  controller.go) and Plans `rke2-master-plan` / `rke2-worker-plan` in `cattle-system`
  (pkg/controllers/management/k3sbasedupgrade). Two controllers upgrading the same nodes fight
  (rancher/rancher #40974, #41143, #48134, #52791).
- The off switch is the cluster annotation `rancher.io/imported-cluster-version-management: "false"`
  (Rancher >= v2.11.0; values true/false/system-default; the global setting
  `imported-cluster-version-management` defaults to "true": pkg/settings/setting.go). With it off,
  Rancher deletes its own Plans once the cluster's Upgraded condition is true and uninstalls its SUC.
  The feature flag `managed-system-upgrade-controller` is not an off switch (#48134).
- Rancher treats a Deployment `cattle-system/system-upgrade-controller` without its own annotation as a
  legacy install it cleans up (systemcharts/controller.go), and its cleanup Job deletes `cattle-system`
  when the cluster is deregistered (pkg/agent/clean/cluster.go). This program's SUC lives in
  `system-upgrade` (the upstream release manifest, components/settings/versions.SUC_MANIFEST_URLS).
- Deleting the `rancher2_cluster` deletes the management object; Rancher then runs a `cattle-cleanup-*`
  Job in the cluster (pkg/controllers/management/usercontrollers/controller.go, three tries, then gives
  up); the cluster itself keeps running (Rancher docs, "Registering Existing Clusters"). Rancher reaches
  the cluster for that through the agent's tunnel (pkg/clustermanager/manager.go ToRESTConfig:
  Dialer.ClusterDialer), so the agent must still run when the cluster is deleted. The Job
  (pkg/agent/clean/cluster.go) deletes cattle-system (the agent), cattle-fleet-system,
  cattle-impersonation-system, the `rancher.cattle.io` webhook configurations and the roles labelled
  cattle.io/creator=norman; the registration manifest's proxy-clusterrole-kubeapiserver and
  proxy-role-binding-kubernetes-master carry no such label and stay. Without the Job, rancher-webhook's
  configurations (failurePolicy Fail) outlive its pods and refuse namespace changes (#40164).
- So this program never deletes the agent: in helm mode its objects are kept on delete (the engine
  would delete them first: they depend on the cluster, components/cluster/rancher.py), and in manifest
  mode the registration file is dropped, never emptied (an emptied file prunes what it created: k3s
  pkg/deploy/controller.go; a file that disappears is only forgotten).
- Manifest mode applies the registration manifest once. It is what the import address served when
  the servers downloaded it (pkg/api/norman/customization/clusterregistrationtokens/import.go: the
  registration token's credential, the agent image of that day). Once the agent connects, Rancher
  deploys its own (pkg/controllers/management/clusterdeploy/clusterdeploy.go deployAgent: a system
  token, the current agent image and agent env vars) and redeploys it on upgrades; it notices a changed
  downstream agent only through its cached image. rke2-server applies every manifest file at each
  start, whatever the Addon's checksum (k3s pkg/deploy/controller.go: the first pass forces), so the
  frozen file would undo Rancher's redeploys at every server restart. A `<file>.skip` beside it keeps
  the deploy controller away from it (the same source), and the objects stay. The skip goes in once the
  cluster shows the file's Addon applied (plan/running.py) or the user confirms it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..settings.config import StackConfig
from .history import Observed, Previous, Statement, parse_version, runs_version
from .names import MANIFEST_PREFIX

VERSION_MANAGEMENT_ANNOTATION = "rancher.io/imported-cluster-version-management"
# The manifest-mode file the servers download the registration manifest to (RKE2's deploy controller
# applies it as the Addon "rancher-registration"; emptied, it deletes what the manifest created).
REGISTRATION_MANIFEST = "rancher-registration"
# Beside the downloaded <prefix>rancher-registration.yaml, once it is known applied: the deploy controller
# skips the file it names (k3s pkg/deploy/controller.go: '<name>.skip' makes '<name>' ignored).
REGISTRATION_SKIP = f"{REGISTRATION_MANIFEST}.yaml.skip"
SKIP_CONTENT = ("# rke-aws: RKE2's deploy controller skips the registration manifest beside this file: it was applied,\n"
                "# and Rancher keeps its agent current from then on (re-applying it would undo that).\n")


@dataclass(frozen=True)
class RegistrationState:
    """Manifest mode: whether the servers' deploy controller is known to have applied the registration
    manifest (then the servers get its .skip), and how to let the next update know."""
    applied: bool
    statement: Statement | None = None
    warning: str | None = None


def registration_state(cfg: StackConfig, previous: Previous | None, observed: Observed) -> RegistrationState | None:
    """None outside manifest mode with `rancher`. Known applied: carried over from the last outputs (same
    Rancher), or, when the last update delivered the file, read from the cluster (its Addon has a
    checksum) or confirmed."""
    if cfg.rancher is None or cfg.distribution != "rke2" or cfg.ccm.install != "manifest":
        return None
    delivered = (previous is not None and previous.rancher_name is not None and previous.rancher_url == cfg.rancher.url
                 and f"{REGISTRATION_MANIFEST}.url" in previous.manifest_files)
    if delivered and previous is not None and previous.rancher_registration_applied:
        return RegistrationState(True)
    addon = MANIFEST_PREFIX + REGISTRATION_MANIFEST
    statement = Statement("rancherregistration", f"the servers of cluster {cfg.cluster_id} applied Rancher's "
                                                 f"registration manifest (Addon {addon} in kube-system)")
    live = observed.live
    if delivered and live is not None and live.addons is not None and addon in live.addons:
        return RegistrationState(True)
    if delivered and live is None and observed.confirmed(statement):
        return RegistrationState(True)
    if not delivered:
        return RegistrationState(False, None, (
            "rke-aws:rancher: the servers apply Rancher's registration manifest (manifest mode); rke2-server would "
            "apply it again at each start and undo the agent Rancher deploys and upgrades itself afterwards. Once "
            "the imported cluster is Active in Rancher, `pulumi up` again: once it knows the file applied (it reads "
            "the cluster, or asks for a confirmation), the servers skip the file from then on"))
    return RegistrationState(False, statement, (
        "rke-aws:rancher: the servers apply Rancher's registration manifest at each start (manifest mode), which "
        "undoes the agent Rancher deploys and upgrades itself; they skip it from the update that knows it applied: "
        f"once the cluster can be read and shows it (`kubectl -n kube-system get addon {addon}` with a checksum), or "
        + statement.how()))


def cluster_annotations(cfg: StackConfig) -> dict[str, str]:
    """The imported cluster's annotations: Rancher's version management on only when it owns upgrades."""
    assert cfg.rancher is not None
    return {VERSION_MANAGEMENT_ANNOTATION: "true" if cfg.rancher.rancher_upgrades else "false"}


def program_upgrades(cfg: StackConfig) -> bool:
    """Whether this program writes the RKE2 upgrade Plans (and runs its own system-upgrade-controller)."""
    return cfg.distribution == "rke2" and not (cfg.rancher is not None and cfg.rancher.rancher_upgrades)


def upgrade_files(cfg: StackConfig, files: dict[str, str]) -> dict[str, str]:
    """Of the manifest-mode upgrade files, those this program delivers: all of them when it owns upgrades;
    else only the Plan CRD (upgrade.cattle.io Plans are one cluster-wide CRD, shared with Rancher's own
    controller: deleting it would delete every Plan, Rancher's too)."""
    if program_upgrades(cfg):
        return dict(files)
    return {f: c for f, c in files.items() if f.split(".")[0] == KEPT_CRD_FILE}


# The Plan CRD's manifest (cluster_documents.upgrade_manifests), kept when Rancher owns upgrades.
KEPT_CRD_FILE = "system-upgrade-controller-crd"


def version_problems(cfg: StackConfig, previous: Previous | None, observed: Observed) -> list[str]:
    """With rancher.upgrades: rancher this program writes no Plans, so a kubernetesVersion change would
    reach no running node: it is refused until every node runs the new version (Rancher upgraded it;
    read from the cluster, or confirmed). Then it only records what runs (new nodes boot with it, the
    CCM image follows its minor)."""
    if cfg.rancher is None or not cfg.rancher.rancher_upgrades or previous is None or not previous.kubernetes_version:
        return []
    old, new = parse_version(previous.kubernetes_version), parse_version(cfg.kubernetes_version)
    if old is None or new is None or old == new:
        return []
    statement = Statement("rancherversion", f"Rancher upgraded every node of cluster {cfg.cluster_id} to Kubernetes "
                                            f"{cfg.kubernetes_version}")
    live = observed.live
    if live is not None and live.nodes:
        lagging = sorted(n.name for n in live.nodes if not runs_version(n.kubelet_version, cfg.kubernetes_version))
        if not lagging:
            return []
        why = f"the cluster reports nodes not on it: {', '.join(lagging[:6])}" + (" and more" if len(lagging) > 6 else "")
    elif observed.confirmed(statement):
        return []
    else:
        why = f"{observed.no_read()}; {statement.how()}"
    return [f"rke-aws:kubernetesVersion: {cfg.kubernetes_version}, but rancher.upgrades is rancher: Rancher owns "
            f"upgrades and this program writes no upgrade Plans, so the change would reach no running node. Upgrade "
            f"in Rancher (Cluster Management > Edit Config > Kubernetes Version), then set kubernetesVersion to the "
            f"version it reached; it is accepted once every node runs it ({why}). Or set rancher.upgrades: rke-aws "
            f"(keeping kubernetesVersion at {previous.kubernetes_version} for that update)"]


def switch_problems(cfg: StackConfig, previous: Previous | None) -> list[str]:
    """Handing upgrades from one side to the other in the same update as a version change would let
    both write Plans for the same nodes at once."""
    if previous is None or previous.rancher_upgrades is None or cfg.rancher is None:
        return []
    if previous.rancher_upgrades == cfg.rancher.upgrades or previous.kubernetes_version in (None, cfg.kubernetes_version):
        return []
    return [f"rke-aws:rancher.upgrades: {cfg.rancher.upgrades} (was {previous.rancher_upgrades}) in the same update as "
            f"kubernetesVersion {previous.kubernetes_version} -> {cfg.kubernetes_version}: the old owner's Plans may "
            "still be upgrading while the new owner's start; change the owner with the version unchanged, `pulumi up`, "
            "then change the version"]


def removal_problems(cfg: StackConfig, previous: Previous | None) -> list[str]:
    """Removing `rancher` when the agent's objects were written to the state without retainOnDelete (an
    earlier release): the engine reads the option from the old state (pulumi/pulumi
    pkg/resource/deploy/step.go DeleteStep.Apply) and would delete the agent before the cluster."""
    if cfg.rancher is not None or previous is None or previous.rancher_name is None or not previous.rancher_agent_unkept:
        return []
    return [f"rke-aws:rancher: removed, but the imported cluster {previous.rancher_name}'s agent was applied by an "
            "earlier release of this program, which did not keep it when it leaves the program: this update would "
            "delete the agent before the cluster (the engine deletes what depends on a resource first), Rancher "
            "could not run its cleanup, which goes through the agent, and rancher-webhook's configurations would "
            "stay behind and refuse namespace changes (rancher/rancher#40164). Run `pulumi up` once with `rancher` "
            "still set (the agent's objects are then kept on delete), then remove it"]


def warnings(cfg: StackConfig, previous: Previous | None) -> tuple[str, ...]:
    """What a change of `rancher` does to Rancher and to the running cluster."""
    out: list[str] = []
    before = previous.rancher_name if previous else None
    if before is not None and cfg.rancher is None:
        out.append(
            f"rke-aws:rancher: removed: this update deletes the imported cluster {before} from Rancher and leaves "
            "Rancher's agent running: Rancher reaches the cluster through it to create its cleanup Job "
            "(cattle-cleanup-*, default namespace), which deletes cattle-system (the agent), cattle-fleet-system, "
            "cattle-impersonation-system, the rancher.cattle.io webhook configurations, Rancher's roles and its "
            "labels and annotations; Rancher's projects, role bindings, Fleet bundles and apps installed through "
            "Rancher stop being managed (what they created stays). "
            + ("Rancher owned upgrades: its system-upgrade-controller goes with cattle-system, and this program's "
               "own (system-upgrade) takes over. " if previous and previous.rancher_upgrades == "rancher" else "")
            + "Left behind: ClusterRole proxy-clusterrole-kubeapiserver and ClusterRoleBinding "
            "proxy-role-binding-kubernetes-master (`kubectl delete clusterrolebinding "
            "proxy-role-binding-kubernetes-master; kubectl delete clusterrole proxy-clusterrole-kubeapiserver`). If "
            "Rancher cannot reach the cluster it gives up after three tries: then, with this cluster's kubeconfig, "
            "`kubectl delete validatingwebhookconfiguration rancher.cattle.io; kubectl delete "
            "mutatingwebhookconfiguration rancher.cattle.io` first (their webhook is gone with the agent and they "
            "refuse namespace changes), then `kubectl delete namespace cattle-system cattle-fleet-system "
            "cattle-impersonation-system`")
    elif before is not None and cfg.rancher is not None and previous is not None:
        if previous.rancher_upgrades == "rke-aws" and cfg.rancher.rancher_upgrades:
            out.append("rke-aws:rancher.upgrades: rancher: this update removes this program's system-upgrade-controller "
                       "and Plans (system-upgrade) and turns Rancher's version management on: Rancher installs its own "
                       "system-upgrade-controller in cattle-system and writes its Plans when you upgrade in Rancher")
        elif previous.rancher_upgrades == "rancher" and not cfg.rancher.rancher_upgrades:
            out.append("rke-aws:rancher.upgrades: rke-aws: this update turns Rancher's version management off (Rancher "
                       "deletes its Plans once its last upgrade is complete and uninstalls its system-upgrade-"
                       "controller) and installs this program's own in system-upgrade; finish any upgrade running in "
                       "Rancher first")
        if before != cfg.rancher.cluster_name:
            out.append(f"rke-aws:rancher.clusterName: {before} -> {cfg.rancher.cluster_name}: renamed in Rancher in "
                       "place (the cluster keeps its Rancher ID and agent)")
    if cfg.rancher is not None and not cfg.rancher.rancher_upgrades and cfg.distribution == "rke2":
        if before is None:
            out.append("rke-aws:rancher: Rancher must be v2.11 or later: earlier releases ignore the "
                       f"{VERSION_MANAGEMENT_ANNOTATION} annotation and would install their own upgrade controller "
                       "and Plans beside this program's")
    return tuple(out)
