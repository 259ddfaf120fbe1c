"""rke-aws: AWS infrastructure for an RKE or RKE2 cluster running the out-of-tree AWS cloud provider."""

import gc

import pulumi

from components import addons, backups, bootstrap, ccm_values, charts, config, history, plan, secrets, upgrades
from components.backups import EtcdBackupBucket, EtcdBackupBucketArgs
from components.ccm import CloudControllerManager, CloudControllerManagerArgs
from components.endpoint import KUBE_API_PORT, ControlPlaneEndpoint, ControlPlaneEndpointArgs
from components.iam import NodeIam, NodeIamArgs, ParameterAccess
from components.manifests import ServerManifests, ServerManifestsArgs, manifest_path, with_emptied
from components.network import Network, NetworkArgs
from components.nodes import Nodes, NodesArgs
from components.secrets import JoinToken, JoinTokenArgs
from components.security import ClusterSecurityGroup, ClusterSecurityGroupArgs

# The program holds tens of thousands of long-lived Output objects at a few hundred nodes; with
# the default thresholds the collector rescans them over and over (over half the run time at
# 500 nodes, see bench/RESULTS.md). Fewer full collections keep evaluation linear in node count.
gc.set_threshold(700, 10, 100)

try:
    # The stack's last outputs: running nodes stay where they are, an unset kubernetesVersion stays
    # on what runs, and the version and quorum guards compare against them, all before anything is
    # registered.
    previous = history.read()
    cfg = config.load(previous)
    cluster = plan.build(cfg, previous)
except (config.ConfigError, history.HistoryError) as err:
    # RunError prints the message alone: the user sees every problem, not a traceback.
    raise pulumi.RunError(str(err)) from None

for warning in cfg.warnings:
    pulumi.log.warn(warning)
for warning in cluster.warnings:
    pulumi.log.warn(warning)
for note in cluster.notes:
    pulumi.log.info(note)

name = cfg.cluster_id
rke2 = cfg.distribution == "rke2"
manifest_install = cfg.ccm.install == "manifest"
values = ccm_values.helm_values(cfg.distribution, cfg.node_pools, cfg.ccm.leader_migration, cfg.ccm.extra_args,
                                cluster.ccm_image)

# Stacks last updated by releases that named some children by list position get aliases from
# those names (components/security.py, endpoint.py, network.py).
legacy_names = previous is not None and not previous.keyed_children
network = Network(name, NetworkArgs(
    cluster_id=cfg.cluster_id, network=cfg.network, subnets=cluster.subnets, extra_tags=cfg.tags,
    legacy_subnet_keys={v: k for k, v in previous.subnet_ids.items()} if legacy_names else None))
security = ClusterSecurityGroup(name, ClusterSecurityGroupArgs(
    cluster_id=cfg.cluster_id, vpc_id=network.vpc_id, admin_cidrs=cfg.access.admin_cidrs, extra_tags=cfg.tags,
    admin_aliases=cluster.admin_aliases))
endpoint = ControlPlaneEndpoint(name, ControlPlaneEndpointArgs(
    cluster_id=cfg.cluster_id, mode=cfg.endpoint, vpc_id=network.vpc_id, region=cfg.region,
    server_ips=cluster.server_ips,
    ports=(bootstrap.RKE2_SUPERVISOR_PORT, KUBE_API_PORT) if rke2 else (KUBE_API_PORT,),
    subnet_ids=[network.subnet_ids[s.key] for s in cluster.subnets if s.tier == "private"],
    node_security_group_id=security.group_id, admin_cidrs=cfg.access.admin_cidrs, extra_tags=cfg.tags,
    admin_aliases=cluster.admin_aliases,
))

