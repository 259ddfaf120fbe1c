"""Cluster nodes: one EC2 instance per planned node, booted into RKE1 or RKE2.

Instances are individual resources, not an autoscaling group: RKE1 needs a static node list
and every node's name must be known before apply (see plan/nodes.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from ..node import cloud_init, rke1_cluster, rke2_config
from ..node.scripts import NodeSteps
from ..plan import snapshots, stale
from ..plan.nodes import PlannedNode
from ..plan.proxy import ProxyEnv
from ..settings import tags
from ..settings.fields import DEFAULT_OS
from ..state.model import NodeBuild, NodeState

ROOT_VOLUME_TYPE = "gp3"
# Instance tag saying why a pool lets pods reach IMDS (imdsHopLimit 2); the policy pack and doctor
# accept hop limit 2 only with it.
IMDS_REASON_TAG = "rke-aws/imds-hop-limit-reason"
# A new AMI release or an edited bootstrap script must not replace running nodes on a routine
# `pulumi up`; replace deliberately with `pulumi up --replace <urn>` (see README). Both user data
# inputs: nodes created before user data was compressed hold `userData`, newer ones
# `userDataBase64`. The engine resets every ignored input to its old value and drops one the old
# inputs lack (pulumi/pulumi sdk/go/common/resource/properties_path.go, PropertyPath.reset, called
# by processIgnoreChanges in pkg/resource/deploy/step_generator.go), so a running node keeps
# exactly the `userData` it has: no diff, and never both inputs at once (they conflict in
# terraform-provider-aws internal/service/ec2/ec2_instance.go, ConflictsWith; a changed one would
# stop and start the instance there, modifyInstanceAttributeWithStopStart).
IGNORED_ON_UPDATE = ["ami", "userData", "userDataBase64", "instanceType"]
# instanceType too, on every node: EC2 changes a type in place by stopping the instance
# (terraform-provider-aws ec2_instance.go, modifyInstanceAttributeWithStopStart), and Pulumi updates
# every instance of a pool at once: on servers that stops every etcd member together, on agents every
# node of the pool without a drain (PodDisruptionBudgets ignored); across CPU architectures the type
# forces a new instance (CustomizeDiff ForceNewIf) with the image the node booted. So a new type, like a
# new image or boot configuration, is reported stale (components/plan/stale.py) and reaches running
# nodes by rotation, one node (or `rotation.maxUnavailableAgents` agents) at a time, drained first
# (`rke-aws rotate <stack>`, components/ops/rotate/); new nodes and
# `pulumi up --replace` take it (a targeted replacement creates from the program's inputs, not the
# ignore_changes ones: pulumi/pulumi pkg/resource/deploy/step_generator.go, isTargetedReplace).
# A root volume is grown in place (ModifyVolume), but EBS cannot shrink one (EC2 API Reference,
# ModifyVolume: the new size must be at least the existing one): a running node whose volume is larger
# than its pool's keeps it (ROOT_VOLUME_SIZE ignored) and is stale until rotated.
ROOT_VOLUME_SIZE = "rootBlockDevice.volumeSize"
# Spot workers: a persistent request whose instance EC2 stops on interruption and starts again when
# capacity returns, so the node keeps its instance, address and private DNS name (its Kubernetes
# node name). `stop` needs `persistent` (EC2 User Guide, "Behavior of Spot Instance interruptions");
# terraform-provider-aws cancels the request when the instance is deleted (ec2_instance.go,
# resourceInstanceDelete: CancelSpotInstanceRequests when instance_lifecycle is spot), so a removed
# node is not launched again by its request. An instance terminated any other way is launched again
# by its request (EC2 User Guide, "Cancel a Spot Instance request"): the plan looks for such
# duplicates (plan/spot.py spot_request_warnings) and the README gives the recovery.
SPOT_OPTIONS = {"spot_instance_type": "persistent", "instance_interruption_behavior": "stop"}
# No `valid_until`: for RunInstances a persistent request without ValidUntil stays active until it is
# cancelled (EC2 API Reference, SpotMarketOptions.ValidUntil; no default or maximum is documented
# there any more, unlike the 7 days of RequestSpotInstances and launch templates). Any date would end
# the request, after which EC2 never starts an interrupted node again. It is ForceNew
# (ec2_instance.go: valid_until Optional+Computed+ForceNew), so it must never appear in a running
# node's inputs either; the provider reads it back, and the plan warns when a request has one.
SPOT_VALID_UNTIL = None

@dataclass(frozen=True)
class NodesArgs:
    cluster_id: str
    distribution: str
    nodes: tuple[PlannedNode, ...]
    default_amis: Mapping[str, str]  # pool name -> default image of its CPU architecture
    subnet_ids: Mapping[str, pulumi.Input[str]]
    node_dependencies: Mapping[str, list]
    security_group_id: pulumi.Input[str]
    instance_profiles: Mapping[str, pulumi.Input[str]]  # IAM role kind -> instance profile name
    ssh_user: str
    ssh_key_name: str | None = None
    rke2: rke2_config.Rke2Boot | None = None  # RKE2: what every node boots with
    # Resources a node must wait for besides its subnet's (IAM grants and parameters it uses at boot).
    boot_dependencies: tuple = ()
    leader_migration: bool = False
    kubernetes_version: str = ""
    ssh_key_path: str | None = None
    api_endpoint: str | None = None  # RKE1: in cluster.yml's authentication.sans
    etcd_s3: snapshots.EtcdS3 | None = None  # RKE1: cluster.yml's etcd backup_config
    protect_servers: bool = False
    proxy: ProxyEnv | None = None  # RKE1: Docker's environment (RKE2's is in `rke2`)
    rke_ingress: str | None = None  # RKE1: ingress.controller as set (None: RKE's default, nginx)
    extra_tags: Mapping[str, str] = field(default_factory=dict)
    # What runs, per (pool, index), from the stack's last outputs (state.model.NodeState.running, by output
    # key): the stale notes and which root volumes are kept.
    running: Mapping[tuple[str, int], Mapping[str, Any]] = field(default_factory=dict)
    # RKE1 with `registry` (issue 35): cluster.yml private_registries (registries.rke1_private_registries); a
    # password makes the whole cluster.yml output secret
    rke_private_registries: tuple[Mapping[str, Any], ...] = ()
    # RKE1 on another OS than Ubuntu (issue 35): pool name -> its OS's boot steps (scripts.rke1_node_steps)
    rke1_steps: Mapping[str, NodeSteps] = field(default_factory=dict)
    # RKE1 with identity.serviceAccounts irsa: cluster.yml's kube-api flags, the controlplane nodes' key files
    rke_identity: rke1_cluster.Rke1Identity | None = None


def user_data_base64(node: str, text: str) -> str:
    """The node's cloud-config as `user_data_base64`; a payload EC2 would refuse stops the run
    (config.py refuses every configuration that could get here, before anything is registered)."""
    encoded = cloud_init.encode_user_data(text)
    size = cloud_init.raw_size(encoded)
    if size > cloud_init.USER_DATA_LIMIT:
        raise pulumi.RunError(f"node {node}: user data is {size} bytes compressed; EC2 accepts at most "
                              f"{cloud_init.USER_DATA_LIMIT}")
    return encoded


def _valid_until(options: object) -> str:
    spot = getattr(options, "spot_options", None) if options is not None else None
    return (getattr(spot, "valid_until", None) if spot is not None else None) or ""


def _volume_size(device: object) -> int | None:
    """rootBlockDevice.volumeSize of an instance's state (the SDK's output type, or a plain map)."""
    size = getattr(device, "volume_size", None)
    if size is None and isinstance(device, Mapping):
        size = device.get("volumeSize", device.get("volume_size"))
    return size


def node_tags(cluster_id: str, node: PlannedNode, extra: Mapping[str, str]) -> dict[str, str]:
    # Exactly one cluster tag: the CCM refuses to start on an instance with two.
    out = {
        **tags.cluster_owned(cluster_id, node.name, extra),
        "rke-aws/pool": node.pool.name,
        "rke-aws/roles": ",".join(node.roles),
    }
    if node.pool.imds_hop_limit_reason:
        out[IMDS_REASON_TAG] = node.pool.imds_hop_limit_reason
    return out


class Nodes(pulumi.ComponentResource):
    def __init__(self, name: str, args: NodesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:nodes:Nodes", name, None, opts)
        self.instances: dict[str, aws.ec2.Instance] = {}
        self.wanted: dict[str, dict[str, Any]] = {}
        self.sent: dict[str, tuple[str, str]] = {}  # node -> (user_data_base64, its boot digest)
        for node in args.nodes:
            text = self._user_data(node, args)
            user_data = user_data_base64(node.name, text)
            ami = node.pool.ami or args.default_amis[node.pool.name]
            # What a node booted now would be (components/plan/stale.py compares it with what runs).
            digest = stale.boot_digest(text)
            self.sent[node.name] = (user_data, digest)
            wanted = self.wanted[node.name] = NodeBuild.wire(
                image=ami, instance_type=node.pool.instance_type, boot_digest=digest,
                root_volume_gb=node.pool.root_volume_gb)
            running = args.running.get((node.pool.name, node.index))
            keep_volume = running is not None and stale.BY_KEY[stale.ROOT_VOLUME].stale(
                running.get(stale.ROOT_VOLUME), node.pool.root_volume_gb)
            old = stale.stale_node({**(running or {}), **NodeState.wire(
                name=node.name, pool=node.pool.name, index=node.index, roles=list(node.roles))}, wanted) if running else None
            if old is not None:
                pulumi.log.info(f"{old.line()}; the running node keeps it until it is replaced: `rke-aws rotate <stack>` "
                                "(`python3 -m offline.tasks rotate <stack>` in rke-aws' repository; docs/operations/"
                                "rotate.md, 'Patching nodes by rotation')")
            protect = args.protect_servers and (node.pool.is_controlplane or node.pool.is_etcd)
            self.instances[node.name] = aws.ec2.Instance(
                f"{name}-{node.resource_name}",
                ami=ami,
                instance_type=node.pool.instance_type,
                subnet_id=args.subnet_ids[node.subnet.key],
                private_ip=node.private_ip,
                associate_public_ip_address=node.public,
                vpc_security_group_ids=[args.security_group_id],
                iam_instance_profile=args.instance_profiles[node.iam_role],
                key_name=args.ssh_key_name,
                # gzip + base64: the raw payload EC2 limits to 16 KiB is the compressed one.
                user_data_base64=user_data,
                metadata_options=aws.ec2.InstanceMetadataOptionsArgs(
                    http_endpoint="enabled",
                    http_tokens="required",
                    # 1 unless the pool states why pods need the node's credentials (config.py).
                    http_put_response_hop_limit=node.pool.imds_hop_limit,
                ),
                root_block_device=aws.ec2.InstanceRootBlockDeviceArgs(
                    volume_type=ROOT_VOLUME_TYPE,
                    volume_size=node.pool.root_volume_gb,
                    encrypted=True,
                    delete_on_termination=True,
                ),
                instance_market_options=aws.ec2.InstanceInstanceMarketOptionsArgs(
                    market_type="spot",
                    spot_options=aws.ec2.InstanceInstanceMarketOptionsSpotOptionsArgs(
                        **SPOT_OPTIONS, valid_until=SPOT_VALID_UNTIL),
                ) if node.pool.is_spot else None,
                tags=node_tags(args.cluster_id, node, args.extra_tags),
                volume_tags=tags.named(node.name, args.extra_tags),
                opts=pulumi.ResourceOptions(
                    parent=self,
                    # A fixed private IP cannot be held by the old and the new instance at once.
                    delete_before_replace=True,
                    ignore_changes=IGNORED_ON_UPDATE + ([ROOT_VOLUME_SIZE] if keep_volume else []),
                    depends_on=list(args.node_dependencies.get(node.subnet.key, [])) + list(args.boot_dependencies),
                    protect=protect,
                ),
            )
        self.node_outputs = [self._node_output(n, args) for n in args.nodes]
        self.rke_cluster_yml: pulumi.Output[str] | None = None
        if args.distribution == "rke":
            self.rke_cluster_yml = self._cluster_yml(args)
        self.register_outputs({"nodes": self.node_outputs})

    def _node_output(self, node: PlannedNode, args: NodesArgs) -> dict:
        inst = self.instances[node.name]

        def checked(actual: str) -> str:
            # The CCM finds a node's instance by this name; a mismatch must stop the deployment.
            if actual and actual != node.name:
                raise pulumi.RunError(f"node {node.name}: EC2 reports private DNS name {actual}; the CCM matches nodes by this name")
            return actual

        # What the next run reads back (components/state/model.py NodeState, the one place these keys are
        # spelled): index, subnet, ipBlock, keyName and instanceType keep this node where it is and let the
        # quorum guard see what would replace it.
        return NodeState.wire(
            name=node.name, pool=node.pool.name, index=node.index, roles=list(node.roles), instance_id=inst.id,
            urn=inst.urn,  # what `rke-aws rotate` replaces (pulumi up --target --replace)
            private_ip=inst.private_ip, private_dns=inst.private_dns.apply(checked), public_ip=inst.public_ip,
            availability_zone=node.az, subnet=node.subnet.key, ip_block=node.ip_block, key_name=args.ssh_key_name,
            instance_type=inst.instance_type,  # what runs (nodes ignore a changed pool type)
            market=node.pool.market,
            # What runs (the instance's state: ignored inputs keep their old value) and what a node booted now
            # would be: components/plan/stale.py compares them (the program's notes, the plan, the diff, rotate).
            image=inst.ami,
            boot_digest=inst.user_data_base64.apply(
                lambda held, sent=self.sent[node.name]: stale.held_boot_digest(held, *sent)),
            root_volume_gb=inst.root_block_device.apply(_volume_size),
            wanted=self.wanted[node.name],
            # The initialising server (RKE2): rotated last, and only while another server answers.
            first_server=node.is_first_server,
            # Spot only: the node's persistent request, so a duplicate it launched can be found and the request
            # cancelled (docs/features/nodes.md, 'Spot worker pools'), and the end date EC2 reports for it (empty: it lasts until
            # cancelled).
            **(dict(spot_request_id=inst.spot_instance_request_id,
                    spot_valid_until=inst.instance_market_options.apply(_valid_until)) if node.pool.is_spot else {}),
            # RKE1 only, and only another OS than Ubuntu's (absent: Ubuntu, as before `os`): `rke up` logs in as
            # the OS's user, so a running RKE1 pool keeps its OS (plan/nodes.py os_problems). RKE2 nodes that run
            # another OS than asked are stale by their image and boot digest, and rotation replaces them.
            **({"os": node.pool.os} if args.distribution == "rke" and node.pool.os != DEFAULT_OS else {}),
        )

    def _cluster_yml(self, args: NodesArgs) -> pulumi.Output[str]:
        public = {n.name: self.instances[n.name].public_ip for n in args.nodes if n.public}
        ips = pulumi.Output.all(**public) if public else pulumi.Output.from_input({})
        if any("password" in r for r in args.rke_private_registries):
            ips = pulumi.Output.secret(ips)  # cluster.yml carries the registry's password (RKE has no other way)
        return ips.apply(lambda known: rke1_cluster.rke_cluster_yml(
            args.nodes, known, cluster_id=args.cluster_id, kubernetes_version=args.kubernetes_version,
            ssh_user=args.ssh_user, ssh_key_path=args.ssh_key_path, leader_migration=args.leader_migration,
            api_endpoint=args.api_endpoint, etcd_s3=args.etcd_s3, ingress=args.rke_ingress,
            proxy=args.proxy.variables() if args.proxy else None, private_registries=args.rke_private_registries,
            identity=args.rke_identity))

    @staticmethod
    def _user_data(node: PlannedNode, args: NodesArgs) -> str:
        if args.distribution == "rke":
            return cloud_init.rke_user_data(node, args.ssh_user, args.proxy, args.rke1_steps.get(node.pool.name),
                                            args.rke_identity)
        assert args.rke2 is not None
        return cloud_init.rke2_user_data(node, args.rke2)
