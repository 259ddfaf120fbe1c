"""addons.ebsCsi: where the aws-ebs-csi-driver's pods run, with which credentials, and what those
credentials may do.

Scheduling is checked with Kubernetes' own rules, written here from the API documentation (not
taken from components/): a toleration with an empty key and `Exists` matches every taint; otherwise
keys must be equal, `Equal` (the default operator) compares values, an empty effect matches every
effect. For NoExecute taints the *first* matching toleration decides how long the pod may stay
(k8s pkg/apis/core/v1/helper GetMatchingTolerations): a `tolerationSeconds` there evicts it.

Node labels and taints are what each distribution sets from a node's roles: RKE1 labels
`node-role.kubernetes.io/<role>=true` and taints nodes without the worker role
`node-role.kubernetes.io/controlplane=true:NoSchedule` and `node-role.kubernetes.io/etcd=true:NoExecute`
(rancher/rke cluster/hosts.go, services/workerplane.go); RKE2 servers carry
`node-role.kubernetes.io/control-plane=true` and `.../etcd=true`, and no taint unless configured.

The chart's defaults relied on (aws-ebs-csi-driver chart 2.64.0 values.yaml): `node.tolerateAllTaints:
true` renders the node DaemonSet's single toleration `operator: Exists`; controller tolerations
default to CriticalAddonsOnly/Exists and NoExecute/Exists for 300 s; `controller.region` sets
AWS_REGION; `controller.k8sTagClusterId` makes the driver tag volumes `kubernetes.io/cluster/<id>: owned`;
the controller reads AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from the Secret `awsAccessSecret` names.
"""

# split: this module mixes levels (issue 33 §7.2); the pure tests -> tests/unit.

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from rke_aws.node import rke2_config, scripts
from rke_aws.settings import stackfile, versions
from rke_aws_offline.engine import harness
from tests.support import iam_eval
from tests.support.charts import RELEASE, ebs_release_values
from tests.support.configs import set_key
from tests.support.runs import run_after_cached, run_cached, run_stack_cached
from tests.support.userdata import cloud_config, written_file

RKE1_OWN_TAINTS = {"controlplane": {"key": "node-role.kubernetes.io/controlplane", "value": "true", "effect": "NoSchedule"},
                   "etcd": {"key": "node-role.kubernetes.io/etcd", "value": "true", "effect": "NoExecute"}}


def tolerates(tol: dict[str, Any], taint: dict[str, Any]) -> bool:
    if tol.get("effect") and tol["effect"] != taint["effect"]:
        return False
    if tol.get("operator", "Equal") == "Exists":
        return not tol.get("key") or tol["key"] == taint["key"]
    return tol.get("key") == taint["key"] and tol.get("value", "") == taint.get("value", "")


def first_match(tols: list[dict], taint: dict) -> dict | None:
    return next((t for t in tols if tolerates(t, taint)), None)


def _taint(text: str) -> dict[str, str]:
    kv, _, effect = text.partition(":")
    key, _, value = kv.partition("=")
    return {"key": key, "value": value, "effect": effect}


def cluster_nodes(run) -> dict[str, dict[str, Any]]:
    """name -> labels, taints and IMDS hop limit, as the running cluster would have them."""
    instances = {r.inputs["tags"]["Name"]: r for r in run.of_type("aws:ec2/instance:Instance")}
    out: dict[str, dict[str, Any]] = {}
    rke = run.outputs["distribution"] == "rke"
    for node in run.outputs["nodes"]:
        roles = set(node["roles"])
        if rke:
            labels = {f"node-role.kubernetes.io/{r}": "true" for r in roles}
            taints = [] if "worker" in roles else [RKE1_OWN_TAINTS[r] for r in ("controlplane", "etcd") if r in roles]
        else:
            conf = yaml.safe_load(written_file(cloud_config(instances[node["name"]]), rke2_config.RKE2_CONFIG_PATH))
            labels = dict(label.split("=", 1) for label in conf.get("node-label") or [])
            if "controlplane" in roles:
                labels.update({"node-role.kubernetes.io/control-plane": "true", "node-role.kubernetes.io/etcd": "true"})
            taints = [_taint(t) for t in conf.get("node-taint") or []]
        out[node["name"]] = {"labels": labels, "taints": taints, "roles": roles,
                             "hop": instances[node["name"]].inputs["metadataOptions"]["httpPutResponseHopLimit"]}
    return out


