"""The deploy workflow's wait for the published kubeconfig (.github/workflows/deploy.yml, step `kubeconfig`) reads
stack outputs by name: the program must export exactly those (tests/tooling/test_workflows.py runs the step)."""

from __future__ import annotations

from rke_aws_offline.engine import harness
from tests.support.configs import set_key
from tests.support.runs import run_stack_cached


def test_the_published_kubeconfig_wait_matches_what_the_program_exports():
    run = harness.run_program(set_key(harness.stack_config("rke2-govcloud"), "ccm", {"install": "helm"}), stack="new")
    assert {"rke2KubeconfigParameter", "region"} <= set(run.outputs) and "rke2ManifestPath" not in run.outputs
    assert "installedInCluster" not in run.outputs  # nothing installed without a kubeconfig
    assert "installedInCluster" in run_stack_cached("rke-phase2").outputs
    assert "rke2ManifestPath" in run_stack_cached("rke2-govcloud").outputs
