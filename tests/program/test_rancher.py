"""Registering the cluster in Rancher (`rancher`): the imported cluster, its registration manifest in
both install modes, and who writes the RKE2 upgrade Plans. Upstream facts: components/plan/rancher.py
(terraform-provider-rancher2 v13.1.4 rancher2/schema_cluster.go and structure_cluster.go; rancher/rancher
pkg/controllers/management/k3sbasedupgrade, importedclusterversionmanagement, systemcharts; #40974,
#41143, #48134, #52791)."""

# split: this module mixes levels (issue 33 §7.2); the config-only and doctor-check tests -> tests/unit.

from __future__ import annotations

import copy
import json

import pytest

from rke_aws.plan import cluster_documents
from rke_aws.plan import rancher as rancher_plan
from rke_aws.settings import versions
from rke_aws_offline.engine import harness
from tests.support.configs import set_key
from tests.support.day2 import (
    code_in,
    readable,
    refused,
)
from tests.support.day2 import run_shared as run  # a step several tests walk through is made once
from tests.support.rancher import CLUSTER, TOKEN, helm, parse, problems, warned, with_rancher

PROVIDER = "pulumi:providers:rancher2"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
PLAN = "kubernetes:upgrade.cattle.io/v1:Plan"


def params(r: harness.ProgramRun) -> dict[str, harness.Registration]:
    return {p.inputs["name"].rsplit("/", 1)[1]: p for p in r.of_type("aws:ssm/parameter:Parameter")
            if "/manifests/" in p.inputs["name"]}


# ---- configuration ---------------------------------------------------------------------------

def test_a_plain_text_token_is_refused_and_never_shown():
    msg = problems({"rke-aws:rancher": json.dumps({"url": "https://r.example.com", "token": TOKEN})}, secret=())
    assert "rke-aws:rancher.token: is stored as plain text" in msg and "--secret --path rancher.token" in msg
    assert TOKEN not in msg


def test_url_and_token_are_required_and_the_url_is_https():
    msg = problems({"rke-aws:rancher": json.dumps({"clusterName": "x"})})
    assert "rke-aws:rancher.url: missing" in msg and "rke-aws:rancher.token: missing" in msg
    msg = problems({"rke-aws:rancher": json.dumps({"url": "http://r.example.com", "token": TOKEN})})
    assert "rke-aws:rancher.url: 'http://r.example.com' is not https" in msg and TOKEN not in msg
    msg = problems({"rke-aws:rancher": json.dumps({"url": "https://u:p@r.example.com", "token": TOKEN})})
    assert "rke-aws:rancher.url: holds user info" in msg and "u:p" not in msg
    msg = problems({"rke-aws:rancher": json.dumps({"url": "https://r.example.com", "token": " "})})
    assert "rke-aws:rancher.token: is blank" in msg


def test_cluster_name_is_a_dns_label_and_defaults_to_the_cluster_id():
    cfg = parse({"rke-aws:rancher": json.dumps({"url": "https://r.example.com/", "token": TOKEN})})
    assert cfg.rancher is not None and cfg.rancher.cluster_name == cfg.cluster_id and cfg.rancher.url == "https://r.example.com"
    assert cfg.rancher.upgrades == "rke-aws" and cfg.rancher.token.get_secret_value() == TOKEN and TOKEN not in repr(cfg.rancher)
    for bad in ("Prod", "-a", "a-", "a" * 64, "a_b"):
        msg = problems({"rke-aws:rancher": json.dumps({"url": "https://r.example.com", "token": TOKEN, "clusterName": bad})})
        assert "rke-aws:rancher.clusterName:" in msg and "lowercase DNS label" in msg, bad
    msg = problems({"rke-aws:clusterId": "dev-", "rke-aws:rancher": json.dumps({"url": "https://r.example.com", "token": TOKEN})})
    assert "rke-aws:rancher.clusterName: missing, and clusterId \"dev-\" is not a name Rancher takes" in msg


