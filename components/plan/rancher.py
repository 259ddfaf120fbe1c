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
- Rancher never connects to an imported cluster: its agent connects out (Rancher docs, "Using Fleet behind
  a proxy"), so behind `proxy` the agent needs HTTP(S)_PROXY/NO_PROXY: the cluster's `agentEnvVars`
  (terraform-provider-rancher2 `agent_env_vars`) go into the agent's Deployment in the registration
  manifest (pkg/systemtemplate/import.go) and to Fleet's agent (provisioningv2/fleetcluster); Rancher
  redeploys the agent whenever they differ from what it applied (pkg/controllers/management/clusterdeploy/
  clusterdeploy.go redeployAgent).
- Rancher's own Plans (k3sbasedupgrade template.go): `rke2-master-plan` takes nodes labelled
  control-plane with the server concurrency, `rke2-worker-plan` every node *without* that label (so
  etcd-only servers too) with the worker concurrency, after the master Plan; both default to 1 for an
  imported cluster (clusterprovisioner/provisioner.go SetStrategy(1, 1)) and can be raised in Rancher
  (Edit Config > Upgrade Strategy). Pinning them would take `rke2_config`: the provider then sends driver
  `rke2` (structure_cluster.go expandCluster) and Rancher no longer fills in the version it reads
  (provisioner.go sets Rke2Config only while unset), so the version would become this program's to write.
  config.py refuses `upgrades: rancher` with etcd-only pools.
- The provider sends `api_url` with its path removed (rancher2/util.go NormalizeURL) and the token as
  `Authorization: Bearer <token_key>` (rancher/norman clientbase/common.go); a changed `api_url` is a
  provider configuration change in place: it then reads and updates the same cluster ID at the new
  address (resource_rancher2_cluster.go: Read forgets an ID the server does not know, Update fails).
- The registration token's fields (`token`, and `manifestUrl`, `command`, `nodeCommand`,
  `insecureCommand`, ... which embed it) sit in the Cluster's `clusterRegistrationToken` output; only
  `token` is Sensitive in the provider and pulumi-rancher2 marks only `caCert` and `kubeConfig` secret,
  so components/cluster/rancher.py marks the whole output secret.
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

from collections.abc import Mapping
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Severity, Statement
from ..settings.resolve import ClusterConfig as StackConfig
from ..state.model import ClusterState, RancherState
from .day2.confirmations import Observed
from .day2.versions import VersionState, not_complete
from .names import MANIFEST_PREFIX, PSA_CONFIG_PATH
from .proxy import ProxyEnv
from .releases import parse_version, runs_version

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
    warning: Diagnostic | None = None


def _registered(previous: ClusterState | None) -> RancherState | None:
    """The imported cluster the last update registered (None: none)."""
    rancher = previous.rancher_cluster if previous is not None else None
    return rancher if rancher is not None and rancher.name is not None else None


def registration_state(cfg: StackConfig, previous: ClusterState | None, observed: Observed) -> RegistrationState | None:
    """None outside manifest mode with `rancher`. Known applied: carried over from the last outputs (same
    Rancher), or, when the last update delivered the file, read from the cluster (its Addon has a
    checksum) or confirmed."""
    if cfg.rancher is None or cfg.distribution != "rke2" or cfg.ccm.install != "manifest":
        return None
    registered = _registered(previous)
    delivered = (previous is not None and registered is not None and registered.url == cfg.rancher.url
                 and f"{REGISTRATION_MANIFEST}.url" in previous.rke2_manifests)
    if delivered and registered is not None and registered.registration_applied:
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
        return RegistrationState(False, None, Diagnostic(
            "rancher", "the servers apply Rancher's registration manifest (manifest mode); rke2-server would apply it "
            "again at each start and undo the agent Rancher deploys and upgrades itself afterwards. Once the "
            "imported cluster is Active in Rancher, `pulumi up` again: once it knows the file applied (it reads the "
            "cluster, or asks for a confirmation), the servers skip the file from then on",
            "rancher.registration-pending", Severity.WARNING))
    return RegistrationState(False, statement, Diagnostic(
        "rancher", "the servers apply Rancher's registration manifest at each start (manifest mode), which undoes the "
        "agent Rancher deploys and upgrades itself; they skip it from the update that knows it applied: once the "
        f"cluster can be read and shows it (`kubectl -n kube-system get addon {addon}` with a checksum), or "
        + statement.how(), "rancher.registration-unconfirmed", Severity.WARNING, confirm=statement))


