"""The ingress controller (`ingress.controller`, issue 32 item 10): what RKE2's servers are told to deploy,
what a running cluster keeps, and the gate before RKE2 v1.37.

What RKE2 does, read from its sources (rancher/rke2 at the release tags; rancher/rke2-docs at 9477b7b1):
- The `ingress-controller` server option exists from v1.27.16 / v1.28.12 / v1.29.7 / v1.30.3 and every 1.31+
  (pkg/rke2/rke2.go, later pkg/cli/cmds/server.go); its values (IngressItems) are ingress-nginx (and none)
  up to 1.29, ingress-nginx and traefik from v1.30.3. Older releases skip the unknown key with a warning
  (k3s pkg/configfilearg, "Unknown flag ... found in config.yaml, skipping").
- Before v1.36 a server that names no controller deploys ingress-nginx (the flag's default); from v1.36
  (commit 003f022f, "Make traefik default; add support for detecting legacy default ingress-class") it
  deploys the one whose HelmChart runs, else Traefik (pkg/bootstrap/bootstrap.go
  getDefaultIngressClassFromCharts). rke2-docs release-notes/v1.36.X.md: "Traefik is now the default for
  new clusters starting in v1.36 (existing clusters will keep their current ingress upon upgrade)".
- Each server writes a controller it does not select as an empty manifest (bootstrap.go updateManifests,
  "disabled by configuration"), which prunes that controller for the whole cluster: all servers must
  name the same one.
- v1.37 refuses `ingress-controller: ingress-nginx` alone (rancher/rke2 PR #11156); the way off it is
  rke2-docs reference/ingress_migration.md ("Ingress NGINX to Traefik Migration Guide").
- RKE1: cluster.yml `ingress.provider` nginx (RKE's default) or none; `rke up` with none removes the
  ingress-nginx it deployed (rancher/rke cluster/addons.go deployIngress). RKE has no Traefik.
"""

# split: this module mixes levels (issue 33 §7.2); the config-only tests -> tests/unit.

from __future__ import annotations

import copy

import pytest
import yaml

from rke_aws.node import rke2_config
from rke_aws.plan import ingress
from rke_aws.plan.day2.confirmations import Observed
from rke_aws.plan.ingress import removal_problems as ingress_removal_problems
from rke_aws.plan.running import LiveCluster
from rke_aws.settings import versions
from rke_aws.state.migrations import from_outputs
from rke_aws.state.model import ClusterState
from rke_aws_offline.engine import harness
from tests.support.configs import config_problems, parse_config, set_key
from tests.support.day2 import INSTANCE, code_in, readable, refused
from tests.support.day2 import run_shared as run  # a step several tests walk through is made once
from tests.support.hostile import run_refused
from tests.support.rke2_keys import RKE2_AGENT_KEYS, RKE2_SERVER_KEYS
from tests.support.userdata import cloud_config, written_file

V35, V36 = "v1.35.7+rke2r1", "v1.36.3+rke2r1"
V37 = "v1.37.0+rke2r1"  # planted in the release table by the gate tests: RKE2_RELEASES has no 1.37 yet


def servers(r: harness.ProgramRun) -> dict[str, dict]:
    """Each server's /etc/rancher/rke2/config.yaml as its user data writes it."""
    roles = {n["name"]: n["roles"] for n in r.outputs["nodes"]}
    out = {}
    for inst in r.of_type(INSTANCE):
        name = inst.inputs["tags"]["Name"]
        if {"controlplane", "etcd"} & set(roles.get(name, ())):
            out[name] = yaml.safe_load(written_file(cloud_config(inst), rke2_config.RKE2_CONFIG_PATH))
    assert out
    return out


def agents(r: harness.ProgramRun) -> list[dict]:
    roles = {n["name"]: n["roles"] for n in r.outputs["nodes"]}
    return [yaml.safe_load(written_file(cloud_config(i), rke2_config.RKE2_CONFIG_PATH)) for i in r.of_type(INSTANCE)
            if roles.get(i.inputs["tags"]["Name"]) == ["worker"]]


