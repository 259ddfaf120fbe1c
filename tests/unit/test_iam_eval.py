"""The node policies, evaluated: every CCM call allowed on what the cluster owns, refused elsewhere.

Part 1 proves the evaluator (tests/support/iam_eval.py) on hand-written cases, so that part 2, which runs
the generated documents through it, does not rest on the code it tests.
"""

# split: this module mixes levels (issue 33 §7.2); the tests that evaluate a stack's registered policies (program
# runs) -> tests/program.

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources as importlib_resources

import pytest

from policies import rules
from rke_aws.aws import iam_policies as iam_policy
from rke_aws.aws.iam_policies import CCM_CALLS, CREATE, MUTATE, OWNED, READ, TAG, CcmCall
from tests.support import iam_eval
from tests.support.iam_eval import ALLOW, DENY, IMPLICIT_DENY, allowed, conditions_hold, decision

# --- part 1: the evaluator ---------------------------------------------------------------------

SG = "arn:aws:ec2:us-east-1:123456789012:security-group/sg-0123"
DOC = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": ["ec2:Describe*"], "Resource": "*"},
        {"Effect": "Allow", "Action": "ec2:DeleteSecurityGroup", "Resource": "arn:aws:ec2:*:*:security-group/*",
         "Condition": {"StringEquals": {"aws:ResourceTag/team": "a"}}},
    ],
}


def test_eval_allow_needs_a_matching_statement():
    assert decision(DOC, "ec2:DescribeInstances") == ALLOW
    assert decision(DOC, "ec2:RunInstances") == IMPLICIT_DENY
    assert decision({"Statement": []}, "ec2:DescribeInstances") == IMPLICIT_DENY


def test_eval_explicit_deny_wins_over_allow():
    deny = {"Statement": [{"Effect": "Deny", "Action": "ec2:DescribeInstances", "Resource": "*"}]}
    assert decision([DOC, deny], "ec2:DescribeInstances") == DENY
    assert decision([DOC, deny], "ec2:DescribeSubnets") == ALLOW
    # a Deny whose condition does not hold denies nothing
    cond_deny = {"Statement": [{"Effect": "Deny", "Action": "*", "Resource": "*",
                                "Condition": {"StringEquals": {"aws:RequestedRegion": "eu-west-1"}}}]}
    assert decision([DOC, cond_deny], "ec2:DescribeInstances", context={"aws:RequestedRegion": "us-east-1"}) == ALLOW
    assert decision([DOC, cond_deny], "ec2:DescribeInstances", context={"aws:RequestedRegion": "eu-west-1"}) == DENY


def test_eval_actions_are_case_insensitive_globs():
    assert allowed(DOC, "EC2:describeinstances")
    single = {"Statement": [{"Effect": "Allow", "Action": "ec2:Describe?pcs", "Resource": "*"}]}
    assert allowed(single, "ec2:DescribeVpcs")
    assert not allowed(single, "ec2:DescribeVpcsX")
    assert not allowed(single, "ec2:DescribeXXpcs")
    # `.` and other regex characters are literal
    dots = {"Statement": [{"Effect": "Allow", "Action": "s3:Get.bject", "Resource": "*"}]}
    assert not allowed(dots, "s3:GetObject")


def test_eval_not_action_and_not_resource():
    doc = {"Statement": [{"Effect": "Allow", "NotAction": "iam:*", "NotResource": "arn:aws:s3:::secret*"}]}
    assert allowed(doc, "s3:GetObject", "arn:aws:s3:::public/x")
    assert not allowed(doc, "IAM:PassRole", "arn:aws:s3:::public/x")
    assert not allowed(doc, "s3:GetObject", "arn:aws:s3:::secret-bucket/x")


def test_eval_resources_are_case_sensitive_globs():
    assert allowed(DOC, "ec2:DeleteSecurityGroup", SG, {"aws:ResourceTag/team": "a"})
    assert not allowed(DOC, "ec2:DeleteSecurityGroup", SG.replace("security-group", "Security-Group"), {"aws:ResourceTag/team": "a"})
    assert not allowed(DOC, "ec2:DeleteSecurityGroup", "arn:aws:ec2:us-east-1:123456789012:vpc/vpc-1", {"aws:ResourceTag/team": "a"})