# The namespaces Rancher's docs list for a cluster under restricted Pod Security (ranchermanager.docs.rancher.com
# v2.14 reference-guides/rancher-security/psa-restricted-exemptions, "Sample PodSecurityConfiguration"), as
# listed there. Under RKE2's CIS profile without them the cattle-cluster-agent (cattle-system), fleet-agent
# (cattle-fleet-system) and Rancher's other pods are refused (rancher/rancher #47255, #39148, #42039;
# rancher/fleet#2887) and the cluster never leaves `pending` in Rancher. components/node/rke2_config.py
# writes them into CIS servers' Pod Security file when `rancher` is set.
PSA_EXEMPT_NAMESPACES = (
    "calico-apiserver", "calico-system", "cattle-alerting", "cattle-capi-system", "cattle-csp-adapter-system",
    "cattle-elemental-system", "cattle-epinio-system", "cattle-externalip-system", "cattle-fleet-local-system",
    "cattle-fleet-system", "cattle-gatekeeper-system", "cattle-global-data", "cattle-global-nt",
    "cattle-impersonation-system", "cattle-istio", "cattle-istio-system", "cattle-logging", "cattle-logging-system",
    "cattle-monitoring-system", "cattle-neuvector-system", "cattle-prometheus", "cattle-provisioning-capi-system",
    "cattle-resources-system", "cattle-sriov-system", "cattle-system", "cattle-turtles-system",
    "cattle-ui-plugin-system", "cattle-windows-gmsa-system", "cert-manager", "cis-operator-system",
    "compliance-operator-system", "fleet-default", "fleet-local", "istio-system", "kube-node-lease", "kube-public",
    "kube-system", "longhorn-system", "rancher-alerting-drivers", "rancher-compliance-system", "security-scan",
    "sr-operator-system", "tigera-operator", "traefik",
)
# Where the agent and Fleet's agent run (what a refused pod there leaves pending).
AGENT_NAMESPACES = ("cattle-system", "cattle-fleet-system", "cattle-impersonation-system")


def agent_env(proxy: ProxyEnv | None) -> dict[str, str]:
    """The Rancher agent's environment (the Cluster's agentEnvVars): behind `proxy`, the same HTTP_PROXY,
    HTTPS_PROXY and NO_PROXY the nodes get (NO_PROXY holds the service network, so the agent reaches the
    Kubernetes API directly); nothing without."""
    return proxy.variables() if proxy is not None else {}


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


def version_problems(cfg: StackConfig, previous: ClusterState | None, observed: Observed) -> list[Diagnostic]:
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
        confirm = None
    elif observed.confirmed(statement):
        return []
    else:
        why = f"{observed.no_read()}; {statement.how()}"
        confirm = statement
    return [Diagnostic(
        "kubernetesVersion", f"{cfg.kubernetes_version}, but rancher.upgrades is rancher: Rancher owns upgrades and "
        "this program writes no upgrade Plans, so the change would reach no running node. Upgrade in Rancher "
        "(Cluster Management > Edit Config > Kubernetes Version), then set kubernetesVersion to the version it "
        f"reached; it is accepted once every node runs it ({why}). Or set rancher.upgrades: rke-aws (keeping "
        f"kubernetesVersion at {previous.kubernetes_version} for that update)", "rancher.version-not-reached",
        value=cfg.kubernetes_version, confirm=confirm)]


