"""The network, the node security group and the control-plane endpoint."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from ..aws.endpoint import ControlPlaneEndpoint, ControlPlaneEndpointArgs
from ..aws.network import Network, NetworkArgs
from ..aws.security import ClusterSecurityGroup, ClusterSecurityGroupArgs
from ..plan.model import ClusterSpec
from ..plan.names import KUBE_API_PORT, RKE2_SUPERVISOR_PORT
from . import preflight


@dataclass(frozen=True)
class Foundation:
    network: Network
    security: ClusterSecurityGroup
    endpoint: ControlPlaneEndpoint


def build(name: str, spec: ClusterSpec, child: pulumi.ResourceOptions) -> Foundation:
    cfg, cluster = spec.config, spec.plan
    rke2 = cfg.distribution == "rke2"
    network = Network(name, NetworkArgs(
        cluster_id=cfg.cluster_id, network=cfg.network, subnets=cluster.subnets, extra_tags=cfg.tags,
        legacy_subnet_keys=spec.legacy_subnet_keys, airgap=cfg.airgap is not None,
        endpoints=tuple(preflight.wanted_endpoints(spec)) if cfg.airgap is not None and not cfg.network.bring_your_own else ()),
        child)
    security = ClusterSecurityGroup(name, ClusterSecurityGroupArgs(
        cluster_id=cfg.cluster_id, vpc_id=network.vpc_id, admin_cidrs=cfg.access.admin_cidrs,
        extra_tags=cfg.tags, admin_aliases=cluster.admin_aliases), child)
    endpoint = ControlPlaneEndpoint(name, ControlPlaneEndpointArgs(
        cluster_id=cfg.cluster_id, mode=cfg.endpoint, vpc_id=network.vpc_id, region=cfg.region,
        server_ips=cluster.api_server_ips,
        supervisor_ips=cluster.supervisor_ips if rke2 else None,
        ports=(RKE2_SUPERVISOR_PORT, KUBE_API_PORT) if rke2 else (KUBE_API_PORT,),
        subnet_ids=[network.subnet_ids[s.key] for s in cluster.subnets if s.tier == "private"],
        node_security_group_id=security.group_id, admin_cidrs=cfg.access.admin_cidrs, extra_tags=cfg.tags,
        admin_aliases=cluster.admin_aliases,
    ), child)
    return Foundation(network, security, endpoint)
