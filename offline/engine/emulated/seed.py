"""What an emulated account holds before a program runs, besides its default VPC and the published images: a
user's network (VPC, subnets, route tables), addresses and instances already in use, SSM parameters, empty
buckets, security groups and rules an earlier release left. Each is created through moto's own EC2, SSM and S3
APIs (boto3 clients on the account), so every answer the program then gets comes from moto's models, the same
way it does for what the program creates; there is no second table of answers.

AWS gives no way to choose a resource's ID, and moto 5.2's EC2 draws IDs from its random source (ec2/utils.py
random_vpc_id, random_subnet_id, random_security_group_id, random_security_group_rule_id; the `_custom_id_` tag
of moto/utilities/id_generator.py does not reach EC2 there). A test states the IDs its configuration names
(`subnet-0a0a...`), so while such a resource is created `chosen_id` makes moto's generator return that ID: the
resource is otherwise moto's own.
"""

from __future__ import annotations

import contextlib
import importlib
import ipaddress
from collections.abc import Iterator, Mapping
from typing import Any

# The moto generator each kind of chosen ID replaces: (module that imported it, its name there).
_GENERATORS = {
    "vpc": ("moto.ec2.models.vpcs", "random_vpc_id"),
    "subnet": ("moto.ec2.models.subnets", "random_subnet_id"),
    "sg": ("moto.ec2.models.security_groups", "random_security_group_id"),
    "sgr": ("moto.ec2.models.security_groups", "random_security_group_rule_id"),
}
# A VPC's CIDR block is between /16 and /28 (Amazon VPC user guide, "VPC CIDR blocks"): a brought VPC gets the
# /16 around each of its subnets (its first as the primary block, the others associated to it).
VPC_PREFIX = 16


@contextlib.contextmanager
def chosen_id(kind: str, value: str) -> Iterator[None]:
    """While active, moto names the next resource of `kind` (vpc, subnet, sg, sgr) `value`."""
    module_name, function = _GENERATORS[kind]
    module = importlib.import_module(module_name)
    real = getattr(module, function)
    setattr(module, function, lambda: value)
    try:
        yield
    finally:
        setattr(module, function, real)


def network(ec2: Any, subnets: Mapping[str, Mapping[str, Any]], vpc_dns: Mapping[str, tuple[bool, bool]]) -> None:
    """A user's VPCs and subnets: `subnets` id -> {cidr, az, vpc, and optionally public (its route table has an
    internet gateway route), route ("igw" | "nat" | "none"; default igw when public, else nat) and hostnameType};
    `vpc_dns` VPC -> (DNS support, DNS hostnames), both on otherwise (what the program requires of a brought VPC)."""
    by_vpc: dict[str, list[str]] = {}
    for sid, spec in subnets.items():
        by_vpc.setdefault(str(spec["vpc"]), []).append(sid)
    for vpc, sids in by_vpc.items():
        blocks = list(dict.fromkeys(str(ipaddress.IPv4Network(subnets[s]["cidr"]).supernet(new_prefix=VPC_PREFIX))
                                    for s in sids))
        with chosen_id("vpc", vpc):
            ec2.create_vpc(CidrBlock=blocks[0])
        for block in blocks[1:]:
            ec2.associate_vpc_cidr_block(VpcId=vpc, CidrBlock=block)
        support, hostnames = vpc_dns.get(vpc, (True, True))
        ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsSupport={"Value": support})
        ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": hostnames})
        for sid in sids:
            spec = subnets[sid]
            with chosen_id("subnet", sid):
                ec2.create_subnet(VpcId=vpc, CidrBlock=spec["cidr"], AvailabilityZone=spec["az"])
            if spec.get("hostnameType"):
                ec2.modify_subnet_attribute(SubnetId=sid, PrivateDnsHostnameTypeOnLaunch=spec["hostnameType"])
                # moto gap: its ModifySubnetAttribute drops PrivateDnsHostnameTypeOnLaunch (moto 5.2
                # ec2/responses/subnets.py reads three other attributes only); the subnet's model holds it.
                from moto.ec2.models import ec2_backends

                from rke_aws_offline.engine.emulated.provider_checks import ACCOUNT_ID

                region = ec2.meta.region_name
                subnet = ec2_backends[ACCOUNT_ID][region].get_subnet(sid)
                subnet.private_dns_name_options_on_launch["HostnameType"] = spec["hostnameType"]
        _routes(ec2, vpc, {s: subnets[s] for s in sids})


def _route(spec: Mapping[str, Any]) -> str:
    return str(spec.get("route") or ("igw" if spec.get("public") else "nat"))


