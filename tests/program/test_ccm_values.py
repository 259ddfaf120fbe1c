"""The aws-cloud-controller-manager Helm values really schedule on each distribution's control plane.

Nothing here is taken from components/plan/ccm_values.py: the chart defaults, the node labels and the
taints are written out below from domain.md sections 3 and 4, and the values Helm renders with are
recomputed from what the program registered (Release inputs, or the HelmChart manifest in RKE2
user data) the way the pulumi-kubernetes provider and Helm combine them.
"""

# split: this module mixes levels (issue 33 §7.2); the values tests without a program run -> tests/unit/plan.

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
import yaml

from rke_aws.plan import addons, ccm_values, cluster_documents, network
from rke_aws.plan.day2 import versions as version_steps
from rke_aws.plan.names import endpoint_name
from rke_aws.plan.proxy import proxy_env
from rke_aws.settings import registry_hosts, stackfile, versions
from rke_aws_offline.engine import harness
from tests.support import upstream
from tests.support.configs import parse_config
from tests.support.fake_lookups import environment
from tests.support.runs import run_cached
from tests.support.userdata import user_data

RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
INSTANCE_TYPE = "aws:ec2/instance:Instance"
KUBECONFIG = stackfile.secret("apiVersion: v1\nkind: Config\n")  # as `pulumi config set --secret` stores it
STACKS = harness.stack_names()

CHART_NAME = "aws-cloud-controller-manager"
CHART_REPO = "https://kubernetes.github.io/cloud-provider-aws"
CHART_VERSION = "0.0.11"
MANIFEST_PATH = "/var/lib/rancher/rke2/server/manifests/aws-cloud-controller-manager.yaml"
REFERENCE_VALUES = upstream.CCM_CHART / "values.yaml"  # the published chart's values.yaml, stored in the repository

