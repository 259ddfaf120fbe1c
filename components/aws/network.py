"""The cluster's VPC: subnets per AZ and tier, internet and NAT gateways, route tables.

Everything the CCM inspects carries `kubernetes.io/cluster/<clusterId>`: the VPC, every subnet and
every route table (`owned`), plus the load-balancer role tag on each subnet. In bring-your-own
mode nothing network-wise is created; the given VPC and subnets only receive `shared` cluster
tags and the role tags, and their route tables are left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..plan.network import PlannedSubnet
from ..plan.nodes import node_range
from ..settings import tags
from ..settings.resolve import NetworkConfig
from .vpc_endpoints import INTERFACE, Endpoint


@dataclass(frozen=True)
class NetworkArgs:
    cluster_id: str
    network: NetworkConfig
    subnets: tuple[PlannedSubnet, ...]
    extra_tags: Mapping[str, str] = field(default_factory=dict)
    # Bring-your-own: subnet ID -> its position-numbered key ("private-0") when earlier releases
    # named the tags by position (from the stack's last outputs), for aliases; None: no aliases.
    legacy_subnet_keys: Mapping[str, str] | None = None
    # airgap (issue 35): no internet gateway, no NAT; these VPC endpoints instead (vpc_endpoints.py)
    airgap: bool = False
    endpoints: tuple[Endpoint, ...] = ()


class Network(pulumi.ComponentResource):
    vpc_id: pulumi.Output[str]
    subnet_ids: dict[str, pulumi.Output[str]]
    # Per subnet key, what a node there must wait for: the reservation of its address and its
    # subnet's route table. Not the NAT gateway (the slowest resource, ~105 s): a private node's
    # boot script retries its downloads for 15 minutes instead (node/scripts.py RETRY_SECONDS).
    node_dependencies: dict[str, list[pulumi.Resource]]

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:network:Network", name, None, opts)
        self._name = name
        self._args = args
        self._child = pulumi.ResourceOptions(parent=self)
        self.subnet_ids = {}
        self.node_dependencies = {}
        if args.network.bring_your_own:
            self._tag_existing()
        else:
            self._create()
        self.register_outputs({"vpcId": self.vpc_id, "subnetIds": self.subnet_ids})

    def _owned(self, name: str) -> dict[str, str]:
        return tags.cluster_owned(self._args.cluster_id, name, self._args.extra_tags)

    def _create(self) -> None:
        a, n, child = self._args, self._name, self._child
        vpc = aws.ec2.Vpc(
            f"{n}-vpc",
            cidr_block=a.network.vpc_cidr,
            # Node names are EC2 private DNS names; both flags are needed for them to exist.
            enable_dns_support=True,
            enable_dns_hostnames=True,
            tags=self._owned(f"{n}-vpc"),
            opts=child,
        )
        self.vpc_id = vpc.id
        igw = None if a.airgap else aws.ec2.InternetGateway(
            f"{n}-igw", vpc_id=vpc.id, tags=tags.named(f"{n}-igw", a.extra_tags), opts=child)

        subnets: dict[str, aws.ec2.Subnet] = {}
        reservations: dict[str, aws.ec2.SubnetCidrReservation] = {}
        for plan in a.subnets:
            sname = f"{n}-{plan.tier}-{plan.az_index}"
            subnets[plan.key] = aws.ec2.Subnet(
                sname,
                vpc_id=vpc.id,
                cidr_block=plan.cidr,
                availability_zone=plan.az,
                # Public addresses are asked for per instance; nothing gets one by accident.
                map_public_ip_on_launch=False,
                # Node names are ip-... private DNS names; resource-name hostnames would break them.
                private_dns_hostname_type_on_launch="ip-name",
                tags=tags.subnet(a.cluster_id, sname, plan.tier, a.extra_tags),
                opts=child,
            )
            self.subnet_ids[plan.key] = subnets[plan.key].id
            # Explicit reservation: AWS never auto-assigns these addresses (NAT gateways, load
            # balancer interfaces), so the node addresses planned in plan/nodes.py stay free.
            reservations[plan.key] = aws.ec2.SubnetCidrReservation(
                f"{sname}-nodes",
                subnet_id=subnets[plan.key].id,
                cidr_block=str(node_range(plan.cidr)),
                reservation_type="explicit",
                description=f"rke-aws node addresses of cluster {a.cluster_id}",
                opts=child,
            )

        public_plans = [p for p in a.subnets if p.tier == "public"]
        if igw is None:
            self._private(vpc, subnets, reservations, {})
            return
        public_rt = aws.ec2.RouteTable(f"{n}-public", vpc_id=vpc.id, tags=self._owned(f"{n}-public"), opts=child)
        public_default = aws.ec2.Route(
            f"{n}-public-default", route_table_id=public_rt.id, destination_cidr_block="0.0.0.0/0",
            gateway_id=igw.id, opts=child,
        )
        for plan in public_plans:
            assoc = aws.ec2.RouteTableAssociation(
                f"{n}-{plan.key}", subnet_id=subnets[plan.key].id, route_table_id=public_rt.id, opts=child,
            )
            self.node_dependencies[plan.key] = [reservations[plan.key], public_default, assoc]

        # NAT gateways by zone index; `single` uses the lowest index, so reordering zones moves nothing.
        nat_ids: dict[int, pulumi.Output[str]] = {}
        nat_count = {"none": 0, "single": 1, "perAz": len(public_plans)}[a.network.nat_gateways]
        for plan in sorted(public_plans, key=lambda p: p.az_index)[:nat_count]:
            eip = aws.ec2.Eip(f"{n}-nat-{plan.az_index}", domain="vpc", tags=tags.named(f"{n}-nat-{plan.az_index}", a.extra_tags), opts=child)
            nat = aws.ec2.NatGateway(
                f"{n}-nat-{plan.az_index}",
                allocation_id=eip.id,
                subnet_id=subnets[plan.key].id,
                tags=tags.named(f"{n}-nat-{plan.az_index}", a.extra_tags),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[public_default]),
            )
            nat_ids[plan.az_index] = nat.id

        self._private(vpc, subnets, reservations, nat_ids)

    def _private(self, vpc: aws.ec2.Vpc, subnets: Mapping[str, aws.ec2.Subnet],
                 reservations: Mapping[str, aws.ec2.SubnetCidrReservation], nat_ids: Mapping[int, pulumi.Output[str]]) -> None:
        a, n, child = self._args, self._name, self._child
        tables: list[aws.ec2.RouteTable] = []
        for plan in (p for p in a.subnets if p.tier == "private"):
            rt_name = f"{n}-private-{plan.az_index}"
            rt = aws.ec2.RouteTable(rt_name, vpc_id=vpc.id, tags=self._owned(rt_name), opts=child)
            assoc = aws.ec2.RouteTableAssociation(
                f"{n}-{plan.key}", subnet_id=subnets[plan.key].id, route_table_id=rt.id, opts=child,
            )
            if nat_ids:
                # The zone's own NAT gateway (perAz), else the single one.
                nat_id = nat_ids.get(plan.az_index, nat_ids[min(nat_ids)])
                aws.ec2.Route(
                    f"{rt_name}-default", route_table_id=rt.id, destination_cidr_block="0.0.0.0/0",
                    nat_gateway_id=nat_id, opts=child,
                )
            self.node_dependencies[plan.key] = [reservations[plan.key], assoc]
            tables.append(rt)
        if a.endpoints:
            ready = self._endpoints(vpc, [subnets[p.key] for p in a.subnets if p.tier == "private"], tables)
            for key in self.node_dependencies:
                self.node_dependencies[key] += ready

    def _endpoints(self, vpc: aws.ec2.Vpc, subnets: list[aws.ec2.Subnet],
                   tables: list[aws.ec2.RouteTable]) -> list[pulumi.Resource]:
        """airgap: the interface endpoints (private DNS, in every private subnet, behind a group admitting
        only the VPC on 443) and the gateway endpoints on the private route tables; every AWS API a node or
        an in-cluster component calls (vpc_endpoints.py derives them from the granted actions)."""
        a, n, child = self._args, self._name, self._child
        group = aws.ec2.SecurityGroup(f"{n}-endpoints", vpc_id=vpc.id,
                                      description=f"rke-aws VPC endpoints of cluster {a.cluster_id}: HTTPS from the VPC",
                                      tags=tags.named(f"{n}-endpoints", a.extra_tags), opts=child)
        aws.vpc.SecurityGroupIngressRule(f"{n}-endpoints-https", security_group_id=group.id, ip_protocol="tcp",
                                         from_port=443, to_port=443, cidr_ipv4=vpc.cidr_block,
                                         description="HTTPS from the VPC to the AWS APIs' endpoints", opts=child)
        out: list[pulumi.Resource] = []
        for e in a.endpoints:
            ename = f"{n}-endpoint-{e.service.replace('.', '-')}"
            if e.type == INTERFACE:
                out.append(aws.ec2.VpcEndpoint(
                    ename, vpc_id=vpc.id, service_name=e.service_name, vpc_endpoint_type=e.type,
                    private_dns_enabled=e.private_dns, subnet_ids=[s.id for s in subnets],
                    security_group_ids=[group.id], tags=tags.named(ename, a.extra_tags), opts=child))
            else:
                out.append(aws.ec2.VpcEndpoint(
                    ename, vpc_id=vpc.id, service_name=e.service_name, vpc_endpoint_type=e.type,
                    route_table_ids=[t.id for t in tables], tags=tags.named(ename, a.extra_tags), opts=child))
        return out

    def _tag_existing(self) -> None:
        a, n, child = self._args, self._name, self._child
        cluster_key = tags.cluster_tag_key(a.cluster_id)
        self.vpc_id = pulumi.Output.from_input(a.network.vpc_id)
        aws.ec2.Tag(f"{n}-vpc-cluster", resource_id=a.network.vpc_id, key=cluster_key, value=tags.SHARED, opts=child)
        ids = {"public": a.network.public_subnet_ids or (), "private": a.network.private_subnet_ids or ()}
        for plan in a.subnets:
            subnet_id = ids[plan.tier][plan.az_index]
            # Named by subnet ID: reordering the lists re-creates no tag. A tag re-created under a new
            # name is created before the old one is deleted, and deleting the old one then removes
            # the key from the subnet (the cluster and role tags gone, the CCM no longer finds it).
            sname = f"{n}-{subnet_id}"
            # Only a subnet the last outputs name gets its old position's name: for an ID they do
            # not know, that name may be another subnet's old tag (review finding 6), which another
            # registration claims or which the engine must delete (step_generator.go getOldResource).
            old = None
            if a.legacy_subnet_keys is not None and subnet_id in a.legacy_subnet_keys:
                old = f"{n}-{a.legacy_subnet_keys[subnet_id]}"

            def opts(suffix: str, old: str | None = old) -> pulumi.ResourceOptions:
                return pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(name=f"{old}-{suffix}")] if old else None)
            aws.ec2.Tag(f"{sname}-cluster", resource_id=subnet_id, key=cluster_key, value=tags.SHARED, opts=opts("cluster"))
            aws.ec2.Tag(f"{sname}-role", resource_id=subnet_id, key=tags.subnet_role_tag(plan.tier), value="1",
                        opts=opts("role"))
            self.subnet_ids[plan.key] = pulumi.Output.from_input(subnet_id)
            self.node_dependencies[plan.key] = []
