"""The control-plane endpoint: one name, known at preview time, not tied to any one server.

RKE2 nodes join at https://<name>:9345 and kubectl may use https://<name>:6443; the name is in
every server's tls-san (RKE1: cluster.yml's authentication.sans). It lives in a Route 53 private
hosted zone associated with the cluster's VPC (created or brought), so it resolves inside the VPC
only.
- `dns` (default): the name resolves to every planned server address (round robin; clients try
  the next address when one does not answer). No load balancer to pay for.
- `nlb`: the name points (CNAME; GovCloud has no alias records to load balancers) at an internal
  Network Load Balancer with TCP listeners on 9345 and 6443 and health-checked IP targets, one
  stable address for everything. With split RKE2 roles the 6443 targets are the control-plane
  nodes and the 9345 targets the etcd nodes (rke2-docs install/server_roles.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..plan.names import KUBE_API_PORT, RKE2_SUPERVISOR_PORT, endpoint_name, zone_name
from ..settings import tags
from .security import cidr_key

RECORD_TTL = 30  # seconds: a replaced server's address is current within half a minute
# port -> health check path over HTTPS, or None for a TCP check. The supervisor's /ping answers
# anyone; kube-apiserver runs with anonymous-auth=false (RKE2 via k3s, RKE1 by default), so its
# /readyz answers 401 to a load balancer and every target would look unhealthy: TCP instead.
HEALTH_PATHS: dict[int, str | None] = {RKE2_SUPERVISOR_PORT: "/ping", KUBE_API_PORT: None}


def health_check(port: int) -> aws.lb.TargetGroupHealthCheckArgs:
    path = HEALTH_PATHS[port]
    common = dict(port=str(port), interval=10, healthy_threshold=2, unhealthy_threshold=2)
    if path is None:
        return aws.lb.TargetGroupHealthCheckArgs(protocol="TCP", **common)
    return aws.lb.TargetGroupHealthCheckArgs(protocol="HTTPS", path=path, matcher="200", **common)


# ELBv2 refuses load balancer names that begin with "internal-" (the prefix of internal load
# balancers' DNS names): terraform-provider-aws internal/service/elbv2/validate.go validName.
RESERVED_LB_PREFIX = "internal-"


def short_name(cluster_id: str, suffix: str, load_balancer: bool = False) -> str:
    """Load balancer and target group names: at most 32 characters, unique per cluster; a load
    balancer's never starts with "internal-". Only names AWS refuses change (a renamed load balancer
    or target group is replaced): the load balancer of a cluster whose ID starts with "internal"
    gets an "lb-" prefix; target groups, which may start so, keep their names."""
    digest = hashlib.sha256(cluster_id.encode()).hexdigest()[:6]
    room = 32 - len(suffix) - len(digest) - 2
    name = f"{cluster_id[:room].rstrip('-')}-{digest}-{suffix}"
    if load_balancer and name.startswith(RESERVED_LB_PREFIX):
        name = f"lb-{cluster_id[:room - 3].rstrip('-')}-{digest}-{suffix}"
    return name


@dataclass(frozen=True)
class ControlPlaneEndpointArgs:
    cluster_id: str
    mode: str  # "dns" | "nlb"
    vpc_id: pulumi.Input[str]
    region: str
    server_ips: Sequence[str]  # the API servers: the DNS name's addresses, the 6443 targets
    ports: Sequence[int]  # RKE2: 9345 and 6443; RKE1: 6443
    # RKE2: the 9345 targets, servers running etcd (split roles: not the API servers; config.py refuses
    # split roles with `dns`, whose one name cannot tell ports apart). None: server_ips.
    supervisor_ips: Sequence[str] | None = None
    subnet_ids: Sequence[pulumi.Input[str]] = ()  # nlb: where its interfaces live (private subnets)
    node_security_group_id: pulumi.Input[str] | None = None
    admin_cidrs: Sequence[str] = ()
    extra_tags: Mapping[str, str] = field(default_factory=dict)
    # Admin rules the stack's state holds under the position-numbered names of earlier releases:
    # child name -> that name (plan.admin_rule_aliases read them from the group's rules).
    admin_aliases: Mapping[str, str] = field(default_factory=dict)


class ControlPlaneEndpoint(pulumi.ComponentResource):
    def __init__(self, name: str, args: ControlPlaneEndpointArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:endpoint:ControlPlaneEndpoint", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.name = endpoint_name(args.cluster_id)
        zone = aws.route53.Zone(
            f"{name}-endpoint",
            name=zone_name(args.cluster_id),
            comment=f"Control-plane endpoint of cluster {args.cluster_id} (rke-aws)",
            vpcs=[aws.route53.ZoneVpcArgs(vpc_id=args.vpc_id, vpc_region=args.region)],
            force_destroy=True,  # only this program writes records into it
            tags=tags.named(f"{name}-endpoint", args.extra_tags),
            opts=child,
        )
        self.zone_id = zone.zone_id
        self.load_balancer: aws.lb.LoadBalancer | None = None
        if args.mode == "nlb":
            target = self._load_balancer(name, args, child).dns_name
            record = aws.route53.Record(f"{name}-api", zone_id=zone.zone_id, name=self.name, type="CNAME",
                                        ttl=RECORD_TTL, records=[target], opts=child)
        else:
            record = aws.route53.Record(f"{name}-api", zone_id=zone.zone_id, name=self.name, type="A",
                                        ttl=RECORD_TTL, records=sorted(args.server_ips), opts=child)
        self.record = record
        self.register_outputs({"name": self.name})

    def _load_balancer(self, name: str, args: ControlPlaneEndpointArgs,
                       child: pulumi.ResourceOptions) -> aws.lb.LoadBalancer:
        sg_name = f"{name}-endpoint"
        group = aws.ec2.SecurityGroup(
            sg_name,
            description=f"Control-plane load balancer of cluster {args.cluster_id} (no cluster tag: not a node group)",
            vpc_id=args.vpc_id,
            tags=tags.named(sg_name, args.extra_tags),
            opts=child,
        )
        for port in args.ports:
            aws.vpc.SecurityGroupIngressRule(
                f"{sg_name}-nodes-{port}", security_group_id=group.id, ip_protocol="tcp", from_port=port, to_port=port,
                referenced_security_group_id=args.node_security_group_id, description=f"nodes to the endpoint, port {port}",
                tags=tags.named(f"{sg_name}-nodes-{port}", args.extra_tags), opts=child)
            aws.vpc.SecurityGroupEgressRule(
                f"{sg_name}-to-servers-{port}", security_group_id=group.id, ip_protocol="tcp", from_port=port,
                to_port=port, referenced_security_group_id=args.node_security_group_id,
                description=f"the endpoint to the servers and their health checks, port {port}",
                tags=tags.named(f"{sg_name}-to-servers-{port}", args.extra_tags), opts=child)
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-nodes-from-endpoint-{port}", security_group_id=args.node_security_group_id,
                ip_protocol="tcp", from_port=port, to_port=port, referenced_security_group_id=group.id,
                description=f"the control-plane load balancer to the servers, port {port}",
                tags=tags.named(f"{name}-nodes-from-endpoint-{port}", args.extra_tags), opts=child)
        # Named by CIDR, so removing one re-creates no other (security.rule_plans says why); the
        # position-numbered names of earlier releases are aliases where AWS says a rule holds the CIDR.
        for cidr in args.admin_cidrs:
            rname = f"{sg_name}-admin-{cidr_key(cidr)}"
            aws.vpc.SecurityGroupIngressRule(
                rname, security_group_id=group.id, ip_protocol="tcp", from_port=KUBE_API_PORT,
                to_port=KUBE_API_PORT, cidr_ipv4=cidr, description=f"admin access ({cidr}) to the Kubernetes API",
                tags=tags.named(rname, args.extra_tags),
                opts=pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(name=args.admin_aliases[rname])]
                                            if rname in args.admin_aliases else None))
        lb = aws.lb.LoadBalancer(
            f"{name}-api",
            name=short_name(args.cluster_id, "api", load_balancer=True),
            internal=True,
            load_balancer_type="network",
            subnets=list(args.subnet_ids),
            security_groups=[group.id],
            enable_cross_zone_load_balancing=True,
            tags=tags.named(f"{name}-api", args.extra_tags),
            # A Network Load Balancer that loses a subnet is replaced (terraform-provider-aws
            # internal/service/elbv2/load_balancer.go customizeDiffLoadBalancerNLB), and its fixed name
            # cannot exist twice (resourceLoadBalancerCreate: "already exists"): the old one goes first.
            opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True),
        )
        for port in args.ports:
            tg = aws.lb.TargetGroup(
                f"{name}-api-{port}",
                name=short_name(args.cluster_id, str(port)),
                port=port,
                protocol="TCP",
                target_type="ip",  # the planned server addresses: known at preview, no instance dependency
                vpc_id=args.vpc_id,
                health_check=health_check(port),
                tags=tags.named(f"{name}-api-{port}", args.extra_tags),
                opts=child,
            )
            targets = args.supervisor_ips if port == RKE2_SUPERVISOR_PORT and args.supervisor_ips is not None \
                else args.server_ips
            for ip in sorted(targets):
                aws.lb.TargetGroupAttachment(f"{name}-api-{port}-{ip.replace('.', '-')}", target_group_arn=tg.arn,
                                             target_id=ip, port=port, opts=child)
            aws.lb.Listener(f"{name}-api-{port}", load_balancer_arn=lb.arn, port=port, protocol="TCP",
                            default_actions=[aws.lb.ListenerDefaultActionArgs(type="forward", target_group_arn=tg.arn)],
                            tags=tags.named(f"{name}-api-{port}", args.extra_tags), opts=child)
        self.load_balancer = lb
        return lb