def test_eval_missing_key_fails_positive_operators():
    assert not allowed(DOC, "ec2:DeleteSecurityGroup", SG, {})
    assert not allowed(DOC, "ec2:DeleteSecurityGroup", SG, {"aws:ResourceTag/team": "b"})
    for op in ("StringEquals", "StringLike", "StringEqualsIgnoreCase", "ArnLike", "ArnEquals", "Bool"):
        assert not conditions_hold({op: {"k": "v"}}, {}), op


def test_eval_missing_key_satisfies_negated_operators_and_if_exists():
    for op in ("StringNotEquals", "StringNotLike", "StringNotEqualsIgnoreCase", "ArnNotLike", "ArnNotEquals",
               "StringEqualsIfExists"):
        assert conditions_hold({op: {"k": "v"}}, {}), op
    assert not conditions_hold({"StringEqualsIfExists": {"k": "v"}}, {"k": "w"})
    assert not conditions_hold({"StringNotEquals": {"k": "v"}}, {"k": "v"})


def test_eval_condition_key_names_are_case_insensitive_values_are_not():
    assert conditions_hold({"StringEquals": {"aws:ResourceTag/Team": "a"}}, {"AWS:resourcetag/team": "a"})
    assert not conditions_hold({"StringEquals": {"k": "a"}}, {"k": "A"})
    assert conditions_hold({"StringEqualsIgnoreCase": {"k": "a"}}, {"k": "A"})
    assert not conditions_hold({"StringNotEqualsIgnoreCase": {"k": "a"}}, {"k": "A"})


def test_eval_values_or_keys_and_operators_and():
    cond = {"StringEquals": {"a": ["1", "2"], "b": "x"}, "StringLike": {"c": "pre*"}}
    assert conditions_hold(cond, {"a": "2", "b": "x", "c": "prefix"})
    assert not conditions_hold(cond, {"a": "3", "b": "x", "c": "prefix"})  # no value of a
    assert not conditions_hold(cond, {"a": "1", "b": "y", "c": "prefix"})  # b fails
    assert not conditions_hold(cond, {"a": "1", "b": "x", "c": "other"})  # second operator fails
    # negated operator with several values: the request value must match none of them
    assert not conditions_hold({"StringNotEquals": {"a": ["1", "2"]}}, {"a": "2"})
    assert conditions_hold({"StringNotEquals": {"a": ["1", "2"]}}, {"a": "3"})


def test_eval_string_like_wildcards():
    assert conditions_hold({"StringLike": {"k": "kubernetes.io/cluster/*"}}, {"k": "kubernetes.io/cluster/c1"})
    assert conditions_hold({"StringLike": {"k": "c?"}}, {"k": "c1"})
    assert not conditions_hold({"StringLike": {"k": "c?"}}, {"k": "c12"})
    assert not conditions_hold({"StringLike": {"k": "C*"}}, {"k": "c1"})


def test_eval_arn_operators_match_field_by_field():
    arn = "arn:aws:iam::123456789012:role/aws-service-role/x"
    assert conditions_hold({"ArnLike": {"k": "arn:aws:iam::*:role/*"}}, {"k": arn})
    assert conditions_hold({"ArnEquals": {"k": arn}}, {"k": arn})
    assert not conditions_hold({"ArnLike": {"k": "arn:aws-cn:iam::*:role/*"}}, {"k": arn})
    # `*` does not cross a field: the service field must be iam
    assert not conditions_hold({"ArnLike": {"k": "arn:aws:*:role/*"}}, {"k": arn})
    assert not conditions_hold({"ArnLike": {"k": "arn:aws:iam::*:role/*"}}, {"k": "not-an-arn"})
    assert conditions_hold({"ArnNotLike": {"k": "arn:aws-cn:*:*:*:*"}}, {"k": arn})


def test_eval_null_checks_presence():
    assert conditions_hold({"Null": {"k": "true"}}, {})
    assert not conditions_hold({"Null": {"k": "true"}}, {"k": "v"})
    assert conditions_hold({"Null": {"k": "false"}}, {"k": "v"})
    assert not conditions_hold({"Null": {"k": "false"}}, {})
    assert conditions_hold({"Null": {"k": "true"}}, {"k": []})  # an empty set is absent