def test_rancher_owned_upgrades_are_refused_for_rke1():
    msg = problems({"rke-aws:rancher": json.dumps({"url": "https://r.example.com", "token": TOKEN, "upgrades": "rancher"})},
                   distribution="rke")
    assert "rke-aws:rancher.upgrades: 'rancher' but distribution is rke" in msg
    msg = problems({"rke-aws:rancher": json.dumps({"url": "https://r.example.com", "token": TOKEN, "upgrades": "both"})})
    assert "rke-aws:rancher.upgrades: \"both\" is not an upgrade owner; use rke-aws or rancher" in msg


# ---- the program -------------------------------------------------------------------------------

@pytest.mark.parametrize("owner,annotation", [("rke-aws", "false"), ("rancher", "true")])
def test_manifest_mode_registers_and_the_servers_download_the_manifest(owner, annotation):
    r = run(with_rancher(harness.stack_config("rke2-dev"), upgrades=owner), stack="rke2-dev")  # ccm.install: manifest
    (imported,) = r.of_type(CLUSTER)
    assert imported.inputs["name"] == "rke2-dev"
    # Rancher's version management is off exactly when this program owns upgrades (Rancher >= 2.11).
    assert imported.inputs["annotations"] == {"rancher.io/imported-cluster-version-management": annotation}
    # No driver configuration: an imported cluster (rke2_config would be Rancher's own upgrade path).
    assert not {"rke2Config", "k3sConfig", "importedConfig", "driver"} & set(imported.inputs)
    (provider,) = r.of_type(PROVIDER)
    assert provider.inputs["apiUrl"] == "https://rancher.example.com" and provider.inputs["insecure"] in (False, "false")
    assert "tokenKey" in provider.secret_inputs
    files = params(r)
    reg = files["rancher-registration.url"]
    assert reg.inputs["type"] == "SecureString" and "/v3/import/" in reg.inputs["value"]
    upgrade_files = set(cluster_documents.upgrade_manifests(versions.RKE2_VERSION))
    # The Plan CRD stays either way: Rancher's controller uses the same cluster-wide CRD, and deleting a
    # CRD deletes every Plan (Rancher's too).
    kept = {f for f in upgrade_files if f.startswith("system-upgrade-controller-crd.")}
    assert upgrade_files & set(files) == (upgrade_files if owner == "rke-aws" else kept) and kept
    assert r.outputs["rancherCluster"]["upgrades"] == owner
    assert not r.of_type(CONFIG_FILE) or owner == "rke-aws"


@pytest.mark.parametrize("owner", ["rke-aws", "rancher"])
def test_helm_mode_applies_the_manifest_through_the_kubernetes_provider(owner, monkeypatch):
    # The provider verifies TLS whatever the environment says (the SDK would read RANCHER_INSECURE).
    monkeypatch.setenv("RANCHER_INSECURE", "true")
    r = run(with_rancher(helm(), upgrades=owner), stack="rke2-prod")
    files = {c.name: c for c in r.of_type(CONFIG_FILE)}
    (provider,) = r.of_type(PROVIDER)
    assert provider.inputs["insecure"] in (False, "false")
    agent = files["rke2-prod-rancher-agent"]
    assert "/v3/import/" in agent.inputs["file"] and "file" in agent.secret_inputs
    assert agent.provider.split("::")[-2].endswith("rke2-prod-cluster") or "rke2-prod-cluster" in agent.provider
    # Only one side ever writes Plans: this program's SUC and Plans exist exactly when it owns upgrades.
    plans = r.of_type(PLAN)
    assert bool(plans) == (owner == "rke-aws")
    assert ("rke2-prod-suc" in files) == (owner == "rke-aws") and "rke2-prod-suc-crd" in files
    assert ("system-upgrade-controller" in r.outputs["installedInCluster"]) == (owner == "rke-aws")