boot_dependencies: list[pulumi.Resource] = []
extra_policies: dict[str, list[tuple[str, str]]] = {}
etcd_s3 = None
if cluster.backup:
    if cluster.backup.created:
        bucket = EtcdBackupBucket(name, EtcdBackupBucketArgs(
            cluster_id=cfg.cluster_id, bucket=cluster.backup.bucket, partition=cfg.partition.name,
            expire_days=cfg.etcd_backup.expire_days, kms_key_arn=cfg.etcd_backup.kms_key_arn, extra_tags=cfg.tags))
        boot_dependencies.append(bucket.bucket)
    etcd_s3 = cluster.backup.etcd_s3
if cluster.snapshots.grant:
    # The nodes that take snapshots: RKE2 servers; RKE1 etcd nodes (their pool's role). Where running
    # servers still write while new settings have not reached them keeps its grant (history.py).
    snapshot_roles = {n.iam_role for n in cluster.nodes if n.pool.is_etcd} or {"controlplane"}
    first, *others = cluster.snapshots.grant
    policy = backups.node_policy(cfg.partition.name, first.bucket, first.folder, first.kms_key_arn,
                                 also=[(s.bucket, s.folder, s.kms_key_arn) for s in others])
    for role in sorted(snapshot_roles):
        extra_policies.setdefault(role, []).append(("etcd-snapshots", policy))

ebs_values = None
ebs_credentials = None
if cluster.ebs_csi:
    ebs_values = addons.values(cfg.distribution, cfg.node_pools, cfg.cluster_id, cfg.region)
if cluster.ebs_csi or cluster.keep_ebs_credentials:
    # Its own IAM user: the node roles stay out of reach of pods (hop limit 1; addons.py). Kept while
    # the servers may still run the driver with its key (an uninstall from manifests in progress).
    ebs_credentials = addons.EbsCsiCredentials(name, addons.EbsCsiCredentialsArgs(
        cluster_id=cfg.cluster_id, partition=cfg.partition.name, extra_tags=cfg.tags))

join_token = None
manifests = None
parameters: dict[str, ParameterAccess] = {}
if rke2:
    join_token = JoinToken(name, JoinTokenArgs(
        cluster_id=cfg.cluster_id,
        # Clusters created before agent tokens keep one token (see secrets.py).
        agent_token=cluster.first_deployment or previous.has_agent_token,
        cluster_exists=bool(previous and previous.etcd_members),
        # New clusters only: a running cluster's first server never re-reads its user data.
        publish_kubeconfig=cluster.first_deployment or previous.has_kubeconfig_parameter,
        partition=cfg.partition.name,
        account_id=cluster.account_id,
        extra_tags=cfg.tags,
    ))
    boot_dependencies += join_token.parameters
    if cluster.manifests:
        files = {}
        if manifest_install:
            # The CCM runs before the cluster has a pod network or initialised nodes: bootstrap.
            files = {"ccm.yaml": charts.ccm(cfg.ccm.chart_version).manifest(values.merged_for_manifest(), bootstrap=True),
                     **upgrades.upgrade_manifests(cfg.kubernetes_version),
                     **({"ebs-csi.yaml": charts.EBS_CSI.manifest(ebs_values)} if ebs_values else {})}
        secret_files = {"ebs-csi-credentials.yaml": pulumi.Output.all(ebs_credentials.key_id, ebs_credentials.secret)
                        .apply(lambda k: addons.credentials_secret_manifest(*k))} if manifest_install and cluster.ebs_csi else {}
        # What is no longer wanted is emptied, never just dropped (plan.ManifestPlan says why).
        files = with_emptied(files, cluster.manifests.emptied)
        manifest_names = sorted([*files, *secret_files])
        manifests = ServerManifests(name, ServerManifestsArgs(
            cluster_id=cfg.cluster_id, files=files, secret_files=secret_files, extra_tags=cfg.tags))
        boot_dependencies += manifests.parameters
    agent_arn = join_token.agent_parameter_arn
    # GetParametersByPath is authorised on the path's own ARN, built from a sibling parameter's. Kept as
    # long as the servers sync from it (a server booted in manifest mode syncs for good).
    path_arn = (join_token.marker_arn.apply(lambda arn: arn.split(":parameter/")[0] + ":parameter" + manifest_path(cfg.cluster_id))
                if manifests else None)
    parameters = {
        "controlplane": ParameterAccess(
            read=[join_token.parameter_arn, join_token.marker_arn] + ([agent_arn] if agent_arn is not None else []),
            # The init marker and the admin kubeconfig (written, never read back).
            write=[a for a in (join_token.marker_arn, join_token.kubeconfig_parameter_arn) if a is not None],
            read_path=[path_arn] if path_arn is not None else [],
            encrypt_keys=[join_token.kubeconfig_key_arn] if join_token.kubeconfig_key_arn is not None else [],
        ),
        # Agents: the agent token only (the server token where the cluster has just one).
        "worker": ParameterAccess(read=[agent_arn if agent_arn is not None else join_token.parameter_arn]),
    }

