"""The cluster's state after this update (what the next one reads back: components/state), written with the
state model's own keys (ClusterState.wire and its parts'): this module spells no output key."""

from __future__ import annotations

from typing import Any

from ..aws.identity import WorkloadIdentity
from ..node import rke2_config
from ..plan import rancher
from ..plan.model import ClusterSpec
from ..plan.names import KUBE_API_PORT, RKE2_SUPERVISOR_PORT
from ..state.model import (
    STATE_VERSION,
    ClusterState,
    RancherState,
    RemovedMember,
    SubnetState,
    flat_secret_key,
)
from .boot import Machines, Manifests
from .foundation import Foundation
from .in_cluster import Installed, Prepared
from .secrets import Secrets


def state(spec: ClusterSpec, foundation: Foundation, prepared: Prepared, secrets: Secrets | None,
          shipped: Manifests, machines: Machines, installed: Installed, *, flat: bool,
          identity: WorkloadIdentity | None = None) -> dict[str, Any]:
    """The state as outputs, in the order 0.x stacks exported them. `flat`: a 0.x stack's top-level outputs,
    which also hold the join token (a secret; nested states leave it to the program: RkeCluster.join_token)."""
    cfg, cluster = spec.config, spec.plan
    network, endpoint = foundation.network, foundation.endpoint
    out: dict[str, Any] = {}
    registration = prepared.registration
    if registration is not None and cfg.rancher is not None:
        rancher_state = RancherState.wire(
            name=cfg.rancher.cluster_name, upgrades=cfg.rancher.upgrades, id=registration.cluster.id,
            url=cfg.rancher.url,
            # What the next update compares (plan.rancher.agent_env_warnings).
            agent_env_vars=rancher.agent_env(cluster.proxy))
        if cluster.rancher_registration is not None:
            # Manifest mode: the servers skip the registration manifest from now on (plan/rancher.py).
            rancher_state |= RancherState.wire(registration_applied=cluster.rancher_registration.applied)
        if installed.agent_kept:
            # Its objects are in the state with retainOnDelete: `rancher` may be removed (plan/rancher.py).
            rancher_state |= RancherState.wire(agent_kept_on_delete=True)
        out |= ClusterState.wire(rancher_cluster=rancher_state)
    if secrets is None:
        out |= ClusterState.wire(rke_cluster_yml=machines.nodes.rke_cluster_yml)
    else:
        join_token, marker, published = secrets.join_token, secrets.marker, secrets.published
        out |= ClusterState.wire(rke2_registration_address=f"https://{endpoint.name}:{RKE2_SUPERVISOR_PORT}",
                                 rke2_token_parameter=join_token.parameter_name)
        if flat:
            out[flat_secret_key("join_token")] = join_token.token
        if join_token.agent_parameter_name:
            out |= ClusterState.wire(rke2_agent_token_parameter=join_token.agent_parameter_name)
        out |= ClusterState.wire(rke2_init_marker_parameter=marker.marker_name)
        if published:
            out |= ClusterState.wire(rke2_kubeconfig_parameter=published.parameter_name)
        if shipped.component and cluster.manifests:
            # What the servers mirror, and the removals not yet known done (addons.manifest_plan reads both).
            out |= ClusterState.wire(rke2_manifest_path=shipped.component.path, rke2_manifests=shipped.names,
                                     rke2_manifests_removing=list(cluster.manifests.removing))
    if installed.ccm is not None:
        out |= ClusterState.wire(ccm_release_status=installed.ccm.status.apply(lambda s: s.status if s else None),
                                 # The next update refuses to run without a kubeconfig while this is set.
                                 installed_in_cluster=list(installed.names))
    out |= ClusterState.wire(
        cluster_id=cfg.cluster_id,
        distribution=cfg.distribution,
        kubernetes_version=cfg.kubernetes_version,
        region=cfg.region,
        control_plane_endpoint=endpoint.name,
        kubernetes_api_url=f"https://{endpoint.name}:{KUBE_API_PORT}",
        vpc_id=network.vpc_id,
        subnet_ids=network.subnet_ids,
        subnets={s.key: SubnetState.wire(availability_zone=s.az, cidr=s.cidr, id=network.subnet_ids[s.key])
                 for s in cluster.subnets},
        security_group_id=foundation.security.group_id,
        instance_profile_names=machines.iam.profile_names,
        instance_profile_arns=machines.iam.profile_arns,
        nodes=machines.nodes.node_outputs,
        ccm_image=cluster.ccm_image,
        # ---- day 2: what the next update judges against (components/plan/day2)
        kubernetes_version_confirmed=cluster.version_confirmed,
    )
    if cluster.version is not None and cluster.version.assumed:
        # kubernetesVersionConfirmed above is carried over from outputs that never recorded it: the next
        # update still asks for a read or a confirmation where the etcd rule depends on it.
        out |= ClusterState.wire(kubernetes_version_assumed=True)
    out |= ClusterState.wire(
        etcd_members_removed=[RemovedMember.wire(name=m.name, private_ip=m.private_ip) for m in cluster.etcd_removed],
        etcd_snapshots_running=cluster.snapshots.running.output() if cluster.snapshots.running else None,
        control_plane_endpoint_type=cfg.endpoint,
        ebs_csi=cluster.ebs_csi,
        hardening=cfg.hardening,
    )
    if cluster.ingress is not None:
        # What the servers' config.yaml names (None: not known, no key written); the next update
        # keeps it or judges a change against it (plan/ingress.py).
        out |= ClusterState.wire(ingress_controller=cluster.ingress.controller)
    if cfg.distribution == "rke2" and cfg.hardening == "cis":
        # What new servers' Pod Security file exempts; the next update compares (plan.rancher.psa_warnings).
        out |= ClusterState.wire(pod_security_exemptions=list(rke2_config.psa_exempt_namespaces(cfg.rancher is not None)))
    if cluster.proxy is not None:
        # What new nodes boot with; the next update compares (plan.proxy.proxy_warnings).
        out |= ClusterState.wire(proxy=cluster.proxy.variables())
    if cluster.backup:
        out |= ClusterState.wire(etcd_snapshot_location=f"s3://{cluster.backup.bucket}/{cluster.backup.folder}",
                                 etcd_bucket_managed=cluster.backup.created)
    if cluster.identity is not None and identity is not None:
        # The issuer the servers were configured with, and whether they sign (plan/identity.py reads both back);
        # the public documents for a bring-your-own issuer; never the private key.
        out |= ClusterState.wire(identity_issuer_url=cluster.identity.issuer_url,
                                 identity_signing=cluster.identity.signing,
                                 identity_key_generations=list(cluster.identity.trusted),
                                 identity_signing_generation=cluster.identity.signer,
                                 identity_role_arns=dict(identity.role_arns),
                                 identity_discovery=identity.discovery, identity_jwks=identity.jwks)
        if cluster.identity.ebs_csi is not None:
            result = cluster.identity.ebs_csi.result
            out |= ClusterState.wire(identity_ebs_csi={"user_key": result.user_key, "role": result.role,
                                                       "annotated": result.annotated, "key_env": result.key_env})
    out |= ClusterState.wire(ccm_values=prepared.values.merged_for_manifest(), state_version=STATE_VERSION)
    return out