def _with_kubeconfig(stack: str, **changes) -> harness.ProgramRun:
    cfg = harness.stack_config(stack)
    cfg["rke-aws:kubeconfig"] = stackfile.secret("apiVersion: v1\nkind: Config\n")  # a secret, as the CLI hands it
    for key, value in changes.items():
        set_key(cfg, key, value)
    return run_cached(cfg, stack)  # once per session, whichever xdist worker runs the module's tests


@pytest.fixture(scope="module", params=["rke-prod", "rke2-prod", "rke2-dev", "rke-dev"])
def installed(request):
    return _with_kubeconfig(request.param)


def test_controller_runs_on_the_control_plane_and_is_never_evicted(installed):
    run = installed
    values = ebs_release_values(run)
    assert values is not None, f"{run.stack}: no aws-ebs-csi-driver release"
    controller = values["controller"]
    nodes = cluster_nodes(run)
    eligible = {n for n, node in nodes.items()
                if all(node["labels"].get(k) == v for k, v in controller["nodeSelector"].items())}
    assert eligible == {n for n, node in nodes.items() if "controlplane" in node["roles"]}, \
        f"{run.stack}: the controller's nodeSelector {controller['nodeSelector']} picks {sorted(eligible)}"
    for name in eligible:
        for taint in nodes[name]["taints"]:
            match = first_match(controller["tolerations"], taint)
            assert match is not None, f"{name}: controller does not tolerate {taint}"
            if taint["effect"] == "NoExecute":
                assert "tolerationSeconds" not in match, f"{name}: controller evicted after {match['tolerationSeconds']} s by {taint}"
    # Its credentials come from its own Secret: no node needs to hand its role to pods.
    for name, node in nodes.items():
        assert node["hop"] == 1, f"{name}: IMDS hop limit {node['hop']}"
    assert values["awsAccessSecret"]["name"], values


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


def _manifest_parameters(run) -> dict[str, harness.Registration]:
    return {p.inputs["name"].rsplit("/", 1)[1]: p for p in run.of_type("aws:ssm/parameter:Parameter")
            if "/manifests/" in p.inputs["name"]}


def test_manifest_mode_ships_the_same_values_as_a_helmchart_and_its_credentials_encrypted():
    run = run_stack_cached("rke2-govcloud")
    params = _manifest_parameters(run)
    chart = yaml.safe_load(params["ebs-csi.yaml"].inputs["insecureValue"])
    assert chart["kind"] == "HelmChart" and chart["apiVersion"] == "helm.cattle.io/v1", params["ebs-csi.yaml"].urn
    spec = chart["spec"]
    assert (spec["chart"], spec["version"], spec["targetNamespace"]) == (
        versions.EBS_CSI_CHART_NAME, versions.EBS_CSI_CHART_VERSION, "kube-system")
    values = yaml.safe_load(spec["valuesContent"])
    assert values["controller"]["region"] == "us-gov-west-1"
    creds = params["ebs-csi-credentials.yaml"]
    assert creds.inputs["type"] == "SecureString" and "value" in creds.secret_inputs, f"{creds.urn}: not encrypted"
    secret = yaml.safe_load(creds.inputs["value"])
    ref = values["awsAccessSecret"]
    assert (secret["kind"], secret["metadata"]["name"], secret["metadata"]["namespace"]) == ("Secret", ref["name"], "kube-system")
    (key,) = run.of_type("aws:iam/accessKey:AccessKey")
    assert secret["stringData"] == {ref["keyId"]: key.id, ref["accessKey"]: key.state["secret"]}
    # The servers fetch it decrypted, and write it readable by root only (components/node/scripts/sync.sh).
    server = next(i for i in run.of_type("aws:ec2/instance:Instance") if "controlplane" in i.inputs["tags"]["rke-aws/roles"])
    sync = written_file(cloud_config(server), scripts.SYNC_PATH)
    assert '"WithDecryption": true' in sync and "0o600" in sync, f"{server.urn}: {scripts.SYNC_PATH}"