iam = NodeIam(name, NodeIamArgs(cluster_id=cfg.cluster_id, ssm=cfg.access.ssm, extra_tags=cfg.tags,
                                partition=cfg.partition.name, ec2_principal=cfg.partition.ec2_principal,
                                parameters=parameters, extra_policies=extra_policies))

rke2_boot = None
if rke2:
    rke2_boot = bootstrap.Rke2Boot(
        region=cfg.region,
        ssm_host=cfg.partition.endpoint("ssm", cfg.region),
        install_version=cfg.kubernetes_version,
        endpoint=endpoint.name,
        server_ips=cluster.server_ips,
        token_parameter=join_token.parameter_name,
        marker_parameter=join_token.marker_name,
        agent_token_parameter=join_token.agent_parameter_name,
        manifest_path=manifests.path if manifests else None,
        leader_migration=cfg.ccm.leader_migration,
        etcd_s3=etcd_s3,
        cis_profile=bootstrap.cis_profile(cfg.kubernetes_version) if cfg.hardening == "cis" else None,
        kubeconfig_parameter=join_token.kubeconfig_parameter_name,
        kubeconfig_key=secrets.kubeconfig_key_alias(cfg.cluster_id) if join_token.kubeconfig_parameter_name else None,
    )

nodes = Nodes(name, NodesArgs(
    cluster_id=cfg.cluster_id,
    distribution=cfg.distribution,
    nodes=cluster.nodes,
    default_amis=cluster.default_amis,
    subnet_ids=network.subnet_ids,
    node_dependencies=network.node_dependencies,
    security_group_id=security.group_id,
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
))

if cfg.distribution == "rke":
    pulumi.export("rkeClusterYml", nodes.rke_cluster_yml)
else:
    pulumi.export("rke2RegistrationAddress", f"https://{endpoint.name}:{bootstrap.RKE2_SUPERVISOR_PORT}")
    pulumi.export("rke2TokenParameter", join_token.parameter_name)
    pulumi.export("rke2Token", join_token.token)
    if join_token.agent_parameter_name:
        pulumi.export("rke2AgentTokenParameter", join_token.agent_parameter_name)
    pulumi.export("rke2InitMarkerParameter", join_token.marker_name)
    if join_token.kubeconfig_parameter_name:
        pulumi.export("rke2KubeconfigParameter", join_token.kubeconfig_parameter_name)
    if manifests:
        pulumi.export("rke2ManifestPath", manifests.path)
        # What the servers mirror, and the removals not yet known done (plan.manifest_plan reads both).
        pulumi.export("rke2Manifests", manifest_names)
        pulumi.export("rke2ManifestsRemoving", list(cluster.manifests.removing))

