"""Kubernetes versions through the program, day 2: a new default leaves a running stack on its release, and an
unsafe etcd step is refused before anything is registered (the rules themselves: tests/unit/plan/test_releases.py)."""

from __future__ import annotations

import copy

import pulumi
import pytest

from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support.configs import set_key
from tests.support.runs import run_cached

INSTANCE = "aws:ec2/instance:Instance"
KUBECONFIG = "apiVersion: v1\nkind: Config\n"


@pytest.mark.reads_stacks
def test_a_new_default_leaves_a_running_stack_on_its_release():
    """Day 2 through the program: a stack deployed when the default was v1.33.5 keeps it. With a
    kubeconfig (set here, whatever stacks/ holds) the upgrade Plans exist, and stay on that release."""
    cfg = set_key(harness.stack_config("rke2-prod"), "kubeconfig", stackfile.secret("apiVersion: v1\nkind: Config\n"))
    pinned = set_key(copy.deepcopy(cfg), "kubernetesVersion", "v1.33.5+rke2r1")
    before = run_cached(pinned, stack="rke2-prod")  # what the old default deployed (shared: only its outputs are read)
    assert before.outputs["kubernetesVersion"] == "v1.33.5+rke2r1"
    after = harness.run_program(cfg, stack="rke2-prod", previous_outputs=before.outputs)  # kubernetesVersion unset
    assert after.outputs["kubernetesVersion"] == "v1.33.5+rke2r1"
    old = {i.urn: i.inputs for i in before.of_type(INSTANCE)}
    assert all(i.inputs == old[i.urn] for i in after.of_type(INSTANCE))
    plans = {r.name: r.inputs["spec"]["version"] for r in after.resources if r.type == "kubernetes:upgrade.cattle.io/v1:Plan"}
    assert plans and set(plans.values()) == {"v1.33.5+rke2r1"}, plans
    assert any("stays on v1.33.5+rke2r1" in m for _, m in after.logs), after.logs


def test_an_unsafe_upgrade_is_refused_before_anything_is_registered():
    cfg = set_key(harness.stack_config("rke2-prod"), "kubeconfig", stackfile.secret(KUBECONFIG))
    cfg = set_key(cfg, "kubernetesVersion", "v1.33.5+rke2r1")
    before = run_cached(cfg, stack="rke2-prod")  # the same first run as the test above, shared (outputs read only)
    mocks = MotoMocks(cfg["aws:region"])
    with pytest.raises(pulumi.RunError, match=r"set kubernetesVersion to v1.33.10\+rke2r3 \(etcd 3.5.26\) first"):
        harness.run_program(set_key(copy.deepcopy(cfg), "kubernetesVersion", "v1.33.11+rke2r1"), stack="rke2-prod",
                            mocks=mocks, previous_outputs=before.outputs)
    assert mocks.resources == [], "registered before refusing"


