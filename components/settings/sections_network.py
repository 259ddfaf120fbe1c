"""The sections of the network the nodes live in and how people reach them: `network`, `access`
(settings/sections.py composes them into ClusterKeys)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field
from pydantic.json_schema import WithJsonSchema

from .fields import (
    ADMIN_CIDR_PATTERN,
    AZ_PATTERN,
    DEFAULT_AZ_COUNT,
    DEFAULT_NAT,
    DEFAULT_SSH_USER,
    DEFAULT_SSM,
    DEFAULT_VPC_CIDR,
    MAX_ADMIN_CIDRS,
    MAX_AZ_COUNT,
    POD_CIDR,
    SERVICE_CIDR,
    SSH_KEY_NAME_PATTERN,
    SSH_KEY_PATH_PATTERN,
    SSH_USER_PATTERN,
    SUBNET_CIDR_PATTERN,
    SUBNET_ID_PATTERN,
    VPC_CIDR_PATTERN,
    VPC_ID_PATTERN,
    WORLD_ADMIN_DESCRIPTION,
    Bool,
    Msg,
    NonEmpty,
    OrUnset,
    SchemaPattern,
)
from .patterns import int_set_regex, whole
from .section import Section


class Network(Section):
    """network: a VPC this program creates (CIDR keys), or yours (ID keys)."""

    # None only in a resolved bring-your-own network (settings/resolve.py): the VPC is yours.
    vpc_cidr: OrUnset[Annotated[str, SchemaPattern(VPC_CIDR_PATTERN), Msg(what="an IPv4 CIDR like 10.0.0.0/16", reason="room for the 16 subnet slots the layout carves", type_name="CIDR")]] = Field(
        DEFAULT_VPC_CIDR, description=f"VPC CIDR: RFC 1918, /16 to /24, canonical, not overlapping RKE's pod and service networks ({POD_CIDR}, {SERVICE_CIDR}).")
    availability_zones: OrUnset[Annotated[Any, WithJsonSchema({"anyOf": [
        {"type": "integer", "minimum": 1, "maximum": MAX_AZ_COUNT},
        {"type": "string", "pattern": whole(int_set_regex(range(1, MAX_AZ_COUNT + 1)))},
        {"type": "array", "items": {"type": "string", "pattern": AZ_PATTERN}, "minItems": 1, "maxItems": MAX_AZ_COUNT,
         "uniqueItems": True}]}),
        Msg(default=f"`{DEFAULT_AZ_COUNT}` (bring-your-own: the subnets' zones)", type_name="int or list",
            reason="three zones survive the loss of one with etcd quorum intact")]] = Field(
        None, description=f"Number of zones (1-{MAX_AZ_COUNT}, looked up) or explicit zone names.")
    nat_gateways: Annotated[Literal["none", "single", "perAz"], Msg(kind="a NAT layout", allowed="none, single, perAz", reason="the cheapest layout that still gives private nodes a way out")] = Field(
        DEFAULT_NAT, description="NAT layout for private subnets (none only with public pools).")
    public_subnet_cidrs: OrUnset[Annotated[tuple[Annotated[str, SchemaPattern(SUBNET_CIDR_PATTERN)], ...], Msg(what="IPv4 CIDRs", default="derived", type_name="list of CIDRs"),
                                 WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_CIDR_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="One public subnet per zone, inside the VPC, non-overlapping (give both lists or neither).")
    private_subnet_cidrs: OrUnset[Annotated[tuple[Annotated[str, SchemaPattern(SUBNET_CIDR_PATTERN)], ...], Msg(what="IPv4 CIDRs", default="derived", type_name="list of CIDRs"),
                                  WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_CIDR_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="One private subnet per zone, inside the VPC, non-overlapping (give both lists or neither).")
    vpc_id: OrUnset[Annotated[str, NonEmpty(VPC_ID_PATTERN), Msg(what="a VPC ID like vpc-0123456789abcdef0", type_name="VPC ID")]] = Field(
        None, description="Bring-your-own VPC (with publicSubnetIds and privateSubnetIds; excludes the CIDR keys and natGateways).")
    public_subnet_ids: OrUnset[Annotated[tuple[Annotated[str, SchemaPattern(SUBNET_ID_PATTERN)], ...], Msg(what="subnet IDs like subnet-0123456789abcdef0", type_name="list of subnet IDs"),
                               WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_ID_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="Bring-your-own public subnets, one per zone, in zone order.")
    private_subnet_ids: OrUnset[Annotated[tuple[Annotated[str, SchemaPattern(SUBNET_ID_PATTERN)], ...], Msg(what="subnet IDs like subnet-0123456789abcdef0", type_name="list of subnet IDs"),
                                WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_ID_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="Bring-your-own private subnets, one per zone, in zone order.")

    @property
    def bring_your_own(self) -> bool:
        return self.vpc_id is not None


class Access(Section):
    """access: how people reach the nodes."""

    admin_cidrs: Annotated[tuple[Annotated[str, SchemaPattern(ADMIN_CIDR_PATTERN)], ...], Msg(what="IPv4 CIDRs like 203.0.113.0/24", type_name="list of CIDRs"),
                          WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": ADMIN_CIDR_PATTERN},
                                          "uniqueItems": True, "maxItems": MAX_ADMIN_CIDRS})] = Field(
        (), description=f"Sources allowed to reach SSH (22) and the API (6443); canonical, unique, at most {MAX_ADMIN_CIDRS} "
                        f"(security group rule quota); together no more than {WORLD_ADMIN_DESCRIPTION} without allowWorldAdmin.")
    ssh_key_name: OrUnset[Annotated[str, NonEmpty(SSH_KEY_NAME_PATTERN, max_length=255), Msg(what="an EC2 key pair name: 1-255 printable ASCII characters, no space at either end")]] = Field(
        None, description="EC2 key pair for the nodes, looked up at plan time (changing it replaces every node: refused by the quorum guard).")
    ssh_user: Annotated[str, NonEmpty(SSH_USER_PATTERN, max_length=32), Msg(what="a Linux user name: 1-32 characters of a-z, 0-9, _ and -, starting with a letter or _", reason="Canonical's Ubuntu images log in as ubuntu")] = Field(
        DEFAULT_SSH_USER, description="Login user written into cluster.yml and the RKE1 boot script.")
    ssh_key_path: OrUnset[Annotated[str, NonEmpty(SSH_KEY_PATH_PATTERN), Msg(what="a path to the private key for rke up, without control characters")]] = Field(
        None, description="Private key path written into cluster.yml (ssh_key_path).")
    ssm: Annotated[Bool, Msg(reason="nodes reachable through Session Manager need no SSH port open")] = Field(
        DEFAULT_SSM, description="Session Manager on the nodes (an inline policy with the agent's actions only).")
    allow_world_admin: Annotated[Bool, Msg()] = Field(
        False, description="Allow adminCidrs that open the admin ports to the internet (0.0.0.0/0, or pieces of it; warned).")
