"""What nodes boot with and as: the manifests RKE2 servers mirror (manifest mode), the node roles, RKE2's
boot configuration, and the instances."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from ..aws.iam import ETCD_IAM_ROLE, NODE_IAM_ROLES, NodeIam, NodeIamArgs, ParameterAccess
from ..aws.nodes import Nodes, NodesArgs
from ..cluster import ebs_csi
from ..cluster.manifests import ServerManifests, ServerManifestsArgs, with_emptied
from ..node import airgap_artifacts, registries, rke1_cluster, rke2_config, scripts
from ..plan import cluster_documents, identity_lbc, identity_webhook, rancher
from ..plan.ccm_values import CcmValues
from ..plan.model import ClusterSpec
from ..plan.names import kubeconfig_key_alias
from .foundation import Foundation
from .in_cluster import Prepared, etcd_only_servers
from .secrets import Secrets


@dataclass(frozen=True)
class Manifests:
    component: ServerManifests | None
    names: list[str]  # rke2Manifests: what the servers mirror


def manifests(name: str, spec: ClusterSpec, prepared: Prepared, child: pulumi.ResourceOptions) -> Manifests:
    """RKE2's manifests the servers mirror from SSM (manifest mode, or emptied ones of an earlier one)."""
    cfg, cluster = spec.config, spec.plan
    if cfg.distribution != "rke2" or not cluster.manifests:
        return Manifests(None, [])
    manifest_install = cfg.ccm.install == "manifest"
    files: dict[str, str] = {}
    if manifest_install:
        # The CCM runs before the cluster has a pod network or initialised nodes: bootstrap.
        charts = cluster_documents.chart_location(cfg.registry)
        files = {"ccm.yaml": cluster_documents.ccm(cfg.ccm.chart_version).located(*charts).manifest(
                    prepared.values.merged_for_manifest(), bootstrap=True),
                 **rancher.upgrade_files(cfg, _airgapped(cfg, cluster_documents.upgrade_manifests(
                     cfg.kubernetes_version, etcd_only_servers(spec)))),
                 **({"ebs-csi.yaml": cluster_documents.EBS_CSI.located(*charts).manifest(
                     CcmValues(prepared.ebs_values, prepared.ebs_nulls).merged_for_manifest())}
                    if prepared.ebs_values else {})}
    secret_files: dict[str, Any] = {}
    credentials = prepared.ebs_credentials
    if manifest_install and cluster.ebs_csi and credentials is not None:
        secret_files = {"ebs-csi-credentials.yaml": pulumi.Output.all(credentials.key_id, credentials.secret).apply(
            lambda k: ebs_csi.credentials_secret_manifest(*k))}
    if manifest_install and prepared.webhook_cert is not None:
        # Workload identity: the webhook's HelmChart (its caBundle is generated, so the text is known only then)
        # and TLS Secret, the controller's HelmChart (its VPC ID likewise): values that are Outputs travel as
        # SecureStrings, the way the servers mirror every manifest whose text is not known at preview.
        cert = prepared.webhook_cert
        secret_files["pod-identity-webhook.yaml"] = pulumi.Output.from_input(prepared.webhook_values).apply(
            identity_webhook.CHART.located(*charts).manifest)
        secret_files["pod-identity-webhook-tls.yaml"] = cert.secret_manifest()
        if prepared.lbc_values is not None:
            secret_files["aws-load-balancer-controller.yaml"] = pulumi.Output.from_input(prepared.lbc_values).apply(
                identity_lbc.CHART.located(*charts).manifest)
    registration = prepared.registration
    if manifest_install and registration is not None:
        # The address carries the registration token: a SecureString (the servers download it).
        secret_files[f"{rancher.REGISTRATION_MANIFEST}.url"] = registration.manifest_url
        if cluster.rancher_registration is not None and cluster.rancher_registration.applied:
            # Applied once: rke2-server must not apply it again at each start (plan/rancher.py).
            files[rancher.REGISTRATION_SKIP] = rancher.SKIP_CONTENT
    # What is no longer wanted is emptied, never just dropped (plan/addons.py ManifestPlan says why).
    files = with_emptied(files, cluster.manifests.emptied)
    component = ServerManifests(name, ServerManifestsArgs(
        cluster_id=cfg.cluster_id, files=files, secret_files=secret_files, extra_tags=cfg.tags), child)
    return Manifests(component, sorted([*files, *secret_files]))


def _airgapped(cfg: Any, files: dict[str, str]) -> dict[str, str]:
    """airgap: system-upgrade-controller's manifests from the artifacts bucket (s3:// for the servers' sync,
    node/scripts/s3_download.sh) instead of GitHub, at the keys the README fills (airgap_artifacts.suc_keys)."""
    airgap = cfg.airgap
    if airgap is None or not airgap.artifacts_bucket:
        return files
    crd, controller = airgap_artifacts.suc_keys(airgap.artifacts_prefix or "")
    where = {"system-upgrade-controller-crd.url": crd, "system-upgrade-controller.url": controller}
    return {name: f"s3://{airgap.artifacts_bucket}/{where[name]}" if name in where else text
            for name, text in files.items()}