def test_eval_bool():
    assert conditions_hold({"Bool": {"aws:SecureTransport": "true"}}, {"aws:SecureTransport": True})
    assert conditions_hold({"Bool": {"aws:SecureTransport": True}}, {"aws:SecureTransport": "TRUE"})
    assert not conditions_hold({"Bool": {"aws:SecureTransport": "true"}}, {"aws:SecureTransport": "false"})


def test_eval_set_operators():
    keys = {"aws:TagKeys": ["team", "env"]}
    assert conditions_hold({"ForAnyValue:StringEquals": {"aws:TagKeys": "env"}}, keys)
    assert not conditions_hold({"ForAnyValue:StringEquals": {"aws:TagKeys": "owner"}}, keys)
    assert not conditions_hold({"ForAnyValue:StringEquals": {"aws:TagKeys": "env"}}, {})  # missing: false
    assert conditions_hold({"ForAllValues:StringEquals": {"aws:TagKeys": ["team", "env", "x"]}}, keys)
    assert not conditions_hold({"ForAllValues:StringEquals": {"aws:TagKeys": ["team"]}}, keys)
    assert conditions_hold({"ForAllValues:StringEquals": {"aws:TagKeys": ["team"]}}, {})  # missing: vacuously true
    assert conditions_hold({"ForAllValues:StringEquals": {"aws:TagKeys": ["team"]}}, {"aws:TagKeys": []})
    guard = {"ForAllValues:StringNotLike": {"aws:TagKeys": "kubernetes.io/cluster/*"}}
    assert conditions_hold(guard, keys)
    assert not conditions_hold(guard, {"aws:TagKeys": ["team", "kubernetes.io/cluster/c2"]})


def test_eval_refuses_what_it_does_not_model():
    with pytest.raises(ValueError):
        conditions_hold({"NumericLessThan": {"k": "1"}}, {"k": "0"})  # not silently ignored, unlike moto
    with pytest.raises(ValueError):
        conditions_hold({"StringEquals": {"aws:TagKeys": "a"}}, {"aws:TagKeys": ["a", "b"]})
    with pytest.raises(ValueError):
        decision({"Statement": [{"Effect": "Allow", "Action": "*"}]}, "ec2:DescribeInstances")
    with pytest.raises(ValueError):
        decision({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "*", "Resource": "*"}]}, "s3:GetObject")


def test_eval_reads_json_text_and_single_statement_documents():
    text = json.dumps({"Statement": {"Effect": "Allow", "Action": "ec2:DescribeInstances", "Resource": "*"}})
    assert allowed(text, "ec2:DescribeInstances")
    assert allowed([text], "ec2:DescribeInstances")


def test_eval_is_independent_of_components():
    source = importlib_resources.files("tests.support").joinpath("iam_eval.py").read_text()
    assert "components" not in [line.split()[1].split(".")[0] for line in source.splitlines()
                                if line.startswith(("import ", "from "))]


# --- part 2: the generated policies ------------------------------------------------------------

CLUSTER = "c1"
KEY = f"kubernetes.io/cluster/{CLUSTER}"
OTHER_KEY = "kubernetes.io/cluster/c2"
ACCOUNT = "123456789012"
PARTITIONS = {"aws": "us-east-1", "aws-us-gov": "us-gov-west-1", "aws-cn": "cn-north-1"}
# Tag sets a resource (or a request) might carry that are not this cluster's ownership.
NOT_OWNED = {
    "untagged": {},
    "other-cluster": {OTHER_KEY: OWNED},
    "shared": {KEY: "shared"},
    "other-value": {KEY: "Owned"},
}
OWNED_TAGS = {KEY: OWNED, "kubernetes.io/service-name": "default/web"}


def action_entry(action: str) -> dict:
    service, name = action.split(":", 1)
    return rules.iam_reference()[service]["Actions"][name.lower()]


def resource_entry(service: str, resource_type: str) -> dict:
    return rules.iam_reference()[service]["Resources"][resource_type]


SAMPLE_IDS = {"role": "aws-service-role/elasticloadbalancing.amazonaws.com/AWSServiceRoleForElasticLoadBalancing"}


