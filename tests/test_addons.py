"""addons.ebsCsi: where the aws-ebs-csi-driver's pods can run, with which credentials, and what its
node role may do.

Scheduling is checked with Kubernetes' own rules, written here from the API documentation (not
taken from components/): a toleration with an empty key and `Exists` matches every taint; otherwise
keys must be equal, `Equal` (the default operator) compares values, an empty effect matches every
effect. For NoExecute taints the *first* matching toleration decides how long the pod may stay
(k8s pkg/apis/core/v1/helper GetMatchingTolerations): a `tolerationSeconds` there evicts it.

Node labels and taints come from the generated node configuration (RKE2 config.yaml `node-label` /
`node-taint`, RKE1 cluster.yml `labels`) plus what each distribution adds by itself: RKE1 taints
nodes without the worker role `node-role.kubernetes.io/controlplane=true:NoSchedule` and
`node-role.kubernetes.io/etcd=true:NoExecute` (rancher/rke services/workerplane.go).

The chart's defaults relied on (aws-ebs-csi-driver chart 2.64.0 values.yaml): `node.tolerateAllTaints:
true` renders the node DaemonSet's single toleration `operator: Exists`; controller tolerations
default to CriticalAddonsOnly/Exists and NoExecute/Exists for 300 s; `controller.region` sets
AWS_REGION; `controller.k8sTagClusterId` makes the driver tag volumes `kubernetes.io/cluster/<id>: owned`.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest
import yaml

from components import bootstrap, versions
from offline import harness
from tests import iam_eval
from tests.conftest import cloud_config, run_stack_cached, set_key, written_file

RELEASE = "kubernetes:helm.sh/v3:Release"
RKE1_OWN_TAINTS = {"controlplane": {"key": "node-role.kubernetes.io/controlplane", "value": "true", "effect": "NoSchedule"},
                   "etcd": {"key": "node-role.kubernetes.io/etcd", "value": "true", "effect": "NoExecute"}}


def tolerates(tol: dict[str, Any], taint: dict[str, Any]) -> bool:
    if tol.get("effect") and tol["effect"] != taint["effect"]:
        return False
    if tol.get("operator", "Equal") == "Exists":
        return not tol.get("key") or tol["key"] == taint["key"]
    return tol.get("key") == taint["key"] and tol.get("value", "") == taint.get("value", "")


def first_match(tols: list[dict], taint: dict) -> Optional[dict]:
    return next((t for t in tols if tolerates(t, taint)), None)


def _taint(text: str) -> dict[str, str]:
    kv, _, effect = text.partition(":")
    key, _, value = kv.partition("=")
    return {"key": key, "value": value, "effect": effect}


def cluster_nodes(run) -> dict[str, dict[str, Any]]:
    """name -> labels, taints and IMDS hop limit, as the running cluster would have them."""
    instances = {r.inputs["tags"]["Name"]: r for r in run.of_type("aws:ec2/instance:Instance")}
    out: dict[str, dict[str, Any]] = {}
    if run.outputs["distribution"] == "rke":
        for node in yaml.safe_load(run.outputs["rkeClusterYml"])["nodes"]:
            roles = set(node["role"])
            taints = [] if "worker" in roles else [RKE1_OWN_TAINTS[r] for r in ("controlplane", "etcd") if r in roles]
            out[node["hostname_override"]] = {"labels": node.get("labels") or {}, "taints": taints}
    else:
        for name, inst in instances.items():
            conf = yaml.safe_load(written_file(cloud_config(inst), bootstrap.RKE2_CONFIG_PATH))
            labels = dict(label.split("=", 1) for label in conf.get("node-label") or [])
            out[name] = {"labels": labels, "taints": [_taint(t) for t in conf.get("node-taint") or []]}
    for name, node in out.items():
        node["hop"] = instances[name].inputs["metadataOptions"]["httpPutResponseHopLimit"]
    return out


def ebs_release_values(run) -> Optional[dict]:
    for rel in run.of_type(RELEASE):
        if rel.inputs["chart"] == versions.EBS_CSI_CHART_NAME:
            return rel.inputs["values"]
    for param in run.of_type("aws:ssm/parameter:Parameter"):
        if param.inputs["name"].endswith("/manifests/ebs-csi.yaml"):
            return yaml.safe_load(yaml.safe_load(param.inputs["insecureValue"])["spec"]["valuesContent"])
    return None


def _with_kubeconfig(stack: str, **changes) -> harness.ProgramRun:
    cfg = harness.stack_config(stack)
    cfg["rke-aws:kubeconfig"] = "apiVersion: v1\nkind: Config\n"
    for key, value in changes.items():
        set_key(cfg, key, value)
    return harness.run_program(cfg, stack=stack, secret_keys=["rke-aws:kubeconfig"])


@pytest.fixture(scope="module", params=["rke-prod", "rke2-prod", "rke2-dev", "rke-dev"])
def installed(request):
    return _with_kubeconfig(request.param)


def test_controller_runs_only_where_it_has_credentials_and_is_never_evicted(installed):
    run = installed
    values = ebs_release_values(run)
    assert values is not None, f"{run.stack}: no aws-ebs-csi-driver release"
    controller = values["controller"]
    selector = controller["nodeSelector"]
    nodes = cluster_nodes(run)
    eligible = [n for n, node in nodes.items() if all(node["labels"].get(k) == v for k, v in selector.items())]
    assert eligible, f"{run.stack}: the controller's nodeSelector {selector} matches no node"
    for name in eligible:
        node = nodes[name]
        # On the pod network the controller reaches IMDS through one more hop.
        assert node["hop"] == 2, f"{name}: controller may run here but IMDS hop limit is {node['hop']}"
        for taint in node["taints"]:
            match = first_match(controller["tolerations"], taint)
            assert match is not None, f"{name}: controller does not tolerate {taint}"
            if taint["effect"] == "NoExecute":
                assert "tolerationSeconds" not in match, f"{name}: controller evicted after {match['tolerationSeconds']} s by {taint}"
    for name, node in nodes.items():
        if name not in eligible:
            assert node["hop"] == 1, f"{name}: hop limit 2 where the controller never runs"


def test_node_plugin_runs_everywhere_on_the_host_network(installed):
    node = ebs_release_values(installed)["node"]
    # tolerateAllTaints (chart default, kept explicit) renders `operator: Exists`; a tolerations list
    # given here would replace it.
    assert node == {"hostNetwork": True, "tolerateAllTaints": True}, node


def test_values_name_the_cluster_and_region_and_one_default_gp3_class(installed):
    values = ebs_release_values(installed)
    assert values["controller"]["region"] == installed.outputs["region"]
    assert values["controller"]["k8sTagClusterId"] == installed.outputs["clusterId"]
    defaults = [c for c in values["storageClasses"]
                if c.get("annotations", {}).get("storageclass.kubernetes.io/is-default-class") == "true"]
    assert [c["name"] for c in defaults] == ["gp3"], values["storageClasses"]
    assert defaults[0]["parameters"] == {"type": "gp3", "encrypted": "true"}
    assert defaults[0]["volumeBindingMode"] == "WaitForFirstConsumer"  # a volume in the pod's zone


def test_installed_once_pinned_and_through_the_clusters_provider(installed):
    releases = [r for r in installed.of_type(RELEASE) if r.inputs["chart"] == versions.EBS_CSI_CHART_NAME]
    manifests = [p for p in installed.of_type("aws:ssm/parameter:Parameter") if p.inputs["name"].endswith("/ebs-csi.yaml")]
    assert len(releases) + len(manifests) == 1, f"{installed.stack}: {len(releases)} releases, {len(manifests)} manifests"
    if manifests:  # ccm.install: manifest (test_manifest_mode_ships_the_same_values_as_a_helmchart)
        return
    (release,) = releases
    assert release.inputs["version"] == versions.EBS_CSI_CHART_VERSION and release.inputs["namespace"] == "kube-system"
    assert release.inputs["repositoryOpts"]["repo"] == "https://kubernetes-sigs.github.io/aws-ebs-csi-driver"
    (provider,) = installed.of_type("pulumi:providers:kubernetes")
    assert release.provider.startswith(provider.urn), release.urn


def test_manifest_mode_ships_the_same_values_as_a_helmchart():
    run = run_stack_cached("rke2-govcloud")
    (param,) = [p for p in run.of_type("aws:ssm/parameter:Parameter") if p.inputs["name"].endswith("/ebs-csi.yaml")]
    chart = yaml.safe_load(param.inputs["insecureValue"])
    assert chart["kind"] == "HelmChart" and chart["apiVersion"] == "helm.cattle.io/v1", param.urn
    spec = chart["spec"]
    assert (spec["chart"], spec["version"], spec["targetNamespace"]) == (
        versions.EBS_CSI_CHART_NAME, versions.EBS_CSI_CHART_VERSION, "kube-system")
    values = yaml.safe_load(spec["valuesContent"])
    nodes = cluster_nodes(run)
    eligible = [n for n, node in nodes.items()
                if all(node["labels"].get(k) == v for k, v in values["controller"]["nodeSelector"].items())]
    assert eligible and all(nodes[n]["hop"] == 2 for n in eligible), eligible
    assert values["controller"]["region"] == "us-gov-west-1"


# ---- the node role's EBS grants -----------------------------------------------------------------

CID = "rke2-prod"
OWNED = {f"aws:ResourceTag/kubernetes.io/cluster/{CID}": "owned"}
OTHER = {"aws:ResourceTag/kubernetes.io/cluster/other": "owned"}


def _ebs_grant(run) -> dict:
    (grant,) = [g for g in run.of_type("aws:iam/rolePolicy:RolePolicy") if g.name.endswith("-ebs-csi")]
    return grant


def test_only_the_controlplane_role_gets_ebs_grants():
    run = run_stack_cached("rke2-prod")
    grant = _ebs_grant(run)
    (cp_role,) = [r for r in run.of_type("aws:iam/role:Role") if r.name.endswith("-controlplane")]
    assert grant.inputs["role"] == cp_role.state["name"], grant.urn


def _arn(kind: str, rid: str) -> str:
    return f"arn:aws:ec2:us-west-2:123456789012:{kind}/{rid}"


@pytest.mark.parametrize("action, resource, context, allowed", [
    # reads are unscoped (EC2 Describe* take no resource)
    ("ec2:DescribeVolumes", "*", {}, True),
    ("ec2:DescribeInstances", "*", {}, True),
    # create: only volumes and snapshots that carry this cluster's tag in the request
    ("ec2:CreateVolume", _arn("volume", "*"), {f"aws:RequestTag/kubernetes.io/cluster/{CID}": "owned"}, True),
    ("ec2:CreateVolume", _arn("volume", "*"), {}, False),
    ("ec2:CreateVolume", _arn("volume", "*"), {"aws:RequestTag/kubernetes.io/cluster/other": "owned"}, False),
    ("ec2:CreateSnapshot", _arn("snapshot", "*"), {f"aws:RequestTag/kubernetes.io/cluster/{CID}": "owned"}, True),
    ("ec2:CreateSnapshot", _arn("volume", "vol-1"), OWNED, True),
    ("ec2:CreateSnapshot", _arn("volume", "vol-1"), OTHER, False),
    # tags only as part of those creations, never on existing resources
    ("ec2:CreateTags", _arn("volume", "vol-1"), {"ec2:CreateAction": "CreateVolume"}, True),
    ("ec2:CreateTags", _arn("volume", "vol-1"), OTHER, False),
    ("ec2:CreateTags", _arn("instance", "i-1"), {"ec2:CreateAction": "RunInstances"}, False),
    # attach, modify, delete: this cluster's volumes, on this cluster's instances
    ("ec2:AttachVolume", _arn("volume", "vol-1"), OWNED, True),
    ("ec2:AttachVolume", _arn("instance", "i-1"), OWNED, True),
    ("ec2:AttachVolume", _arn("instance", "i-1"), OTHER, False),
    ("ec2:AttachVolume", _arn("volume", "vol-1"), OTHER, False),
    ("ec2:DetachVolume", _arn("volume", "vol-1"), OTHER, False),
    ("ec2:ModifyVolume", _arn("volume", "vol-1"), OWNED, True),
    ("ec2:DeleteVolume", _arn("volume", "vol-1"), OWNED, True),
    ("ec2:DeleteVolume", _arn("volume", "vol-1"), OTHER, False),
    ("ec2:DeleteVolume", _arn("volume", "vol-1"), {}, False),
    ("ec2:DeleteSnapshot", _arn("snapshot", "snap-1"), OWNED, True),
    ("ec2:DeleteSnapshot", _arn("snapshot", "snap-1"), OTHER, False),
    # nothing beyond EBS
    ("ec2:TerminateInstances", _arn("instance", "i-1"), OWNED, False),
    ("ec2:ModifyInstanceAttribute", _arn("instance", "i-1"), OWNED, False),
])
def test_ebs_grants_evaluated(action, resource, context, allowed):
    doc = json.loads(_ebs_grant(run_stack_cached("rke2-prod")).inputs["policy"])
    assert iam_eval.allowed(doc, action, resource, context) is allowed, (action, resource, context)


def test_ebs_grants_carry_the_partition():
    doc = json.loads(_ebs_grant(run_stack_cached("rke2-govcloud")).inputs["policy"])
    arns = {r for st in doc["Statement"] for r in iam_eval._strings(st["Resource"]) if r != "*"}
    assert arns and all(r.startswith("arn:aws-us-gov:ec2:") for r in arns), arns


# ---- when it is on ------------------------------------------------------------------------------

def _pools_without_dedicated(stack: str) -> list[dict]:
    pools = json.loads(harness.stack_config(stack)["rke-aws:nodePools"])
    for p in pools:
        if "controlplane" in p["roles"] and "worker" not in p["roles"]:
            p["roles"] = sorted(set(p["roles"]) | {"worker"})
    return pools


def test_without_a_dedicated_control_plane_it_stays_off_unless_asked_and_then_refuses():
    cfg = set_key(harness.stack_config("rke2-dev"), "nodePools", _pools_without_dedicated("rke2-dev"))
    run = harness.run_program(cfg, stack="rke2-shared")
    assert run.outputs["ebsCsi"] is False
    assert not [g for g in run.of_type("aws:iam/rolePolicy:RolePolicy") if g.name.endswith("-ebs-csi")]
    hops = {r.inputs["metadataOptions"]["httpPutResponseHopLimit"] for r in run.of_type("aws:ec2/instance:Instance")}
    assert hops == {1}, hops
    set_key(cfg, "addons", {"ebsCsi": True})
    with pytest.raises(Exception, match=r"addons\.ebsCsi: true needs a control-plane pool without the worker role"):
        harness.run_program(cfg, stack="rke2-shared")


def test_off_means_no_grant_no_release_no_hop_two():
    run = _with_kubeconfig("rke2-prod", addons={"ebsCsi": False})
    assert run.outputs["ebsCsi"] is False and ebs_release_values(run) is None
    assert not [g for g in run.of_type("aws:iam/rolePolicy:RolePolicy") if g.name.endswith("-ebs-csi")]
    for name, node in cluster_nodes(run).items():
        assert node["hop"] == 1 and not node["taints"] and not node["labels"], name


def test_a_stack_from_before_the_option_keeps_its_nodes_untouched():
    first = harness.run_stack("rke2-prod")
    old_outputs = {k: v for k, v in first.outputs.items() if k != "ebsCsi"}
    cfg = harness.stack_config("rke2-prod")
    again = harness.run_program(cfg, stack="rke2-prod", previous_outputs=old_outputs)
    assert again.outputs["ebsCsi"] is False
    assert {r.inputs["metadataOptions"]["httpPutResponseHopLimit"] for r in again.of_type("aws:ec2/instance:Instance")} == {1}
    # ... and once deployed with the driver, an unset key keeps it (no flip of the servers' IMDS).
    later = harness.run_program(cfg, stack="rke2-prod", previous_outputs=first.outputs)
    assert later.outputs["ebsCsi"] is True


def test_turning_it_on_for_a_running_cluster_says_how_to_label_the_servers():
    first = harness.run_program(set_key(harness.stack_config("rke2-prod"), "addons", {"ebsCsi": False}), stack="rke2-prod")
    cfg = set_key(harness.stack_config("rke2-prod"), "addons", {"ebsCsi": True})
    run = harness.run_program(cfg, stack="rke2-prod", previous_outputs=first.outputs)
    servers = [n["name"] for n in first.outputs["nodes"] if "controlplane" in n["roles"]]
    (note,) = [m for _, m in run.logs if "addons.ebsCsi on for a running cluster" in m]
    assert f"kubectl label node {' '.join(sorted(servers))} {bootstrap.DEDICATED_LABEL}=true" in note, note
    assert "CriticalAddonsOnly=true:NoExecute" in note, note