def _registry_and_airgap(spec: ClusterSpec, secrets: Secrets) -> dict[str, Any]:
    """Rke2Boot's issue-35 fields: registries.yaml (a template when the password comes from SSM), the CA,
    system-default-registry, the air-gapped install; nothing when neither section is set."""
    cfg, out = spec.config, {}
    reg = cfg.registry
    if reg is not None and reg.mirrors:
        has_password = reg.password is not None and bool(reg.username)
        out.update(
            registries_yaml=registries.rke2_registries_yaml(
                reg.mirrors, username=reg.username, has_password=has_password, ca_bundle=reg.ca_bundle is not None,
                system_default=reg.system_default),
            registry_ca=reg.ca_bundle,
            registry_password_parameter=secrets.registry_password_name if has_password else None)
    if reg is not None and reg.system_default:
        out["system_default_registry"] = reg.system_default
    if cfg.airgap is not None:
        out.update(airgap=True, airgap_bucket=cfg.airgap.artifacts_bucket, airgap_prefix=cfg.airgap.artifacts_prefix or "",
                   airgap_preinstalled=cfg.airgap.preinstalled)
    return out


@dataclass(frozen=True)
class Machines:
    iam: NodeIam
    nodes: Nodes


def machines(name: str, spec: ClusterSpec, foundation: Foundation, secrets: Secrets | None, shipped: Manifests,
             parameters: dict[str, ParameterAccess], extra_policies: dict[str, list[tuple[str, str]]],
             boot_dependencies: list[pulumi.Resource], etcd_s3: Any, child: pulumi.ResourceOptions,
             identity: rke2_config.Rke2Identity | None = None,
             rke_identity: rke1_cluster.Rke1Identity | None = None) -> Machines:
    """The node roles (and what they may read and write), RKE2's boot configuration, and the instances."""
    cfg, cluster = spec.config, spec.plan
    iam = NodeIam(name, NodeIamArgs(cluster_id=cfg.cluster_id, ssm=cfg.access.ssm, extra_tags=cfg.tags,
                                    partition=cfg.partition.name, ec2_principal=cfg.partition.ec2_principal,
                                    parameters=parameters, extra_policies=extra_policies,
                                    roles=NODE_IAM_ROLES + ((ETCD_IAM_ROLE,) if any(
                                        n.iam_role == ETCD_IAM_ROLE for n in cluster.nodes) else ())), child)
    endpoint = foundation.endpoint
    rke2_boot = None
    if secrets is not None:
        join_token, marker, published = secrets.join_token, secrets.marker, secrets.published
        rke2_boot = rke2_config.Rke2Boot(
            region=cfg.region,
            ssm_host=cfg.partition.endpoint("ssm", cfg.region),
            install_version=cfg.kubernetes_version,
            endpoint=endpoint.name,
            # A cluster exists once an etcd member runs (a control-plane-only server cannot run
            # without one); at most MAX_ETCD_MEMBERS addresses in the initialiser's user data.
            server_ips=cluster.supervisor_ips,
            token_parameter=join_token.parameter_name,
            marker_parameter=marker.marker_name,
            agent_token_parameter=join_token.agent_parameter_name,
            manifest_path=shipped.component.path if shipped.component else None,
            leader_migration=cfg.ccm.leader_migration,
            etcd_s3=etcd_s3,
            cis_profile=rke2_config.cis_profile(cfg.kubernetes_version) if cfg.hardening == "cis" else None,
            kubeconfig_parameter=published.parameter_name if published else None,
            kubeconfig_key=kubeconfig_key_alias(cfg.cluster_id) if published else None,
            proxy=cluster.proxy,
            ingress_controller=cluster.ingress.controller if cluster.ingress else None,
            psa_rancher=cfg.rancher is not None,
            fips=cfg.fips,
            dns_suffix=cfg.partition.dns_suffix,
            pool_archs=cluster.pool_archs,
            identity=identity,
            **_registry_and_airgap(spec, secrets),
        )
    nodes = Nodes(name, NodesArgs(
        cluster_id=cfg.cluster_id,
        distribution=cfg.distribution,
        nodes=cluster.nodes,
        default_amis=cluster.default_amis,
        subnet_ids=foundation.network.subnet_ids,
        node_dependencies=foundation.network.node_dependencies,
        security_group_id=foundation.security.group_id,
        instance_profiles=iam.profile_names,
        ssh_user=cfg.access.ssh_user,
        ssh_key_name=cfg.access.ssh_key_name,
        rke2=rke2_boot,
        boot_dependencies=tuple(iam.grants) + tuple(boot_dependencies),
        leader_migration=cfg.ccm.leader_migration,
        kubernetes_version=cfg.kubernetes_version,
        ssh_key_path=cfg.access.ssh_key_path,
        api_endpoint=endpoint.name,
        etcd_s3=etcd_s3,
        protect_servers=cfg.protect_servers,
        extra_tags=cfg.tags,
        proxy=cluster.proxy,
        rke_ingress=cfg.ingress.controller if cfg.distribution == "rke" else None,
        rke_private_registries=tuple(registries.rke1_private_registries(
            cfg.registry.mirrors, cfg.registry.username,
            cfg.registry.password.get_secret_value() if cfg.registry.password else None))
        if cfg.distribution == "rke" and cfg.registry is not None and cfg.registry.mirrors else (),
        # RKE1 pools on another OS than Ubuntu: that OS's boot steps (issue 35 item 3)
        rke1_steps={n.pool.name: steps for n in cluster.nodes if cfg.distribution == "rke" and (
            steps := scripts.rke1_node_steps(n.pool.os, region=cfg.region, dns_suffix=cfg.partition.dns_suffix,
                                             arch=cluster.pool_archs.get(n.pool.name, "x86_64"))) is not None},
        rke_identity=rke_identity,
        # What each running node runs (its last outputs): the stale notes, root volumes kept (issue 37).
        running={n.key: n.running for n in spec.previous.nodes} if spec.previous else {},
    ), child)
    return Machines(iam, nodes)