def test_rke1_registers_through_the_kubeconfig_and_has_no_upgrade_controller():
    r = run(with_rancher(helm("rke-prod")), stack="rke-prod")
    assert r.of_type(CLUSTER) and [c.name for c in r.of_type(CONFIG_FILE)] == ["rke-prod-rancher-agent"]


# Where Rancher puts its agent, and its own upgrade controller and Plans (rancher/rancher
# systemcharts/controller.go): never this program's.
RANCHER_NAMESPACE = "cattle-system"
RANCHER_PLAN_NAMES = ("rke2-master-plan", "rke2-worker-plan")


def test_this_programs_upgrade_controller_is_never_where_rancher_looks():
    # Rancher deletes Plans of these names in cattle-system, and treats an unannotated
    # cattle-system/system-upgrade-controller Deployment as a legacy install (systemcharts/controller.go).
    for plan in cluster_documents.plans(versions.RKE2_VERSION):
        assert plan["metadata"]["namespace"] != RANCHER_NAMESPACE
        assert plan["metadata"]["name"] not in RANCHER_PLAN_NAMES
    assert cluster_documents.NAMESPACE == "system-upgrade"
    # The controller's own namespace is the upstream release manifest's (rancher/system-upgrade-controller
    # manifests/system-upgrade-controller.yaml: Namespace system-upgrade), pinned by release.
    assert all(f"/releases/download/{versions.SUC_VERSION}/" in u for u in versions.SUC_MANIFEST_URLS)


# ---- day 2 -------------------------------------------------------------------------------------

OLDER, NEWER = "v1.35.6+rke2r1", versions.RKE2_VERSION


def _newer(cfg: dict) -> dict:
    return set_key(copy.deepcopy(cfg), "kubernetesVersion", NEWER)


def test_a_version_change_is_refused_while_rancher_owns_upgrades_until_confirmed():
    assert OLDER in versions.RKE2_RELEASES and OLDER != NEWER
    cfg = set_key(with_rancher(harness.stack_config("rke2-dev"), upgrades="rancher"), "kubernetesVersion", OLDER)
    base = run(cfg, stack="rke2-dev")
    msg = refused(_newer(cfg), base, stack="rke2-dev")
    assert f"rke-aws:kubernetesVersion: {NEWER}, but rancher.upgrades is rancher" in msg and "Upgrade in Rancher" in msg
    code = code_in(msg, "rancherversion")
    after = run(set_key(_newer(cfg), "confirmClusterState", code), base, stack="rke2-dev")
    assert after.outputs["kubernetesVersion"] == NEWER and not after.of_type(PLAN)


def test_a_version_rancher_reached_is_read_from_the_cluster(cluster):
    cfg = set_key(readable(with_rancher(harness.stack_config("rke2-prod"), upgrades="rancher")), "kubernetesVersion", OLDER)
    base = run(cfg, stack="rke2-prod")
    agent = next(n["name"] for n in base.outputs["nodes"] if "controlplane" not in n["roles"])
    cluster(base, NEWER, versions_by_node={agent: OLDER})  # Rancher's Plans still on one node
    msg = refused(_newer(cfg), base, stack="rke2-prod")
    assert "but rancher.upgrades is rancher" in msg and f"the cluster reports nodes not on it: {agent}" in msg
    cluster(base, NEWER)  # every node on it: the change only records what runs
    after = run(_newer(cfg), base, stack="rke2-prod")
    assert after.outputs["kubernetesVersion"] == NEWER and not after.of_type(PLAN)


def test_switching_the_owner_with_a_version_change_is_refused_and_alone_is_warned():
    cfg = set_key(with_rancher(helm()), "kubernetesVersion", OLDER)
    base = run(cfg, stack="rke2-prod")
    switched = set_key(with_rancher(helm(), upgrades="rancher"), "kubernetesVersion", OLDER)
    after = run(switched, base, stack="rke2-prod")
    assert "removes this program's system-upgrade-controller" in warned(after, "rke-aws:rancher.upgrades: rancher")
    assert "rancher.upgrades: rancher" in warned(after, "this update uninstalls from the cluster")
    back = run(cfg, after, stack="rke2-prod")
    assert "turns Rancher's version management off" in warned(back, "rke-aws:rancher.upgrades: rke-aws")
    msg = refused(_newer(switched), base, stack="rke2-prod")
    assert "rke-aws:rancher.upgrades: rancher (was rke-aws) in the same update as kubernetesVersion" in msg


