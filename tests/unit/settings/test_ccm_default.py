"""Issue 34.8: a new RKE2 cluster converges in one `pulumi up`, so its CCM is installed from the manifests its
servers mirror (manifest mode) unless the stack says otherwise; RKE1 has no manifest directory (rke docs: add-ons
go through the kubeconfig), so it stays a Helm release; a running cluster keeps what its state records, so
removing or never having had the key changes nothing that runs (the mode switch itself stays guarded)."""

from __future__ import annotations

import json

import pytest

from rke_aws.settings.resolve import Running, from_flat

POOLS = [{"name": "server", "roles": ["controlplane", "etcd"], "count": 1},
         {"name": "agents", "roles": ["worker"], "count": 1}]


def _config(distribution: str, **extra: str) -> dict[str, str]:
    return {"aws:region": "us-west-2", "rke-aws:distribution": distribution, "rke-aws:clusterId": "c1",
            "rke-aws:nodePools": json.dumps(POOLS), **extra}


@pytest.mark.parametrize("distribution, mode", [("rke2", "manifest"), ("rke", "helm")])
def test_a_new_cluster_gets_its_distributions_default(distribution, mode):
    assert from_flat(_config(distribution), project="rke-aws", stack="c1").ccm.install == mode


@pytest.mark.parametrize("recorded", ["helm", "manifest"])
def test_a_running_cluster_keeps_what_its_state_records(recorded):
    running = Running(kubernetes_version=None, etcd_members=1, ccm_install=recorded)
    assert from_flat(_config("rke2"), project="rke-aws", stack="c1", running=running).ccm.install == recorded


@pytest.mark.parametrize("given", ["helm", "manifest"])
def test_what_the_stack_says_wins(given):
    cfg = _config("rke2", **{"rke-aws:ccm": json.dumps({"install": given})})
    running = Running(kubernetes_version=None, etcd_members=1, ccm_install="manifest" if given == "helm" else "helm")
    assert from_flat(cfg, project="rke-aws", stack="c1").ccm.install == given
    assert from_flat(cfg, project="rke-aws", stack="c1", running=running).ccm.install == given