def switch_problems(cfg: StackConfig, previous: ClusterState | None, state: VersionState | None = None,
                    observed: Observed | None = None) -> list[Diagnostic]:
    """Handing upgrades from one side to the other while a version change may still be rolling out
    (in this update, or the last one not known complete) would let both write Plans for the same nodes."""
    was = previous.rancher_cluster.upgrades if previous is not None and previous.rancher_cluster else None
    if previous is None or was is None or cfg.rancher is None:
        return []
    if was == cfg.rancher.upgrades:
        return []
    if previous.kubernetes_version not in (None, cfg.kubernetes_version):
        return [Diagnostic(
            "rancher.upgrades", f"{cfg.rancher.upgrades} (was {was}) in the same update as kubernetesVersion "
            f"{previous.kubernetes_version} -> {cfg.kubernetes_version}: the old owner's Plans may still be upgrading "
            "while the new owner's start; change the owner with the version unchanged, `pulumi up`, then change the "
            "version", "rancher.upgrades-with-version", value=cfg.rancher.upgrades)]
    if state is not None and not state.complete:
        why = not_complete(state, observed or Observed(), cfg.distribution)
        return [Diagnostic(
            "rancher.upgrades", f"{cfg.rancher.upgrades} (was {was}) while the change to Kubernetes {state.target} is "
            "not known complete: the old owner's Plans may still be upgrading nodes, and the new owner's would start "
            f"on the same nodes; keep rancher.upgrades at {was} until it is complete: {why.text}",
            "rancher.upgrades-during-rollout", value=cfg.rancher.upgrades, confirm=why.confirm)]
    return []


def url_problems(cfg: StackConfig, previous: ClusterState | None, observed: Observed) -> list[Diagnostic]:
    """A new rancher.url for a registered cluster: the provider looks for the same cluster ID at the new
    address. The same Rancher under another name is fine (confirmed); another Rancher is a
    deregistration and a registration, in two updates."""
    registered = _registered(previous)
    if cfg.rancher is None or registered is None or registered.url is None:
        return []
    was = registered.url
    if was.rstrip("/").lower() == cfg.rancher.url.lower():
        return []
    ident = registered.id or "its cluster"
    statement = Statement("rancherurl", f"{cfg.rancher.url} reaches the same Rancher as {was}, "
                                        f"which holds cluster {ident} ({cfg.cluster_id})")
    if observed.confirmed(statement):
        return []
    return [Diagnostic(
        "rancher.url", f"{cfg.rancher.url} (was {was}): this cluster is registered as {ident} in the Rancher at {was}. "
        f"The rancher2 provider takes a new address in place and looks for {ident} there (terraform-provider-rancher2 "
        "resource_rancher2_cluster.go): another Rancher does not know it, so the update fails, or after a refresh a "
        f"second cluster is created there and its agent replaces this one while {ident} stays behind in the old "
        "Rancher. To move to another Rancher: remove `rancher` and `pulumi up` (the old Rancher deletes the cluster "
        "and cleans it up), then set `rancher` with the new url (and its token) and `pulumi up`. If the new address "
        "reaches the same Rancher, " + statement.how(), "rancher.url-changed", value=cfg.rancher.url,
        confirm=statement)]