def test_removing_rancher_says_what_it_leaves_behind():
    cfg = with_rancher(harness.stack_config("rke2-dev"))
    base = run(cfg, stack="rke2-dev")
    after = run(harness.stack_config("rke2-dev"), base, stack="rke2-dev")
    w = warned(after, "rke-aws:rancher: removed")
    assert "deletes the imported cluster rke2-dev from Rancher" in w and "cattle-cleanup" in w and "cattle-system" in w
    assert "leaves Rancher's agent running" in w
    assert not after.of_type(CLUSTER)


def test_renaming_is_an_update_in_place():
    from rke_aws_offline.engine.resource_types import RULES
    rules = RULES[CLUSTER]
    assert "name" not in rules.replace_on and "annotations" not in rules.replace_on
    base = run(with_rancher(harness.stack_config("rke2-dev")), stack="rke2-dev")
    after = run(with_rancher(harness.stack_config("rke2-dev"), clusterName="dev-renamed"), base, stack="rke2-dev")
    assert "renamed in Rancher in place" in warned(after, "rke-aws:rancher.clusterName")
    files = params(after)  # still registered: the manifest stays live, never emptied
    assert "rancher-registration.url" in files and "rancher-registration.removed.yaml" not in files


def test_manifest_mode_owner_switch_empties_the_controller_but_keeps_the_crd():
    base = run(with_rancher(harness.stack_config("rke2-dev")), stack="rke2-dev")
    after = run(with_rancher(harness.stack_config("rke2-dev"), upgrades="rancher"), base, stack="rke2-dev")
    files = params(after)
    assert {"system-upgrade-controller.removed.yaml", "upgrade-plans.removed.yaml"} <= set(files)
    assert "system-upgrade-controller-crd.url" in files and "system-upgrade-controller-crd.removed.yaml" not in files
    w = warned(after, "the servers get this program's system-upgrade-controller and Plan manifests emptied")
    assert "addons.ebsCsi" not in w
    assert not [m for lvl, m in after.logs if lvl == "warning" and "addons.ebsCsi" in m]
    # Removing the registration waits for nothing: Rancher's cleanup removes the agent as well.
    gone = run(harness.stack_config("rke2-dev"), base, stack="rke2-dev")
    assert gone.outputs["rke2ManifestsRemoving"] == []


# ---- doctor ------------------------------------------------------------------------------------

def _exp(upgrades: str = "rke-aws"):
    from rke_aws.ops import doctor
    return doctor.Expectations("c1", (), rancher={"name": "prod", "id": "c-abcde", "upgrades": upgrades,
                                                  "url": "https://rancher.example.com"})


def _fake(status: int, body=None, seen: list | None = None):
    def get(url, token):
        if seen is not None:
            seen.append((url, token))
        return status, body
    return get


def test_doctor_checks_who_upgrades_in_rancher():
    from rke_aws.ops import doctor
    answer = {"state": "active", "annotations": {rancher_plan.VERSION_MANAGEMENT_ANNOTATION: "false"}}
    seen: list = []
    (ok,) = doctor.check_rancher(_exp(), "t", _fake(200, answer, seen))
    assert ok.status == doctor.PASS and seen == [("https://rancher.example.com/v3/clusters/c-abcde", "t")]
    (flipped,) = doctor.check_rancher(_exp("rancher"), "t", _fake(200, answer))
    assert flipped.status == doctor.FAIL and "both Rancher and this program may write upgrade Plans" in flipped.detail
    (pending,) = doctor.check_rancher(_exp(), "t", _fake(200, {**answer, "state": "pending"}))
    assert pending.status == doctor.WARN
    for status in (401, 403, 404, 500):
        (bad,) = doctor.check_rancher(_exp(), "t", _fake(status))
        assert bad.status == doctor.FAIL, status
    (ping,) = doctor.check_rancher(_exp(), None, _fake(200, "pong", seen))
    assert ping.status == doctor.WARN and seen[-1] == ("https://rancher.example.com/ping", None)

    def boom(url, token):
        raise OSError("timed out")
    (down,) = doctor.check_rancher(_exp(), "t", boom)
    assert down.status == doctor.FAIL and "not reachable" in down.detail
    assert doctor.check_rancher(doctor.Expectations("c1", ()), "t", boom) == []