def sample_arn(service: str, resource_type: str, partition: str = "aws") -> str:
    """An ARN of that resource type, from the reference's ARN format."""
    fmt = resource_entry(service, resource_type)["ARNFormats"][0]
    arn = (fmt.replace("${Partition}", partition).replace("${Region}", PARTITIONS[partition])
           .replace("${Account}", ACCOUNT))
    return arn.replace(".*", SAMPLE_IDS.get(resource_type, "k8s-example/0123456789abcdef"))


def request_context(tags: dict[str, str]) -> dict:
    return {**{f"aws:RequestTag/{k}": v for k, v in tags.items()}, "aws:TagKeys": sorted(tags)}


def resource_context(tags: dict[str, str]) -> dict:
    return {f"aws:ResourceTag/{k}": v for k, v in tags.items()}


def service_of(call: CcmCall) -> str:
    return call.action.split(":", 1)[0]


def authorizations(call: CcmCall, partition: str, *, request_tags=None, resource_tags=None, parent_tags=None,
                   create_action: str | None = None) -> list[tuple[str, str, dict]]:
    """The (action, resource ARN, context) checks IAM makes for one call."""
    request_tags = OWNED_TAGS if request_tags is None else request_tags
    resource_tags = {KEY: OWNED} if resource_tags is None else resource_tags
    parent_tags = {KEY: OWNED} if parent_tags is None else parent_tags
    svc = service_of(call)
    if call.kind == READ:
        return [(call.action, "*", {})]
    out = []
    if call.kind == CREATE:
        for rt in call.resources:  # the new resource: only the request's tags exist
            out.append((call.action, sample_arn(svc, rt, partition), request_context(request_tags)))
        if call.parent:  # an existing resource: its tags, and the request's
            out.append((call.action, sample_arn(svc, call.parent, partition),
                        {**request_context(request_tags), **resource_context(parent_tags)}))
    elif call.kind == MUTATE:
        for rt in call.resources:
            out.append((call.action, sample_arn(svc, rt, partition), resource_context(resource_tags)))
    elif call.kind == TAG:
        actions = [create_action] if create_action is not None else creates_of(svc)
        for rt in call.resources:
            for ca in actions:
                ctx = request_context(request_tags)
                if ca:
                    ctx[f"{svc}:CreateAction"] = ca
                out.append((call.action, sample_arn(svc, rt, partition), ctx))
    return out


def creates_of(service: str) -> list[str]:
    return sorted({c.action.split(":", 1)[1] for c in CCM_CALLS if c.kind == CREATE and service_of(c) == service})


def cp_doc(partition: str = "aws") -> dict:
    return iam_policy.controlplane_policy_document(CLUSTER, partition)


def call_id(call: CcmCall) -> str:
    return f"{call.action}[{call.kind}]"


@pytest.mark.parametrize("partition", sorted(PARTITIONS))
@pytest.mark.parametrize("call", CCM_CALLS, ids=call_id)
def test_every_ccm_call_is_allowed_on_what_the_cluster_owns(call, partition):
    doc = cp_doc(partition)
    checks = authorizations(call, partition)
    assert checks, call
    for action, arn, ctx in checks:
        assert decision(doc, action, arn, ctx) == ALLOW, f"{call.source}: {action} on {arn} with {ctx}"


@pytest.mark.parametrize("call", [c for c in CCM_CALLS if c.kind == READ], ids=call_id)
def test_reads_need_no_tags(call):
    assert allowed(cp_doc(), call.action, "*", {})


@pytest.mark.parametrize("tags", NOT_OWNED.values(), ids=NOT_OWNED.keys())
@pytest.mark.parametrize("call", [c for c in CCM_CALLS if c.kind in (CREATE, MUTATE, TAG)], ids=call_id)
def test_every_ccm_change_is_refused_on_what_the_cluster_does_not_own(call, tags):
    doc = cp_doc()
    if call.kind == MUTATE:
        variants = [authorizations(call, "aws", resource_tags=tags)]
    else:  # CREATE and TAG: the request does not carry this cluster's owned tag
        variants = [authorizations(call, "aws", request_tags={"kubernetes.io/service-name": "default/web", **tags})]
        if call.parent and tags.get(KEY) not in call.parent_values:  # nor is the existing parent this cluster's
            variants.append(authorizations(call, "aws", parent_tags=tags))
    for checks in variants:
        results = [decision(doc, a, arn, ctx) for a, arn, ctx in checks]
        assert any(r != ALLOW for r in results), f"{call.source}: allowed with {tags}: {checks}"