# ---- the controller's own credentials -----------------------------------------------------------

CID = "rke2-prod"
OWNED = {f"aws:ResourceTag/kubernetes.io/cluster/{CID}": "owned"}
OTHER = {"aws:ResourceTag/kubernetes.io/cluster/other": "owned"}


def _user_policy(run) -> dict:
    (policy,) = run.of_type("aws:iam/policy:Policy")
    return json.loads(policy.inputs["policy"])


def test_the_controller_has_its_own_user_and_no_node_role_can_touch_volumes(installed):
    run = installed
    cid = run.outputs["clusterId"]
    (user,) = run.of_type("aws:iam/user:User")
    # auto-named: IAM names are account-wide and one cluster ID may have stacks in several regions
    assert "name" not in user.inputs and user.inputs["path"] == "/rke-aws/", user.urn
    assert user.inputs["tags"][f"kubernetes.io/cluster/{cid}"] == "owned", user.urn
    (policy,) = run.of_type("aws:iam/policy:Policy")
    (attachment,) = run.of_type("aws:iam/userPolicyAttachment:UserPolicyAttachment")
    (key,) = run.of_type("aws:iam/accessKey:AccessKey")
    assert attachment.inputs["user"] == user.state["name"] == key.inputs["user"], (attachment.urn, key.urn)
    assert attachment.inputs["policyArn"] == policy.state["arn"], attachment.urn
    assert not run.of_type("aws:iam/userPolicy:UserPolicy"), "inline user policies hold 2,048 characters at most"
    for grant in run.of_type("aws:iam/rolePolicy:RolePolicy"):
        doc = json.loads(grant.inputs["policy"])
        for action in ("ec2:CreateVolume", "ec2:AttachVolume", "ec2:DeleteVolume"):
            assert not iam_eval.allowed(doc, action, _arn("volume", "vol-1"), {**OWNED, "aws:ResourceTag/kubernetes.io/cluster/" + cid: "owned"}), \
                f"{grant.urn}: a node role allows {action}"
    plain = json.dumps({k: v for k, v in run.outputs.items() if k not in run.secret_outputs}, default=str)
    assert key.state["secret"] not in plain, "the access key's secret is in a plain output"
    manifests = _manifest_parameters(run)
    if "ebs-csi-credentials.yaml" in manifests:
        return  # manifest mode: test_manifest_mode_ships_...
    (secret,) = run.of_type("kubernetes:core/v1:Secret")
    ref = ebs_release_values(run)["awsAccessSecret"]
    assert (secret.inputs["metadata"]["name"], secret.inputs["metadata"]["namespace"]) == (ref["name"], "kube-system")
    assert secret.inputs["stringData"] == {ref["keyId"]: key.id, ref["accessKey"]: key.state["secret"]}, secret.urn
    assert "stringData" in secret.secret_inputs, f"{secret.urn}: the access key is not a secret input"
    (release,) = [r for r in run.of_type(RELEASE) if r.inputs["chart"] == versions.EBS_CSI_CHART_NAME]
    assert secret.urn in release.dependencies, f"{release.urn}: may start before its credentials exist"


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
    # PVC clones: a copy of this cluster's volume, tagged for it
    ("ec2:CopyVolumes", _arn("volume", "*"), {f"aws:RequestTag/kubernetes.io/cluster/{CID}": "owned"}, True),
    ("ec2:CopyVolumes", _arn("volume", "vol-1"), OWNED, True),
    ("ec2:CopyVolumes", _arn("volume", "vol-1"), OTHER, False),
    # tags as part of those creations, and changes on this cluster's volumes except the cluster tag
    ("ec2:CreateTags", _arn("volume", "vol-1"), {"ec2:CreateAction": "CreateVolume"}, True),
    ("ec2:CreateTags", _arn("volume", "vol-1"), {**OTHER, "aws:TagKeys": ["team"]}, False),
    ("ec2:CreateTags", _arn("volume", "vol-1"), {**OWNED, "aws:TagKeys": ["team"]}, True),
    ("ec2:CreateTags", _arn("volume", "vol-1"), {**OWNED, "aws:TagKeys": [f"kubernetes.io/cluster/{CID}"]}, False),
    ("ec2:DeleteTags", _arn("volume", "vol-1"), {**OWNED, "aws:TagKeys": [f"kubernetes.io/cluster/{CID}"]}, False),
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
    ("ec2:EnableFastSnapshotRestores", _arn("snapshot", "snap-1"), OWNED, True),
    ("ec2:LockSnapshot", _arn("snapshot", "snap-1"), OTHER, False),
    # nothing beyond EBS
    ("ec2:TerminateInstances", _arn("instance", "i-1"), OWNED, False),
    ("ec2:ModifyInstanceAttribute", _arn("instance", "i-1"), OWNED, False),
    ("ssm:GetParameter", "arn:aws:ssm:us-west-2:123456789012:parameter/rke-aws/rke2-prod/rke2-join-token", {}, False),
])
def test_ebs_grants_evaluated(action, resource, context, allowed):
    doc = _user_policy(run_stack_cached("rke2-prod"))
    assert iam_eval.allowed(doc, action, resource, context) is allowed, (action, resource, context)