def named(r: harness.ProgramRun) -> set:
    """The `ingress-controller` every server names (a missing key is None)."""
    return {c.get("ingress-controller") for c in servers(r).values()}


def legacy(r: harness.ProgramRun) -> harness.ProgramRun:
    """The run's outputs as a release before ingress.controller wrote them (no ingressController)."""
    old = copy.copy(r)
    old.outputs = {k: v for k, v in r.outputs.items() if k != "ingressController"}
    return old


@pytest.fixture
def prod() -> dict:
    """rke2-prod in manifest mode (upgrades need no kubeconfig), without a kubeconfig."""
    cfg = set_key(harness.stack_config("rke2-prod"), "ccm", {"install": "manifest"})
    cfg.pop("rke-aws:kubeconfig", None)
    return cfg


def at(cfg: dict, version: str, **ingress_keys) -> dict:
    cfg = set_key(copy.deepcopy(cfg), "kubernetesVersion", version)
    return set_key(cfg, "ingress", ingress_keys) if ingress_keys else cfg


# ---- what RKE2 accepts, per release --------------------------------------------------------------

@pytest.mark.parametrize("version, option, traefik", [
    ("v1.26.15+rke2r1", False, False), ("v1.27.15+rke2r1", False, False), ("v1.27.16+rke2r1", True, False),
    ("v1.28.11+rke2r1", False, False), ("v1.28.12+rke2r1", True, False), ("v1.29.6+rke2r1", False, False),
    ("v1.29.7+rke2r1", True, False), ("v1.29.15+rke2r1", True, False), ("v1.30.2+rke2r1", False, False),
    ("v1.30.3+rke2r1", True, True), ("v1.31.0+rke2r1", True, True), (V36, True, True),
])
def test_the_option_and_traefik_per_release_as_rke2s_tags_have_them(version, option, traefik):
    """rancher/rke2 at each tag: the `ingress-controller` flag, and IngressItems holding "traefik"."""
    assert ingress.has_option(version) is option
    assert versions.rke2_patch_at_least(version, *versions.RKE2_TRAEFIK_SINCE) is traefik
    assert ingress.default_controller(version) == ("traefik" if traefik else "ingress-nginx")


def test_the_keys_are_server_keys_and_none_disables_ingress_nginx_where_the_option_is_missing():
    assert "ingress-controller" in RKE2_SERVER_KEYS and "ingress-controller" not in RKE2_AGENT_KEYS
    assert rke2_config.ingress_keys("traefik", V35) == {"ingress-controller": "traefik"}
    assert rke2_config.ingress_keys("none", "v1.29.7+rke2r1") == {"ingress-controller": "none"}
    # v1.26 skips ingress-controller (and honours it once upgraded): `disable` is what it knows.
    assert rke2_config.ingress_keys("none", "v1.26.15+rke2r1") == {"ingress-controller": "none",
                                                                   "disable": ["rke2-ingress-nginx"]}
    assert rke2_config.ingress_keys("ingress-nginx", "v1.26.15+rke2r1") == {"ingress-controller": "ingress-nginx"}


def test_traefik_on_a_release_without_it_is_refused(base_config):
    """rke2-server exits on a value outside IngressItems ("Invalid value ... must be one of"): 1.27-1.29
    know ingress-nginx only; v1.30.2 has no option and no Traefik."""
    for version in ("v1.30.2+rke2r1", "v1.29.15+rke2r1"):
        cfg = at(base_config, version, controller="traefik")
        cfg = set_key(cfg, "ccm", {"image": "registry.k8s.io/provider-aws/cloud-controller-manager:v1.30.10"})
        problems = config_problems(cfg)
        assert [p for p in problems if p.startswith("rke-aws:ingress.controller: 'traefik' is bundled from RKE2 "
                                                     f"v1.30.3 (and in every 1.31 and later), but kubernetesVersion "
                                                     f"{version} ships ingress-nginx only")], problems
    parse_config(at(base_config, "v1.30.3+rke2r1", controller="traefik"))