@pytest.mark.parametrize("tags", [t for n, t in NOT_OWNED.items() if n != "shared"],
                         ids=[n for n in NOT_OWNED if n != "shared"])
def test_security_groups_are_created_only_in_this_clusters_vpc(tags):
    (call,) = [c for c in CCM_CALLS if c.action == "ec2:CreateSecurityGroup"]
    doc = cp_doc()
    vpc = sample_arn("ec2", "vpc")
    ctx = {**request_context(OWNED_TAGS), **resource_context(tags)}
    assert not allowed(doc, call.action, vpc, ctx), tags
    # a bring-your-own VPC carries the cluster tag with value shared: allowed
    assert allowed(doc, call.action, vpc, {**request_context(OWNED_TAGS), **resource_context({KEY: "shared"})})


def test_listeners_are_added_only_to_owned_load_balancers():
    doc = cp_doc()
    nlb = sample_arn("elasticloadbalancing", "loadbalancer/net/")
    owned_request = request_context(OWNED_TAGS)
    assert allowed(doc, "elasticloadbalancing:CreateListener", nlb, {**owned_request, **resource_context({KEY: OWNED})})
    for name, tags in NOT_OWNED.items():
        assert not allowed(doc, "elasticloadbalancing:CreateListener", nlb, {**owned_request, **resource_context(tags)}), name


@pytest.mark.parametrize("call", [c for c in CCM_CALLS if c.kind == TAG], ids=call_id)
def test_tag_on_create_never_tags_an_existing_resource(call):
    doc = cp_doc()
    svc = service_of(call)
    for rt in call.resources:
        arn = sample_arn(svc, rt)
        # an existing resource, even one this cluster owns, tagged with the owned tag: no create action
        ctx = {**request_context(OWNED_TAGS), **resource_context({KEY: OWNED})}
        assert not allowed(doc, call.action, arn, ctx), f"{call.action} on existing {rt}"
        # nor under another service action's name
        other = {**request_context(OWNED_TAGS), f"{svc}:CreateAction": "RunInstances" if svc == "ec2" else "CreateRule"}
        assert not allowed(doc, call.action, arn, other), f"{call.action} for a create the CCM does not make"


def test_ec2_tags_only_security_groups_on_create():
    doc = cp_doc()
    ctx = {**request_context(OWNED_TAGS), "ec2:CreateAction": "CreateSecurityGroup"}
    assert allowed(doc, "ec2:CreateTags", sample_arn("ec2", "security-group"), ctx)
    for rt in ("instance", "vpc", "subnet", "route-table", "volume"):
        assert not allowed(doc, "ec2:CreateTags", sample_arn("ec2", rt), ctx), rt
    # the tagging controller's calls (off by default) and read-repair of an untagged group are refused
    assert not allowed(doc, "ec2:CreateTags", sample_arn("ec2", "instance"), request_context({"team": "a"}))
    assert not allowed(doc, "ec2:CreateTags", sample_arn("ec2", "security-group"), request_context({KEY: OWNED}))
    assert "ec2:DeleteTags" not in iam_policy.actions_for("controlplane")


def test_annotation_tags_on_owned_load_balancer_never_touch_cluster_tags():
    doc = cp_doc()
    clb = sample_arn("elasticloadbalancing", "loadbalancer")
    owned = resource_context({KEY: OWNED})
    assert allowed(doc, "elasticloadbalancing:AddTags", clb, {**owned, **request_context({"team": "a"})})
    for tags in ({KEY: "shared"}, {OTHER_KEY: OWNED}, {"team": "a", KEY: OWNED}):
        assert not allowed(doc, "elasticloadbalancing:AddTags", clb, {**owned, **request_context(tags)}), tags
    for name, tags in NOT_OWNED.items():
        assert not allowed(doc, "elasticloadbalancing:AddTags", clb, {**resource_context(tags), **request_context({"team": "a"})}), name