def psa_warnings(cfg: StackConfig, previous: ClusterState | None) -> tuple[Diagnostic, ...]:
    """Pod Security's configuration is in the servers' user data, read at first boot only: running CIS
    servers booted without Rancher's namespaces keep refusing Rancher's agent."""
    if cfg.rancher is None or cfg.hardening != "cis" or previous is None or previous.hardening != "cis":
        return ()
    servers = sorted(n.name for n in previous.nodes if "controlplane" in n.roles or "etcd" in n.roles)
    # Outputs without podSecurityExemptions come from releases that never exempted Rancher's namespaces.
    missing = [ns for ns in AGENT_NAMESPACES if ns not in (previous.pod_security_exemptions or ())]
    if not servers or not missing:
        return ()
    return (Diagnostic(
        "rancher", f"with hardening cis, the running servers ({', '.join(servers[:6])}"
        f"{' and more' if len(servers) > 6 else ''}) keep the Pod Security configuration they booted with "
        f"({PSA_CONFIG_PATH}; user data is read at first boot only), which does not exempt Rancher's namespaces "
        f"({', '.join(missing)}, ...): their API servers refuse the cattle-cluster-agent and fleet-agent pods "
        "under restricted, and the cluster stays pending in Rancher until every server exempts them. Servers "
        "created from now on do (the podSecurityExemptions output lists them). Replace the running servers one "
        "at a time (docs/operations/replace-node.md, 'Replacing a node'), or on each server, one at a time, add the namespaces "
        f"of podSecurityExemptions to exemptions.namespaces in {PSA_CONFIG_PATH} and `systemctl restart "
        "rke2-server`. Said once: the next update compares with what new servers get", "rancher.psa-running-servers",
        Severity.WARNING),)


def agent_env_warnings(cfg: StackConfig, previous: ClusterState | None, proxy: ProxyEnv | None) -> tuple[Diagnostic, ...]:
    """A changed agent environment makes Rancher redeploy its agents."""
    registered = _registered(previous)
    if cfg.rancher is None or registered is None:
        return ()
    before, now = dict(registered.agent_env_vars or {}), agent_env(proxy)
    if before == now:
        return ()
    what = (f"HTTPS_PROXY {now.get('HTTPS_PROXY')}" if now else "no proxy variables")
    return (Diagnostic("rancher", f"the Rancher agent's environment changes to {what} (the cluster's agentEnvVars, "
                       "from `proxy`): Rancher redeploys cattle-cluster-agent and the Fleet agent with it "
                       "(rancher/rancher clusterdeploy.go redeployAgent), so the cluster shows unavailable in Rancher "
                       "for a minute or two", "rancher.agent-env-changed", Severity.WARNING),)


def removal_problems(cfg: StackConfig, previous: ClusterState | None) -> list[Diagnostic]:
    """Removing `rancher` when the agent's objects were written to the state without retainOnDelete (an
    earlier release): the engine reads the option from the old state (pulumi/pulumi
    pkg/resource/deploy/step.go DeleteStep.Apply) and would delete the agent before the cluster."""
    registered = _registered(previous)
    if cfg.rancher is not None or previous is None or registered is None or not previous.rancher_agent_unkept:
        return []
    return [Diagnostic(
        "rancher", f"removed, but the imported cluster {registered.name}'s agent was applied by an earlier release of "
        "this program, which did not keep it when it leaves the program: this update would delete the agent before "
        "the cluster (the engine deletes what depends on a resource first), Rancher could not run its cleanup, which "
        "goes through the agent, and rancher-webhook's configurations would stay behind and refuse namespace changes "
        "(rancher/rancher#40164). Run `pulumi up` once with `rancher` still set (the agent's objects are then kept on "
        "delete), then remove it", "rancher.agent-unkept")]


def arm64_warnings(cfg: StackConfig, archs: Mapping[str, str]) -> tuple[Diagnostic, ...]:
    """Rancher calls clusters with arm64 nodes experimental and not for production, imported ones included
    (Rancher manager docs, "Running on ARM64 Mixed Architecture (Experimental)"); the same page is why
    RKE1 on arm64 is refused (machine_checks.architecture_problems). RKE2 on arm64 is supported by RKE2 itself, so
    the registration goes ahead, with the warning."""
    if cfg.rancher is None:
        return ()
    pools = sorted(p for p, a in archs.items() if a == "arm64")
    if not pools:
        return ()
    return (Diagnostic("rancher", f"pools {', '.join(pools)} run arm64 (Graviton) nodes; Rancher supports clusters with "
                       "arm64 nodes, imported ones included, only as experimental and not for production (Rancher's "
                       "docs, \"Running on ARM64 Mixed Architecture (Experimental)\"): RKE2 and this program support "
                       "them, Rancher's own features (its agents, apps, monitoring) may not", "rancher.arm64",
                       Severity.WARNING),)


