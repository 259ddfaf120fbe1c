"""The emulated account's answer to each look-up (invoke) the program makes, read from moto's backends.

Each answers with the fields the provider's data source returns (pulumi-aws 7 `aws.ec2.get_ami`, ...); a refusal
is raised as EmulatedAwsError and becomes the invoke's failure (MotoMocks.call).
"""

from __future__ import annotations

from typing import Any

from rke_aws_offline.engine.emulated import backends
from rke_aws_offline.engine.emulated.provider_checks import ACCOUNT_ID, dns_suffix, route_result
from rke_aws_offline.engine.emulated.resources import EmulatedAwsError


def _filters(a: dict) -> dict[str, list[str]]:
    """An invoke's filters as moto's backends take them: name -> values."""
    out: dict[str, list[str]] = {}
    for f in a.get("filters") or []:
        out.setdefault(f["name"], []).extend(str(v) for v in f["values"])
    return out


# moto's DescribeInstanceTypeOfferings (moto 5 ec2/models/instance_types.py InstanceTypeOfferingBackend) filters
# its region's offerings table (moto/ec2/resources/instance_type_offerings, read-only data) in Python: ~4.5 ms a call,
# one call per evaluation, the same few calls in every run of a test process. Its answer is a function of the region,
# the location type and the filters alone, so moto is asked once per process; the account's own overlay (its zones,
# `unoffered`) applies to the answer at every call (InvokeHandlers._instance_type_offerings).
_OFFERINGS: dict[tuple[str, str, tuple[tuple[str, tuple[str, ...]], ...]], tuple[tuple[str, str], ...]] = {}


def _ec2_date(value: Any) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.000Z") if hasattr(value, "strftime") else str(value or "")


