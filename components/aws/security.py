"""The one security group that carries the cluster tag.

The CCM picks the cluster-tagged group among an instance's groups for load balancer traffic and
refuses to create a load balancer when it finds more than one, so exactly one group is tagged
and it is attached to every node. Rules are separate resources (never inline) so a rule change
is an add/remove in the preview, not a replacement of the group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..plan.names import ADMIN_PORTS, KUBE_API_PORT, SSH_PORT, cidr_key  # noqa: F401 - used by endpoint.py and tests
from ..settings import tags


@dataclass(frozen=True)
class RulePlan:
    name: str
    direction: str  # "ingress" | "egress"
    protocol: str
    from_port: int | None
    to_port: int | None
    cidr: str | None  # None: the group itself
    description: str


def rule_plans(admin_cidrs: tuple[str, ...]) -> list[RulePlan]:
    """Admin rules are named by their CIDR, so removing or reordering one re-creates no other (AWS
    refuses a second rule identical to one that exists, and a create-before-delete of the same rule
    is exactly that). Releases before named them by list position; which position held which CIDR
    is read from AWS (plan.admin_rule_aliases), never assumed from the list's current order."""
    rules = [
        RulePlan("nodes", "ingress", "-1", None, None, None, "all traffic between cluster nodes"),
        RulePlan("egress", "egress", "-1", None, None, "0.0.0.0/0", "nodes reach package mirrors, registries and AWS APIs"),
    ]
    for cidr in admin_cidrs:
        for port in ADMIN_PORTS:
            rules.append(RulePlan(f"admin-{cidr_key(cidr)}-{port}", "ingress", "tcp", port, port, cidr,
                                  f"admin access ({cidr}) to port {port}"))
    return rules


@dataclass(frozen=True)
class ClusterSecurityGroupArgs:
    cluster_id: str
    vpc_id: pulumi.Input[str]
    admin_cidrs: tuple[str, ...] = ()
    extra_tags: Mapping[str, str] = field(default_factory=dict)
    # Admin rules the stack's state holds under the position-numbered names of earlier releases:
    # child name -> that name (plan.admin_rule_aliases read them from the group's rules).
    admin_aliases: Mapping[str, str] = field(default_factory=dict)


class ClusterSecurityGroup(pulumi.ComponentResource):
    def __init__(self, name: str, args: ClusterSecurityGroupArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:security:ClusterSecurityGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        gname = f"{name}-nodes"
        self.group = aws.ec2.SecurityGroup(
            gname,
            description=f"Nodes of cluster {args.cluster_id}; the only group with its cluster tag",
            vpc_id=args.vpc_id,
            tags=tags.cluster_owned(args.cluster_id, gname, args.extra_tags),
            opts=child,
        )
        for rule in rule_plans(args.admin_cidrs):
            cname = f"{gname}-{rule.name}"
            common = dict(
                security_group_id=self.group.id,
                ip_protocol=rule.protocol,
                from_port=rule.from_port,
                to_port=rule.to_port,
                description=rule.description,
                tags=tags.named(f"{gname}-{rule.name}", args.extra_tags),
                opts=pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(name=args.admin_aliases[cname])]
                                            if cname in args.admin_aliases else None),
            )
            target = {"cidr_ipv4": rule.cidr} if rule.cidr else {"referenced_security_group_id": self.group.id}
            cls = aws.vpc.SecurityGroupIngressRule if rule.direction == "ingress" else aws.vpc.SecurityGroupEgressRule
            cls(f"{gname}-{rule.name}", **common, **target)
        self.group_id = self.group.id
        self.register_outputs({"securityGroupId": self.group_id})