def test_doctor_reads_the_rancher_output():
    from rke_aws.ops import doctor
    r = run(with_rancher(harness.stack_config("rke2-dev"), upgrades="rancher"), stack="rke2-dev")
    exp = doctor.Expectations.from_outputs(r.outputs, "rke2-dev")
    assert exp.rancher["url"] == "https://rancher.example.com" and exp.rancher["upgrades"] == "rancher"
    assert doctor.VERSION_MANAGEMENT == rancher_plan.VERSION_MANAGEMENT_ANNOTATION


@pytest.mark.parametrize("value", [TOKEN, [TOKEN], {"url": "https://r.example.com", "token": TOKEN, "tokne": TOKEN},
                                   {"url": "https://r.example.com", "token": [TOKEN]}])
def test_the_token_never_reaches_a_message(value):
    msg = problems({"rke-aws:rancher": json.dumps(value)})
    assert "rke-aws:rancher" in msg and TOKEN not in msg and "0123456789abcdef" not in msg


def test_helm_mode_without_a_kubeconfig_says_the_cluster_stays_pending():
    cfg = with_rancher(harness.stack_config("rke-prod"))
    cfg.pop("rke-aws:kubeconfig", None)
    r = run(cfg, stack="rke-prod")
    assert r.of_type(CLUSTER) and not r.of_type(CONFIG_FILE)
    assert [m for lvl, m in r.logs if lvl == "info" and "stays pending in Rancher until its agent is applied" in m]


# ---- removing the registration: what the engine deletes, and in which order ----------------------
#
# The registration manifest's objects (rancher/rancher pkg/systemtemplate/template.go, read at
# 59bd052e): the agent and what it runs as. The helm-mode ConfigFile registers each as its child
# (the offline mocks never see them: tests/support/engine_deletes.py adds them as the provider would).
AGENT_OBJECTS = (
    ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "proxy-clusterrole-kubeapiserver"),
    ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "proxy-role-binding-kubernetes-master"),
    ("kubernetes:core/v1:Namespace", "cattle-system"),
    ("kubernetes:core/v1:ServiceAccount", "cattle-system/cattle"),
    ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "cattle-admin-binding"),
    ("kubernetes:core/v1:Secret", "cattle-system/cattle-credentials-0123abc"),
    ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "cattle-admin"),
    ("kubernetes:apps/v1:Deployment", "cattle-system/cattle-cluster-agent"),
    ("kubernetes:core/v1:Service", "cattle-system/cattle-cluster-agent"),
)


def _with_agent_objects(r: harness.ProgramRun) -> tuple[list[harness.Registration], list[harness.Registration]]:
    """The state after run `r` (its registrations plus the agent ConfigFile's children), and those children."""
    from tests.support import engine_deletes

    (agent,) = [c for c in r.of_type(CONFIG_FILE) if c.name.endswith("-rancher-agent")]
    objects = [engine_deletes.child(agent, typ, f"{agent.name}-{name}") for typ, name in AGENT_OBJECTS]
    return r.resources + objects, objects