@pytest.mark.parametrize("partition", sorted(PARTITIONS))
def test_service_linked_role_only_for_elastic_load_balancing(partition):
    doc = cp_doc(partition)
    role = sample_arn("iam", "role", partition)
    elb = {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}
    assert allowed(doc, "iam:CreateServiceLinkedRole", role, elb)
    assert not allowed(doc, "iam:CreateServiceLinkedRole", role, {})
    for other in ("autoscaling.amazonaws.com", "ec2.amazonaws.com", "ELASTICLOADBALANCING.amazonaws.com"):
        assert not allowed(doc, "iam:CreateServiceLinkedRole", role, {"iam:AWSServiceName": other}), other
    asg_role = role.replace("elasticloadbalancing.amazonaws.com/AWSServiceRoleForElasticLoadBalancing",
                            "autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling")
    assert not allowed(doc, "iam:CreateServiceLinkedRole", asg_role, elb)


@pytest.mark.parametrize("partition", sorted(PARTITIONS))
def test_arns_carry_the_partition(partition):
    doc = cp_doc(partition)
    arns = [r for s in doc["Statement"] for r in iam_eval._strings(s["Resource"]) if r != "*"]
    assert arns and all(r.startswith(f"arn:{partition}:") for r in arns), arns
    # a resource of another partition is not covered
    wrong = "aws-cn" if partition == "aws" else "aws"
    call = next(c for c in CCM_CALLS if c.action == "ec2:DeleteSecurityGroup")
    ((action, arn, ctx),) = authorizations(call, wrong)
    assert not allowed(doc, action, arn, ctx)


def test_policy_does_not_depend_on_anything_but_cluster_and_partition():
    assert iam_policy.controlplane_policy_document("c1") == iam_policy.controlplane_policy_document("c1", "aws")
    assert KEY in json.dumps(cp_doc()) and OTHER_KEY not in json.dumps(cp_doc())
    assert iam_policy.controlplane_policy_document("c2") != cp_doc()
    assert json.loads(iam_policy.policy_json("controlplane", "c1", "aws-cn")) == cp_doc("aws-cn")


# --- the action set ------------------------------------------------------------------------------

ROUTE_ONLY = ("ec2:CreateRoute", "ec2:DeleteRoute", "ec2:ModifyInstanceAttribute")


def test_route_only_and_fake_actions_absent_nlb_and_zone_actions_present():
    actions = {a.lower() for a in iam_policy.actions_for("controlplane")}
    for absent in ROUTE_ONLY + ("autoscaling:DescribeAutoScalingGroup",):
        assert absent.lower() not in actions, absent
        assert not any(allowed(cp_doc(), absent, arn, ctx) for arn, ctx in (
            ("*", {}), (sample_arn("ec2", "route-table"), resource_context({KEY: OWNED})),
            (sample_arn("ec2", "instance"), resource_context({KEY: OWNED})))), absent
    for present in ("ec2:DescribeAvailabilityZones", "elasticloadbalancing:DescribeTargetGroupAttributes",
                    "elasticloadbalancing:ModifyTargetGroupAttributes"):
        assert present.lower() in actions, present


def test_policy_grants_what_the_ccm_can_call_minus_what_is_dropped_or_refused_with_evidence():
    """Against the CCM's own client interfaces (tests/data/upstream/cloud-provider-aws: every EC2,
    ELB, ELBV2 and KMS call its code can make), not against CCM_CALLS, the table the policy is built
    from: nothing granted the CCM cannot call (besides the service-linked role ELB creates on its
    behalf), and every call it can make granted, or dropped or refused with the reason written down."""
    from tests.support import upstream

    callable_ = upstream.ccm_callable_actions()
    granted = set(iam_policy.actions_for("controlplane"))
    assert granted - callable_ == {iam_policy.SERVICE_LINKED_ROLE_ACTION}, sorted(granted - callable_)
    refused = {a for reason in iam_policy.REFUSED_CALLS for a in re.findall(r"\b[a-z0-9]+:[A-Za-z]+\b", reason)}
    for action in sorted(callable_ - granted):
        assert action in iam_policy.DROPPED_ACTIONS or action in refused, f"{action}: the CCM calls it, never granted or explained"
    assert not (set(iam_policy.DROPPED_ACTIONS) & callable_) & granted


