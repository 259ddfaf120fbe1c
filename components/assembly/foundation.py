"""The network, the node security group and the control-plane endpoint."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from ..aws import vpc_endpoints
from ..aws.endpoint import ControlPlaneEndpoint, ControlPlaneEndpointArgs
from ..aws.network import Network, NetworkArgs
from ..aws.security import ClusterSecurityGroup, ClusterSecurityGroupArgs
from ..node import registries
from ..plan.model import ClusterSpec
from ..plan.names import KUBE_API_PORT, RKE2_SUPERVISOR_PORT


@dataclass(frozen=True)
class Foundation:
    network: Network
    security: ClusterSecurityGroup
    endpoint: ControlPlaneEndpoint


def airgap_endpoints(spec: ClusterSpec) -> list[vpc_endpoints.Endpoint]:
    """The VPC endpoints an air-gapped cluster needs: the services of every action the program grants its
    nodes and add-ons (the same policy functions), ECR's when a mirror is an ECR registry."""
    cfg, cluster = spec.config, spec.plan
    airgap = cfg.airgap
    actions = vpc_endpoints.program_action_lists(
        cfg.partition.name, session_manager=cfg.access.ssm, snapshots=cluster.backup is not None,
        ebs_csi=bool(cluster.ebs_csi),
        artifacts=airgap is not None and bool(airgap.artifacts_bucket) and not airgap.preinstalled)
    mirrors = cfg.registry.mirrors if cfg.registry is not None else {}
    ecr = any(vpc_endpoints.is_ecr_registry(registries.mirror_authority(e)) for e in mirrors.values())
    return vpc_endpoints.vpc_endpoints(actions.values(), cfg.region, ecr=ecr)


def build(name: str, spec: ClusterSpec, child: pulumi.ResourceOptions) -> Foundation:
    cfg, cluster = spec.config, spec.plan
    rke2 = cfg.distribution == "rke2"
    network = Network(name, NetworkArgs(
        cluster_id=cfg.cluster_id, network=cfg.network, subnets=cluster.subnets, extra_tags=cfg.tags,
        legacy_subnet_keys=spec.legacy_subnet_keys, airgap=cfg.airgap is not None,
        endpoints=tuple(airgap_endpoints(spec)) if cfg.airgap is not None and not cfg.network.bring_your_own else ()),
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
