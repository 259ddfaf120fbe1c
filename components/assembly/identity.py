"""Workload identity (identity.serviceAccounts irsa): the issuer, its key and provider, the configured roles
(components/aws/identity.py), and what the servers read and boot with (plan/identity.py decides)."""

from __future__ import annotations

import pulumi

from ..aws.identity import WorkloadIdentity, WorkloadIdentityArgs
from ..node.rke1_cluster import Rke1Identity
from ..node.rke2_config import Rke2Identity
from ..plan.model import ClusterSpec


def build(name: str, spec: ClusterSpec, child: pulumi.ResourceOptions) -> WorkloadIdentity | None:
    cfg, cluster = spec.config, spec.plan
    if cluster.identity is None:
        return None
    return WorkloadIdentity(name, WorkloadIdentityArgs(cluster_id=cfg.cluster_id, plan=cluster.identity,
                                                       partition=cfg.partition.name, extra_tags=cfg.tags), child)


def rke2_identity(spec: ClusterSpec, identity: WorkloadIdentity | None) -> Rke2Identity | None:
    """What the API servers boot with: the issuer's arguments and the parameters of the key files (the private
    key only once they sign with it)."""
    plan = spec.plan.identity
    if plan is None or identity is None:
        return None
    generations = f"trusted {','.join(map(str, plan.trusted))} signs {plan.signer if plan.signer is not None else 'none'}"
    return Rke2Identity(plan.issuer_url, plan.signing, plan.key_parameter if plan.signing else None,
                        plan.trusted_parameter, generations)


def rke1_identity(spec: ClusterSpec, identity: WorkloadIdentity | None) -> Rke1Identity | None:
    """RKE1: cluster.yml's issuer flags and the parameters the controlplane nodes fetch the key files from (both
    always: `rke up` never rewrites them, so they must be on the hosts before the servers sign)."""
    plan = spec.plan.identity
    cfg = spec.config
    if plan is None or identity is None or cfg.distribution != "rke":
        return None
    return Rke1Identity(plan.issuer_url, plan.signing, plan.key_parameter, plan.trusted_parameter, cfg.region,
                        cfg.partition.endpoint("ssm", cfg.region))