def test_removing_rancher_in_helm_mode_deletes_the_cluster_and_leaves_the_agent_to_ranchers_cleanup():
    """Deleting the imported cluster makes Rancher clean the downstream cluster through that cluster's
    agent: rancher/rancher pkg/controllers/management/usercontrollers/controller.go (Remove ->
    cleanupImportedCluster) reaches it with UserContextFromCluster, whose dialer is the agent's tunnel
    (pkg/clustermanager/manager.go ToRESTConfig: Dialer.ClusterDialer), creates the cattle-cleanup Job,
    tries three times and then gives up. The Job (pkg/agent/clean/cluster.go) deletes cattle-system,
    the rancher.cattle.io webhook configurations and the cattle.io/creator=norman roles. If the agent
    is deleted first, nothing deletes rancher-webhook's configurations (failurePolicy Fail), and they
    refuse namespace changes (rancher/rancher#40164).

    The engine deletes what depends on a resource before the resource (tests/support/engine_deletes.py): the
    agent's objects are children of the ConfigFile, which depends on the Cluster through the manifest's
    address, so they are always scheduled first. The order cannot be turned around; the agent's objects
    must not be deleted by the engine at all."""
    from tests.support import engine_deletes

    cfg = with_rancher(helm())
    base = run(cfg, stack="rke2-prod")
    state, objects = _with_agent_objects(base)
    change = run(helm(), base, stack="rke2-prod")  # rancher removed
    layers = engine_deletes.schedule(state, change)
    deletes = {d.urn: d for layer in layers for d in layer}
    (imported,) = base.of_type(CLUSTER)
    assert deletes[imported.urn].calls_provider, "the imported cluster stays in Rancher"
    for o in objects:
        assert engine_deletes.position(layers, o.urn) < engine_deletes.position(layers, imported.urn)  # the engine's order
        assert not deletes[o.urn].calls_provider, (
            f"the engine deletes {o.name} before the imported cluster: Rancher's cleanup, which goes through the "
            "agent, cannot run, and rancher-webhook's configurations stay behind (rancher/rancher#40164)")
    w = warned(change, "rke-aws:rancher: removed")
    assert "deletes the imported cluster rke2-prod from Rancher" in w and "cattle-cleanup" in w
    assert "proxy-clusterrole-kubeapiserver" in w and "kubectl delete validatingwebhookconfiguration rancher.cattle.io" in w
    # The next update: nothing of the registration is left to delete, and nothing more is said.
    again = run(helm(), change, stack="rke2-prod")
    assert not [d for layer in engine_deletes.schedule(change.resources, again) for d in layer
                if d.type in (CLUSTER, PROVIDER, CONFIG_FILE) or "rancher" in d.urn.rsplit("::", 1)[1]]
    assert not [m for _, m in again.logs if "rke-aws:rancher: removed" in m]


def test_removing_rancher_after_a_release_that_did_not_keep_the_agent_is_refused_until_one_update_keeps_it():
    """A stack whose agent objects were last written without retainOnDelete (an earlier release): the
    engine reads retainOnDelete from the OLD state (pulumi/pulumi pkg/resource/deploy/step.go
    DeleteStep.Apply), so removing `rancher` now would delete the agent before the cluster. One update
    with `rancher` still set writes the option into the state (a same step keeps the new goal's
    options); then the removal goes through."""
    cfg = with_rancher(helm())
    base = run(cfg, stack="rke2-prod")
    older = copy.deepcopy(base)
    older.outputs["rancherCluster"] = {k: v for k, v in base.outputs["rancherCluster"].items()
                                       if k in ("name", "upgrades", "id", "url")}
    msg = refused(helm(), older, stack="rke2-prod")
    assert "rke-aws:rancher: removed" in msg and "still set" in msg and "rancher/rancher#40164" in msg
    kept = run(cfg, older, stack="rke2-prod")
    assert all(c.retain_on_delete for c in kept.of_type(CONFIG_FILE) if c.name.endswith("-rancher-agent"))
    assert not [m for lvl, m in run(helm(), kept, stack="rke2-prod").logs if lvl == "error"]


