"""IAM: policy documents against a maintained action database, and the registered roles."""

# split: this module mixes levels (issue 33 §7.2); the program runs (registered roles and policies) ->
# tests/program.

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from policies import rules
from rke_aws.aws import iam_policies as iam_policy
from rke_aws.settings import fields
from rke_aws_offline.engine import harness

REQUIRED_CONTROLPLANE = {
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeInstanceTopology",
    "elasticloadbalancing:DeregisterTargets",
    "elasticloadbalancing:SetSecurityGroups",
    "elasticloadbalancing:DescribeTargetGroupAttributes",
    "elasticloadbalancing:ModifyTargetGroupAttributes",
    # a sample of the seed policy that the CCM still calls
    "elasticloadbalancing:AddTags",
    "ec2:DescribeInstances",
    "ec2:CreateSecurityGroup",
    "iam:CreateServiceLinkedRole",
}


@lru_cache(maxsize=1)
def known_actions() -> set[str]:
    # cfn-lint ships AWS's service authorization reference; the policy pack loads it for its IAM rule.
    return {f"{svc}:{action}" for svc, actions in rules.action_database().items() for action in actions}


def test_action_database_is_usable():
    actions = known_actions()
    assert len(actions) > 10000, f"cfn-lint's action database looks truncated ({len(actions)} actions)"
    assert "ec2:describeinstances" in actions


@pytest.mark.parametrize("role", ["controlplane", "worker"])
def test_every_action_is_a_real_iam_action(role):
    unknown = [a for a in iam_policy.actions_for(role) if a.lower() not in known_actions()]
    assert not unknown, f"{role} policy has actions unknown to the IAM action database: {unknown}"


def test_database_check_catches_the_blog_posts_fake_action():
    # The blog post's singular DescribeAutoScalingGroup is not an action; the check must say so.
    assert "autoscaling:describeautoscalinggroup" not in known_actions()
    assert "autoscaling:describeautoscalinggroups" in known_actions()


@pytest.mark.parametrize("role", ["controlplane", "worker"])
def test_no_wildcard_actions(role):
    assert not [a for a in iam_policy.actions_for(role) if "*" in a], f"{role} policy uses a wildcard action"


def test_controlplane_policy_has_upstream_and_nlb_actions():
    actions = set(iam_policy.controlplane_actions())
    assert REQUIRED_CONTROLPLANE <= actions, f"missing: {sorted(REQUIRED_CONTROLPLANE - actions)}"
    # the seed's actions survive unless dropped with evidence (tests/unit/test_iam_eval.py checks the evidence)
    from tests.support import upstream

    assert set(upstream.rancher_seed_policies()["controlplane"]) - set(iam_policy.DROPPED_ACTIONS) <= actions


def test_worker_policy_is_rancher_documents_worker_policy():
    """The worker role keeps Rancher's etcd/worker policy: compared with the policy in Rancher's own
    document (tests/data/upstream/rancher-docs/amazon.md), not with the program's copy of it."""
    from tests.support import upstream

    documented = upstream.rancher_seed_policies()["worker"]
    assert list(iam_policy.SEED_WORKER_ACTIONS) == documented, "SEED_WORKER_ACTIONS is not Rancher's list"
    assert iam_policy.worker_actions() == iam_policy.normalise(documented)


@pytest.mark.parametrize("role", ["controlplane", "worker"])
def test_policy_actions_deduplicated_and_sorted(role):
    for stmt in iam_policy.policy_document_for(role, "c1")["Statement"]:
        actions = stmt["Action"]
        assert len(actions) == len({a.lower() for a in actions}), f"{role} {stmt['Sid']}: duplicate actions"
        assert actions == sorted(actions, key=str.lower), f"{role} {stmt['Sid']}: actions not sorted"


def test_the_seed_controlplane_lists_addtags_twice_and_the_policy_once():
    """Rancher's controlplane policy lists elasticloadbalancing:AddTags twice (domain.md section 2),
    read from Rancher's document; the program's policy grants it once."""
    from tests.support import upstream

    documented = upstream.rancher_seed_policies()["controlplane"]
    assert documented.count("elasticloadbalancing:AddTags") == 2, "the document no longer lists AddTags twice"
    assert iam_policy.controlplane_actions().count("elasticloadbalancing:AddTags") == 1


IDENTITY = "rke-aws:identity:WorkloadIdentity"  # the component of the issuer's and the IRSA roles' resources


