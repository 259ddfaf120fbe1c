"""What runs in the cluster: the CCM's values, the EBS CSI driver's IAM user, the cluster's registration in
Rancher (`prepare`, before the nodes: manifest mode ships them in the servers' manifests), and what this
update installs through a kubeconfig: the CCM, the upgrade controller and its Plans, the EBS CSI driver,
Rancher's agent (`install`, after the nodes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from ..aws import iam_policies as iam_policy
from ..aws.identity import WorkloadIdentity
from ..cluster import ebs_csi, upgrades
from ..cluster.ccm import CloudControllerManager, CloudControllerManagerArgs
from ..cluster.identity_addons import IdentityAddons, IdentityAddonsArgs, WebhookCertificate
from ..cluster.rancher import RancherAgent, RancherAgentArgs, RancherRegistration, RancherRegistrationArgs
from ..plan import ccm_values, cluster_documents, identity_ebs_csi, identity_lbc, identity_webhook, rancher
from ..plan.model import ClusterSpec
from ..settings import registry_hosts, versions


@dataclass(frozen=True)
class Prepared:
    values: Any  # ccm_values.HelmValues: the CCM's values (Helm release or manifest)
    ebs_values: dict[str, Any] | None  # the EBS CSI chart's values (None: not installed)
    ebs_credentials: ebs_csi.EbsCsiCredentials | None
    registration: RancherRegistration | None
    # Workload identity: chart defaults the EBS CSI release deletes (awsAccessSecret: null), and what it waits for.
    ebs_nulls: dict[str, Any] | None = None
    ebs_depends_on: tuple[pulumi.Resource, ...] = ()
    # identity.serviceAccounts irsa: the webhook's certificate and values, the Load Balancer Controller's values.
    webhook_cert: WebhookCertificate | None = None
    webhook_values: Any = None  # Output of plan/identity_webhook.values (the CA is generated)
    lbc_values: Any = None  # Output of plan/identity_lbc.values (the VPC ID may be unknown); None: not installed
    lbc_depends_on: tuple[pulumi.Resource, ...] = ()


def etcd_only_servers(spec: ClusterSpec) -> bool:
    """Split roles: etcd-only servers need their own upgrade Plan (cluster_documents.plans)."""
    cfg = spec.config
    return cfg.distribution == "rke2" and any(
        pool.is_etcd and not pool.is_controlplane and pool.count for pool in cfg.node_pools)


def prepare(name: str, spec: ClusterSpec, child: pulumi.ResourceOptions,
            identity: WorkloadIdentity | None = None, vpc_id: Any = None) -> Prepared:
    cfg, cluster = spec.config, spec.plan
    values = ccm_values.helm_values(cfg.distribution, cfg.node_pools, cfg.ccm.leader_migration,
                                    cfg.ccm.extra_args, cluster.ccm_image, cluster.proxy)
    ebs_values = None
    credentials = None
    ebs_nulls = None
    ebs_depends_on: tuple[pulumi.Resource, ...] = ()
    moving = cluster.identity.ebs_csi if cluster.identity is not None else None
    if cluster.ebs_csi:
        ebs_values = ebs_csi.values(cfg.distribution, cfg.node_pools, cfg.cluster_id, cfg.region, cluster.proxy)
        if cfg.distribution == "rke" and cfg.registry is not None and cfg.registry.mirrors:
            # RKE1's Docker has no per-registry mirrors: the chart's images are named through the mirror.
            ebs_values = {**ebs_values, **registry_hosts.ebs_csi_image_values(cfg.registry.mirrors)}
    key_wanted = cluster.ebs_csi or cluster.keep_ebs_credentials
    if moving is not None and identity is not None and cluster.identity is not None and ebs_values is not None:
        # identity.serviceAccounts irsa: the controller on its role (plan/identity_ebs_csi.py: the role exists and
        # the service account names it before the key goes; Pulumi deletes the user and key after every
        # create and update of this update).
        plan = cluster.identity
        release = plan.ebs_release()
        assert release is not None
        if moving.result.role:
            role = identity.addon_role("ebs-csi-role", plan.ebs_csi_role, *identity_ebs_csi.SERVICE_ACCOUNT,
                                       iam_policy.ebs_csi_policy_json(cfg.cluster_id, cfg.partition.name))
            ebs_depends_on = (role, *identity.addon_grants)
        annotated, key_env = release
        moved = identity_ebs_csi.release_values(ebs_values, plan.ebs_csi_role_arn, annotated, key_env)
        ebs_values, ebs_nulls = moved.values, moved.null_overrides
        key_wanted = moving.result.user_key or cluster.keep_ebs_credentials
    if key_wanted:
        # Its own IAM user: the node roles stay out of reach of pods (hop limit 1; ebs_csi.py). Kept while
        # the servers may still run the driver with its key (an uninstall from manifests in progress).
        credentials = ebs_csi.EbsCsiCredentials(name, ebs_csi.EbsCsiCredentialsArgs(
            cluster_id=cfg.cluster_id, partition=cfg.partition.name, extra_tags=cfg.tags), child)
    registration = None
    if cfg.rancher is not None:
        registration = RancherRegistration(name, RancherRegistrationArgs(
            url=cfg.rancher.url, token=pulumi.Output.secret(cfg.rancher.token.get_secret_value()),
            cluster_name=cfg.rancher.cluster_name, cluster_id=cfg.cluster_id,
            annotations=rancher.cluster_annotations(cfg), agent_env=rancher.agent_env(cluster.proxy)), child)
    webhook_cert = webhook_values = lbc_values = None
    lbc_depends_on: tuple[pulumi.Resource, ...] = ()
    if cluster.identity is not None and identity is not None:
        plan = cluster.identity
        webhook_cert = WebhookCertificate(name, cfg.cluster_id, child)
        pools = cfg.node_pools
        mirrors = cfg.registry.mirrors if cfg.registry is not None else None
        webhook_image = registry_hosts.pulled_as(versions.POD_IDENTITY_WEBHOOK_IMAGE, cfg.distribution, mirrors)
        lbc_image = registry_hosts.pulled_as(versions.LOAD_BALANCER_CONTROLLER_IMAGE, cfg.distribution, mirrors)
        webhook_values = webhook_cert.ca_pem.apply(
            lambda ca: identity_webhook.values(cfg.distribution, pools, cfg.region, ca, image=webhook_image))
        if plan.load_balancer_controller:
            role = identity.addon_role("lb-controller-role", plan.lbc_role, identity_lbc.NAMESPACE,
                                       identity_lbc.SERVICE_ACCOUNT,
                                       identity_lbc.policy_compact_json(cfg.cluster_id, cfg.partition.name))
            lbc_depends_on = (role, *identity.addon_grants)
            proxy = cluster.proxy
            lbc_values = pulumi.Output.from_input(vpc_id).apply(lambda vpc: identity_lbc.values(
                cfg.cluster_id, cfg.region, vpc, plan.lbc_role_arn, cfg.distribution, pools, image=lbc_image,
                proxy=proxy.variables() if proxy is not None else None))
    return Prepared(values, ebs_values, credentials, registration, ebs_nulls, ebs_depends_on,
                    webhook_cert, webhook_values, lbc_values, lbc_depends_on)


@dataclass(frozen=True)
class Installed:
    ccm: CloudControllerManager | None  # None: nothing installed through a kubeconfig by this update
    names: tuple[str, ...]  # installedInCluster
    agent_kept: bool  # Rancher's agent applied with its objects kept on delete


def install(name: str, spec: ClusterSpec, prepared: Prepared, kubeconfig: Any, child: pulumi.ResourceOptions,
            published: bool) -> Installed:
    cfg, cluster = spec.config, spec.plan
    rke2 = cfg.distribution == "rke2"
    if not cluster.in_cluster:
        _say_not_installed(spec, prepared, published)
        return Installed(None, (), False)
    ccm = CloudControllerManager(name, CloudControllerManagerArgs(
        kubeconfig=pulumi.Output.secret(kubeconfig), chart_version=cfg.ccm.chart_version, values=prepared.values,
        cluster_id=cfg.cluster_id, charts=cluster_documents.chart_location(cfg.registry)), child)
    names = ["aws-cloud-controller-manager"]
    if rke2:
        # Rancher owning upgrades: only the Plan CRD stays (shared with Rancher's controller).
        upgrades.SystemUpgrades(name, upgrades.SystemUpgradesArgs(
            provider=ccm.provider, version=cfg.kubernetes_version, etcd_only=etcd_only_servers(spec),
            crd_only=not rancher.program_upgrades(cfg)), child)
        if rancher.program_upgrades(cfg):
            names.append("system-upgrade-controller")
    if prepared.ebs_values and (prepared.ebs_credentials is not None or prepared.ebs_nulls is not None
                                or prepared.ebs_depends_on):
        ebs_csi.EbsCsiDriver(name, ebs_csi.EbsCsiDriverArgs(provider=ccm.provider, values=prepared.ebs_values,
                                                             credentials=prepared.ebs_credentials,
                                                             null_overrides=prepared.ebs_nulls,
                                                             depends_on=prepared.ebs_depends_on,
                                                             charts=cluster_documents.chart_location(cfg.registry)), child)
        names.append("aws-ebs-csi-driver")
    if prepared.webhook_cert is not None:
        addons = IdentityAddons(name, IdentityAddonsArgs(
            provider=ccm.provider, certificate=prepared.webhook_cert, webhook_values=prepared.webhook_values,
            lbc_values=prepared.lbc_values, lbc_depends_on=prepared.lbc_depends_on,
            chart_location=cluster_documents.chart_location(cfg.registry)), child)
        names += addons.names
    agent_kept = False
    if prepared.registration is not None:
        RancherAgent(name, RancherAgentArgs(provider=ccm.provider, manifest_url=prepared.registration.manifest_url),
                     child)
        # Its objects are in the state with retainOnDelete: `rancher` may be removed (plan/rancher.py).
        agent_kept = True
    # The next update refuses to run without a kubeconfig while this is set (addons.in_cluster_problems).
    return Installed(ccm, tuple(names), agent_kept)


def _say_not_installed(spec: ClusterSpec, prepared: Prepared, published: bool) -> None:
    """Only before anything was ever installed: an update that uninstalls (allowUninstall) or waits for the
    servers' helm-controller says so in its warnings (addons.removal_warnings)."""
    cfg, cluster = spec.config, spec.plan
    rke2 = cfg.distribution == "rke2"
    if (cfg.ccm.install == "manifest" or spec.had_cluster_releases
            or (cluster.manifests and cluster.manifests.removing)):
        return
    pulumi.log.info(
        "aws-cloud-controller-manager not installed yet: once the first server has published the admin "
        "kubeconfig, `pulumi up` again installs it (or set one: `pulumi config set --secret kubeconfig < "
        "kubeconfig.yaml`)." if published else
        "aws-cloud-controller-manager not installed yet: set the cluster's kubeconfig (`pulumi config set "
        "--secret kubeconfig < kubeconfig.yaml`) and `pulumi up` again." if rke2 else
        "aws-cloud-controller-manager not installed yet: once `rke up` has written kube_config_cluster.yml, "
        "run `make kubeconfig STACK=<stack>` (or `pulumi config set --secret kubeconfig < "
        "kube_config_cluster.yml`) and `pulumi up` again."
    )
    if prepared.registration is not None and cfg.rancher is not None:
        pulumi.log.info(f"Rancher: the imported cluster {cfg.rancher.cluster_name} stays pending in Rancher "
                        "until its agent is applied, in the same `pulumi up` that installs the CCM")