class InvokeHandlers:
    """Mixed into MotoMocks (offline/engine/emulated_account.py)."""

    region: str
    partition: str
    spot_requests: dict[str, str]
    unoffered: frozenset[tuple[str, str]]
    foreign_buckets: set[str]

    def _ec2b(self) -> Any:  # defined by ResourceHandlers
        raise NotImplementedError

    def _arn(self, service: str, resource: str, region: bool = True) -> str:  # defined by ResourceHandlers
        raise NotImplementedError

    def _zones(self) -> list[Any]:  # defined by MotoMocks (the account's zones)
        raise NotImplementedError

    def _image(self, ami: str | None, label: str) -> Any:  # defined by MotoMocks
        raise NotImplementedError

    def _key_pair(self, name: str, label: str) -> None:  # defined by ResourceHandlers
        raise NotImplementedError

    def _has_offerings_data(self, location_type: str) -> bool:
        from moto.ec2.models.instance_types import INSTANCE_TYPE_OFFERINGS

        return self.region in INSTANCE_TYPE_OFFERINGS.get(location_type, {})

    def _call(self, tok: str, a: dict) -> dict:
        handler = self._INVOKES.get(tok)
        if handler is None:
            raise NotImplementedError(f"the emulated account does not answer {tok}; add it to offline/engine/emulated/invokes.py")
        return handler(self, a)

    def _availability_zones(self, a):
        filters = _filters(a)
        if a.get("state"):
            filters["state"] = [a["state"]]
        wanted = {z.name for z in self._ec2b().describe_availability_zones(filters)}
        zones = sorted((z for z in self._zones() if z.name in wanted), key=lambda z: z.name)
        return {"id": self.region, "names": [z.name for z in zones], "zoneIds": [z.zone_id for z in zones],
                "groupNames": [self.region for _ in zones]}

    def _ami(self, a):
        filters = _filters(a)
        ids = filters.pop("image-id", None)
        for ami in ids or ():  # an image the stack names: the account may have to hold it (MotoMocks._image)
            try:
                self._image(ami, "")
            except EmulatedAwsError:
                pass
        images = self._ec2b().describe_images(filters=filters or None,
                                              owners=list(a["owners"]) if a.get("owners") else None)
        if ids:
            images = [img for img in images if img.id in ids]
        if not images:
            raise EmulatedAwsError("Your query returned no results. Please change your search criteria and try again.")
        if len(images) > 1 and not a.get("mostRecent"):
            raise EmulatedAwsError("Your query returned more than one result. Please try a more specific search "
                                   "criteria, or set `most_recent` attribute to true.")
        img = sorted(images, key=lambda i: (_ec2_date(i.creation_date), i.id))[-1]
        return {"id": img.id, "imageId": img.id, "name": img.name, "ownerId": img.owner_id,
                "architecture": img.architecture, "virtualizationType": img.virtualization_type,
                "rootDeviceName": img.root_device_name, "creationDate": _ec2_date(img.creation_date)}

    def _key_pair_lookup(self, a):
        name = a.get("keyName")
        self._key_pair(name, "")
        (pair,) = self._ec2b().describe_key_pairs(key_names=[name])
        return {"id": pair.id, "keyPairId": pair.id, "keyName": pair.key_name, "fingerprint": pair.key_fingerprint or "",
                "keyType": pair.key_type or "rsa", "arn": self._arn("ec2", f"key-pair/{name}"), "tags": {}}

    def _instance_type(self, a):
        from moto.ec2.models.instance_types import INSTANCE_TYPES

        t = INSTANCE_TYPES.get(a["instanceType"])
        if t is None:
            raise EmulatedAwsError(f"InvalidInstanceType: The following supplied instance types do not exist: "
                                   f"[{a['instanceType']}]")
        return {"id": t["InstanceType"], "instanceType": t["InstanceType"],
                "defaultVcpus": t["VCpuInfo"]["DefaultVCpus"], "memorySize": t["MemoryInfo"]["SizeInMiB"],
                "supportedArchitectures": list(t["ProcessorInfo"]["SupportedArchitectures"]),
                "supportedVirtualizationTypes": list(t.get("SupportedVirtualizationTypes", []))}

    def _instance_types(self, a):
        """The suggestions for a misspelt type (components/plan/lookups.py): moto's own list of EC2's types,
        filtered by `instance-type` patterns as DescribeInstanceTypes filters them (wildcards)."""
        import fnmatch

        from moto.ec2.models.instance_types import INSTANCE_TYPES

        patterns = _filters(a).get("instance-type", [])
        names = sorted(t for t in INSTANCE_TYPES if not patterns or any(fnmatch.fnmatchcase(t, p) for p in patterns))
        return {"id": self.region, "instanceTypes": names}

    def _instance_type_offerings(self, a):
        location_type = a.get("locationType") or "region"
        filters = _filters(a)
        key = (self.region, location_type, tuple(sorted((k, tuple(v)) for k, v in filters.items())))
        if key not in _OFFERINGS:
            _OFFERINGS[key] = tuple((o["InstanceType"], o["Location"])
                                    for o in self._ec2b().describe_instance_type_offerings(location_type, filters))
        offers = list(_OFFERINGS[key])
        if not offers and not self._has_offerings_data(location_type):
            # moto gap: it has no offerings data for GovCloud and China regions (moto/ec2/resources/
            # instance_type_offerings); there every type it knows is offered in every zone asked for.
            from moto.ec2.models.instance_types import INSTANCE_TYPES

            known = sorted(t for t in filters.get("instance-type", []) if t in INSTANCE_TYPES)
            offers = [(t, z) for t in known for z in filters.get("location", [])]
        if location_type == "availability-zone":
            # The account's zones only (Account(zones=...)), and what EC2 does not offer there (unoffered).
            zones = {z.name for z in self._zones()}
            offers = [(t, z) for t, z in offers if z in zones and (t, z) not in self.unoffered]
        return {"id": self.region, "instanceTypes": [t for t, _ in offers], "locations": [z for _, z in offers],
                "locationTypes": [location_type] * len(offers)}

    def _vpc_lookup(self, a):
        try:
            vpc = self._ec2b().get_vpc(a["id"])
        except Exception as err:  # noqa: BLE001 - moto's InvalidVPCIdError
            if backends.refusal(err) is None:
                raise
            raise EmulatedAwsError(f"InvalidVpcID.NotFound: the vpc ID '{a['id']}' does not exist") from None
        return {"id": vpc.id, "cidrBlock": vpc.cidr_block, "enableDnsSupport": bool(vpc.enable_dns_support),
                "enableDnsHostnames": bool(vpc.enable_dns_hostnames)}

    def _route_table_lookup(self, a):
        filters = _filters(a)
        if a.get("subnetId"):
            filters["association.subnet-id"] = [a["subnetId"]]
        if a.get("vpcId"):
            filters["vpc-id"] = [a["vpcId"]]
        tables = self._ec2b().describe_route_tables(filters=filters)
        if len(tables) != 1:
            raise EmulatedAwsError(f"query returned {len(tables)} route tables, expected one")
        t = tables[0]
        routes = []
        for r in t.routes:
            if r.local:
                continue
            given = {"cidrBlock": r.destination_cidr_block,
                     "gatewayId": r.gateway.id if r.gateway is not None else None,
                     "natGatewayId": r.nat_gateway.id if r.nat_gateway is not None else None,
                     "transitGatewayId": r.transit_gateway.id if r.transit_gateway is not None else None,
                     "networkInterfaceId": r.interface.id if r.interface is not None else None,
                     "instanceId": r.instance.id if r.instance is not None else None,
                     "vpcPeeringConnectionId": r.vpc_pcx.id if r.vpc_pcx is not None else None}
            routes.append(route_result(**{k: v for k, v in given.items() if v}))
        return {"id": t.id, "routeTableId": t.id, "vpcId": t.vpc_id, "routes": routes, "associations": []}

    def _bucket_lookup(self, a):
        name = a["bucket"]
        if name not in self.foreign_buckets:
            try:
                backends.s3(self.region).head_bucket(name)
            except Exception as err:  # noqa: BLE001 - moto's MissingBucket
                if backends.refusal(err) is None:
                    raise
                raise EmulatedAwsError(f"NotFound: bucket {name} does not exist") from None
        region = self.region
        if name not in self.foreign_buckets:
            region = getattr(backends.s3(self.region).get_bucket(name), "region_name", None) or self.region
        return {"id": name, "bucket": name, "arn": f"arn:{self.partition}:s3:::{name}", "region": self.region,
                "bucketRegion": region}

    def _objects_lookup(self, a):
        # ListObjectsV2 of this account's bucket (objects_data_source.go): the keys under the prefix.
        s3 = backends.s3(self.region)
        name, prefix = a["bucket"], a.get("prefix") or ""
        try:
            bucket = s3.get_bucket(name)
        except Exception as err:  # noqa: BLE001 - moto's MissingBucket
            if backends.refusal(err) is None:
                raise
            raise EmulatedAwsError(f"NoSuchBucket: listing S3 Bucket ({name}) Objects: the bucket does not exist") from None
        keys, _, _, _ = s3.list_objects(bucket, prefix, None, None, None)
        found = sorted(k.name for k in keys)[: int(a.get("maxKeys") or 1000)]
        return {"id": name, "bucket": name, "keys": found, "commonPrefixes": [], "owners": [], "requestCharged": ""}

    def _vpc_endpoint_lookup(self, a):
        # data source aws_vpc_endpoint (vpc_endpoint_data_source.go): exactly one match, else an error.
        found = [e for e in self._ec2b().describe_vpc_endpoints(None)
                 if (not a.get("vpcId") or e.vpc_id == a["vpcId"])
                 and (not a.get("serviceName") or e.service_name == a["serviceName"])
                 and (not a.get("state") or e.state == a["state"])]
        if len(found) != 1:
            raise EmulatedAwsError("no matching EC2 VPC Endpoint found" if not found
                                   else "multiple EC2 VPC Endpoints matched; use additional constraints to reduce matches to a single EC2 VPC Endpoint")
        e = found[0]
        return {"id": e.id, "vpcId": e.vpc_id, "serviceName": e.service_name, "state": e.state,
                "vpcEndpointType": e.vpc_endpoint_type, "privateDnsEnabled": bool(e.private_dns_enabled),
                "routeTableIds": list(e.route_table_ids or []), "subnetIds": list(e.subnet_ids or [])}

    def _buckets_lookup(self, a):
        # ListBuckets: this account's buckets only.
        prefix = a.get("prefix") or ""
        found = sorted(b.name for b in backends.s3(self.region).list_buckets(None, None, None) if b.name.startswith(prefix))
        return {"id": self.region, "buckets": [
            {"name": b, "bucketArn": f"arn:{self.partition}:s3:::{b}", "bucketRegion": self.region,
             "creationDate": ""} for b in found]}

    def _instances_lookup(self, a):
        filters = _filters(a)
        by_request = [set(v) for k, v in filters.items() if k == "spot-instance-request-id"]
        filters.pop("spot-instance-request-id", None)
        if a.get("instanceStateNames"):
            filters["instance-state-name"] = list(a["instanceStateNames"])
        found = [i for r in self._ec2b().describe_instances(filters=filters) for i in r.instances
                 if all(self.spot_requests.get(i.id) in v for v in by_request)]
        return {"id": self.region, "ids": [i.id for i in found], "privateIps": [i.private_ip or "" for i in found],
                "publicIps": [], "ipv6Addresses": []}

    def _parameter_lookup(self, a):
        ssm = backends.ssm(self.region)
        param = ssm.get_parameter(a["name"])
        if param is None:
            raise EmulatedAwsError(f"ParameterNotFound: {a['name']}")
        from moto.ssm.utils import parameter_arn

        # The data source decrypts a SecureString unless asked not to (terraform-provider-aws
        # internal/service/ssm/parameter_data_source.go: with_decryption defaults to true); moto stores it encrypted.
        decrypt = a.get("withDecryption", True) is not False
        return {"id": param.name, "name": param.name, "value": param.decrypt(param.value) if decrypt else param.value,
                "type": param.parameter_type, "arn": parameter_arn(ACCOUNT_ID, self.region, param.name),
                "version": param.version, "insecureValue": "", "withDecryption": decrypt}

    def _network_interfaces_lookup(self, a):
        enis = self._ec2b().get_all_network_interfaces([], _filters(a))
        return {"id": self.region, "ids": sorted(e.id for e in enis)}

    def _subnet_lookup(self, a):
        try:
            s = self._ec2b().get_subnet(a["id"])
        except Exception as err:  # noqa: BLE001 - moto's InvalidSubnetIdError
            if backends.refusal(err) is None:
                raise
            raise EmulatedAwsError(f"InvalidSubnetID.NotFound: the subnet ID '{a['id']}' does not exist") from None
        return {"id": s.id, "arn": self._arn("ec2", f"subnet/{s.id}"), "cidrBlock": s.cidr_block,
                "availabilityZone": s.availability_zone, "availabilityZoneId": s.availability_zone_id,
                "vpcId": s.vpc_id, "tags": {t["key"]: t["value"] for t in s.get_tags()},
                "privateDnsHostnameTypeOnLaunch": (s.private_dns_name_options_on_launch or {}).get("HostnameType", "ip-name")}

    def _security_groups_lookup(self, a):
        # DescribeSecurityGroups with vpc-id and tag:<key> filters (the ones the program uses).
        groups = sorted(self._ec2b().describe_security_groups(filters=_filters(a)), key=lambda g: g.id)
        return {"id": self.region, "ids": [g.id for g in groups], "vpcIds": [g.vpc_id for g in groups],
                "arns": [self._arn("ec2", f"security-group/{g.id}") for g in groups]}

    def _security_group_rules_lookup(self, a):
        rules = self._ec2b().describe_security_group_rules([], _filters(a))
        return {"id": self.region, "ids": sorted(r.id for r in rules)}

    def _security_group_rule_lookup(self, a):
        rid = a.get("securityGroupRuleId")
        rules = self._ec2b().describe_security_group_rules([rid], {}) if rid else []
        if not rules:
            raise EmulatedAwsError(f"InvalidSecurityGroupRuleId.NotFound: {rid}")
        r = rules[0]
        source = r.source_group or {}
        return {"id": r.id, "securityGroupRuleId": r.id, "securityGroupId": r.group_id,
                "arn": self._arn("ec2", f"security-group-rule/{r.id}"), "isEgress": bool(r.is_egress),
                "ipProtocol": r.ip_protocol, "fromPort": int(r.from_port if r.from_port is not None else -1),
                "toPort": int(r.to_port if r.to_port is not None else -1), "cidrIpv4": r.cidr_ipv4 or "",
                "cidrIpv6": r.cidr_ipv6 or "", "description": r.description or "",
                "prefixListId": r.prefix_list_id or "", "referencedSecurityGroupId": source.get("GroupId", ""),
                "tags": {t["key"]: t["value"] for t in r.get_tags()}}

    def _caller_identity(self, a):
        return {"id": ACCOUNT_ID, "accountId": ACCOUNT_ID,
                "arn": f"arn:{self.partition}:sts::{ACCOUNT_ID}:user/moto", "userId": "AKIAIOSFODNN7EXAMPLE"}

    def _partition(self, a):
        suffix = dns_suffix(self.partition)
        return {"id": self.partition, "partition": self.partition, "dnsSuffix": suffix,
                "reverseDnsPrefix": ".".join(reversed(suffix.split(".")))}

    def _region(self, a):
        return {"id": self.region, "name": self.region, "region": self.region,
                "endpoint": f"ec2.{self.region}.{dns_suffix(self.partition)}"}

    _INVOKES: dict[str, Any] = {
        "aws:index/getAvailabilityZones:getAvailabilityZones": _availability_zones,
        "aws:ec2/getAmi:getAmi": _ami,
        "aws:ec2/getKeyPair:getKeyPair": _key_pair_lookup,
        "aws:ec2/getInstanceType:getInstanceType": _instance_type,
        "aws:ec2/getInstanceTypes:getInstanceTypes": _instance_types,
        "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": _instance_type_offerings,
        "aws:ec2/getVpc:getVpc": _vpc_lookup,
        "aws:ec2/getRouteTable:getRouteTable": _route_table_lookup,
        "aws:s3/getBucket:getBucket": _bucket_lookup,
        "aws:s3/getBuckets:getBuckets": _buckets_lookup,
        "aws:s3/getObjects:getObjects": _objects_lookup,
        "aws:ec2/getVpcEndpoint:getVpcEndpoint": _vpc_endpoint_lookup,
        "aws:ec2/getInstances:getInstances": _instances_lookup,
        "aws:ssm/getParameter:getParameter": _parameter_lookup,
        "aws:ec2/getNetworkInterfaces:getNetworkInterfaces": _network_interfaces_lookup,
        "aws:ec2/getSubnet:getSubnet": _subnet_lookup,
        "aws:ec2/getSecurityGroups:getSecurityGroups": _security_groups_lookup,
        "aws:vpc/getSecurityGroupRules:getSecurityGroupRules": _security_group_rules_lookup,
        "aws:vpc/getSecurityGroupRule:getSecurityGroupRule": _security_group_rule_lookup,
        "aws:index/getCallerIdentity:getCallerIdentity": _caller_identity,
        "aws:index/getPartition:getPartition": _partition,
        "aws:index/getRegion:getRegion": _region,
    }