# kubernetes/cloud-provider-aws docs/prerequisites.md adds these to Rancher's list; without
# DescribeAvailabilityZones node initialisation fails outright.
UPSTREAM_CONTROLPLANE_ADDITIONS = (
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeInstanceTopology",
    "elasticloadbalancing:DeregisterTargets",
    "elasticloadbalancing:SetSecurityGroups",
)
# The current CCM calls these on NLB syncs (pkg/providers/v1, since v1.32); neither list has them.
CCM_NLB_ACTIONS = (
    "elasticloadbalancing:DescribeTargetGroupAttributes",
    "elasticloadbalancing:ModifyTargetGroupAttributes",
)


def test_every_seed_and_upstream_action_is_granted_or_dropped_with_evidence():
    from tests.support import upstream

    granted = {a.lower() for a in iam_policy.actions_for("controlplane")}
    listed = (tuple(upstream.rancher_seed_policies()["controlplane"]) + UPSTREAM_CONTROLPLANE_ADDITIONS
              + CCM_NLB_ACTIONS)
    for action in listed:
        assert (action.lower() in granted) != (action in iam_policy.DROPPED_ACTIONS), action
    assert set(iam_policy.DROPPED_ACTIONS) <= set(listed)
    assert not {a.lower() for a in iam_policy.DROPPED_ACTIONS} & granted


def test_ccm_calls_are_well_formed():
    for call in CCM_CALLS:
        assert call.kind in (READ, CREATE, MUTATE, TAG), call
        assert re.match(r"^[a-z_]+(/[a-z_]+)*\.go:\d+", call.source), call.source
        assert (call.kind == READ) == (not call.resources and not call.parent), call
        for rt in call.resources + ((call.parent,) if call.parent else ()):
            assert rt in action_entry(call.action).get("Resources", []), (call.action, rt)


@lru_cache(maxsize=1)
def known_actions() -> set[str]:
    return {f"{svc}:{action}" for svc, actions in rules.action_database().items() for action in actions}


@pytest.mark.parametrize("role", ["controlplane", "worker"])
def test_no_action_outside_the_action_database(role):
    unknown = [a for a in iam_policy.actions_for(role) if a.lower() not in known_actions()]
    assert not unknown, unknown
    assert not rules.unknown_actions(iam_policy.actions_for(role))


@pytest.mark.parametrize("role", ["controlplane", "worker"])
def test_documents_pass_the_policy_pack_iam_rules(role):
    from tests.support.policies import POLICY, run_resource_policy

    urn = f"urn:pulumi:dev::rke-aws::rke-aws:iam:NodeIam$aws:iam/rolePolicy:RolePolicy::c1-{role}-cloud-provider"
    props = {"role": f"c1-{role}", "policy": iam_policy.policy_json(role, CLUSTER, "aws-us-gov")}
    for name in ("iam-no-wildcard-actions", "iam-no-passrole-on-any-resource", "iam-known-actions"):
        assert not run_resource_policy(POLICY[name], rules.IAM_ROLE_POLICY, urn, props), name


def test_worker_policy_is_the_read_only_seed():
    from tests.support import upstream

    doc = iam_policy.worker_policy_document(CLUSTER, "aws-cn")
    documented = upstream.rancher_seed_policies()["worker"]
    assert iam_policy.actions_for("worker") == iam_policy.normalise(documented)
    assert all(s["Resource"] == "*" and "Condition" not in s for s in doc["Statement"])
    for action in documented:
        assert allowed(doc, action, "*", {})
    assert not allowed(doc, "ec2:DescribeAvailabilityZones", "*", {})


@pytest.mark.parametrize("role", ["controlplane", "worker"])
def test_documents_are_well_formed(role):
    doc = iam_policy.policy_document_for(role, CLUSTER)
    assert doc["Version"] == "2012-10-17"
    sids = [s["Sid"] for s in doc["Statement"]]
    assert len(sids) == len(set(sids)) and all(re.fullmatch(r"[A-Za-z0-9]+", s) for s in sids), sids
    for stmt in doc["Statement"]:
        assert stmt["Effect"] == "Allow"
        assert stmt["Action"] == iam_policy.normalise(stmt["Action"]), stmt["Sid"]


# --- condition keys against the service reference -------------------------------------------------