def _actions(policy: dict) -> set[str]:
    return {a for s in policy["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}


def test_roles_profiles_and_policies_registered(stack_run):
    # The node roles (workload identity's roles for service accounts: tests/program/test_identity.py).
    roles = [r for r in stack_run.of_type("aws:iam/role:Role") if IDENTITY not in r.urn]
    # RKE2 etcd-only servers (split roles) add a role of their own.
    kinds = ("controlplane", "worker") + (("etcd",) if stack_run.outputs["distribution"] == "rke2" and any(
        n["roles"] == ["etcd"] for n in stack_run.outputs["nodes"]) else ())
    assert sorted(r.name for r in roles) == sorted(f"{stack_run.outputs['clusterId']}-{k}" for k in kinds)
    for role in roles:
        trust = json.loads(role.inputs["assumeRolePolicy"])
        # EC2's principal is the same in every partition, China included (domain.md section 6).
        assert trust["Statement"][0]["Principal"] == {"Service": "ec2.amazonaws.com"}, role.urn
    policies = {r.name: json.loads(r.inputs["policy"]) for r in stack_run.of_type("aws:iam/rolePolicy:RolePolicy")}
    cid = stack_run.outputs["clusterId"]
    cp = policies[f"{cid}-controlplane-cloud-provider"]
    wk = policies[f"{cid}-worker-cloud-provider"]
    assert REQUIRED_CONTROLPLANE <= _actions(cp)
    assert "ec2:DescribeAvailabilityZones" not in _actions(wk)
    # the registered documents are the module's, for this stack's cluster ID (and its partition)
    assert cp in [iam_policy.controlplane_policy_document(cid, p) for p in ("aws", "aws-us-gov", "aws-cn")]
    assert f"kubernetes.io/cluster/{cid}" in json.dumps(cp)
    profiles = stack_run.outputs["instanceProfileNames"]
    assert set(profiles) == set(kinds)
    # Rancher node templates take the profile name, not the ARN.
    assert all(not v.startswith("arn:") for v in profiles.values()), profiles
    # The account answers ARNs of the region's partition (arn:aws-cn:iam::... in China).
    region = stack_run.outputs["region"]
    partition = "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"
    assert all(v.startswith(f"arn:{partition}:iam::") for v in stack_run.outputs["instanceProfileArns"].values())


def test_session_manager_without_the_managed_policy(base_config):
    """AmazonSSMManagedInstanceCore allows ssm:GetParameter(s) on every parameter of the account."""
    from rke_aws_offline.engine import harness
    from tests.support.configs import set_key
    from tests.support.runs import run_cached

    with_ssm = run_cached(base_config)  # the base config's first run (read only, shared)
    assert with_ssm.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment") == [], "a managed policy is attached"
    session = [r for r in with_ssm.of_type("aws:iam/rolePolicy:RolePolicy") if r.name.endswith("-session-manager")]
    assert len(session) == 2, [r.name for r in session]
    for reg in session:
        (stmt,) = json.loads(reg.inputs["policy"])["Statement"]
        assert set(stmt["Action"]) == set(iam_policy.SESSION_MANAGER_ACTIONS), reg.urn
        assert not [a for a in stmt["Action"] if a.lower().startswith("ssm:getparameter")], reg.urn
        assert not [a for a in stmt["Action"] if a.lower() not in known_actions()], reg.urn
    without = harness.run_program(set_key(base_config, "access", {"ssm": False}), stack="ssm-off")
    assert not [r for r in without.of_type("aws:iam/rolePolicy:RolePolicy") if r.name.endswith("-session-manager")]


def test_nodes_use_the_profile_of_their_role(stack_run):
    profiles = {r.name: r.state["name"] for r in stack_run.of_type("aws:iam/instanceProfile:InstanceProfile")}
    cid = stack_run.outputs["clusterId"]
    for node in stack_run.outputs["nodes"]:
        inst = next(r for r in stack_run.of_type("aws:ec2/instance:Instance") if r.inputs.get("privateIp") == node["privateIp"])
        # RKE2 etcd-only servers have a role of their own (server parameters, snapshots, no CCM policy).
        etcd_only = stack_run.outputs["distribution"] == "rke2" and node["roles"] == ["etcd"]
        kind = "controlplane" if "controlplane" in node["roles"] else "etcd" if etcd_only else "worker"
        assert inst.inputs["iamInstanceProfile"] == profiles[f"{cid}-{kind}"], inst.urn


@pytest.mark.parametrize("stack", [s for s in harness.stack_names() if harness.stack_config(s)["rke-aws:distribution"] == "rke2"])
def test_no_node_role_reads_a_parameter_but_its_own(stack):
    """Every policy on each role (inline and attached; none are attached), evaluated: a role reads
    exactly the parameters of its node kind, nothing of another cluster, nothing else in the account."""
    from tests.support import iam_eval
    from tests.support.runs import run_stack_cached

    run = run_stack_cached(stack)
    assert [r for r in run.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
            if IDENTITY not in r.urn] == [], "managed policies attached"
    cid = run.outputs["clusterId"]
    arn = {p.inputs["name"]: p.state["arn"] for p in run.of_type("aws:ssm/parameter:Parameter")}
    docs = {kind: [r.inputs["policy"] for r in run.of_type("aws:iam/rolePolicy:RolePolicy")
                   if r.name.startswith(f"{cid}-{kind}-")] for kind in ("controlplane", "etcd", "worker")}
    if not any(n["roles"] == ["etcd"] for n in run.outputs["nodes"]):
        assert docs.pop("etcd") == [], f"{stack}: an etcd role without etcd-only servers"
    server = {run.outputs["rke2TokenParameter"], run.outputs["rke2AgentTokenParameter"],
              run.outputs["rke2InitMarkerParameter"]}
    # Workload identity: the API servers (controlplane role only) also read the issuer's key files.
    identity = {p.inputs["name"] for p in run.of_type("aws:ssm/parameter:Parameter") if IDENTITY in p.urn}
    # registry.password (issue 35): a SecureString every node reads.
    registry = {n for n in arn if n == f"/rke-aws/{cid}/registry-password"}
    own = {"controlplane": server | identity | registry, "etcd": server | registry,
           "worker": {run.outputs["rke2AgentTokenParameter"]} | registry}
    template = arn[run.outputs["rke2TokenParameter"]]
    strangers = [template.replace(f"/rke-aws/{cid}/", "/rke-aws/other-cluster/"),
                 template.rsplit(":parameter/", 1)[0] + ":parameter/prod/database-password"]
    for kind, documents in docs.items():
        assert documents, f"{stack}: no policies on the {kind} role"
        for name, parameter_arn in arn.items():
            readable = iam_eval.allowed(documents, "ssm:GetParameter", parameter_arn)
            assert readable is (name in own[kind]), f"{stack} {kind}: GetParameter {name} -> {readable}"
        for other in strangers:
            for action in ("ssm:GetParameter", "ssm:GetParameters", "ssm:GetParametersByPath"):
                assert not iam_eval.allowed(documents, action, other), f"{stack} {kind}: {action} {other}"


# IAM quotas (IAM User Guide, "IAM and AWS STS quotas"): characters other than whitespace. A role's
# inline policies together hold 10,240, a user's 2,048, a managed policy 6,144. AWS refuses larger.
ROLE_INLINE_QUOTA, USER_INLINE_QUOTA, MANAGED_QUOTA = 10240, 2048, 6144


def _size(document: str) -> int:
    return len("".join(document.split()))


@pytest.mark.parametrize("stack", ["rke2-govcloud", "rke2-china", "rke2-prod", "rke-prod"])
def test_policies_fit_iams_quotas_with_the_longest_cluster_id(stack):
    """Policies name the cluster (tags, ARNs): the longest ID allowed must still fit."""
    from tests.support.configs import set_key

    cfg = harness.stack_config(stack)
    cid = "c" + "-x" * 21  # 43 characters: fields.MAX_CLUSTER_ID
    assert len(cid) == fields.MAX_CLUSTER_ID
    set_key(cfg, "clusterId", cid)
    set_key(cfg, "ccm", {**json.loads(cfg.get("rke-aws:ccm", "{}")), "install": "manifest"}
            if cfg.get("rke-aws:distribution") == "rke2" else json.loads(cfg.get("rke-aws:ccm", "{}")))
    run = harness.run_program(cfg, stack=stack)
    roles: dict[str, int] = {}
    for grant in run.of_type("aws:iam/rolePolicy:RolePolicy"):
        roles[grant.inputs["role"]] = roles.get(grant.inputs["role"], 0) + _size(grant.inputs["policy"])
    assert roles and max(roles.values()) <= ROLE_INLINE_QUOTA, roles
    for policy in run.of_type("aws:iam/policy:Policy"):
        assert _size(policy.inputs["policy"]) <= MANAGED_QUOTA, (policy.urn, _size(policy.inputs["policy"]))
    users: dict[str, int] = {}
    for grant in run.of_type("aws:iam/userPolicy:UserPolicy"):
        users[grant.inputs["user"]] = users.get(grant.inputs["user"], 0) + _size(grant.inputs["policy"])
    assert all(v <= USER_INLINE_QUOTA for v in users.values()), users
