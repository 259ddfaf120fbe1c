"""Machines checked before RunInstances: architectures (RKE2 arm64 from its first complete arm64 release),
instance types EC2 does not know (with the closest one the account offers), and look-up failures said in the
user's words: which AWS call, what IAM action it needs, offline or real (issue 34 item 7)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from rke_aws.plan import machine_checks, network, nodes
from rke_aws.plan.lookups import LookupFailed, explain, instance_type_suggestion
from rke_aws.settings import versions
from rke_aws.settings.resolve import ClusterConfig
from tests.support.fake_lookups import FakeLookups, environment
from tests.support.stackconfig import parse_flat


def stack(pools: list[dict], **keys: str) -> ClusterConfig:
    raw = {"rke-aws:distribution": "rke2", "rke-aws:clusterId": "c", "rke-aws:nodePools": json.dumps(pools),
           **{f"rke-aws:{k}": v for k, v in keys.items()}}
    return parse_flat(raw, project="rke-aws", stack="c", region="us-west-2")


POOLS = [{"name": "servers", "roles": ["controlplane", "etcd"], "count": 1, "instanceType": "m6i.large"},
         {"name": "agents", "roles": ["worker"], "count": 1, "instanceType": "m6i.xlarg"}]


@pytest.mark.parametrize("version, refused", [
    ("v1.27.9+rke2r1", True), ("v1.27.10+rke2r1", False), ("v1.26.15+rke2r1", True), (versions.RKE2_VERSION, False),
])
def test_rke2_on_graviton_from_the_release_with_arm64_images(version, refused):
    pools = (SimpleNamespace(name="arm", instance_type="m7g.large"), SimpleNamespace(name="x86", instance_type="m6i.large"))
    cfg = SimpleNamespace(distribution="rke2", kubernetes_version=version, node_pools=pools)
    problems = machine_checks.architecture_problems(cfg, {"arm": "arm64", "x86": "x86_64"})
    assert bool(problems) is refused, problems
    if refused:
        (p,) = problems
        assert (p.key, p.code) == ("nodePools[arm].instanceType", "pool.arm64-too-old")
        assert p.render().startswith("rke-aws:nodePools[arm].instanceType: 'm7g.large' is an arm64 (Graviton) type")


def test_a_misspelt_instance_type_gets_the_closest_type_the_account_offers():
    """EC2 answers InvalidInstanceType for a type it does not know (DescribeInstanceTypes); the account's own
    list of the family's types (DescribeInstanceTypes with the instance-type filter, wildcards allowed: EC2 API
    Reference, DescribeInstanceTypes "Filter.N") gives the closest name."""
    cfg = stack(POOLS)
    lookups = FakeLookups()
    env = environment(lookups)
    machines = nodes.plan(cfg, None, network.plan(cfg, None, env))
    archs, _, images = machine_checks.architectures_and_images(cfg, env)
    found = machine_checks.judge(cfg, None, machines, archs, images, env)
    (problem,) = found.problems
    assert (problem.key, problem.code, problem.value) == ("nodePools[agents].instanceType", "lookup.instance-type", "m6i.xlarg")
    assert "did you mean m6i.xlarge?" in problem.message
    assert ("instance_types", ("m6i.*",)) in lookups.calls


def test_a_misspelt_family_is_looked_for_among_every_type():
    assert instance_type_suggestion("m6x.large", FakeLookups().instance_types) in ("m6i.large", "m5.large")
    assert instance_type_suggestion("zzz", FakeLookups().instance_types) is None


def test_suggestions_are_left_out_when_the_list_cannot_be_read():
    lookups = FakeLookups(fail={"instance_types": "UnauthorizedOperation: You are not authorized"})
    assert instance_type_suggestion("m6i.xlarg", lookups.instance_types) is None


SDK_ERROR = ("invoke of aws:ec2/getInstanceType:getInstanceType failed: invoke of aws:ec2/getInstanceType:getInstanceType "
             "failed: reading EC2 Instance Type (m6i.large): operation error EC2: DescribeInstanceTypes, https response error "
             "StatusCode: 403, RequestID: 1, api error UnauthorizedOperation: You are not authorized to perform this operation")


def test_a_failed_look_up_names_the_aws_call_and_the_iam_action_it_needs():
    failure = LookupFailed("aws:ec2/getInstanceType:getInstanceType", SDK_ERROR)
    assert failure.kind == "access-denied"
    assert failure.detail == "UnauthorizedOperation: You are not authorized to perform this operation"
    happened, todo = explain(failure, offline=False, fix="use another type")
    assert happened == ("DescribeInstanceTypes in AWS answered UnauthorizedOperation: You are not authorized to "
                        "perform this operation")
    assert todo == "these credentials may not call DescribeInstanceTypes: allow ec2:DescribeInstanceTypes in their IAM policy"
    assert "invoke of" not in happened and "RequestID" not in happened


@pytest.mark.parametrize("error", [
    "invoke of aws:index/getCallerIdentity:getCallerIdentity failed: get identity: get credentials: failed to refresh "
    "cached credentials, no EC2 IMDS role found",
    "No valid credential sources found",
])
def test_missing_credentials_are_said_so_for_a_real_account_and_never_offline(error):
    failure = LookupFailed("aws:index/getCallerIdentity:getCallerIdentity", error)
    assert failure.kind == "credentials"
    happened, todo = explain(failure, offline=False, fix="check aws:region")
    assert "found no usable AWS credentials" in happened and "AWS_PROFILE" in todo
    happened, todo = explain(failure, offline=True, fix="check aws:region")
    assert happened.startswith("GetCallerIdentity in the emulated account answered") and todo == "check aws:region"


def test_an_offline_failure_names_the_emulated_account():
    failure = LookupFailed("aws:ec2/getKeyPair:getKeyPair", "invoke of aws:ec2/getKeyPair:getKeyPair failed: "
                           "InvalidKeyPair.NotFound: The key pair 'k' does not exist")
    happened, todo = explain(failure, offline=True, fix="import it")
    assert happened == ("DescribeKeyPairs in the emulated account answered InvalidKeyPair.NotFound: The key pair 'k' "
                        "does not exist") and todo == "import it"