def _routes(ec2: Any, vpc: str, subnets: Mapping[str, Mapping[str, Any]]) -> None:
    """One route table per subnet, as its `route` says: 0.0.0.0/0 to an internet gateway, to a NAT gateway (in a
    subnet of the VPC that routes to the internet gateway), or no default route."""
    routes = {sid: _route(spec) for sid, spec in subnets.items()}
    igw = nat = None
    if "igw" in routes.values() or "nat" in routes.values():
        igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
        ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    if "nat" in routes.values():
        home = next((s for s, r in routes.items() if r == "igw"), next(iter(routes)))
        eip = ec2.allocate_address(Domain="vpc")["AllocationId"]
        nat = ec2.create_nat_gateway(SubnetId=home, AllocationId=eip)["NatGateway"]["NatGatewayId"]
    for sid, route in routes.items():
        table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
        if route == "igw":
            ec2.create_route(RouteTableId=table, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
        elif route == "nat":
            ec2.create_route(RouteTableId=table, DestinationCidrBlock="0.0.0.0/0", NatGatewayId=nat)
        ec2.associate_route_table(RouteTableId=table, SubnetId=sid)


def _subnet_holding(ec2: Any, ip: str) -> str:
    """The account's subnet whose range holds `ip`; a VPC (/16) and subnet (/24) around it when none does (an
    instance of another network of the account)."""
    addr = ipaddress.IPv4Address(ip)
    for s in ec2.describe_subnets()["Subnets"]:
        if addr in ipaddress.IPv4Network(s["CidrBlock"]):
            return str(s["SubnetId"])
    vpc = ec2.create_vpc(CidrBlock=str(ipaddress.IPv4Network(f"{ip}/{VPC_PREFIX}", strict=False)))["Vpc"]["VpcId"]
    return str(ec2.create_subnet(VpcId=vpc, CidrBlock=str(ipaddress.IPv4Network(f"{ip}/24", strict=False)))
               ["Subnet"]["SubnetId"])


def taken_addresses(ec2: Any, ips: set[str]) -> None:
    """Addresses in use by network interfaces of the account (another team's appliance, a load balancer)."""
    for ip in sorted(ips):
        ec2.create_network_interface(SubnetId=_subnet_holding(ec2, ip), PrivateIpAddress=ip)


def instances(ec2: Any, at: Mapping[str, Mapping[str, str]], image: str) -> dict[str, str]:
    """Instances of the account besides what the program creates: private IP -> their tags; returns IP ->
    instance ID."""
    ids = {}
    for ip, tags in sorted(at.items()):
        kwargs: dict[str, Any] = {}
        if tags:
            kwargs["TagSpecifications"] = [{"ResourceType": "instance",
                                            "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
        ids[ip] = ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1, InstanceType="m6i.large",
                                    SubnetId=_subnet_holding(ec2, ip), PrivateIpAddress=ip,
                                    **kwargs)["Instances"][0]["InstanceId"]
    return ids


def security_groups(ec2: Any, groups: Mapping[str, Mapping[str, Any]], rules: Mapping[str, Mapping[str, Any]]) -> None:
    """Security groups and rules of the account besides what the program creates (what an earlier release left):
    group ID -> {vpcId, tags}; rule ID -> {groupId, isEgress, ipProtocol, fromPort, toPort, cidrIpv4 (or
    referencedGroupId), tags}. A VPC a group names is created when the account lacks it."""
    have = {v["VpcId"] for v in ec2.describe_vpcs()["Vpcs"]}
    for gid, spec in sorted(groups.items()):
        vpc = spec["vpcId"]
        if vpc not in have:
            with chosen_id("vpc", vpc):
                ec2.create_vpc(CidrBlock="10.0.0.0/16")
            have.add(vpc)
        kwargs: dict[str, Any] = {}
        if spec.get("tags"):
            kwargs["TagSpecifications"] = [{"ResourceType": "security-group",
                                            "Tags": [{"Key": k, "Value": v} for k, v in spec["tags"].items()]}]
        with chosen_id("sg", gid):
            ec2.create_security_group(GroupName=f"group-{gid}", Description="an earlier release's group", VpcId=vpc,
                                      **kwargs)
    for rid, r in sorted(rules.items()):
        perm: dict[str, Any] = {"IpProtocol": r.get("ipProtocol", "tcp"), "FromPort": r.get("fromPort", -1),
                                "ToPort": r.get("toPort", -1)}
        if r.get("referencedGroupId"):
            perm["UserIdGroupPairs"] = [{"GroupId": r["referencedGroupId"]}]
        else:
            perm["IpRanges"] = [{"CidrIp": r.get("cidrIpv4", "0.0.0.0/0")}]
        tags = [{"ResourceType": "security-group-rule", "Tags": [{"Key": k, "Value": v} for k, v in r["tags"].items()]}] \
            if r.get("tags") else []
        call = ec2.authorize_security_group_egress if r.get("isEgress") else ec2.authorize_security_group_ingress
        with chosen_id("sgr", rid):
            call(GroupId=r["groupId"], IpPermissions=[perm], **({"TagSpecifications": tags} if tags else {}))