@pytest.mark.parametrize("value, problem", [
    ({"controller": "nginx"}, 'ingress.controller: "nginx" is not an ingress controller; use traefik, ingress-nginx or none'),
    ({"controller": "Traefik"}, 'ingress.controller: "Traefik" is not an ingress controller'),
    ({"controller": ["traefik", "ingress-nginx"]}, 'ingress.controller: ["traefik", "ingress-nginx"] is not an ingress '
                                                  "controller"),
    ({"controller": True}, "ingress.controller: true is not an ingress controller"),
    ({"controller": None}, "ingress.controller: is null"),
    ({"controler": "traefik"}, "ingress.controler: unknown key; did you mean controller?"),
    ("traefik", 'ingress: "traefik" is not an object; expected a map of ingress settings'),
])
def test_values_outside_the_three_are_refused_naming_them(base_config, value, problem):
    (said,) = config_problems(set_key(base_config, "ingress", value if isinstance(value, dict) else f'"{value}"'))
    assert said.startswith(f"rke-aws:{problem}"), said


# ---- a new cluster -----------------------------------------------------------------------------------

def test_new_clusters_on_135_and_136_run_the_controller_they_name(prod):
    """Without the setting, a cluster created on 1.35 ran ingress-nginx and one created on 1.36 Traefik (the
    flag's default, then getDefaultIngressClassFromCharts), and nothing recorded which. Now every server names
    it (agents never: a server-only key) and the stack records it."""
    for version in (V35, V36):
        r = run(at(prod, version))
        assert named(r) == {"traefik"}, version
        assert r.outputs["ingressController"] == "traefik"
        assert all("ingress-controller" not in a for a in agents(r))
    r = run(at(prod, V35, controller="ingress-nginx"))
    assert named(r) == {"ingress-nginx"} and r.outputs["ingressController"] == "ingress-nginx"


# ---- a running cluster --------------------------------------------------------------------------------

def test_a_cluster_deployed_before_the_setting_keeps_ingress_nginx_through_136(prod):
    """Its servers named no controller: RKE2 before 1.36 deployed ingress-nginx, and 1.36 keeps the chart
    that runs. New servers naming Traefik (today's default) would remove ingress-nginx cluster-wide."""
    base = legacy(run(at(prod, V35)))
    kept = run(at(prod, V35), base)
    assert kept.outputs["ingressController"] == "ingress-nginx" and named(kept) == {"ingress-nginx"}
    (said,) = [m for lvl, m in kept.logs if lvl == "warning" and m.startswith("rke-aws:ingress.controller")]
    assert "taken to run ingress-nginx" in said and "changed by hand" in said
    upgraded = run(at(prod, V36), legacy(kept))
    assert upgraded.outputs["ingressController"] == "ingress-nginx" and named(upgraded) == {"ingress-nginx"}


def test_a_cluster_only_known_on_136_names_no_controller_until_the_user_says(prod):
    """Deployed by a release that named none, known only on 1.36: created there it runs Traefik, upgraded
    to it ingress-nginx. New servers name none (RKE2 keeps what runs), and a value needs a confirmation."""
    base = legacy(run(at(prod, V36)))
    kept = run(at(prod, V36), base)
    assert kept.outputs["ingressController"] is None and named(kept) == {None}
    message = refused(at(prod, V36, controller="traefik"), base)
    assert "rke-aws:ingress.controller: 'traefik', but which ingress controller the cluster runs is not known" in message
    assert "kubectl -n kube-system get helmcharts rke2-ingress-nginx rke2-traefik" in message
    said = run(set_key(at(prod, V36, controller="traefik"), "confirmClusterState", code_in(message, "ingress")), base)
    assert said.outputs["ingressController"] == "traefik" and named(said) == {"traefik"}


