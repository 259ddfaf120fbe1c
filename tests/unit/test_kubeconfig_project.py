"""`rke-aws kubeconfig` in a project of the user's own: the stack's keys are read in that project's namespace
(its name in Pulumi.yaml), not in this repository's (docs/getting-started.md: `rke-aws kubeconfig dev` in
project my-cluster)."""

from __future__ import annotations

from rke_aws.ops import kubeconfig as kube


def test_the_stack_is_read_in_the_projects_namespace():
    raw = {"aws:region": "eu-west-1", "my-cluster:distribution": "rke2", "my-cluster:clusterId": "blue"}
    cfg = kube.stack_settings("dev", raw, project="my-cluster")
    assert (cfg.distribution, cfg.cluster_id, cfg.region) == ("rke2", "blue", "eu-west-1")


def test_this_repositorys_stacks_keep_their_namespace():
    raw = {"aws:region": "us-east-1", "rke-aws:distribution": "rke2"}
    assert kube.stack_settings("rke2-dev", raw).cluster_id == "rke2-dev"
