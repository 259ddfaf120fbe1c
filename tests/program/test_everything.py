"""The fixture stack with every feature at once (tests/stacks/Pulumi.rke2-everything.yaml, issue 26):
each feature is really in its plan, and the plan stays within the AWS limits the project tests. The
stack-wide tests (test_program, test_policies, test_snapshots, ...) run on it like on every stack."""
from __future__ import annotations

import pytest

from rke_aws.node import cloud_init
from rke_aws_offline.engine.emulated.provider_checks import EC2_USER_DATA_LIMIT, ubuntu_image_id
from tests.support.runs import run_stack_cached
from tests.support.userdata import raw, user_data

STACK = "rke2-everything"
CID = "everything-at-once-prod"  # its clusterId names the resources
INSTANCE = "aws:ec2/instance:Instance"


@pytest.fixture(scope="module")
def run():
    return run_stack_cached(STACK)


def test_every_feature_is_in_the_plan(run):
    instances = {r.name: r for r in run.of_type(INSTANCE)}
    spot = [n for n, r in instances.items() if r.inputs.get("instanceMarketOptions")]
    assert sorted(spot) == [f"{CID}-spot-0", f"{CID}-spot-1"]
    assert {instances[f"{CID}-graviton-{i}"].inputs["ami"] for i in (0, 1)} == {
        ubuntu_image_id(run.config["aws:region"], "arm64")}  # Canonical's arm64 image in the emulated account
    texts = {n: user_data(r) for n, r in instances.items()}
    assert all("disable-etcd" in texts[f"{CID}-control-plane-{i}"] for i in (0, 1))
    assert all("disable-apiserver" in texts[f"{CID}-etcd-{i}"] for i in (0, 1, 2))
    assert all("proxy.corp.example:3128" in t for t in texts.values())
    assert [r for r in run.resources if r.type == "rancher2:index/cluster:Cluster"]
    assert "rancherCluster" in run.outputs


def test_the_plan_stays_within_ec2s_user_data_limit_with_margin(run):
    sizes = {r.name: len(raw(r)) for r in run.of_type(INSTANCE)}
    assert max(sizes.values()) <= cloud_init.USER_DATA_BUDGET <= 0.75 * EC2_USER_DATA_LIMIT, sizes