# An explicit kubeconfig wins over the one the first server published (RKE2).
kubeconfig = cfg.kubeconfig.reveal() if cfg.kubeconfig is not None else cluster.published_kubeconfig
if cluster.in_cluster:
    ccm = CloudControllerManager(name, CloudControllerManagerArgs(
        kubeconfig=pulumi.Output.secret(kubeconfig), chart_version=cfg.ccm.chart_version, values=values,
        cluster_id=cfg.cluster_id))
    pulumi.export("ccmReleaseStatus", ccm.status.apply(lambda s: s.status if s else None))
    in_cluster = ["aws-cloud-controller-manager"]
    if rke2:
        upgrades.SystemUpgrades(name, upgrades.SystemUpgradesArgs(provider=ccm.provider, version=cfg.kubernetes_version))
        in_cluster.append("system-upgrade-controller")
    if ebs_values:
        addons.EbsCsiDriver(name, addons.EbsCsiDriverArgs(provider=ccm.provider, values=ebs_values,
                                                          credentials=ebs_credentials))
        in_cluster.append("aws-ebs-csi-driver")
    # The next update refuses to run without a kubeconfig while this is set (plan.in_cluster_problems).
    pulumi.export("installedInCluster", in_cluster)
elif (not manifest_install and not (previous and previous.has_cluster_releases)
      and not (cluster.manifests and cluster.manifests.removing)):
    # Only before anything was ever installed: an update that uninstalls (allowUninstall) or waits for
    # the servers' helm-controller says so in its warnings (plan.removal_warnings).
    pulumi.log.info(
        "aws-cloud-controller-manager not installed yet: once the first server has published the admin "
        "kubeconfig, `pulumi up` again installs it (or set one: `pulumi config set --secret kubeconfig < "
        "kubeconfig.yaml`)." if rke2 and join_token.kubeconfig_parameter_name else
        "aws-cloud-controller-manager not installed yet: set the cluster's kubeconfig (`pulumi config set --secret "
        "kubeconfig < kubeconfig.yaml`) and `pulumi up` again." if rke2 else
        "aws-cloud-controller-manager not installed yet: once `rke up` has written kube_config_cluster.yml, run "
        "`make kubeconfig STACK=<stack>` (or `pulumi config set --secret kubeconfig < kube_config_cluster.yml`) "
        "and `pulumi up` again."
    )

pulumi.export("clusterId", cfg.cluster_id)
pulumi.export("distribution", cfg.distribution)
pulumi.export("kubernetesVersion", cfg.kubernetes_version)
pulumi.export("region", cfg.region)
pulumi.export("controlPlaneEndpoint", endpoint.name)
pulumi.export("kubernetesApiUrl", f"https://{endpoint.name}:{KUBE_API_PORT}")
pulumi.export("vpcId", network.vpc_id)
pulumi.export("subnetIds", network.subnet_ids)
pulumi.export("subnets", {s.key: {"availabilityZone": s.az, "cidr": s.cidr, "id": network.subnet_ids[s.key]}
                          for s in cluster.subnets})
pulumi.export("securityGroupId", security.group_id)
pulumi.export("instanceProfileNames", iam.profile_names)
pulumi.export("instanceProfileArns", iam.profile_arns)
pulumi.export("nodes", nodes.node_outputs)
pulumi.export("ccmImage", cluster.ccm_image)
# ---- day 2: what the next update judges against (components/history.py)
pulumi.export("kubernetesVersionConfirmed", cluster.version_confirmed)
if cluster.version is not None and cluster.version.assumed:
    # kubernetesVersionConfirmed above is carried over from outputs that never recorded it: the next
    # update still asks for a read or a confirmation where the etcd rule depends on it.
    pulumi.export("kubernetesVersionAssumed", True)
pulumi.export("etcdMembersRemoved", list(cluster.etcd_removed))
pulumi.export("etcdSnapshotsRunning", cluster.snapshots.running.output() if cluster.snapshots.running else None)
pulumi.export("controlPlaneEndpointType", cfg.endpoint)
pulumi.export("ebsCsi", cluster.ebs_csi)
pulumi.export("hardening", cfg.hardening)
if cluster.backup:
    pulumi.export("etcdSnapshotLocation", f"s3://{cluster.backup.bucket}/{cluster.backup.folder}")
    pulumi.export("etcdBucketManaged", cluster.backup.created)
pulumi.export("ccmValues", values.merged_for_manifest())