def warnings(cfg: StackConfig, previous: ClusterState | None) -> tuple[Diagnostic, ...]:
    """What a change of `rancher` does to Rancher and to the running cluster."""
    out: list[Diagnostic] = []
    registered = _registered(previous)
    before = registered.name if registered else None
    was = registered.upgrades if registered else None
    if before is not None and cfg.rancher is None:
        out.append(Diagnostic(
            "rancher", f"removed: this update deletes the imported cluster {before} from Rancher and leaves "
            "Rancher's agent running: Rancher reaches the cluster through it to create its cleanup Job "
            "(cattle-cleanup-*, default namespace), which deletes cattle-system (the agent), cattle-fleet-system, "
            "cattle-impersonation-system, the rancher.cattle.io webhook configurations, Rancher's roles and its "
            "labels and annotations; Rancher's projects, role bindings, Fleet bundles and apps installed through "
            "Rancher stop being managed (what they created stays). "
            + ("Rancher owned upgrades: its system-upgrade-controller goes with cattle-system, and this program's "
               "own (system-upgrade) takes over. " if was == "rancher" else "")
            + "Left behind: ClusterRole proxy-clusterrole-kubeapiserver and ClusterRoleBinding "
            "proxy-role-binding-kubernetes-master (`kubectl delete clusterrolebinding "
            "proxy-role-binding-kubernetes-master; kubectl delete clusterrole proxy-clusterrole-kubeapiserver`). If "
            "Rancher cannot reach the cluster it gives up after three tries: then, with this cluster's kubeconfig, "
            "`kubectl delete validatingwebhookconfiguration rancher.cattle.io; kubectl delete "
            "mutatingwebhookconfiguration rancher.cattle.io` first (their webhook is gone with the agent and they "
            "refuse namespace changes), then `kubectl delete namespace cattle-system cattle-fleet-system "
            "cattle-impersonation-system`", "rancher.removed", Severity.WARNING))
    elif before is not None and cfg.rancher is not None:
        if was == "rke-aws" and cfg.rancher.rancher_upgrades:
            out.append(Diagnostic(
                "rancher.upgrades", "rancher: this update removes this program's system-upgrade-controller and Plans "
                "(system-upgrade) and turns Rancher's version management on: Rancher installs its own "
                "system-upgrade-controller in cattle-system and writes its Plans when you upgrade in Rancher",
                "rancher.upgrades-to-rancher", Severity.WARNING))
        elif was == "rancher" and not cfg.rancher.rancher_upgrades:
            out.append(Diagnostic(
                "rancher.upgrades", "rke-aws: this update turns Rancher's version management off (Rancher deletes its "
                "Plans once its last upgrade is complete and uninstalls its system-upgrade-controller) and installs "
                "this program's own in system-upgrade; finish any upgrade running in Rancher first",
                "rancher.upgrades-to-program", Severity.WARNING))
        if before != cfg.rancher.cluster_name:
            out.append(Diagnostic("rancher.clusterName", f"{before} -> {cfg.rancher.cluster_name}: renamed in Rancher "
                                  "in place (the cluster keeps its Rancher ID and agent)", "rancher.renamed",
                                  Severity.WARNING))
    if cfg.rancher is not None and not cfg.rancher.rancher_upgrades and cfg.distribution == "rke2":
        if before is None:
            out.append(Diagnostic("rancher", "Rancher must be v2.11 or later: earlier releases ignore the "
                                  f"{VERSION_MANAGEMENT_ANNOTATION} annotation and would install their own upgrade "
                                  "controller and Plans beside this program's", "rancher.version-management",
                                  Severity.WARNING))
    return tuple(out)
