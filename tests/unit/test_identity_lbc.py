"""The AWS Load Balancer Controller (components/plan/identity_lbc.py): upstream's policy vendored unchanged,
the same in every partition but for the ARN partition, every action a real IAM action, scoped to this
cluster's tag where upstream checks only that the tag exists (evaluated with the suite's IAM
evaluator), and the chart values rendered against the stored chart defaults
(tests/data/upstream/aws-load-balancer-controller-3.5.0, aws/eks-charts@52396092)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from policies import rules
from rke_aws.plan import identity_lbc as lbc
from rke_aws.settings import versions
from tests.support.charts import NODES, coalesce, schedules, unknown_keys
from tests.support.resource_policy import iam_eval

ALLOW, decision = iam_eval.ALLOW, iam_eval.decision

CHART_DIR = Path(__file__).resolve().parents[1] / "data" / "upstream" / "aws-load-balancer-controller-3.5.0"
DEFAULTS = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
KEY = lbc.CLUSTER_TAG
POOLS = {"rke2": [SimpleNamespace(is_controlplane=True, is_etcd=True, is_worker=False)],
         "rke": [SimpleNamespace(is_controlplane=True, is_etcd=True, is_worker=False)]}


def test_vendored_files_are_upstreams_unchanged():
    readme = (lbc.UPSTREAM / "README.md").read_text()
    recorded = dict((path, digest) for digest, path in re.findall(r"^([0-9a-f]{64})  (\S+)$", readme, re.M))
    assert set(recorded) == set(lbc.POLICY_FILES.values()) == {p.name for p in lbc.UPSTREAM.glob("*.json")}
    for name, digest in recorded.items():
        assert hashlib.sha256((lbc.UPSTREAM / name).read_bytes()).hexdigest() == digest, name
    assert re.search(r"tag\s+`v3\.5\.0`", readme) and versions.LOAD_BALANCER_CONTROLLER_IMAGE.endswith(":v3.5.0")


def _normalised(partition: str) -> set[str]:
    return {json.dumps(s, sort_keys=True).replace(f"arn:{partition}:", "arn:P:")
            for s in lbc.upstream_policy(partition)["Statement"]}


def test_the_partitions_differ_only_in_the_arn_partition():
    assert _normalised("aws") == _normalised("aws-us-gov") == _normalised("aws-cn")


@pytest.mark.parametrize("partition", sorted(lbc.POLICY_FILES))
def test_every_action_is_a_real_iam_action(partition):
    doc = lbc.policy_document("c1", partition)
    actions = [a for s in doc["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])]
    assert rules.unknown_actions(actions) == []


def test_scoping_keeps_actions_and_resources_and_only_tightens_tag_presence():
    up, ours = lbc.upstream_policy("aws"), lbc.policy_document("c1", "aws")
    assert len(up["Statement"]) == len(ours["Statement"])
    for u, o in zip(up["Statement"], ours["Statement"], strict=True):
        assert (u["Action"], u["Resource"], u["Effect"]) == (o["Action"], o["Resource"], o["Effect"])
        for op, block in o.get("Condition", {}).items():
            for k, v in block.items():
                assert u["Condition"].get(op, {}).get(k) == v or (op == "StringEquals" and k in lbc.SCOPED_KEYS
                                                                  and u["Condition"]["Null"][k] == "false")
    assert '"false"' not in json.dumps([s.get("Condition", {}).get("Null", {}) for s in ours["Statement"]])


# Calls upstream allows on any resource that carries the controller's cluster tag; (action, resource, tag key).
SG = "arn:aws:ec2:us-east-1:123456789012:security-group/sg-1"
LB = "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/k8s-x/0123"
TG = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/k8s-x/0123"
TAGGED_CALLS = [
    ("ec2:DeleteSecurityGroup", SG, "aws:ResourceTag"),
    ("elasticloadbalancing:DeleteLoadBalancer", LB, "aws:ResourceTag"),
    ("elasticloadbalancing:ModifyTargetGroup", TG, "aws:ResourceTag"),
    ("elasticloadbalancing:CreateLoadBalancer", LB, "aws:RequestTag"),
    ("elasticloadbalancing:CreateTargetGroup", TG, "aws:RequestTag"),
]


@pytest.mark.parametrize("action,resource,kind", TAGGED_CALLS)
def test_another_clusters_resources_are_out_of_reach(action, resource, kind):
    up, ours = lbc.upstream_policy("aws"), lbc.policy_document("c1", "aws")
    mine, theirs = {f"{kind}/{KEY}": "c1"}, {f"{kind}/{KEY}": "c2"}
    assert decision(up, action, resource, mine) == ALLOW and decision(up, action, resource, theirs) == ALLOW
    assert decision(ours, action, resource, mine) == ALLOW
    assert decision(ours, action, resource, theirs) != ALLOW
    assert decision(ours, action, resource, {}) != ALLOW


def test_tagging_on_create_needs_this_clusters_tag():
    ours = lbc.policy_document("c1", "aws")
    ctx = {"ec2:CreateAction": "CreateSecurityGroup", f"aws:RequestTag/{KEY}": "c1"}
    assert decision(ours, "ec2:CreateTags", SG, ctx) == ALLOW
    assert decision(ours, "ec2:CreateTags", SG, {**ctx, f"aws:RequestTag/{KEY}": "c2"}) != ALLOW
    # re-tagging an owned group without touching the cluster tag stays allowed (upstream's Null true)
    assert decision(ours, "ec2:CreateTags", SG, {f"aws:ResourceTag/{KEY}": "c1"}) == ALLOW


# --- chart values -------------------------------------------------------------------------------------

def test_the_stored_chart_is_the_pinned_one():
    assert CHART["version"] == versions.LOAD_BALANCER_CONTROLLER_CHART_VERSION
    assert DEFAULTS["image"]["repository"] + ":" + DEFAULTS["image"]["tag"] == versions.LOAD_BALANCER_CONTROLLER_IMAGE


@pytest.mark.parametrize("distribution", ["rke2", "rke"])
def test_values_render_and_schedule_on_the_control_plane(distribution):
    role = "arn:aws:iam::123456789012:role/rke-aws-c1-lbc"
    user = lbc.values("c1", "us-east-1", "vpc-0123", role, distribution, POOLS[distribution])
    assert unknown_keys(user, DEFAULTS) == []
    eff = coalesce(user, DEFAULTS)
    # no instance metadata at hop limit 1: region and VPC given (docs/deploy/installation.md)
    assert (eff["clusterName"], eff["region"], eff["vpcId"]) == ("c1", "us-east-1", "vpc-0123")
    assert eff["hostNetwork"] is False
    assert eff["serviceAccount"]["name"] == lbc.SERVICE_ACCOUNT
    assert eff["serviceAccount"]["annotations"] == {"eks.amazonaws.com/role-arn": role}
    # the CCM stays the default for Services without a class; the webhook cert survives upgrades
    assert eff["enableServiceMutatorWebhook"] is False and eff["keepTLSSecret"] is True
    assert eff["enableCertManager"] is False
    for kind, (labels, taints) in NODES[distribution].items():
        assert schedules(eff, labels, taints) == ("server" in kind or "controlplane" in kind), kind


def test_services_the_controller_takes_are_the_ccms_to_skip():
    """kubernetes/cloud-provider controllers/service/controller.go wantsLoadBalancer: LoadBalancer type
    and a nil loadBalancerClass; the controller's default class (pkg/config/service_config.go)."""
    def ccm_wants(svc: dict) -> bool:
        return svc["type"] == "LoadBalancer" and svc.get("loadBalancerClass") is None

    assert lbc.LOAD_BALANCER_CLASS == "service.k8s.aws/nlb"
    assert not ccm_wants({"type": "LoadBalancer", "loadBalancerClass": lbc.LOAD_BALANCER_CLASS})
    assert ccm_wants({"type": "LoadBalancer"})