# aws-cloud-controller-manager chart 0.0.11 defaults, as listed in domain.md section 4 and in the
# chart's charts/aws-cloud-controller-manager/values.yaml (kubernetes/cloud-provider-aws). Only the
# keys these tests reason about; `hostNetworking` is deliberately absent (unset in the chart).
CHART_DEFAULTS: dict[str, Any] = {
    "args": ["--v=2", "--cloud-provider=aws"],
    "nodeSelector": {"node-role.kubernetes.io/control-plane": ""},
    "tolerations": [
        {"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"},
        {"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"},
        {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
    ],
    "dnsPolicy": "Default",
    "clusterRoleRules": [
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch", "update"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["*"]},
        {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]},
        {"apiGroups": [""], "resources": ["services"], "verbs": ["list", "patch", "update", "watch"]},
        {"apiGroups": [""], "resources": ["services/status"], "verbs": ["list", "patch", "update", "watch"]},
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "update", "watch"]},
        {"apiGroups": [""], "resources": ["endpoints"], "verbs": ["create", "get", "list", "watch", "update"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create", "get", "list", "watch", "update"]},
        {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
        {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
    ],
}

REQUIRED_ARGS = (
    "--v=2",
    "--cloud-provider=aws",
    "--configure-cloud-routes=false",
    "--use-service-account-credentials=true",
)
LEADER_MIGRATION_ARG = "--enable-leader-migration=true"

# ---------------------------------------------------------------------------------------------
# Node labels and taints per distribution (domain.md section 3), written out literally.
# ---------------------------------------------------------------------------------------------
UNINITIALIZED_TAINT = {"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}
RKE_LABELS = {
    "controlplane": {"node-role.kubernetes.io/controlplane": "true"},
    "etcd": {"node-role.kubernetes.io/etcd": "true"},
    "worker": {"node-role.kubernetes.io/worker": "true"},
}
RKE_CONTROLPLANE_TAINT = {"key": "node-role.kubernetes.io/controlplane", "value": "true", "effect": "NoSchedule"}
RKE_ETCD_TAINT = {"key": "node-role.kubernetes.io/etcd", "value": "true", "effect": "NoExecute"}
RKE2_SERVER_LABELS = {"node-role.kubernetes.io/control-plane": "true", "node-role.kubernetes.io/etcd": "true"}
RKE2_CONTROL_PLANE_LABELS = {"node-role.kubernetes.io/control-plane": "true"}
RKE2_ETCD_LABEL = {"node-role.kubernetes.io/etcd": "true"}


def node_model(distribution: str, roles) -> tuple[dict[str, str], list[dict[str, str]]]:
    """(labels, taints) a fresh node of a pool with `roles` carries before the CCM initialises it."""
    roles = set(roles)
    labels: dict[str, str] = {}
    taints = [dict(UNINITIALIZED_TAINT)]
    if distribution == "rke":
        for role in sorted(roles):
            labels.update(RKE_LABELS[role])
        if "worker" not in roles:
            if "controlplane" in roles:
                taints.append(dict(RKE_CONTROLPLANE_TAINT))
            if "etcd" in roles:
                taints.append(dict(RKE_ETCD_TAINT))
    else:
        # RKE2 (k3s pkg/server/server.go): control-plane (and master) only where the apiserver runs, etcd
        # where etcd runs; no role taints (rke2-docs install/ha.md); agents get no role label.
        if "controlplane" in roles:
            labels.update(RKE2_CONTROL_PLANE_LABELS)
        if "etcd" in roles:
            labels.update(RKE2_ETCD_LABEL)
    return labels, taints


def is_control_plane_pool(distribution: str, roles) -> bool:
    """Where the CCM must run: nodes with the control plane (RKE2 etcd-only servers have none)."""
    return "controlplane" in roles


# ---------------------------------------------------------------------------------------------
# Kubernetes scheduling semantics.
# ---------------------------------------------------------------------------------------------
def selector_matches(selector: dict, labels: dict) -> bool:
    """nodeSelector: every key present on the node with exactly that value."""
    return all(k in labels and labels[k] == v for k, v in (selector or {}).items())


def tolerates(tol: dict, taint: dict) -> bool:
    """One toleration against one taint (k8s.io/api/core/v1 Toleration.ToleratesTaint)."""
    effect = tol.get("effect") or ""
    if effect and effect != taint["effect"]:
        return False
    key = tol.get("key") or ""
    op = tol.get("operator") or "Equal"
    if not key:
        return op == "Exists"  # empty key + Exists tolerates everything
    if key != taint["key"]:
        return False
    if op == "Exists":
        ok = True
    elif op == "Equal":
        ok = (tol.get("value") or "") == (taint.get("value") or "")
    else:
        return False
    # A NoExecute toleration with tolerationSeconds evicts the pod after that time.
    if ok and taint["effect"] == "NoExecute" and tol.get("tolerationSeconds") is not None:
        return False
    return ok


def untolerated(tolerations: list, taints: list) -> list:
    return [t for t in taints if not any(tolerates(tol, t) for tol in tolerations or [])]


# ---------------------------------------------------------------------------------------------
# Effective values: pulumi-kubernetes Release provider, then Helm's coalescing with chart defaults.
# ---------------------------------------------------------------------------------------------
def deep_merge(base: Any, over: Any) -> Any:
    """Helm's mergeMaps (pkg/cli/values), which the Release provider uses since 4.30: maps merge
    recursively; anything else in `over` (lists, scalars, null) replaces."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = copy.deepcopy(base)
        for k, v in over.items():
            out[k] = deep_merge(out[k], v) if k in out else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


def helm_coalesce(user: Any, defaults: Any) -> Any:
    """Helm's CoalesceValues: user maps merge over default maps, lists/scalars replace, and a user
    null deletes the default key."""
    if not isinstance(user, dict) or not isinstance(defaults, dict):
        return copy.deepcopy(user)
    out = copy.deepcopy(user)
    for k, dv in defaults.items():
        if k not in out:
            out[k] = copy.deepcopy(dv)
        elif out[k] is None:
            del out[k]
        elif isinstance(out[k], dict) and isinstance(dv, dict):
            out[k] = helm_coalesce(out[k], dv)
    return out


def asset_text(asset: Any) -> str:
    """Text of a StringAsset as recorded by the mocks (observed: a pulumi.StringAsset with `.text`)."""
    if isinstance(asset, str):
        return asset
    text = getattr(asset, "text", None)
    if text is None and isinstance(asset, dict):
        text = asset.get("text")
    if not isinstance(text, str):
        raise TypeError(f"valueYamlFiles entry is not a text asset: {asset!r}")
    return text


def effective_values(release_inputs: dict, chart_defaults: dict) -> dict:
    """The values Helm renders the chart with, from a recorded `kubernetes:helm.sh/v3:Release`.

    The provider as of pulumi-kubernetes >= 4.30 (PR #4293, pyproject.toml's floor): each
    valueYamlFiles document merged in order, `values` merged on top, nulls kept (no stripping;
    `allowNullValues` has no effect), then Helm coalesces the result over the chart defaults.
    """
    files: dict[str, Any] = {}
    for asset in release_inputs.get("valueYamlFiles") or []:
        files = deep_merge(files, yaml.safe_load(asset_text(asset)) or {})
    merged = deep_merge(files, release_inputs.get("values") or {})
    return helm_coalesce(merged, chart_defaults)


# Program runs: shared (tests/support/runs.py run_cached), several tests read one.
run = run_cached


def release_config(stack: str) -> dict[str, str]:
    """The stack's config with a kubeconfig set and the CCM installed through a Helm release (as committed when it
    has both: then its run is the stack's own, made once for every file)."""
    config = harness.stack_config(stack)
    if config.get("rke-aws:kubeconfig") and parse_config(config, stack).ccm.install == "helm":
        return config
    config["rke-aws:kubeconfig"] = KUBECONFIG
    ccm = json.loads(config.get("rke-aws:ccm", "{}"))
    config["rke-aws:ccm"] = json.dumps({**ccm, "install": "helm"})  # new RKE2 stacks default to manifest (34.8)
    return config


def manifest_config(stack: str) -> dict[str, str]:
    config = harness.stack_config(stack)
    ccm = json.loads(config.get("rke-aws:ccm", "{}"))
    ccm["install"] = "manifest"
    config["rke-aws:ccm"] = json.dumps(ccm)
    return config


def the_release(r: harness.ProgramRun) -> harness.Registration:
    """The CCM's Release (addons such as the EBS CSI driver have their own)."""
    releases = [x for x in r.of_type(RELEASE_TYPE) if (x.inputs.get("chart") or "").rsplit("/", 1)[-1] == CHART_NAME]
    assert len(releases) == 1, f"{r.stack}: expected one {RELEASE_TYPE}, got {[x.urn for x in releases]}"
    return releases[0]


def expected_chart(config: dict[str, str]) -> tuple[str, str | None]:
    """(chart, repo) the stack installs from: the public repository, or registry.charts (issue 35), where an
    OCI location names the chart by its whole reference and takes no repo (k3s-io/helm-controller chart.go)."""
    charts = json.loads(config.get("rke-aws:registry", "{}")).get("charts")
    if not charts:
        return CHART_NAME, CHART_REPO
    return (f"{charts}/{CHART_NAME}", None) if charts.startswith("oci://") else (CHART_NAME, charts)


def pools_of(config: dict[str, str]) -> list[dict]:
    return json.loads(config["rke-aws:nodePools"])


def distribution_of(config: dict[str, str]) -> str:
    return config["rke-aws:distribution"]


def instance_roles(r: harness.ProgramRun, inst: harness.Registration) -> list[str]:
    pool = inst.inputs["tags"]["rke-aws/pool"]
    return next(p["roles"] for p in pools_of(r.config) if p["name"] == pool)


@dataclasses.dataclass(frozen=True)
class Case:
    """What the CCM tests judge for one config: the Release inputs (None in manifest mode) and the roles of each
    instance, read from a program run (`run`) or rendered by the planner's pure functions (rendered_case)."""
    stack: str
    config: dict[str, str]
    inputs: dict[str, Any] | None
    instances: list[list[str]]  # the roles of each registered (or, rendered: planned) instance
    minor: int  # the cluster's Kubernetes minor (the program's kubernetesVersion output)
    run: harness.ProgramRun | None = None


def case_of(r: harness.ProgramRun, release: bool = True) -> Case:
    """A program run as a Case: the registered CCM Release and instances."""
    return Case(r.stack, r.config, the_release(r).inputs if release else None,
                [instance_roles(r, i) for i in r.of_type(INSTANCE_TYPE)], cluster_minor(r), r)


def assert_schedules_on_control_plane(r: Case | harness.ProgramRun, values: dict, where: str) -> None:
    """Every control-plane node of the run is selected and all its taints tolerated; workers are not selected."""
    if isinstance(r, harness.ProgramRun):
        r = case_of(r, release=False)
    dist = distribution_of(r.config)
    selector = values.get("nodeSelector") or {}
    tolerations = values.get("tolerations") or []
    cp_pools = [p for p in pools_of(r.config) if is_control_plane_pool(dist, p["roles"])]
    assert cp_pools, f"{r.stack}: no control-plane pool in {pools_of(r.config)}"
    for pool in cp_pools:
        labels, taints = node_model(dist, pool["roles"])
        assert selector_matches(selector, labels), (
            f"{r.stack} {where}: nodeSelector {selector} does not match pool {pool['name']!r} labels {labels}")
        missing = untolerated(tolerations, taints)
        assert not missing, (
            f"{r.stack} {where}: pool {pool['name']!r} taints {missing} not tolerated by {tolerations}")
    # The registered instances themselves: every control-plane instance is schedulable.
    instances = [roles for roles in r.instances if is_control_plane_pool(dist, roles)]
    assert instances, f"{r.stack}: no control-plane instance registered"
    for roles in instances:
        labels, taints = node_model(dist, roles)
        assert selector_matches(selector, labels) and not untolerated(tolerations, taints), (
            f"{r.stack} {where}: CCM cannot run on a {roles} instance (selector {selector}, tolerations {tolerations})")
    # A node without any control-plane role must not be selected: workers, and etcd-only nodes (RKE2 split
    # roles: the CCM and the EBS CSI controller run only where the control plane runs).
    for roles in (["worker"], ["etcd"], ["etcd", "worker"]):
        labels, _ = node_model(dist, roles)
        assert not selector_matches(selector, labels), (
            f"{r.stack} {where}: nodeSelector {selector} also selects {roles} nodes {labels}")


def rbac_covers(rules: list, api_group: str, resource: str, verb: str) -> bool:
    return any(
        (api_group in r.get("apiGroups", []) or "*" in r.get("apiGroups", []))
        and (resource in r.get("resources", []) or "*" in r.get("resources", []))
        and (verb in r.get("verbs", []) or "*" in r.get("verbs", []))
        for r in rules or []
    )


def missing_rbac(rules: list) -> list[str]:
    missing = []
    for d in CHART_DEFAULTS["clusterRoleRules"]:
        for g in d["apiGroups"]:
            for res in d["resources"]:
                for v in d["verbs"]:
                    if not rbac_covers(rules, g, res, v):
                        missing.append(f"{g or 'core'}/{res}:{v}")
    if not rbac_covers(rules, "", "serviceaccounts", "get"):
        missing.append("core/serviceaccounts:get")
    return missing


# ---------------------------------------------------------------------------------------------
# The helpers themselves.
# ---------------------------------------------------------------------------------------------
def test_null_in_value_file_deletes_chart_default_key():
    inputs = {
        "valueYamlFiles": [type("Asset", (), {"text": "nodeSelector:\n  node-role.kubernetes.io/control-plane: null\n"})()],
        "values": {"nodeSelector": {"node-role.kubernetes.io/controlplane": "true"}},
    }
    eff = effective_values(inputs, CHART_DEFAULTS)
    assert eff["nodeSelector"] == {"node-role.kubernetes.io/controlplane": "true"}


def test_without_the_null_the_default_key_survives_and_strands_rke():
    inputs = {"values": {"nodeSelector": {"node-role.kubernetes.io/controlplane": "true"}}}
    eff = effective_values(inputs, CHART_DEFAULTS)
    assert eff["nodeSelector"] == {"node-role.kubernetes.io/control-plane": "",
                                   "node-role.kubernetes.io/controlplane": "true"}
    # ... and such a selector places the CCM on no RKE1 control-plane node.
    assert not selector_matches(eff["nodeSelector"], node_model("rke", ["controlplane", "etcd"])[0])


def test_chart_defaults_oracle_is_the_published_chart():
    """CHART_DEFAULTS above is typed from domain.md; the chart's own values.yaml must agree."""
    published = upstream.chart_values()
    for key, value in CHART_DEFAULTS.items():
        assert published[key] == value, f"chart 0.0.11 values.yaml {key}: {published[key]!r} != {value!r}"
    assert "hostNetworking" not in published


def test_the_stored_chart_defaults_belong_to_the_pinned_chart():
    """The values are written against the chart in tests/data/upstream: bumping the pin in
    components/settings/versions.py without storing that release's Chart.yaml and values.yaml fails here."""
    chart = upstream.chart()
    assert (chart["name"], chart["version"]) == (versions.CCM_CHART_NAME, versions.CCM_CHART_VERSION), \
        f"pinned {versions.CCM_CHART_NAME} {versions.CCM_CHART_VERSION}, stored defaults are {chart['name']} {chart['version']}"
    assert (CHART_NAME, CHART_VERSION) == (chart["name"], chart["version"])
    assert upstream.CCM_CHART.name == f"{chart['name']}-{chart['version']}"
    # values.yaml and Chart.yaml of one release: its default image is its appVersion
    assert upstream.chart_values()["image"]["tag"] == chart["appVersion"], (upstream.chart_values()["image"], chart)


def test_user_maps_merge_with_defaults_and_lists_replace():
    eff = effective_values({"values": {"args": ["--x=1"], "nodeSelector": {"a": "b"},
                                       "tolerations": []}}, CHART_DEFAULTS)
    assert eff["args"] == ["--x=1"]
    assert eff["tolerations"] == []
    assert eff["nodeSelector"] == {"node-role.kubernetes.io/control-plane": "", "a": "b"}
    assert eff["dnsPolicy"] == "Default" and "hostNetworking" not in eff


def test_values_override_value_files():
    inputs = {"valueYamlFiles": ["dnsPolicy: ClusterFirst\nargs: [--a]\n"], "values": {"args": ["--b"]}}
    eff = effective_values(inputs, CHART_DEFAULTS)
    assert eff["args"] == ["--b"] and eff["dnsPolicy"] == "ClusterFirst"


def test_helm_default_selector_matches_neither_distribution():
    """Why the chart defaults alone strand the CCM (domain.md section 4)."""
    eff = effective_values({}, CHART_DEFAULTS)
    for dist in ("rke", "rke2"):
        assert not selector_matches(eff["nodeSelector"], node_model(dist, ["controlplane", "etcd"])[0]), dist


def test_toleration_semantics():
    etcd = RKE_ETCD_TAINT
    assert tolerates({"operator": "Exists"}, etcd)
    assert not tolerates({"key": "", "operator": "Equal"}, etcd)
    assert tolerates({"key": etcd["key"], "operator": "Exists"}, etcd)
    assert tolerates({"key": etcd["key"], "value": "true"}, etcd)
    assert not tolerates({"key": etcd["key"], "value": "false"}, etcd)
    assert not tolerates({"key": etcd["key"], "operator": "Exists", "effect": "NoSchedule"}, etcd)
    assert not tolerates({"key": etcd["key"], "operator": "Exists", "tolerationSeconds": 60}, etcd)
    assert not tolerates({"key": "other", "operator": "Exists"}, etcd)
    assert not selector_matches({"a": None}, {})
    assert selector_matches({}, {})


def test_node_model_matches_domain_rules():
    assert node_model("rke", ["controlplane", "etcd"])[1] == [UNINITIALIZED_TAINT, RKE_CONTROLPLANE_TAINT, RKE_ETCD_TAINT]
    assert node_model("rke", ["controlplane", "etcd", "worker"])[1] == [UNINITIALIZED_TAINT]
    assert node_model("rke2", ["controlplane", "etcd"]) == (RKE2_SERVER_LABELS, [UNINITIALIZED_TAINT])
    assert node_model("rke2", ["worker"]) == ({}, [UNINITIALIZED_TAINT])
    assert node_model("rke2", ["etcd"]) == ({"node-role.kubernetes.io/etcd": "true"}, [UNINITIALIZED_TAINT])
    assert node_model("rke2", ["controlplane"]) == (
        {"node-role.kubernetes.io/control-plane": "true"}, [UNINITIALIZED_TAINT])


# ---------------------------------------------------------------------------------------------
# Every stack: the Helm release path.
# ---------------------------------------------------------------------------------------------
def test_stack_without_kubeconfig_registers_no_release(stack_run):
    if stack_run.config.get("rke-aws:kubeconfig"):
        pytest.skip(f"{stack_run.stack} sets a kubeconfig")
    assert stack_run.of_type(RELEASE_TYPE) == [], f"{stack_run.stack}: Release registered without kubeconfig"


def rendered_case(config: dict[str, str], stack: str) -> Case:
    """The CCM Release's inputs for `config` as the program would register them, from the planner's pure functions
    (plan/day2/versions.py ccm_image, plan/proxy.py proxy_env, plan/ccm_values.py helm_values,
    plan/cluster_documents.py ccm().located) and components/cluster/charts.py release's mapping onto
    `kubernetes:helm.sh/v3:Release` inputs; test_a_rendered_release_is_the_registered_one holds it to the program's
    own run, family by family (release_family). The instances: one per node of each pool."""
    cfg = parse_config(config, stack)
    image, _ = version_steps.ccm_image(cfg, None)
    if cfg.distribution == "rke" and cfg.registry is not None and cfg.registry.mirrors and not cfg.ccm.image:
        image = registry_hosts.rewrite_image(image, cfg.registry.mirrors)  # as plan/planner.py does
    proxy = proxy_env(cfg.proxy, network.vpc_cidrs(cfg, environment()), endpoint_name(cfg.cluster_id))
    values = ccm_values.helm_values(cfg.distribution, cfg.node_pools, cfg.ccm.leader_migration, cfg.ccm.extra_args,
                                    image, proxy)
    chart = cluster_documents.ccm(cfg.ccm.chart_version).located(*cluster_documents.chart_location(cfg.registry))
    overrides = values.overrides_yaml()
    inputs = {"name": chart.name, "chart": chart.reference, "version": chart.version, "namespace": chart.namespace,
              "values": values.values, **({} if chart.oci else {"repositoryOpts": {"repo": chart.repo}}),
              **({"valueYamlFiles": [overrides]} if overrides else {})}
    instances = [list(p["roles"]) for p in pools_of(config) for _ in range(p.get("count", 1))]
    return Case(stack, config, json.loads(json.dumps(inputs)), instances, cfg.kubernetes_minor)


def registered_inputs(case: Case) -> dict[str, Any]:
    """The keys rendered_case renders, as the program registered them (assets as their text)."""
    assert case.inputs is not None
    inputs = {k: case.inputs[k] for k in ("name", "chart", "version", "namespace", "values", "repositoryOpts",
                                          "valueYamlFiles") if case.inputs.get(k) is not None}
    if "valueYamlFiles" in inputs:
        inputs["valueYamlFiles"] = [asset_text(a) for a in inputs["valueYamlFiles"]]
    return json.loads(json.dumps(inputs))


def release_family(config: dict[str, str], stack: str) -> tuple:
    """What shapes the CCM Release beyond the pools and the version: the distribution, where the chart comes from
    (public, an HTTP or an OCI mirror), the proxy, registry mirrors. One stack of each family goes through the whole
    program (END_TO_END); a brought VPC with a proxy always does (its NO_PROXY is looked up in the account)."""
    cfg = parse_config(config, stack)
    charts = cluster_documents.chart_location(cfg.registry)[0]
    byo_proxy = stack if cfg.proxy is not None and cfg.network.bring_your_own else None
    return (cfg.distribution, charts.split(":", 1)[0] if charts else None, cfg.proxy is not None,
            bool(cfg.registry and cfg.registry.mirrors), byo_proxy)


def end_to_end_stacks() -> dict[tuple, str]:
    """family -> its stack run through the program: the first (by name) whose committed config already registers the
    Release (its stack run is made anyway), else the first."""
    families: dict[tuple, list[str]] = {}
    for stack in STACKS:
        families.setdefault(release_family(release_config(stack), stack), []).append(stack)
    return {f: next((s for s in names if release_config(s) == harness.stack_config(s)), names[0])
            for f, names in families.items()}


END_TO_END = end_to_end_stacks()


def release_case(stack: str) -> Case:
    """The stack's CCM Release: its program run for the END_TO_END stack of its family, else rendered."""
    config = release_config(stack)
    if stack in END_TO_END.values():
        return case_of(run(config, stack=stack))
    return rendered_case(config, stack)


def test_a_rendered_release_is_the_registered_one():
    """The guard of the table: for one stack of each release family the program's registered Release and instances
    are exactly what rendered_case renders, so the per-stack tests below judge what the program registers."""
    assert set(END_TO_END) == {release_family(release_config(s), s) for s in STACKS}, END_TO_END  # every family
    for family, stack in END_TO_END.items():
        registered = case_of(run(release_config(stack), stack=stack))
        rendered = rendered_case(release_config(stack), stack)
        assert registered_inputs(registered) == rendered.inputs, f"{stack} {family}"
        assert sorted(registered.instances) == sorted(rendered.instances), f"{stack} {family}"
        assert registered.minor == rendered.minor, f"{stack} {family}"


def test_release_schedules_on_every_control_plane_node(stack_run):
    case = release_case(stack_run.stack)
    assert case.inputs is not None
    assert_schedules_on_control_plane(case, effective_values(case.inputs, CHART_DEFAULTS), case.stack)


def test_release_chart_and_settings(stack_run):
    case = release_case(stack_run.stack)
    i = case.inputs
    assert i is not None
    where = f"{case.stack} ccm Release"
    chart, repo = expected_chart(case.config)
    assert i.get("chart") == chart, where
    assert (i.get("repositoryOpts") or {}).get("repo") == repo, where
    assert i.get("version") == CHART_VERSION, where
    assert i.get("namespace") == "kube-system", where
    # A deprecated no-op since pulumi-kubernetes 4.30 that warns on every preview.
    assert "allowNullValues" not in i, where


def test_release_values_args_rbac_network(stack_run):
    case = release_case(stack_run.stack)
    assert case.inputs is not None
    where = f"{case.stack} ccm Release"
    eff = effective_values(case.inputs, CHART_DEFAULTS)
    args = eff.get("args") or []
    for a in REQUIRED_ARGS:
        assert a in args, f"{where}: {a} missing from args {args}"
    assert LEADER_MIGRATION_ARG not in args, f"{where}: leader migration on without ccm.leaderMigration"
    assert eff.get("hostNetworking") is True, f"{where}: hostNetworking is {eff.get('hostNetworking')!r}"
    assert eff.get("dnsPolicy") == "Default", where
    missing = missing_rbac(eff.get("clusterRoleRules"))
    assert not missing, f"{where}: clusterRoleRules lack {missing}"
    if distribution_of(case.config) == "rke":
        assert "node-role.kubernetes.io/control-plane" not in eff["nodeSelector"], (
            f"{where}: chart default selector key survives: {eff['nodeSelector']}")


# ---------------------------------------------------------------------------------------------
# RKE2 `ccm.install: manifest`: a bootstrap HelmChart in each server's user data.
# ---------------------------------------------------------------------------------------------
def manifest_parameters(r: harness.ProgramRun) -> dict[str, str]:
    """Manifest mode: file name -> content of the manifests the servers mirror from SSM."""
    path = r.outputs.get("rke2ManifestPath")
    return {p.inputs["name"].rsplit("/", 1)[1]: p.inputs.get("insecureValue", p.inputs.get("value"))
            for p in r.of_type("aws:ssm/parameter:Parameter") if path and p.inputs["name"].startswith(path + "/")}


# The stack whose manifest-mode run is also made with a kubeconfig (the one with the most add-ons): every other
# RKE2 stack is judged by the planner's rule alone (test_a_kubeconfig_adds_no_release_in_manifest_mode).
WITH_KUBECONFIG = "rke2-everything"


def manifest_configs() -> list[tuple[str, dict[str, str]]]:
    """(stack, its config in manifest mode) for every RKE2 stack."""
    out = []
    for stack in STACKS:
        config = harness.stack_config(stack)
        if distribution_of(config) != "rke2":
            continue
        ccm = json.loads(config.get("rke-aws:ccm", "{}"))
        out.append((stack, config if ccm.get("install") == "manifest" else manifest_config(stack)))
    return out


def manifest_runs() -> list[harness.ProgramRun]:
    out = []
    for stack, config in manifest_configs():
        out.append(run(config, stack=stack))
        if stack == WITH_KUBECONFIG:  # A kubeconfig must not bring the Release back in manifest mode.
            out.append(run({**config, "rke-aws:kubeconfig": KUBECONFIG}, stack=stack))
    assert any(r.stack == WITH_KUBECONFIG and r.config.get("rke-aws:kubeconfig") for r in out), WITH_KUBECONFIG
    return out


def test_a_kubeconfig_adds_no_release_in_manifest_mode():
    """What an update installs through a kubeconfig (plan/addons.py planned_in_cluster, the only source of the
    Releases: assembly/in_cluster.py installs nothing when it is empty) is nothing in manifest mode, for every RKE2
    stack with a kubeconfig; the program's run of WITH_KUBECONFIG shows it end to end
    (test_manifest_install_schedules_on_every_server)."""
    for stack, config in manifest_configs():
        cfg = parse_config({**config, "rke-aws:kubeconfig": KUBECONFIG}, stack)
        ebs_csi = addons.ebs_csi_wanted(cfg, None)
        assert addons.planned_in_cluster(cfg, ebs_csi, True, None) == (), stack  # a new stack: nothing to remove
        helm = parse_config({**config, "rke-aws:kubeconfig": KUBECONFIG, "rke-aws:ccm": json.dumps(
            {**json.loads(config["rke-aws:ccm"]), "install": "helm"})}, stack)
        assert "aws-cloud-controller-manager" in addons.planned_in_cluster(helm, ebs_csi, True, None), stack  # the rule can fail


def test_manifest_stack_as_committed(stack_run):
    if distribution_of(stack_run.config) != "rke2" or json.loads(stack_run.config.get("rke-aws:ccm", "{}")).get("install") != "manifest":
        pytest.skip("helm install")
    assert not [x for x in stack_run.of_type(RELEASE_TYPE) if x.inputs.get("chart") == CHART_NAME], \
        f"{stack_run.stack}: CCM Release registered in manifest mode"
    assert "ccm.yaml" in manifest_parameters(stack_run), f"{stack_run.stack}: no CCM manifest for the servers"


def test_manifest_install_schedules_on_every_server():
    runs = manifest_runs()
    assert runs, "no RKE2 stack to check"
    for r in runs:
        assert r.of_type(RELEASE_TYPE) == [], f"{r.stack}: a Release registered in manifest mode"
        for inst in r.of_type(INSTANCE_TYPE):
            assert "HelmChart" not in user_data(inst), f"{r.stack} {inst.urn}: manifests belong in SSM"
        (param,) = [p for p in r.of_type("aws:ssm/parameter:Parameter") if p.inputs["name"].endswith("/ccm.yaml")]
        where = f"{r.stack} {param.urn}"
        assert param.inputs["type"] == "String", where
        # insecureValue: shown in previews (a manifest holds no secret; `value` is always masked)
        assert "value" not in param.inputs, where
        doc = yaml.safe_load(param.inputs["insecureValue"])
        assert doc["apiVersion"] == "helm.cattle.io/v1" and doc["kind"] == "HelmChart", where
        spec = doc["spec"]
        assert spec.get("bootstrap") is True, f"{where}: HelmChart not bootstrap"
        chart, repo = expected_chart(r.config)
        assert spec.get("chart") == chart, where
        assert spec.get("repo") == repo, where
        assert spec.get("version") == CHART_VERSION, where
        assert spec.get("targetNamespace") == "kube-system", where
        assert isinstance(spec.get("valuesContent"), str), f"{where}: no valuesContent"
        eff = helm_coalesce(yaml.safe_load(spec["valuesContent"]) or {}, CHART_DEFAULTS)
        assert_schedules_on_control_plane(r, eff, param.urn)
        for a in REQUIRED_ARGS:
            assert a in eff["args"], f"{where}: {a} missing from {eff['args']}"
        assert eff.get("hostNetworking") is True, where
        assert not missing_rbac(eff.get("clusterRoleRules")), f"{where}: {missing_rbac(eff.get('clusterRoleRules'))}"
        assert_image_matches_cluster(r, eff, where)


# ---------------------------------------------------------------------------------------------
# The CCM image: one minor per Kubernetes minor, never the chart's default.
# ---------------------------------------------------------------------------------------------
# Newest cloud-provider-aws tag per minor (domain.md section 6), written out independently of
# components/settings/versions.py.
CCM_TAGS = {30: "v1.30.10", 31: "v1.31.9", 32: "v1.32.8", 33: "v1.33.4", 34: "v1.34.3", 35: "v1.35.2", 36: "v1.36.1"}
CHART_DEFAULT_IMAGE_TAG = upstream.chart_values()["image"]["tag"]  # the chart's own default image


def cluster_minor(r: harness.ProgramRun) -> int:
    return int(r.outputs["kubernetesVersion"].split(".")[1])


def assert_image_matches_cluster(r: Case | harness.ProgramRun, eff: dict, where: str) -> None:
    minor = r.minor if isinstance(r, Case) else cluster_minor(r)
    image = eff.get("image") or {}
    assert image.get("repository") == "registry.k8s.io/provider-aws/cloud-controller-manager", f"{where}: {image}"
    tag = image.get("tag")
    assert tag == CCM_TAGS[minor], f"{where}: CCM {tag} on a 1.{minor} cluster"
    assert int(tag.split(".")[1]) == minor, where


def test_release_image_matches_the_cluster_minor(stack_run):
    case = release_case(stack_run.stack)
    assert case.inputs is not None
    assert_image_matches_cluster(case, effective_values(case.inputs, {**CHART_DEFAULTS, "image": {
        "repository": "registry.k8s.io/provider-aws/cloud-controller-manager", "tag": CHART_DEFAULT_IMAGE_TAG}}),
        f"{case.stack} ccm Release")


# The image family through the program once (the first version); the other version and an explicit image are judged
# on the rendered Release (rendered_case, held to the program by test_a_rendered_release_is_the_registered_one and by
# the first row here).
IMAGE_VERSIONS = ["v1.32.8+rke2r1", "v1.34.10+rke2r1"]


@pytest.mark.parametrize("version", IMAGE_VERSIONS)
def test_image_follows_a_changed_kubernetes_version(version):
    config = {**release_config("rke2-prod"), "rke-aws:kubernetesVersion": version}
    rendered = rendered_case(config, "image-follows")
    assert rendered.inputs is not None
    if version == IMAGE_VERSIONS[0]:
        r = case_of(run(config, stack="image-follows"))
        assert registered_inputs(r) == rendered.inputs and r.minor == rendered.minor, version
    assert_image_matches_cluster(rendered, effective_values(rendered.inputs, CHART_DEFAULTS), version)


def test_the_chart_default_image_would_be_caught():
    r = rendered_case({**release_config("rke2-prod"), "rke-aws:kubernetesVersion": "v1.33.13+rke2r2"}, "rke2-prod")
    with pytest.raises(AssertionError, match="CCM v1.35.0 on a 1.33 cluster"):
        assert_image_matches_cluster(r, {"image": {"repository": "registry.k8s.io/provider-aws/cloud-controller-manager",
                                                   "tag": CHART_DEFAULT_IMAGE_TAG}}, "default")


def test_explicit_ccm_image_wins():
    image = "registry.example.com:5000/mirror/cloud-controller-manager:v1.33.4-patched"
    config = {**release_config("rke2-prod"), "rke-aws:ccm": json.dumps({"install": "helm", "image": image})}
    r = rendered_case(config, "image-explicit")
    assert r.inputs is not None
    eff = effective_values(r.inputs, CHART_DEFAULTS)
    assert eff["image"] == {"repository": "registry.example.com:5000/mirror/cloud-controller-manager",
                            "tag": "v1.33.4-patched"}


def test_a_minor_without_a_ccm_release_is_refused():
    config = {**release_config("rke2-prod"), "rke-aws:kubernetesVersion": "v1.29.15+rke2r1"}
    with pytest.raises(Exception, match=r"rke-aws:kubernetesVersion: v1.29.15\+rke2r1: no aws-cloud-controller-manager "
                                        r"release is known for Kubernetes 1.29 .*1.30, 1.31"):
        harness.run_program(config, stack="no-ccm")


# ---------------------------------------------------------------------------------------------
# RKE pool layouts beyond the stack files.
# ---------------------------------------------------------------------------------------------
def rke_config(pools: list[dict], **extra) -> dict[str, str]:
    config = {
        "aws:region": "us-west-2",
        "rke-aws:distribution": "rke",
        "rke-aws:nodePools": json.dumps(pools),
        "rke-aws:kubeconfig": KUBECONFIG,
    }
    for key, value in extra.items():
        config[f"rke-aws:{key}"] = value if isinstance(value, str) else json.dumps(value)
    return config


def pool(name: str, roles: list[str], count: int = 1) -> dict:
    return {"name": name, "roles": roles, "count": count}


RKE_LAYOUTS = {
    "cp-etcd-shared": [pool("control", ["controlplane", "etcd"], 3), pool("workers", ["worker"], 2)],
    "cp-worker": [pool("cpw", ["controlplane", "worker"], 2), pool("etcd", ["etcd"], 3), pool("workers", ["worker"])],
    "all-in-one": [pool("all", ["controlplane", "etcd", "worker"], 3)],
    "separate-roles": [pool("cp", ["controlplane"], 2), pool("etcd", ["etcd"], 3), pool("workers", ["worker"])],
    "mixed-cp": [pool("cp", ["controlplane"], 1), pool("cpe", ["controlplane", "etcd"], 3), pool("workers", ["worker"])],
}


def judged_case(config: dict[str, str], stack: str, end_to_end: bool) -> Case:
    """The rendered Release of `config` (rendered_case); `end_to_end`: the program's run of it too, which must have
    registered exactly that (one row of each parametrized family below goes through the program)."""
    rendered = rendered_case(config, stack)
    if end_to_end:
        registered = case_of(run(config, stack=stack))
        assert registered_inputs(registered) == rendered.inputs, stack
        assert sorted(registered.instances) == sorted(rendered.instances) and registered.minor == rendered.minor, stack
        return registered
    return rendered


LAYOUT_END_TO_END = "cp-etcd-shared"  # the layout run through the program (the others: rendered, judged alike)


def layout_case(layout: str) -> Case:
    return judged_case(rke_config(RKE_LAYOUTS[layout]), f"layout-{layout}", layout == LAYOUT_END_TO_END)


@pytest.mark.parametrize("layout", sorted(RKE_LAYOUTS))
def test_rke_layout_schedules_on_control_plane(layout):
    case = layout_case(layout)
    assert case.inputs is not None
    eff = effective_values(case.inputs, CHART_DEFAULTS)
    assert_schedules_on_control_plane(case, eff, f"[{layout}]")
    assert "node-role.kubernetes.io/control-plane" not in eff["nodeSelector"], f"[{layout}]"


def test_rke_shared_controlplane_etcd_tolerates_etcd_noexecute():
    case = layout_case("cp-etcd-shared")
    assert case.inputs is not None
    tols = effective_values(case.inputs, CHART_DEFAULTS)["tolerations"]
    assert any(tolerates(t, RKE_ETCD_TAINT) for t in tols), f"cp-etcd-shared: etcd NoExecute taint not tolerated: {tols}"


def test_rke_controlplane_with_worker_is_still_selected():
    case = layout_case("cp-worker")
    assert case.inputs is not None
    eff = effective_values(case.inputs, CHART_DEFAULTS)
    labels, taints = node_model("rke", ["controlplane", "worker"])
    assert taints == [UNINITIALIZED_TAINT]
    assert selector_matches(eff["nodeSelector"], labels), f"cp-worker: {eff['nodeSelector']} vs {labels}"
    assert not untolerated(eff["tolerations"], taints), "cp-worker"


# ---------------------------------------------------------------------------------------------
# Arguments: leader migration and extra args.
# ---------------------------------------------------------------------------------------------
EXTRA_ARGS = ["--concurrent-service-syncs=2", "--cluster-name=example"]
OLD_VERSIONS = {"rke": "v1.26.15-rancher1-1", "rke2": "v1.26.15+rke2r1"}
# 1.26 has no entry in the CCM image table: leader migration names its image.
OLD_CCM_IMAGE = "registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.9"


def base_for(dist: str) -> dict[str, str]:
    if dist == "rke":
        return rke_config([pool("control", ["controlplane", "etcd"]), pool("workers", ["worker"], 2)])
    return {**release_config("rke2-prod")}


@pytest.mark.parametrize("dist", ["rke", "rke2"])
@pytest.mark.parametrize("migration", [True, False])
def test_args_leader_migration_and_extra_args(dist, migration):
    config = base_for(dist)
    config["rke-aws:kubernetesVersion"] = OLD_VERSIONS[dist]
    config["rke-aws:ccm"] = json.dumps({"leaderMigration": migration, "extraArgs": EXTRA_ARGS, "image": OLD_CCM_IMAGE,
                                        "install": "helm"})
    # The program runs one row (RKE1 with leader migration); the others are judged on the rendered Release.
    r = judged_case(config, f"args-{dist}-{str(migration).lower()}", (dist, migration) == ("rke", True))
    assert r.inputs is not None
    args = effective_values(r.inputs, CHART_DEFAULTS)["args"]
    where = f"{r.stack} ccm Release: args {args}"
    for a in REQUIRED_ARGS:
        assert args.count(a) == 1, where
    assert args.count(LEADER_MIGRATION_ARG) == (1 if migration else 0), where
    assert args[-len(EXTRA_ARGS):] == EXTRA_ARGS, f"{where}: extraArgs not appended"
    assert_schedules_on_control_plane(r, effective_values(r.inputs, CHART_DEFAULTS), r.stack)


def test_leader_migration_refused_on_current_kubernetes():
    config = base_for("rke")
    config["rke-aws:ccm"] = json.dumps({"leaderMigration": True})
    with pytest.raises(Exception, match="leaderMigration"):
        harness.run_program(config, stack="args-refused")
