"""IRSA trust policies, service-account names and the `*`-on-`*` refusal (components/plan/identity_roles.py),
evaluated with the suite's IAM evaluator: the right service account with the right audience through
the right provider, and nothing else."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws.plan import identity_issuer as issuer
from rke_aws.plan import identity_roles as roles
from tests.support import resource_policy as rp
from tests.support.properties import examples

ISSUER = "https://rke-aws-irsa-c1.s3.us-gov-west-1.amazonaws.com"
HOST = issuer.host_path(ISSUER)
PROVIDER = issuer.provider_arn("aws-us-gov", "123456789012", ISSUER)
ROLE = "arn:aws-us-gov:iam::123456789012:role/ebs-csi"
POLICY = roles.trust_policy(PROVIDER, ISSUER, "kube-system", "ebs-csi-controller-sa")


def assume(sub: str, aud: str = issuer.STS_AUDIENCE, provider: str = PROVIDER) -> str:
    return rp.decision(POLICY, ("Federated", provider), "sts:AssumeRoleWithWebIdentity", ROLE,
                       {f"{HOST}:sub": sub, f"{HOST}:aud": aud})


def test_the_right_service_account_assumes_the_role():
    assert assume("system:serviceaccount:kube-system:ebs-csi-controller-sa") == rp.ALLOW


@pytest.mark.parametrize("sub", [
    "system:serviceaccount:kube-system:ebs-csi-node-sa",  # another name, same namespace
    "system:serviceaccount:default:ebs-csi-controller-sa",  # the same name in another namespace
    "system:serviceaccount:kube-system:*",  # a wildcard-looking name: StringEquals takes it literally
    "system:serviceaccount:kube-system:ebs-csi-controller-sa-2",
    "system:serviceaccount:kube-system:EBS-CSI-CONTROLLER-SA",
])
def test_wrong_service_accounts_do_not(sub):
    assert assume(sub) != rp.ALLOW


def test_wrong_audience_or_provider_does_not():
    good = "system:serviceaccount:kube-system:ebs-csi-controller-sa"
    assert assume(good, aud="amazonaws.com") != rp.ALLOW
    assert assume(good, provider=PROVIDER.replace("c1", "c2")) != rp.ALLOW
    assert rp.decision(POLICY, ("Federated", PROVIDER), "sts:AssumeRole", ROLE,
                       {f"{HOST}:sub": good, f"{HOST}:aud": issuer.STS_AUDIENCE}) != rp.ALLOW


def test_trust_policy_shape():
    (stmt,) = POLICY["Statement"]
    assert stmt["Principal"] == {"Federated": PROVIDER}
    assert stmt["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert list(stmt["Condition"]) == ["StringEquals"]  # never StringLike
    assert "*" not in json.dumps(stmt["Condition"])
    assert PROVIDER.startswith("arn:aws-us-gov:iam::")
    with pytest.raises(ValueError):
        roles.trust_policy(PROVIDER, ISSUER, "kube-system", "*")
    with pytest.raises(ValueError):
        roles.trust_policy(PROVIDER.replace("c1", "c2"), ISSUER, "kube-system", "x")


# --- names ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["kube-system/ebs-csi-controller-sa", "a/b", "team-1/svc.v2", f"{'a' * 63}/{'b' * 63}"])
def test_names_kubernetes_accepts(value):
    parsed, problems = roles.parse_service_account(value)
    assert problems == [] and parsed == tuple(value.split("/"))


@pytest.mark.parametrize("value,why", [
    ("ebs-csi", "<namespace>/<name>"),
    ("a/b/c", "<namespace>/<name>"),
    ("Kube-System/x", "namespace"),
    ("kube.system/x", "namespace"),  # a namespace is a label: no dots
    (f"{'a' * 64}/x", "namespace"),
    ("ns/-x", "name"),
    ("ns/x-", "name"),
    ("ns/*", "name"),
    ("ns/a*b", "name"),
    ("ns/a..b", "name"),
    ("ns/", "name"),
    (f"ns/{'a' * 254}", "name"),
    ("/x", "namespace"),
])
def test_names_kubernetes_refuses(value, why):
    parsed, problems = roles.parse_service_account(value)
    assert parsed is None and any(why in p for p in problems), problems


DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")  # k8s.io/apimachinery validation.go dns1123LabelFmt


def kubernetes_accepts(namespace: str, name: str) -> bool:
    """IsDNS1123Label(namespace) and IsDNS1123Subdomain(name), as apimachinery writes them."""
    label_ok = len(namespace) <= 63 and DNS_LABEL.match(namespace) is not None
    sub_ok = 0 < len(name) <= 253 and all(DNS_LABEL.match(p) and len(p) <= 63 for p in name.split("."))
    return label_ok and sub_ok


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet="abz09-.*/_A", max_size=20), st.text(alphabet="abz09-.*_A", max_size=70))
def test_property_names_follow_kubernetes(namespace, name):
    parsed, _ = roles.parse_service_account(f"{namespace}/{name}")
    assert (parsed is not None) == kubernetes_accepts(namespace, name)
    if parsed is not None:
        assert not set("*?") & set("".join(parsed))


# --- role policies ---------------------------------------------------------------------------------------

def test_every_action_on_every_resource_needs_the_override():
    admin = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})
    problems = roles.policy_problems(admin, allow_unbounded=False)
    assert problems and "allowAllActions" in problems[0]
    assert roles.policy_problems(admin, allow_unbounded=True) == []
    for stmt in ({"Effect": "Allow", "Action": ["s3:GetObject", "*:*"], "Resource": ["*"]},
                 {"Sid": "Most", "Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}):
        assert roles.policy_problems({"Statement": [stmt]}, False), stmt
    for ok in ({"Effect": "Allow", "Action": "*", "Resource": "arn:aws:s3:::b/*"},
               {"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
               {"Effect": "Deny", "Action": "*", "Resource": "*"}):
        assert roles.policy_problems({"Statement": [ok]}, False) == [], ok
    assert "not JSON" in roles.policy_problems("{", False)[0]
    assert roles.policy_problems({"Version": "2012-10-17"}, False)
