"""The emulated account's answer to each resource the program registers: the resource created in moto.

One handler per type (offline/engine/resource_types.py `emulate` names it). Each calls moto's backend as moto's
own response class for that API call does (offline/engine/emulated/backends.py says why directly), and returns
the ID and the attributes the provider reads back. Where moto is laxer than AWS the gap is closed here, marked
"moto gap".
"""

from __future__ import annotations

import base64
import ipaddress
import json
import random
import re
import string
import zlib
from typing import Any

from rke_aws_offline.engine.emulated import backends
from rke_aws_offline.engine.emulated.provider_checks import (
    ACCOUNT_ID,
    ROOT_DEVICE,
    hex_of,
    rancher_cluster_answer,
    tls_cert_request,
    tls_locally_signed_cert,
    tls_private_key,
    tls_self_signed_cert,
    user_data_refusal,
)


class EmulatedAwsError(ValueError):
    """A request the emulated account (or AWS) refuses; the message names the resource."""


def tag_list(tags: dict | None) -> list[dict[str, str]]:
    return [{"Key": k, "Value": str(v)} for k, v in sorted((tags or {}).items())]


def tag_dict(tags: dict | None) -> dict[str, str]:
    return {k: str(v) for k, v in sorted((tags or {}).items())}


class ResourceHandlers:
    """Mixed into MotoMocks (offline/engine/emulated_account.py), which gives `region`, `partition`, `seed` and
    the bookkeeping these read."""

    region: str
    partition: str
    seed: str
    create_missing_key_pairs: bool
    spot_requests: dict[str, str]
    created_before: frozenset[str]

    # ---- helpers ----------------------------------------------------------------------------------

    def _arn(self, service: str, resource: str, region: bool = True) -> str:
        return f"arn:{self.partition}:{service}:{self.region if region else ''}:{ACCOUNT_ID}:{resource}"

    def _in_partition(self, arn: str) -> str:
        # moto gap: some ARNs come back as arn:aws:... in GovCloud and China; AWS gives the region's partition.
        return re.sub(r"^arn:[^:]+:", f"arn:{self.partition}:", arn)

    def _check_policy_partition(self, label: str, document: str) -> None:
        """IAM refuses a policy naming a resource of another partition (MalformedPolicyDocument); moto does not."""
        for arn in re.findall(r"arn:([a-z-]+):", document):
            if arn != self.partition:
                raise EmulatedAwsError(f'MalformedPolicyDocument: {label}: Partition "{arn}" is not valid for this '
                                       f"account's partition {self.partition}")

    @staticmethod
    def _autoname(name: str, given: str | None) -> str:
        # What Pulumi's auto-naming does: the logical name plus a random suffix (here: stable).
        return given or f"{name}-{hex_of(name, 7)}"

    def _ec2b(self) -> Any:
        return backends.ec2(self.region)

    def _iamb(self) -> Any:
        return backends.iam(self.region)

    def _seed(self, seed: str) -> None:  # overridden by MotoMocks
        raise NotImplementedError

    def _key_pair(self, name: str, label: str) -> None:
        """The key pair an instance or a look-up names: refused when the account lacks it, unless the stack
        may assume it exists (it names one it expects the account to hold)."""
        b = self._ec2b()
        if b.describe_key_pairs(key_names=[], filters={"key-name": [name]}):
            return
        if not self.create_missing_key_pairs:
            raise EmulatedAwsError(f"InvalidKeyPair.NotFound: {label}the key pair '{name}' does not exist")
        self._seed(f"{self.seed}:keypair::{name}")  # its own stream: IDs stay order-independent
        b.create_key_pair(name, "rsa", {})

    # ---- EC2: network ---------------------------------------------------------------------------------

    def _vpc(self, name, i):
        b = self._ec2b()
        vpc = b.create_vpc(i["cidrBlock"], i.get("instanceTenancy", "default"),
                           ipv6_cidr_block_network_border_group=self.region, tags=tag_list(i.get("tags")))
        vid = vpc.id
        # AWS takes one attribute per ModifyVpcAttribute call.
        if "enableDnsSupport" in i:
            b.modify_vpc_attribute(vid, "enable_dns_support", bool(i["enableDnsSupport"]))
        if "enableDnsHostnames" in i:
            b.modify_vpc_attribute(vid, "enable_dns_hostnames", bool(i["enableDnsHostnames"]))
        main_rt = b.describe_route_tables(filters={"vpc-id": [vid], "association.main": ["true"]})
        default_sg = b.describe_security_groups(filters={"vpc-id": [vid], "group-name": ["default"]})
        return vid, {"enableDnsSupport": bool(vpc.enable_dns_support),
                     "enableDnsHostnames": bool(vpc.enable_dns_hostnames),
                     "arn": self._arn("ec2", f"vpc/{vid}"), "ownerId": vpc.owner_id or ACCOUNT_ID,
                     "dhcpOptionsId": vpc.dhcp_options.id if vpc.dhcp_options else None,
                     "mainRouteTableId": main_rt[0].id if main_rt else "",
                     "defaultRouteTableId": main_rt[0].id if main_rt else "",
                     "defaultSecurityGroupId": default_sg[0].id if default_sg else ""}

    def _subnet(self, name, i):
        b = self._ec2b()
        zone = i.get("availabilityZone")
        if not zone:  # as moto's CreateSubnet: a zone of the region's
            zone = random.choice(b.describe_availability_zones()).name  # noqa: S311 - moto's seeded choice
        self._check_zone(zone, f"subnet {name}")
        s = b.create_subnet(i["vpcId"], i["cidrBlock"], None, zone, None,
                            tags={"subnet": tag_dict(i.get("tags"))} if i.get("tags") else {})
        if i.get("mapPublicIpOnLaunch"):
            b.modify_subnet_attribute(s.id, "map_public_ip_on_launch", True)
        return s.id, {"arn": self._arn("ec2", f"subnet/{s.id}"), "availabilityZone": s.availability_zone,
                      "availabilityZoneId": s.availability_zone_id, "ownerId": s.owner_id or ACCOUNT_ID}

    def _check_zone(self, zone: str, label: str) -> None:  # overridden by MotoMocks (the account's zones)
        return None

    def _subnet_cidr_reservation(self, name, i):
        # moto implements subnet CIDR reservations (and refuses one outside the subnet or overlapping another);
        # it does not keep auto-assigned addresses out of them.
        r = self._ec2b().create_subnet_cidr_reservation(i["subnetId"], i["reservationType"], i["cidrBlock"], [])
        return r.id, {"ownerId": r.owner_id or ACCOUNT_ID}

    def _internet_gateway(self, name, i):
        b = self._ec2b()
        igw = b.create_internet_gateway(tags=tag_list(i.get("tags")))
        if i.get("vpcId"):
            b.attach_internet_gateway(igw.id, i["vpcId"])
        return igw.id, {"arn": self._arn("ec2", f"internet-gateway/{igw.id}"), "ownerId": ACCOUNT_ID}

    def _route_table(self, name, i):
        if i.get("routes"):
            raise NotImplementedError(f"RouteTable {name}: inline routes are not emulated; use aws.ec2.Route")
        rt = self._ec2b().create_route_table(i["vpcId"], tag_list(i.get("tags")))
        return rt.id, {"arn": self._arn("ec2", f"route-table/{rt.id}"), "ownerId": ACCOUNT_ID}

    def _route(self, name, i):
        self._ec2b().create_route(
            i["routeTableId"], i["destinationCidrBlock"], None, None,
            gateway_id=i.get("gatewayId") or None, nat_gateway_id=i.get("natGatewayId") or None,
            interface_id=i.get("networkInterfaceId") or None, transit_gateway_id=i.get("transitGatewayId") or None,
            vpc_peering_connection_id=i.get("vpcPeeringConnectionId") or None)
        # The provider's ID for a route: r-<route table><crc32 of the destination>.
        rid = f"r-{i['routeTableId']}{zlib.crc32(i['destinationCidrBlock'].encode())}"
        return rid, {"state": "active", "origin": "CreateRoute"}

    def _route_table_association(self, name, i):
        aid = self._ec2b().associate_route_table(i["routeTableId"], gateway_id=i.get("gatewayId") or None,
                                                 subnet_id=i.get("subnetId") or None)
        return aid, {}

    def _eip(self, name, i):
        a = self._ec2b().allocate_address(i.get("domain", "vpc"), tags=tag_dict(i.get("tags")) or None)
        aid = a.allocation_id
        return aid, {"allocationId": aid, "publicIp": a.public_ip, "domain": a.domain or "vpc",
                     "arn": self._arn("ec2", f"elastic-ip/{aid}"),
                     "publicDns": f"ec2-{a.public_ip.replace('.', '-')}.{self.region}.compute.amazonaws.com"}

    def _nat_gateway(self, name, i):
        n = self._ec2b().create_nat_gateway(subnet_id=i["subnetId"], allocation_id=i.get("allocationId"),
                                            tags=tag_dict(i.get("tags")) or None,
                                            connectivity_type=i.get("connectivityType", "public"))
        addr = (n.address_set or [{}])[0]
        return n.id, {"privateIp": addr.get("privateIp"), "publicIp": addr.get("publicIp"),
                      "networkInterfaceId": addr.get("networkInterfaceId")}

    def _vpc_endpoint(self, name, i):
        e = self._ec2b().create_vpc_endpoint(
            vpc_id=i["vpcId"], service_name=i["serviceName"], endpoint_type=i.get("vpcEndpointType", "Gateway"),
            policy_document=i.get("policy"), route_table_ids=list(i.get("routeTableIds") or []),
            subnet_ids=list(i.get("subnetIds") or []), security_group_ids=list(i.get("securityGroupIds") or []),
            tags=tag_dict(i.get("tags")) or None, private_dns_enabled=i.get("privateDnsEnabled"))
        return e.id, {"arn": self._arn("ec2", f"vpc-endpoint/{e.id}"), "state": "available", "ownerId": ACCOUNT_ID}

    def _security_group(self, name, i):
        if i.get("ingress") or i.get("egress"):
            raise NotImplementedError(f"SecurityGroup {name}: inline rules are not emulated; use aws.vpc rule resources")
        b = self._ec2b()
        gname = self._autoname(name, i.get("name"))
        group = b.create_security_group(gname, i.get("description") or "Managed by Pulumi", vpc_id=i.get("vpcId"),
                                        tags=tag_dict(i.get("tags")))
        # The AWS provider deletes the allow-all egress rule AWS puts on every new group, so only the
        # program's rules remain (and its own allow-all egress rule is not a duplicate).
        b.revoke_security_group_egress(group.id, "-1", None, None, [{"CidrIp": "0.0.0.0/0"}], [], [], [])
        return group.id, {"arn": self._arn("ec2", f"security-group/{group.id}"), "ownerId": ACCOUNT_ID,
                          "name": gname}

    def _sg_rule(self, name, i, egress: bool):
        protocol = str(i["ipProtocol"])
        from_port = to_port = None
        if protocol not in ("-1", "all") and i.get("fromPort") is not None:
            from_port, to_port = int(i["fromPort"]), int(i["toPort"])
        desc = {"Description": i["description"]} if i.get("description") else {}
        ranges: list[dict] = []
        groups: list[dict] = []
        prefixes: list[dict] = []
        if i.get("cidrIpv4"):
            ranges = [{"CidrIp": i["cidrIpv4"], **desc}]
        elif i.get("cidrIpv6"):
            ranges = [{"CidrIpv6": i["cidrIpv6"], **desc}]
        elif i.get("referencedSecurityGroupId"):
            groups = [{"GroupId": i["referencedSecurityGroupId"], **desc}]
        elif i.get("prefixListId"):
            prefixes = [{"PrefixListId": i["prefixListId"], **desc}]
        else:
            raise EmulatedAwsError(f"MissingParameter: security group rule {name}: no source/destination given")
        b = self._ec2b()
        authorize = b.authorize_security_group_egress if egress else b.authorize_security_group_ingress
        rules, _ = authorize(i["securityGroupId"], protocol, from_port, to_port, ranges,
                             sgrule_tags=tag_dict(i.get("tags")), source_groups=groups, prefix_list_ids=prefixes)
        rid = rules[0].id
        return rid, {"securityGroupRuleId": rid, "arn": self._arn("ec2", f"security-group-rule/{rid}")}

    def _ingress(self, name, i):
        return self._sg_rule(name, i, egress=False)

    def _egress(self, name, i):
        return self._sg_rule(name, i, egress=True)

    def _ec2_tag(self, name, i):
        self._ec2b().create_tags([i["resourceId"]], {i["key"]: i["value"]})
        return f"{i['resourceId']},{i['key']}", {}

    # ---- EC2: instances ------------------------------------------------------------------------------

    def _image(self, ami: str | None, label: str) -> Any:  # overridden by MotoMocks (images a stack may assume)
        raise NotImplementedError

    def _instance(self, name, i):
        b = self._ec2b()
        label = f"instance {name}"
        subnet_id = i.get("subnetId")
        try:
            subnet = b.get_subnet(subnet_id)
        except Exception:  # noqa: BLE001 - moto's InvalidSubnetIdError
            raise EmulatedAwsError(f"InvalidSubnetID.NotFound: {label}: the subnet ID '{subnet_id}' does not exist") from None
        net = ipaddress.IPv4Network(subnet.cidr_block)
        ip = i.get("privateIp")
        if ip:
            addr = ipaddress.IPv4Address(ip)
            if addr not in net:
                raise EmulatedAwsError(f"InvalidParameterValue: {label}: address {ip} does not fall within the subnet's address range {net}")
            # moto gap: it hands out the network address, the first three hosts and the broadcast address;
            # AWS reserves them.
            if int(addr) - int(net.network_address) < 4 or addr == net.broadcast_address:
                raise EmulatedAwsError(f"InvalidParameterValue: {label}: address {ip} is reserved by AWS in {net}")
        ami = i.get("ami")
        # moto gap: AMI, key pair and instance type are not validated unless moto's import-time settings say
        # so; AWS refuses unknown ones. An instance launched before this run (`created_before`: resources an
        # earlier update created, which this run's registration updates: no RunInstances) keeps running after its image is
        # deregistered or its key pair deleted (EC2 user guide: deregistering an AMI does not affect instances
        # already launched from it; a key pair is only read at launch), so neither is asked for again.
        launched = name in self.created_before
        image = self._image(ami, label) if not launched or self._ec2b().amis.get(ami) else None
        itype = i.get("instanceType") or "m1.small"
        from moto.ec2.models.instance_types import INSTANCE_TYPES

        if itype not in INSTANCE_TYPES:
            raise EmulatedAwsError(f"InvalidInstanceType: {label}: instance type '{itype}' does not exist")
        key = i.get("keyName")
        if key and not launched:
            self._key_pair(key, f"{label}: ")
        refusal = user_data_refusal(name, i)
        if refusal:
            raise EmulatedAwsError(refusal)
        if i.get("userData"):
            user_data = base64.b64encode(i["userData"].encode()).decode()
        elif i.get("userDataBase64"):
            user_data = i["userDataBase64"]
        else:
            user_data = None
        groups = list(i.get("vpcSecurityGroupIds") or [])
        # What EC2's RunInstances takes (moto 5.2 ec2/responses/instances.py run_instances, one instance).
        kwargs: dict[str, Any] = {
            "instance_type": itype, "is_instance_type_default": not i.get("instanceType"), "placement": None,
            "placement_hostid": None, "region_name": self.region, "subnet_id": None, "key_name": key,
            "security_group_ids": [], "nics": [], "private_ip": None, "associate_public_ip": None,
            "ebs_optimized": False, "disable_api_stop": False, "instance_market_options": {},
            "instance_initiated_shutdown_behavior": None, "launch_template": {}, "hibernation_options": {},
            "iam_instance_profile_name": None, "iam_instance_profile_arn": None, "monitoring_state": "disabled",
            "ipv6_address_count": None, "metadata_options": {}, "client_token": "ABCDE",
        }
        if i.get("associatePublicIpAddress"):
            # Only a network interface specification can ask for a public address.
            nic: dict[str, Any] = {"DeviceIndex": 0, "SubnetId": subnet_id, "AssociatePublicIpAddress": True,
                                   "Groups": groups}
            if ip:
                nic["PrivateIpAddress"] = ip
            kwargs["nics"] = [nic]
        else:
            kwargs["subnet_id"] = subnet_id
            kwargs["private_ip"] = ip or None
            kwargs["security_group_ids"] = groups
        profile = i.get("iamInstanceProfile")
        if profile:
            from moto.ec2.models.iam_instance_profile import filter_iam_instance_profiles

            filter_iam_instance_profiles(ACCOUNT_ID, partition=self.partition, iam_instance_profile_arn=None,
                                         iam_instance_profile_name=profile)
            kwargs["iam_instance_profile_name"] = profile
        md = i.get("metadataOptions") or {}
        if md:
            kwargs["metadata_options"] = {k: v for k, v in {
                "HttpTokens": md.get("httpTokens"),
                "HttpEndpoint": md.get("httpEndpoint"),
                "HttpPutResponseHopLimit": int(md["httpPutResponseHopLimit"]) if md.get("httpPutResponseHopLimit") else None,
                "InstanceMetadataTags": md.get("instanceMetadataTags"),
            }.items() if v is not None}
        root = i.get("rootBlockDevice") or {}
        if root:
            ebs = {k: v for k, v in {
                "VolumeSize": int(root["volumeSize"]) if root.get("volumeSize") else None,
                "VolumeType": root.get("volumeType"),
                "Encrypted": root.get("encrypted"),
                "DeleteOnTermination": root.get("deleteOnTermination", True),
            }.items() if v is not None}
            kwargs["block_device_mappings"] = [{"DeviceName": (image.root_device_name if image else None) or ROOT_DEVICE,
                                                "Ebs": ebs}]
        market = i.get("instanceMarketOptions") or {}
        if market.get("marketType"):
            kwargs["instance_market_options"] = market["marketType"]
        tags: dict[str, dict[str, str]] = {}
        if i.get("tags"):
            tags["instance"] = tag_dict(i["tags"])
        if i.get("volumeTags"):
            tags["volume"] = tag_dict(i["volumeTags"])
        kwargs["tags"] = tags
        # Re-seeded here so the look-ups above (and a key pair created on the way) leave the IDs alone.
        self._seed(f"{self.seed}:aws:ec2/instance:Instance::{name}:run")
        # An instance an earlier update launched that the account already holds at its address: this run's
        # registration updates it (the engine calls no RunInstances for it).
        held = [x for r in b.describe_instances(filters={"private-ip-address": [ip], "subnet-id": [subnet_id]})
                for x in r.instances] if launched and ip else []
        if held:
            inst = held[0]
        else:
            try:
                reservation = b.run_instances(ami, 1, user_data, [], **kwargs)
            except Exception as exc:
                if backends.refusal(exc) is not None:
                    raise
                # moto gap: address conflicts come back as plain exceptions
                msg = str(exc)
                code = "InvalidIPAddress.InUse" if "in use" in msg else "InvalidParameterValue"
                raise EmulatedAwsError(f"{code}: {label}: {msg} (private IP {ip}, subnet {subnet_id})") from None
            inst = reservation.instances[0]
        if profile and not held:
            b.associate_iam_instance_profile(instance_id=inst.id, iam_instance_profile_name=profile)
        iid = inst.id
        if kwargs["nics"] and groups:
            # moto gap: groups given in a network interface spec reach the interface but not the instance's
            # SecurityGroups, which AWS (and the CCM) read from the primary interface.
            b.modify_instance_security_groups(iid, groups)
        nic0 = inst.nics.get(0)
        spot = {}
        if market.get("marketType") == "spot":
            # moto gap: RunInstances with spot market options creates no spot request in moto; AWS does, and
            # DescribeInstances filters by it (spot-instance-request-id).
            self.spot_requests[iid] = "sir-" + hex_of(f"{self.seed}:{name}:spot", 8)
            spot = {"spotInstanceRequestId": self.spot_requests[iid], "instanceLifecycle": "spot"}
        return iid, {
            **spot,
            "arn": self._arn("ec2", f"instance/{iid}"),
            "privateIp": inst.private_ip or "",
            "privateDns": inst.private_dns_name or "",
            "publicIp": inst.public_ip or "",
            "publicDns": inst.public_dns_name or "",
            "availabilityZone": inst.placement.zone,
            "primaryNetworkInterfaceId": nic0.id if nic0 is not None else "",
            "instanceState": inst.state,
        }

    # ---- IAM --------------------------------------------------------------------------------------------

    # IAM's size quotas (non-whitespace characters), which moto does not enforce: inline policies of a user
    # 2,048 in all, of a role 10,240 in all; a managed policy 6,144.
    IAM_QUOTAS = {"user": 2048, "role": 10240, "managed": 6144}

    @staticmethod
    def _policy_size(document: str) -> int:
        return len("".join(document.split()))

    def _check_policy_size(self, label: str, kind: str, documents: list[str]) -> None:
        size = sum(self._policy_size(d) for d in documents)
        if size > self.IAM_QUOTAS[kind]:
            raise EmulatedAwsError(f"LimitExceeded: {label}: Maximum policy size of {self.IAM_QUOTAS[kind]} bytes "
                                   f"exceeded ({size}, {kind} policies)")

    def _role(self, name, i):
        rname = self._autoname(name, i.get("name"))
        role = self._iamb().create_role(rname, i["assumeRolePolicy"], i.get("path") or "/", None,
                                        i.get("description"), tag_list(i.get("tags")), 3600)
        return rname, {"name": rname, "arn": self._in_partition(role.arn), "uniqueId": role.id}

    def _role_policy(self, name, i):
        pname = self._autoname(name, i.get("name"))
        self._check_policy_partition(f"role policy {name}", i["policy"])
        iam = self._iamb()
        existing = [d for n, d in iam.get_role(i["role"]).policies.items() if n != pname]
        self._check_policy_size(f"role policy {name}", "role",
                                [i["policy"]] + [d if isinstance(d, str) else json.dumps(d) for d in existing])
        iam.put_role_policy(i["role"], pname, i["policy"])
        return f"{i['role']}:{pname}", {"name": pname}

    def _role_policy_attachment(self, name, i):
        arn = i["policyArn"]
        self._check_policy_partition(f"attachment {name}", arn)
        self._iamb().attach_role_policy(arn, i["role"])
        return f"{i['role']}-{hex_of(arn, 12)}", {}

    def _instance_profile(self, name, i):
        pname = self._autoname(name, i.get("name"))
        iam = self._iamb()
        prof = iam.create_instance_profile(pname, i.get("path") or "/", [], tag_list(i.get("tags")) or None)
        if i.get("role"):
            iam.add_role_to_instance_profile(pname, i["role"])
        return pname, {"name": pname, "arn": self._in_partition(prof.arn), "uniqueId": prof.id}

    def _user(self, name, i):
        uname = self._autoname(name, i.get("name"))
        user = self._iamb().create_user(self.region, uname, i.get("path") or "/", tag_list(i.get("tags")) or None)
        return uname, {"name": uname, "arn": self._in_partition(user.arn), "uniqueId": user.id}

    def _iam_policy(self, name, i):
        pname = self._autoname(name, i.get("name"))
        self._check_policy_partition(f"policy {name}", i["policy"])
        self._check_policy_size(f"policy {name}", "managed", [i["policy"]])
        pol = self._iamb().create_policy(i.get("description") or "", i.get("path") or "/", i["policy"], pname,
                                         tag_list(i.get("tags")))
        arn = self._in_partition(pol.arn)
        return arn, {"name": pname, "arn": arn, "policyId": pol.id}

    def _user_policy_attachment(self, name, i):
        arn = i["policyArn"]
        self._check_policy_partition(f"attachment {name}", arn)
        self._iamb().attach_user_policy(arn, i["user"])
        return f"{i['user']}-{hex_of(arn, 12)}", {}

    def _user_policy(self, name, i):
        pname = self._autoname(name, i.get("name"))
        self._check_policy_partition(f"user policy {name}", i["policy"])
        self._iamb().put_user_policy(i["user"], pname, i["policy"])
        return f"{i['user']}:{pname}", {"name": pname}

    # Emulated access key IDs are visibly fake: AWS's start with AKIA (long-term) or ASIA (temporary), and a
    # committed golden plan holding an AKIA... string looks like a leaked key to a reader and to secret scanners.
    ACCESS_KEY_PREFIX = "EMULATED"

    def _access_key(self, name, i):
        key = self._iamb().create_access_key(i["user"], prefix=self.ACCESS_KEY_PREFIX)
        return key.access_key_id, {"secret": key.secret_access_key, "status": key.status}

    # ---- SSM ------------------------------------------------------------------------------------------

    def _ssm_parameter(self, name, i):
        pname = i.get("name") or name
        value = str(i["value"] if i.get("value") is not None else i.get("insecureValue"))
        tier = i.get("tier")
        if (tier or "Standard") == "Standard" and len(value.encode()) > 4096:
            # moto gap: AWS refuses standard parameters over 4 KB.
            raise EmulatedAwsError(f"ValidationException: parameter {name}: standard parameters hold at most 4096 bytes")
        ssm = backends.ssm(self.region)
        # One an earlier update created (`created_before`) is that parameter, with the value it holds now (the
        # servers publish into it; the program ignores changes to it).
        held = ssm.get_parameter(pname) if name in self.created_before else None
        param = held or ssm.put_parameter(pname, i.get("description"), value, i.get("type", "String"), None,
                                          i.get("keyId"), False, tag_list(i.get("tags")) or None, "text", tier=tier,
                                          policies=None)
        from moto.ssm.utils import parameter_arn

        return pname, {"name": pname, "arn": parameter_arn(ACCOUNT_ID, self.region, pname), "version": param.version,
                       "tier": param.tier or "Standard"}

    # ---- KMS ------------------------------------------------------------------------------------------

    def _kms_key(self, name, i):
        policy = i.get("policy")
        if policy:
            self._check_policy_partition(f"key {name}", policy)
        kms = backends.kms(self.region)
        key = kms.create_key(policy, i.get("keyUsage") or "ENCRYPT_DECRYPT", "SYMMETRIC_DEFAULT",
                             i.get("description") or "",
                             [{"TagKey": k, "TagValue": str(v)} for k, v in sorted((i.get("tags") or {}).items())])
        if i.get("enableKeyRotation"):
            kms.enable_key_rotation(key.id)
        return key.id, {"keyId": key.id, "arn": self._in_partition(key.arn)}

    def _kms_alias(self, name, i):
        alias = str(i.get("name", ""))
        if not alias.startswith("alias/"):
            raise EmulatedAwsError(f"ValidationException: alias {name}: the name must start with alias/")
        # What KMS's CreateAlias checks (moto 5.2 kms/responses.py _set_alias does it before the backend).
        if alias.startswith("alias/aws/") or not re.fullmatch(r"[a-zA-Z0-9/_-]+", alias):
            raise EmulatedAwsError(f"ValidationException: alias {name}: {alias} is reserved or contains invalid characters")
        kms = backends.kms(self.region)
        if kms.alias_exists(alias):
            raise EmulatedAwsError(f"AlreadyExistsException: alias {name}: an alias with the name {alias} already exists")
        created = kms.create_alias(i["targetKeyId"], alias)
        return alias, {"arn": self._in_partition(created.alias_arn), "targetKeyArn": None}

    # ---- S3 (as moto's S3 response class parses each request's XML body) -----------------------------

    def _s3b(self) -> Any:
        return backends.s3(self.region)

    def _bucket(self, name, i):
        bucket = self._autoname(name, i.get("bucket"))
        held = self._s3b().buckets.get(bucket) if name in self.created_before else None
        # AWS refuses a LocationConstraint of us-east-1 and needs one elsewhere: the provider sends the region's.
        # A bucket an earlier update created (`created_before`) is updated, not created again.
        created = held or self._s3b().create_bucket(bucket, self.region)
        if i.get("objectLockEnabled"):
            created.object_lock_enabled = True
            created.versioning_status = "Enabled"
        if i.get("tags"):
            self._s3b().put_bucket_tagging(bucket, tag_dict(i["tags"]))
        return bucket, {"bucket": bucket, "arn": f"arn:{self.partition}:s3:::{bucket}", "region": self.region}

    def _bucket_versioning(self, name, i):
        self._s3b().put_bucket_versioning(i["bucket"], i["versioningConfiguration"]["status"])
        return i["bucket"], {}

    def _bucket_encryption(self, name, i):
        rules = []
        for rule in i["rules"]:
            default = rule["applyServerSideEncryptionByDefault"]
            by_default = {"SSEAlgorithm": default["sseAlgorithm"]}
            if default.get("kmsMasterKeyId"):
                by_default["KMSMasterKeyID"] = default["kmsMasterKeyId"]
            rules.append({"ApplyServerSideEncryptionByDefault": by_default,
                          "BucketKeyEnabled": "true" if rule.get("bucketKeyEnabled") else "false"})
        self._s3b().put_bucket_encryption(i["bucket"], {"Rule": rules[0] if len(rules) == 1 else rules})
        return i["bucket"], {}

    def _bucket_public_access(self, name, i):
        keys = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
        self._s3b().put_public_access_block(i["bucket"], {
            k[0].upper() + k[1:]: "true" if i.get(k) else "false" for k in keys})
        return i["bucket"], {}

    def _bucket_policy(self, name, i):
        self._check_policy_partition(f"bucket policy {name}", i["policy"])
        self._s3b().put_bucket_policy(i["bucket"], i["policy"].encode())
        return i["bucket"], {}

    def _bucket_ownership(self, name, i):
        rule = i.get("rule") or {}
        self._s3b().put_bucket_ownership_controls(i["bucket"], {"ObjectOwnership": rule.get("objectOwnership")})
        return i["bucket"], {}

    def _bucket_object(self, name, i):
        content = i.get("content") or ""
        key = self._s3b().put_object(i["bucket"], i["key"], content.encode())
        if i.get("contentType"):
            key.set_metadata({"Content-Type": i["contentType"]})
        return f"{i['bucket']}/{i['key']}", {"etag": key.etag.strip('"'), "versionId": "null"}

    def _oidc_provider(self, name, i):
        provider = self._iamb().create_open_id_connect_provider(
            i["url"], list(i.get("thumbprintLists") or []), list(i.get("clientIdLists") or []), tag_list(i.get("tags")))
        arn = self._in_partition(provider.arn)
        return arn, {"arn": arn}

    def _tls_self_signed_cert(self, name, i):
        return "none", tls_self_signed_cert(f"{self.seed}:{name}", i)

    def _tls_cert_request(self, name, i):
        return "none", tls_cert_request(f"{self.seed}:{name}", i)

    def _tls_locally_signed_cert(self, name, i):
        return "none", tls_locally_signed_cert(f"{self.seed}:{name}", i)

    def _tls_private_key(self, name, i):
        return "none", tls_private_key(f"{self.seed}:{name}", int(i.get("rsaBits", 2048)))

    def _bucket_lifecycle(self, name, i):
        rules = []
        for r in i["rules"]:
            rule: dict[str, Any] = {"ID": r["id"], "Status": r["status"],
                                    "Filter": {"Prefix": (r.get("filter") or {}).get("prefix", "") or None}}
            exp = r.get("expiration") or {}
            if exp.get("days") is not None:
                rule["Expiration"] = {"Days": str(int(exp["days"]))}
            elif exp.get("expiredObjectDeleteMarker") is not None:
                rule["Expiration"] = {"ExpiredObjectDeleteMarker": "true" if exp["expiredObjectDeleteMarker"] else "false"}
            if r.get("noncurrentVersionExpiration"):
                rule["NoncurrentVersionExpiration"] = {
                    "NoncurrentDays": str(int(r["noncurrentVersionExpiration"]["noncurrentDays"]))}
            if r.get("abortIncompleteMultipartUpload"):
                rule["AbortIncompleteMultipartUpload"] = {
                    "DaysAfterInitiation": str(int(r["abortIncompleteMultipartUpload"]["daysAfterInitiation"]))}
            rules.append(rule)
        self._s3b().put_bucket_lifecycle(i["bucket"], rules)
        return i["bucket"], {}

    # ---- Route 53 ---------------------------------------------------------------------------------------

    def _zone(self, name, i):
        r53 = backends.route53(self.region)
        vpcs = i.get("vpcs") or []
        zone_name = i["name"] if i["name"].endswith(".") else i["name"] + "."
        if vpcs:
            vpc_id = vpcs[0]["vpcId"]
            self._ec2b().get_vpc(vpc_id)  # AWS refuses an unknown VPC
            zone = r53.create_hosted_zone(zone_name, True, caller_reference=f"{name}-{hex_of(name, 8)}",
                                          vpcid=vpc_id, vpcregion=vpcs[0].get("vpcRegion") or self.region,
                                          comment=i.get("comment") or "")
        else:
            zone = r53.create_hosted_zone(zone_name, False, caller_reference=f"{name}-{hex_of(name, 8)}")
        zid = zone.id.rsplit("/", 1)[-1]
        return zid, {"zoneId": zid, "arn": f"arn:{self.partition}:route53:::hostedzone/{zid}", "nameServers": []}

    def _record(self, name, i):
        record: dict[str, Any] = {"Name": i["name"], "Type": i["type"], "TTL": int(i.get("ttl") or 300),
                                  "ResourceRecords": [{"Value": v} for v in i.get("records") or []]}
        backends.route53(self.region).change_resource_record_sets(
            i["zoneId"], [{"Action": "CREATE", "ResourceRecordSet": record}])
        return f"{i['zoneId']}_{i['name']}_{i['type']}", {"fqdn": i["name"]}

    # ---- ELBv2 ------------------------------------------------------------------------------------------

    def _elbv2b(self) -> Any:
        return backends.elbv2(self.region)

    def _load_balancer(self, name, i):
        lb = self._elbv2b().create_load_balancer(
            name=i.get("name") or self._autoname(name, None)[:32], security_groups=list(i.get("securityGroups") or []),
            subnet_ids=list(i.get("subnets") or []), subnet_mappings=[],
            scheme="internal" if i.get("internal") else "internet-facing",
            loadbalancer_type=i.get("loadBalancerType") or "application", ip_address_type="ipv4", tags=None)
        return lb.arn, {"arn": lb.arn, "dnsName": lb.dns_name, "zoneId": lb.canonical_hosted_zone_id or ""}

    def _target_group(self, name, i):
        hc = i.get("healthCheck") or {}
        tg = self._elbv2b().create_target_group(
            i.get("name") or self._autoname(name, None)[:32], vpc_id=i["vpcId"], protocol=i["protocol"],
            protocol_version=None, port=int(i["port"]),
            healthcheck_protocol=hc.get("protocol"), healthcheck_port=str(hc["port"]) if hc.get("port") else None,
            healthcheck_path=hc.get("path"), healthcheck_interval_seconds=None, healthcheck_timeout_seconds=None,
            healthcheck_enabled=None, healthy_threshold_count=None, unhealthy_threshold_count=None, matcher=None,
            ip_address_type=None, target_type=i.get("targetType") or "instance", tags=None)
        return tg.arn, {"arn": tg.arn}

    def _target_group_attachment(self, name, i):
        self._elbv2b().register_targets(i["targetGroupArn"], [{"Id": i["targetId"], "Port": int(i["port"])}])
        return f"{i['targetGroupArn']}-{i['targetId']}", {}

    def _listener(self, name, i):
        actions = [{"Type": a["type"], "TargetGroupArn": a["targetGroupArn"]} for a in i.get("defaultActions") or []]
        ls = self._elbv2b().create_listener(load_balancer_arn=i["loadBalancerArn"], protocol=i["protocol"],
                                            port=int(i["port"]), ssl_policy="ELBSecurityPolicy-2016-08",
                                            certificate=None, actions=actions, alpn_policy=[], tags=None)
        return ls.arn, {"arn": ls.arn}

    # ---- outside AWS: stable, fake, no emulation ----------------------------------------------------

    def _random_password(self, name, i):
        typ = "random:index/randomPassword:RandomPassword"
        rng = random.Random(f"{self.seed}:{typ}:{name}")  # noqa: S311 - deterministic, unrelated to moto's
        pool = string.ascii_letters + string.digits + ("" if i.get("special") is False else "!@#$%&*()-_=+[]{}<>:?")
        return "none", {"result": "".join(rng.choice(pool) for _ in range(int(i.get("length", 16))))}

    def _helm_release(self, name, i):
        return f"{i.get('namespace', 'default')}/{i.get('name', name)}", {"status": {
            "name": i.get("name", name), "namespace": i.get("namespace", "default"), "chart": i.get("chart"),
            "version": i.get("version"), "status": "deployed", "revision": 1}}

    def _rancher_cluster(self, name, i):
        return rancher_cluster_answer(f"{self.seed}:{name}")

    def _in_cluster(self, name, i):  # a Kubernetes object or the provider that reaches the cluster
        return f"{name}-id", {}