# cfn-lint's Policies.json carries, per service, `Actions: {name: {Resources: [resource types]}}` and
# `Resources: {type: {ARNFormats, ConditionKeys}}`: only the condition keys of *resource types*, not
# the action-level keys of the reference's Actions table. Keys a statement uses that no covered
# resource type lists must be action-level keys, each listed here with where AWS documents it.
ACTION_LEVEL_KEYS = {
    # ELB service authorization reference, Actions table (create actions support tag-on-create);
    # the same keys kops' strict CCM policy puts on these actions (iam_builder.go clusterTaggedCreateAction).
    ("elasticloadbalancing:CreateLoadBalancer", "aws:RequestTag/${TagKey}"),
    ("elasticloadbalancing:CreateTargetGroup", "aws:RequestTag/${TagKey}"),
    ("elasticloadbalancing:CreateListener", "aws:RequestTag/${TagKey}"),
    # ELB user guide "Tag resources during creation": AddTags with elasticloadbalancing:CreateAction;
    # aws-load-balancer-controller docs/install/iam_policy.json uses it with aws:RequestTag on AddTags.
    ("elasticloadbalancing:AddTags", "elasticloadbalancing:CreateAction"),
    ("elasticloadbalancing:AddTags", "aws:RequestTag/${TagKey}"),
    ("elasticloadbalancing:AddTags", "aws:TagKeys"),
    # EC2 reference: CreateTags has the ec2:CreateAction key (kops AddEC2CreateAction, the LB controller).
    ("ec2:CreateTags", "ec2:CreateAction"),
    # IAM reference: CreateServiceLinkedRole has iam:AWSServiceName.
    ("iam:CreateServiceLinkedRole", "iam:AWSServiceName"),
}


def key_template(key: str) -> str:
    for prefix in ("aws:RequestTag/", "aws:ResourceTag/"):
        if key.startswith(prefix):
            return prefix + "${TagKey}"
    return key


def covered_resource_types(stmt: dict, action: str) -> list[str]:
    service = action.split(":", 1)[0]
    types = action_entry(action).get("Resources", [])
    patterns = iam_eval._strings(stmt["Resource"])
    if patterns == ["*"]:
        return types
    return [t for t in types if any(iam_eval._wildcard(p, sample_arn(service, t)) for p in patterns)]


def test_service_reference_structure_is_what_the_checks_assume():
    ref = rules.iam_reference()
    assert set(ref["ec2"]) == {"Actions", "Resources"}
    assert set(ref["elasticloadbalancing"]["Resources"]["targetgroup"]) == {"ARNFormats", "ConditionKeys"}
    assert action_entry("ec2:CreateSecurityGroup") == {"Resources": ["security-group", "vpc"]}
    assert "aws:ResourceTag/${TagKey}" in resource_entry("ec2", "vpc")["ConditionKeys"]


@pytest.mark.parametrize("partition", sorted(PARTITIONS))
def test_statement_resources_cover_the_actions_resource_types(partition):
    for stmt in cp_doc(partition)["Statement"]:
        for action in stmt["Action"]:
            if stmt["Resource"] != "*":
                service = action.split(":", 1)[0]
                types = [t for t in action_entry(action).get("Resources", [])
                         if any(iam_eval._wildcard(p, sample_arn(service, t, partition)) for p in iam_eval._strings(stmt["Resource"]))]
                assert types, f"{stmt['Sid']}: {stmt['Resource']} matches no resource type of {action}"


def test_every_condition_key_is_supported_by_the_action():
    used = set()
    for stmt in cp_doc()["Statement"]:
        keys = {key_template(k) for block in (stmt.get("Condition") or {}).values() for k in block}
        for action in stmt["Action"]:
            types = covered_resource_types(stmt, action)
            service = action.split(":", 1)[0]
            resource_keys = {k for t in types for k in resource_entry(service, t).get("ConditionKeys", [])}
            for key in keys:
                if key in resource_keys:
                    continue
                assert (action, key) in ACTION_LEVEL_KEYS, (
                    f"{stmt['Sid']}: {key} is not a condition key of {action} on {types} in the service reference")
                used.add((action, key))
    assert used == ACTION_LEVEL_KEYS, f"documented action-level keys no statement uses: {ACTION_LEVEL_KEYS - used}"