def test_changing_the_controller_of_a_running_cluster_waits_for_its_servers(prod):
    """Running servers never re-read their user data: a changed value would reach new servers only, and
    a new server naming another controller empties the running one's manifest. Refused with the steps and
    a code; the code, once the servers run it, lets new servers follow; then it is stale."""
    base = run(at(prod, V35))
    change = at(prod, V35, controller="none")
    message = refused(change, base)
    assert message.count("rke-aws:ingress.controller: 'none', but the cluster runs traefik (this stack's last "
                         "outputs, ingressController)") == 1
    assert "empty its rke2-traefik manifest" in message and "systemctl restart rke2-server" in message
    done = run(set_key(copy.deepcopy(change), "confirmClusterState", code_in(message, "ingress")), base)
    assert done.outputs["ingressController"] == "none" and named(done) == {"none"}
    assert not [m for lvl, m in done.logs if m.startswith("rke-aws:confirmClusterState")]
    later = run(set_key(copy.deepcopy(change), "confirmClusterState", code_in(message, "ingress")), done)
    assert [m for lvl, m in later.logs if lvl == "warning" and m.startswith("rke-aws:confirmClusterState:")]


def test_moving_a_running_cluster_off_ingress_nginx_names_the_migration_guide(prod):
    base = legacy(run(at(prod, V35)))
    message = refused(at(prod, V35, controller="traefik"), base)
    assert "'traefik', but the cluster runs ingress-nginx" in message
    assert ingress.MIGRATION_GUIDE in message and "`ingress-controller: [traefik]`" in message




def test_the_cluster_as_read_decides_what_runs(prod, cluster):
    """The HelmCharts the servers' helm-controller runs say which controller runs; both of them is the
    migration guide's dual setup, where a new server naming one would remove the other."""
    cfg = readable(at(prod, V35))
    base = run(cfg)
    cluster(base, charts=["rke2-ingress-nginx", "rke2-coredns"])
    moved = run(cfg, base)  # e.g. set by hand: the cluster says ingress-nginx, the outputs said traefik
    assert moved.outputs["ingressController"] == "ingress-nginx" and named(moved) == {"ingress-nginx"}
    cluster(moved, charts=["rke2-ingress-nginx", "rke2-traefik"])
    assert run(cfg, moved).outputs["ingressController"] == "ingress-nginx"  # no server boots: fine
    pools = [dict(p) for p in yaml.safe_load(cfg["rke-aws:nodePools"])]
    pools[0]["count"] = 4
    message = refused(set_key(copy.deepcopy(cfg), "nodePools", pools), moved)
    assert "the cluster runs both ingress-nginx and Traefik" in message and "Finish the migration first" in message
    # No ingress chart at all is not decisive (`none`, or a young cluster): the outputs stand.
    cluster(base, charts=[])
    assert run(cfg, base).outputs["ingressController"] == "traefik"


# ---- the gate before v1.37 ----------------------------------------------------------------------------

@pytest.fixture
def planted_137(monkeypatch):
    """A 1.37 release in the tables, as the next person to add one would: it must not pass silently."""
    monkeypatch.setitem(versions.RKE2_RELEASES, V37, "3.6.14")
    monkeypatch.setitem(versions.CCM_IMAGE_TAGS, 37, "v1.37.0")


def test_upgrading_a_cluster_that_runs_ingress_nginx_to_137_is_refused(prod, planted_137):
    base = legacy(run(at(prod, V36)))
    kept = copy.copy(base)  # as an update records a cluster upgraded from 1.35 (see the test above)
    kept.outputs = {**base.outputs, "ingressController": "ingress-nginx"}
    message = refused(at(prod, V37), kept)
    assert (f"rke-aws:kubernetesVersion: {V37}, but RKE2 v1.37 and later refuse `ingress-controller: ingress-nginx` "
            "alone (rancher/rke2 PR #11156") in message
    assert "the cluster runs ingress-nginx (this stack's last outputs, ingressController)" in message
    assert f"Migrate to Traefik first, on {V36}" in message and ingress.MIGRATION_GUIDE in message
    # Not known whether it runs ingress-nginx: refused as well.
    assert "may run ingress-nginx: which controller it runs is not known" in refused(at(prod, V37), base)