def test_removing_rancher_in_manifest_mode_drops_the_registration_file_without_emptying_it():
    """An emptied manifest makes the deploy controller prune what its Addon created (k3s
    pkg/deploy/controller.go, apply WithOwner(addon)): it would delete the agent while Rancher's cleanup
    still needs it, on the servers' next sync, which can come before the cluster is deleted. A file
    that disappears is only forgotten (the controller walks the files present): the agent stays for
    Rancher's cleanup Job, as in helm mode."""
    from tests.support import engine_deletes

    cfg = with_rancher(harness.stack_config("rke2-dev"))
    base = run(cfg, stack="rke2-dev")
    after = run(harness.stack_config("rke2-dev"), base, stack="rke2-dev")
    assert not [f for f in params(after) if f.startswith(rancher_plan.REGISTRATION_MANIFEST)]
    (imported,) = base.of_type(CLUSTER)
    deletes = {d.urn: d for layer in engine_deletes.schedule(base.resources, after) for d in layer}
    assert deletes[imported.urn].calls_provider
    assert "rancher-registration" not in after.outputs["rke2ManifestsRemoving"]
    # A stack an earlier release already emptied it for keeps the emptied file (it deletes nothing more).
    older = copy.deepcopy(after)
    older.outputs["rke2Manifests"] = [*after.outputs["rke2Manifests"], "rancher-registration.removed.yaml"]
    assert "rancher-registration.removed.yaml" in params(run(harness.stack_config("rke2-dev"), older, stack="rke2-dev"))


# ---- manifest mode: the registration manifest is applied once ---------------------------------------

def servers_files(r: harness.ProgramRun) -> dict[str, str]:
    """RKE2's manifests directory on every server after their sync (components/node/scripts/sync.sh):
    each parameter under the manifest path as <prefix><name>; a `.url` one downloaded to <prefix><base>.yaml
    (with its .source beside it)."""
    from rke_aws.node.scripts import MANIFEST_PREFIX

    out = {}
    for name, p in params(r).items():
        if name.endswith(".url"):
            out[MANIFEST_PREFIX + name[:-len(".url")] + ".yaml"] = f"(downloaded from the {name} address)"
            out[MANIFEST_PREFIX + name[:-len(".url")] + ".yaml.source"] = "(the address)"
        else:
            out[MANIFEST_PREFIX + name] = p.inputs.get("insecureValue") or ""
    return out


def applied_at_start(files: dict[str, str]) -> list[str]:
    """What rke2-server's deploy controller applies when it starts (k3s pkg/deploy/controller.go, read at
    0301210f: the first listFilesIn pass runs with force, so deploy() applies without comparing the Addon's
    checksum): every .yaml/.yml/.json file that is no dotfile and that no '<file name>.skip' names."""
    skips = {n[:-len(".skip")] for n in files if n.endswith(".skip")}
    return sorted(n for n in files if not n.startswith(".") and n not in skips
                  and n.lower().endswith((".yaml", ".yml", ".json")))