def test_ebs_grants_carry_the_partition():
    doc = _user_policy(run_stack_cached("rke2-govcloud"))
    arns = {r for st in doc["Statement"] for r in iam_eval._strings(st["Resource"]) if r != "*"}
    assert arns and all(r.startswith("arn:aws-us-gov:ec2:") for r in arns), arns


# ---- when it is on ------------------------------------------------------------------------------

def test_on_for_a_new_stack_whatever_its_pools():
    pools = json.loads(harness.stack_config("rke2-dev")["rke-aws:nodePools"])
    for p in pools:  # no dedicated control plane: the controller still has its own credentials
        p["roles"] = sorted(set(p["roles"]) | {"worker"}) if "controlplane" in p["roles"] else p["roles"]
    run = harness.run_program(set_key(harness.stack_config("rke2-dev"), "nodePools", pools), stack="rke2-shared")
    assert run.outputs["ebsCsi"] is True and run.of_type("aws:iam/accessKey:AccessKey")
    assert {r.inputs["metadataOptions"]["httpPutResponseHopLimit"] for r in run.of_type("aws:ec2/instance:Instance")} == {1}


def test_off_means_no_user_no_release_no_manifest():
    run = _with_kubeconfig("rke2-prod", addons={"ebsCsi": False})
    assert run.outputs["ebsCsi"] is False and ebs_release_values(run) is None
    assert not run.of_type("aws:iam/user:User") and not run.of_type("kubernetes:core/v1:Secret")
    gov = set_key(harness.stack_config("rke2-govcloud"), "addons", {"ebsCsi": False})
    assert not [n for n in _manifest_parameters(harness.run_program(gov, stack="rke2-govcloud")) if "ebs" in n]


def test_a_stack_from_before_the_option_stays_without_it_until_asked():
    first = run_stack_cached("rke2-prod")
    old_outputs = {k: v for k, v in first.outputs.items() if k != "ebsCsi"}
    cfg = harness.stack_config("rke2-prod")
    again = harness.run_program(cfg, stack="rke2-prod", previous_outputs=old_outputs)
    assert again.outputs["ebsCsi"] is False and not again.of_type("aws:iam/user:User")
    # ... and once deployed with the driver, an unset key keeps it.
    later = run_after_cached(cfg, first, "rke2-prod")  # the stack's plain next update (other files read it too)
    assert later.outputs["ebsCsi"] is True