def test_a_cluster_on_traefik_upgrades_to_137(prod, planted_137):
    base = run(at(prod, V36))
    assert base.outputs["ingressController"] == "traefik"
    up = run(at(prod, V37), base)
    assert up.outputs["kubernetesVersion"] == V37 and named(up) == {"traefik"}


def test_a_new_cluster_on_137_cannot_ask_for_ingress_nginx(prod, planted_137):
    cfg = at(prod, V37, controller="ingress-nginx")
    message = run_refused(cfg, (("ingress.controller", "'ingress-nginx' for a new cluster on v1.37.0+rke2r1, but "
                                                       "RKE2 v1.37 and later refuse"),), stack="rke2-prod")
    assert "use traefik (or none)" in message
    assert run(at(prod, V37, controller="none")).outputs["ingressController"] == "none"


def _previous(version: str, controller: str | None) -> ClusterState:
    outputs = {"distribution": "rke2", "kubernetesVersion": version, "kubernetesVersionConfirmed": version,
               "nodes": [{"name": "ip-10-0-0-10.ec2.internal", "pool": "servers", "index": 0,
                          "roles": ["controlplane", "etcd"], "availabilityZone": "us-east-1a",
                          "privateIp": "10.0.0.10"}]}
    if controller:
        outputs["ingressController"] = controller
    previous = from_outputs(outputs)
    assert previous is not None
    return previous


@pytest.mark.parametrize("target", ["v1.37.0+rke2r1", "v1.37.4+rke2r2", "v1.38.1+rke2r1"])
def test_every_release_from_137_on_is_judged_listed_or_not(target):
    """The gate is the minor (versions.RKE2_INGRESS_NGINX_ALONE_REMOVED_MINOR), not a list of releases."""
    plan = ingress.plan("rke2", None, target, "c", _previous(V36, "ingress-nginx"), Observed())
    assert plan is not None and plan.controller == "ingress-nginx"
    (problem,) = ingress_removal_problems(target, plan, V36)
    assert (problem.key, problem.code) == ("kubernetesVersion", "ingress.nginx-removed-running")
    assert problem.render().startswith(f"rke-aws:kubernetesVersion: {target}, but RKE2 v1.37 and later refuse")
    traefik = ingress.plan("rke2", None, target, "c", _previous(V36, "traefik"), Observed())
    assert ingress_removal_problems(target, traefik, V36) == []
    assert ingress_removal_problems(V36, plan, V36) == []


def test_rke1_gets_none_of_the_rke2_rules():
    assert ingress.plan("rke", "ingress-nginx", "v1.32.5-rancher1-1", "c", None, Observed()) is None


def test_a_live_read_without_charts_falls_back_to_the_outputs():
    previous = _previous(V35, "none")
    live = Observed(live=LiveCluster(nodes=(), helm_charts=frozenset()))
    assert ingress.running(previous, live) == ingress.Running("none", "this stack's last outputs, ingressController")


# ---- RKE1 ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("controller, provider", [("ingress-nginx", "nginx"), ("none", "none"), (None, None)])
def test_rke1_writes_its_own_ingress_provider(controller, provider):
    cfg = harness.stack_config("rke-dev")
    if controller:
        set_key(cfg, "ingress", {"controller": controller})
    r = run(cfg, stack="rke-dev")
    doc = yaml.safe_load(r.outputs["rkeClusterYml"])
    assert (doc.get("ingress") or {}).get("provider") == provider
    assert "ingressController" not in r.outputs


def test_rke1_has_no_traefik():
    cfg = set_key(harness.stack_config("rke-dev"), "ingress", {"controller": "traefik"})
    assert config_problems(cfg, "rke-dev") == [
        "rke-aws:ingress.controller: 'traefik' is not an RKE1 ingress provider: RKE deploys ingress-nginx or "
        "nothing (cluster.yml ingress.provider nginx or none); use ingress-nginx or none"]