def test_manifest_mode_stops_reapplying_the_registration_manifest_once_it_is_applied(monkeypatch):
    """The registration manifest is what the import address served when the servers downloaded it, with
    the registration token's credential. Once the agent connects, Rancher deploys its own manifest (rancher/
    rancher pkg/controllers/management/clusterdeploy/clusterdeploy.go deployAgent: a system token, the agent
    image of the day, the cluster's agent env vars) and redeploys it on upgrades or agent changes, noticing a
    changed downstream agent only through its cached image. rke2-server re-applied the frozen file at every
    start and undid that. The file is applied until the cluster shows its Addon applied (or the user
    confirms), then a `.skip` beside it keeps the deploy controller away from it for good."""
    from tests.support import fake_cluster
    from tests.support.day2 import fake_api

    reg = "rke-aws-rancher-registration.yaml"
    cfg = with_rancher(harness.stack_config("rke2-dev"))
    base = run(cfg, stack="rke2-dev")
    assert reg in applied_at_start(servers_files(base)), "the cluster is never registered"
    # Not known to be applied (no way to the cluster, nothing confirmed): still applied, and said so.
    again = run(cfg, base, stack="rke2-dev")
    assert reg in applied_at_start(servers_files(again))
    # The cluster shows no such Addon yet: not skipped.
    monkeypatch.setattr(fake_cluster, "TRANSPORT", lambda access: fake_api([], plans=[], charts=[], addons=["rke-aws-ccm"]))
    assert reg in applied_at_start(servers_files(run(readable(cfg, "rke2-dev"), again, stack="rke2-dev")))
    # The cluster shows it applied: from now on the servers skip it at every start.
    monkeypatch.setattr(fake_cluster, "TRANSPORT", lambda access: fake_api(
        [], plans=[], charts=[], addons=["rke-aws-ccm", "rke-aws-rancher-registration"]))
    known = run(readable(cfg, "rke2-dev"), again, stack="rke2-dev")
    assert reg not in applied_at_start(servers_files(known)), (
        "rke2-server re-applies the registration-time manifest at each start (k3s deploy controller, force on the "
        "first pass) and reverts the agent Rancher redeployed")
    assert reg in servers_files(known), "the file itself stays (a file that disappears is only forgotten, but a " \
                                        "server that boots later needs nothing from it either way)"
    assert known.outputs["rancherCluster"]["registrationApplied"] is True
    # Until then, each update says so, with the confirmation that does what the read does.
    w = warned(again, "rke-aws:rancher: the servers apply Rancher's registration manifest")
    code = code_in(w, "rancherregistration")
    assert again.outputs["rancherCluster"]["registrationApplied"] is False
    monkeypatch.setattr(fake_cluster, "TRANSPORT", None)
    # The next update cannot read the cluster: it stays skipped, and nothing more is asked.
    later = run(cfg, known, stack="rke2-dev")
    assert reg not in applied_at_start(servers_files(later))
    assert not [m for _, m in later.logs if "registration manifest" in m and "rancherregistration-" in m]
    confirmed = run(set_key(copy.deepcopy(cfg), "confirmClusterState", code), again, stack="rke2-dev")
    assert reg not in applied_at_start(servers_files(confirmed))
    # Removed: no registration file is left, none emptied (Rancher's cleanup needs the agent).
    gone = run(harness.stack_config("rke2-dev"), later, stack="rke2-dev")
    assert not [f for f in servers_files(gone) if "rancher-registration" in f]


def test_a_server_booted_after_the_registration_holds_the_manifest_and_its_skip(tmp_path):
    """The servers' real sync script (components/node/scripts/sync.sh, run under tests/support/stubs): a server that
    boots once the registration is known applied gets the downloaded manifest and the .skip beside it
    before rke2-server starts, so its deploy controller never applies it (k3s pkg/deploy/controller.go)."""
    from rke_aws.node import rke2_config
    from tests.support.boot import boot, first_server, rke2_parameters

    cfg = with_rancher(harness.stack_config("rke2-dev"))
    again = run(cfg, run(cfg, stack="rke2-dev"), stack="rke2-dev")
    code = code_in(warned(again, "registration manifest"), "rancherregistration")
    known = run(set_key(copy.deepcopy(cfg), "confirmClusterState", code), again, stack="rke2-dev")
    b = boot(first_server(known), tmp_path, rke2_parameters(known))
    assert b.returncode == 0, b.stderr
    at_start = {name: "" for name in b.manifests_at_start or ()}
    assert {"rke-aws-rancher-registration.yaml", "rke-aws-rancher-registration.yaml.skip"} <= set(at_start), at_start
    assert "rke-aws-rancher-registration.yaml" not in applied_at_start(at_start)
    manifests = b.root / rke2_config.RKE2_MANIFESTS_DIR.lstrip("/")
    assert (manifests / "rke-aws-rancher-registration.yaml.skip").read_text() == rancher_plan.SKIP_CONTENT
