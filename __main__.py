"""rke-aws: AWS infrastructure for an RKE or RKE2 cluster running the out-of-tree AWS cloud provider."""

import gc

import pulumi

from components import bootstrap, ccm_values, config, plan
from components.ccm import CloudControllerManager, CloudControllerManagerArgs
from components.iam import NodeIam, NodeIamArgs
from components.network import Network, NetworkArgs
from components.nodes import Nodes, NodesArgs
from components.secrets import JoinToken, JoinTokenArgs
from components.security import ClusterSecurityGroup, ClusterSecurityGroupArgs

# The program holds tens of thousands of long-lived Output objects at a few hundred nodes; with
# the default thresholds the collector rescans them over and over (over half the run time at
# 500 nodes, see bench/RESULTS.md). Fewer full collections keep evaluation linear in node count.
gc.set_threshold(700, 10, 100)

try:
    cfg = config.load()
    cluster = plan.build(cfg)
except config.ConfigError as err:
    # RunError prints the message alone: the user sees every problem, not a traceback.
    raise pulumi.RunError(str(err)) from None

for warning in cfg.warnings:
    pulumi.log.warn(warning)

name = cfg.cluster_id
values = ccm_values.helm_values(cfg.distribution, cfg.node_pools, cfg.ccm.leader_migration, cfg.ccm.extra_args)
manifest_install = cfg.ccm.install == "manifest"

join_token = JoinToken(name, JoinTokenArgs(cluster_id=cfg.cluster_id, extra_tags=cfg.tags)) if cfg.distribution == "rke2" else None
iam = NodeIam(name, NodeIamArgs(cluster_id=cfg.cluster_id, ssm=cfg.access.ssm, extra_tags=cfg.tags,
                                readable_parameter_arn=join_token.parameter_arn if join_token else None))
network = Network(name, NetworkArgs(cluster_id=cfg.cluster_id, network=cfg.network, subnets=cluster.subnets, extra_tags=cfg.tags))
security = ClusterSecurityGroup(name, ClusterSecurityGroupArgs(
    cluster_id=cfg.cluster_id, vpc_id=network.vpc_id, admin_cidrs=cfg.access.admin_cidrs, extra_tags=cfg.tags))

nodes = Nodes(name, NodesArgs(
    cluster_id=cfg.cluster_id,
    distribution=cfg.distribution,
    nodes=cluster.nodes,
    default_ami=cluster.default_ami,
    subnet_ids=network.subnet_ids,
    node_dependencies=network.node_dependencies,
    security_group_id=security.group_id,
    instance_profiles=iam.profile_names,
    ssh_user=cfg.access.ssh_user,
    ssh_key_name=cfg.access.ssh_key_name,
    registration_ip=cluster.registration_ip,
    region=cfg.region,
    token_parameter=join_token.parameter_name if join_token else None,
    boot_dependencies=tuple(iam.grants),
    leader_migration=cfg.ccm.leader_migration,
    kubernetes_version=cfg.kubernetes_version,
    ssh_key_path=cfg.access.ssh_key_path,
    server_manifests={"aws-cloud-controller-manager.yaml": ccm_values.helm_chart_manifest(values, cfg.ccm.chart_version)}
    if manifest_install else {},
    protect_servers=cfg.protect_servers,
    extra_tags=cfg.tags,
))

if cfg.distribution == "rke":
    pulumi.export("rkeClusterYml", nodes.rke_cluster_yml)
else:
    pulumi.export("rke2RegistrationAddress", f"https://{cluster.registration_ip}:{bootstrap.RKE2_SUPERVISOR_PORT}")
    pulumi.export("rke2TokenParameter", join_token.parameter_name)
    pulumi.export("rke2Token", join_token.token)

if cfg.kubeconfig is not None and not manifest_install:
    ccm = CloudControllerManager(name, CloudControllerManagerArgs(
        kubeconfig=pulumi.Output.secret(cfg.kubeconfig.reveal()), chart_version=cfg.ccm.chart_version, values=values))
    pulumi.export("ccmReleaseStatus", ccm.status.apply(lambda s: s.status if s else None))
elif not manifest_install:
    pulumi.log.info(
        "aws-cloud-controller-manager not installed yet: once the cluster is up, run "
        "`pulumi config set --secret kubeconfig < kubeconfig.yaml` and `pulumi up` again."
    )

pulumi.export("clusterId", cfg.cluster_id)
pulumi.export("distribution", cfg.distribution)
pulumi.export("kubernetesVersion", cfg.kubernetes_version)
pulumi.export("region", cfg.region)
pulumi.export("vpcId", network.vpc_id)
pulumi.export("subnetIds", network.subnet_ids)
pulumi.export("securityGroupId", security.group_id)
pulumi.export("instanceProfileNames", iam.profile_names)
pulumi.export("instanceProfileArns", iam.profile_arns)
pulumi.export("nodes", nodes.node_outputs)
pulumi.export("ccmValues", values.merged_for_manifest())
