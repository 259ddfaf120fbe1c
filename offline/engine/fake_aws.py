"""Pulumi mocks that answer the way AWS would wherever the program can observe the answer.

What the program sees from AWS: IDs and ARNs of the right shape per type, an instance's private
IP (the one asked for, or one allocated inside its subnet) and the private DNS name AWS derives
from it and the region, a public IP only when one was asked for, the availability zones and the
AMI look-ups. Requests AWS would refuse (an address outside the subnet, a reserved or taken
address, an unknown subnet) fail here too.
"""

from __future__ import annotations

import fnmatch
import hashlib
import ipaddress
from collections.abc import Iterable
from typing import Any

import pulumi

# The provider's answers both backends share (one copy: emulated/provider_checks.py).
from rke_aws_offline.engine.emulated.provider_checks import (  # noqa: F401
    EC2_USER_DATA_LIMIT,
    ROUTE_KEYS,
    dns_suffix,
    partition_of,
    rancher_cluster_answer,
    route_result,
    tls_cert_request,
    tls_locally_signed_cert,
    tls_private_key,
    tls_self_signed_cert,
    user_data_refusal,
    vendor_image_id,
    vendor_images,
)
from rke_aws_offline.engine.resource_types import TYPES

ACCOUNT_ID = "123456789012"

# EC2 instance types the offline account knows: (default vCPUs, memory MiB, architectures,
# virtualization types), typed from AWS's instance type pages (docs.aws.amazon.com/ec2/latest/
# instancetypes: gp.html, co.html, mo.html, ac.html, pg.html), not from the program or moto. A
# type not listed does not exist here (InvalidInstanceType), as an unknown one does in a region.
INSTANCE_TYPES: dict[str, tuple[int, int, tuple[str, ...], tuple[str, ...]]] = {
    "m6i.large": (2, 8192, ("x86_64",), ("hvm",)),
    "m6i.xlarge": (4, 16384, ("x86_64",), ("hvm",)),
    "m6i.2xlarge": (8, 32768, ("x86_64",), ("hvm",)),
    "m6i.4xlarge": (16, 65536, ("x86_64",), ("hvm",)),
    "m5.large": (2, 8192, ("x86_64",), ("hvm",)),
    "c6i.large": (2, 4096, ("x86_64",), ("hvm",)),
    "r6i.large": (2, 16384, ("x86_64",), ("hvm",)),
    "t3.micro": (2, 1024, ("x86_64",), ("hvm",)),
    "t3.small": (2, 2048, ("x86_64",), ("hvm",)),
    "t3.medium": (2, 4096, ("x86_64",), ("hvm",)),
    "t2.micro": (1, 1024, ("i386", "x86_64"), ("hvm",)),
    "m1.small": (1, 1740, ("i386", "x86_64"), ("hvm", "paravirtual")),
    "m7g.large": (2, 8192, ("arm64",), ("hvm",)),
    "c7g.medium": (1, 2048, ("arm64",), ("hvm",)),
    "g5.xlarge": (4, 16384, ("x86_64",), ("hvm",)),
}
# The default image's answer (Canonical's Ubuntu 24.04 amd64 images are HVM, x86_64).
UBUNTU_IMAGE = {"id": "ami-0a1b2c3d4e5f60718", "imageId": "ami-0a1b2c3d4e5f60718",
                "name": "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20261101",
                "ownerId": "099720109477", "architecture": "x86_64", "virtualizationType": "hvm"}
UBUNTU_ARM64_IMAGE_ID = "ami-0a1b2c3d4e5f6a64b"
# The account Canonical publishes Ubuntu from in each partition (Canonical's "Find Ubuntu images on
# AWS", ownership verification), written out here, not taken from the program: a program that asks
# another owner finds no image, as in the partition itself.
CANONICAL_OWNERS = {"aws": "099720109477", "aws-us-gov": "513442679011", "aws-cn": "837727238323"}


def known_regions() -> frozenset[str]:
    """Every region of every partition botocore knows (its bundled endpoints data)."""
    global _KNOWN_REGIONS
    if _KNOWN_REGIONS is None:
        import boto3

        session = boto3.Session()
        _KNOWN_REGIONS = frozenset(r for part in session.get_available_partitions()
                                   for r in session.get_available_regions("ec2", partition_name=part))
    return _KNOWN_REGIONS


_KNOWN_REGIONS: frozenset[str] | None = None


def region_refusal(region: str) -> str | None:
    """What the AWS provider answers every call with when configured for a region that does not
    exist (its region validation, before any API call), or None."""
    return None if region in known_regions() else f"configuring the AWS provider: invalid AWS Region: {region}"


def _hex(seed: str, n: int = 17) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def private_dns_name(ip: str, region: str) -> str:
    """EC2's IP-based private DNS name: us-east-1 uses ec2.internal, other regions <region>.compute.internal."""
    host = "ip-" + ip.replace(".", "-")
    return f"{host}.ec2.internal" if region == "us-east-1" else f"{host}.{region}.compute.internal"


class AwsLikeMocks(pulumi.runtime.Mocks):
    def __init__(self, region: str, available_azs: list[str] | None = None,
                 existing_subnets: dict[str, dict[str, str]] | None = None,
                 key_pairs: Iterable[str] | None = None, images: dict[str, dict[str, str]] | None = None,
                 unoffered: Iterable[tuple[str, str]] = (), objects: dict[str, list[str]] | None = None):
        """`existing_subnets`: pre-existing subnets of the account, id -> {cidr, az, vpc} and optionally
        public (bool: its route table has an igw- route), route ("igw" | "nat" | "none") and hostnameType.
        `key_pairs`: the account's key pairs (None: whatever a stack names, as its file assumes).
        `images`: AMI id -> {architecture, virtualizationType} (None: any id, an x86_64 HVM image).
        `unoffered`: (instance type, zone) pairs EC2 does not offer (the rest of INSTANCE_TYPES is)."""
        self.region = region
        # ARNs, the partition look-up and the image owner answer for the region's partition, as AWS does.
        self.partition = partition_of(region)
        self.azs = available_azs or [f"{region}{letter}" for letter in "abcd"]
        self.existing = dict(existing_subnets or {})
        # Bring-your-own details a test may set: VPC -> (dns support, dns hostnames); addresses in use.
        self.vpc_dns: dict[str, tuple[bool, bool]] = {}
        self.taken_ips: set[str] = set()
        self.parameters: dict[str, str] = {}
        self.buckets: set[str] = set()
        # Buckets of other accounts that HeadBucket still answers for (their policy lets us list them).
        self.foreign_buckets: set[str] = set()
        # Buckets holding objects (an air-gapped stack's artifacts): name -> keys, in the account's region.
        self.objects: dict[str, list[str]] = {k: list(v) for k, v in (objects or {}).items()}
        # Instances of the account besides what the program creates: private IP -> their tags, and
        # the spot request that launched one (private IP -> request ID).
        self.instances: dict[str, dict[str, str]] = {}
        self.spot_requests: dict[str, str] = {}
        self.subnets: dict[str, dict[str, Any]] = {k: {"cidr": v["cidr"], "az": v["az"]} for k, v in self.existing.items()}
        self.used_ips: dict[str, str] = {}  # ip -> instance name
        self.resources: list[tuple[str, str, dict]] = []
        self.key_pairs = None if key_pairs is None else set(key_pairs)
        # Security groups and rules of the account besides what the program creates (what an earlier
        # release left): group ID -> {vpcId, tags}; rule ID -> {groupId, isEgress, ipProtocol,
        # fromPort, toPort, cidrIpv4 (or referencedGroupId), tags}.
        self.security_groups: dict[str, dict[str, Any]] = {}
        self.security_group_rules: dict[str, dict[str, Any]] = {}
        self.images = images
        self.unoffered = set(unoffered)

    def _arn(self, service: str, resource: str, region: bool = True) -> str:
        return f"arn:{self.partition}:{service}:{self.region if region else ''}:{ACCOUNT_ID}:{resource}"

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        typ, name, inputs = args.typ, args.name, dict(args.inputs)
        if not args.custom:  # a component: nothing to answer
            self.resources.append((typ, name, inputs))
            return f"{name}-id", inputs
        shape = self._SHAPES.get(typ)
        if shape is None:
            # Never fake what is not known: a new resource type is declared in offline/engine/resource_types.py
            # (with the ID and attributes AWS or its provider gives it) before the offline runs accept it.
            raise ValueError(f"the offline mocks do not know resource type {typ} ({name}); declare it in "
                             "offline/engine/resource_types.py")
        if typ.startswith("aws:") and region_refusal(self.region):
            raise ValueError(region_refusal(self.region))
        self.resources.append((typ, name, inputs))
        state = dict(inputs)
        rid, extra = shape(self, f"{typ}:{name}", name, inputs)
        state.update(extra)
        return rid, state

    # ---- one declaration per resource type: its ID and the attributes AWS (or its provider) adds ----

    def _prefixed(prefix: str):  # noqa: N805 - used in the class body to build _SHAPES
        return lambda self, seed, name, inputs: (f"{prefix}{_hex(seed)}", {})

    def _vpc(self, seed, name, inputs):
        rid = f"vpc-{_hex(seed)}"
        return rid, dict(arn=self._arn("ec2", f"vpc/{rid}"), ownerId=ACCOUNT_ID,
                         mainRouteTableId=f"rtb-{_hex(seed + 'main')}", defaultSecurityGroupId=f"sg-{_hex(seed + 'default')}")

    def _subnet(self, seed, name, inputs):
        rid = f"subnet-{_hex(seed)}"
        cidr = inputs.get("cidrBlock")
        ipaddress.IPv4Network(cidr)  # AWS refuses a malformed CIDR
        self.subnets[rid] = {"cidr": cidr, "az": inputs.get("availabilityZone")}
        return rid, dict(arn=self._arn("ec2", f"subnet/{rid}"), ownerId=ACCOUNT_ID)

    def _instance_shape(self, seed, name, inputs):
        rid = f"i-{_hex(seed)}"
        extra = self._instance(name, inputs)
        extra.update(arn=self._arn("ec2", f"instance/{rid}"), instanceState="running")
        if (inputs.get("instanceMarketOptions") or {}).get("marketType") == "spot":
            # RunInstances with spot market options creates a spot request for the instance; the
            # provider reads it back (ec2_instance.go resourceInstanceRead: spot_instance_request_id,
            # instance_lifecycle, and the request's options; no ValidUntil when none was asked for).
            extra.update(spotInstanceRequestId=f"sir-{_hex(seed, 8)}", instanceLifecycle="spot")
        return rid, extra

    def _role(self, seed, name, inputs):
        role_name = inputs.get("name") or f"{name}-{_hex(seed, 7)}"
        return role_name, dict(name=role_name, arn=self._arn("iam", f"role/{role_name}", region=False),
                               uniqueId=f"AROA{_hex(seed, 16).upper()}")

    def _instance_profile(self, seed, name, inputs):
        prof = inputs.get("name") or f"{name}-{_hex(seed, 7)}"
        return prof, dict(name=prof, arn=self._arn("iam", f"instance-profile/{prof}", region=False),
                          uniqueId=f"AIPA{_hex(seed, 16).upper()}")

    def _security_group(self, seed, name, inputs):
        rid = f"sg-{_hex(seed)}"
        return rid, dict(arn=self._arn("ec2", f"security-group/{rid}"), ownerId=ACCOUNT_ID,
                         name=inputs.get("name") or f"{name}-{_hex(seed, 7)}")

    def _eip(self, seed, name, inputs):
        rid = f"eipalloc-{_hex(seed)}"
        return rid, dict(allocationId=rid, publicIp=f"198.51.100.{int(_hex(seed, 4), 16) % 250 + 1}")

    def _zone(self, seed, name, inputs):
        rid = "Z" + _hex(seed, 20).upper()
        return rid, dict(zoneId=rid, arn=f"arn:{self.partition}:route53:::hostedzone/{rid}", nameServers=[])

    def _elb(kind: str):  # noqa: N805 - used in the class body to build _SHAPES
        def shape(self, seed, name, inputs):
            rid = self._arn("elasticloadbalancing", f"{kind}/{inputs.get('name') or name}/{_hex(seed, 16)}")
            extra = {"arn": rid}
            if kind == "loadbalancer/net":
                extra.update(dnsName=f"{inputs.get('name') or name}-{_hex(seed, 10)}.elb.{self.region}.{dns_suffix(self.partition)}",
                             zoneId="Z" + _hex(seed + "zone", 13).upper())
            return rid, extra
        return shape

    def _ssm_parameter(self, seed, name, inputs):
        rid = inputs.get("name") or name
        return rid, dict(arn=self._arn("ssm", f"parameter{rid}"))

    def _user(self, seed, name, inputs):
        rid = inputs.get("name") or f"{name}-{_hex(seed, 7)}"
        return rid, dict(name=rid, arn=self._arn("iam", f"user{inputs.get('path', '/')}{rid}", region=False),
                         uniqueId=f"AIDA{_hex(seed, 16).upper()}")

    def _policy(self, seed, name, inputs):
        pname = inputs.get("name") or f"{name}-{_hex(seed, 7)}"
        rid = self._arn("iam", f"policy{inputs.get('path', '/')}{pname}", region=False)
        return rid, dict(name=pname, arn=rid, policyId=f"ANPA{_hex(seed, 16).upper()}")

    def _access_key(self, seed, name, inputs):
        return f"AKIA{_hex(seed, 16).upper()}", dict(secret=_hex(seed + "secret", 40), status="Active")

    def _kms_key(self, seed, name, inputs):
        h = _hex(seed, 32)
        rid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"  # KMS key ids are UUIDs
        return rid, dict(keyId=rid, arn=self._arn("kms", f"key/{rid}"))

    def _kms_alias(self, seed, name, inputs):
        rid = inputs.get("name") or name
        return rid, dict(arn=self._arn("kms", rid))

    def _bucket(self, seed, name, inputs):
        rid = inputs.get("bucket") or f"{name}-{_hex(seed, 7)}"
        return rid, dict(bucket=rid, arn=f"arn:{self.partition}:s3:::{rid}", region=self.region,
                         bucketDomainName=f"{rid}.s3.{dns_suffix(self.partition)}")

    def _rancher_cluster(self, seed, name, inputs):  # Rancher, not AWS: a c-<5> ID and its registration token
        return rancher_cluster_answer(seed)

    def _named(self, seed, name, inputs):  # resources whose ID AWS derives from their inputs; never read here
        return f"{name}-id", {}

    def _role_policy(self, seed, name, inputs):
        return f"{name}-id", {"name": inputs.get("name") or f"{name}-{_hex(seed, 7)}"}

    def _tls_private_key(self, seed, name, inputs):  # the tls provider's own answer (provider_checks)
        return f"{name}-id", tls_private_key(seed, int(inputs.get("rsaBits", 2048)))

    def _tls_self_signed_cert(self, seed, name, inputs):
        return f"{name}-id", tls_self_signed_cert(seed, inputs)

    def _tls_cert_request(self, seed, name, inputs):
        return f"{name}-id", tls_cert_request(seed, inputs)

    def _tls_locally_signed_cert(self, seed, name, inputs):
        return f"{name}-id", tls_locally_signed_cert(seed, inputs)

    def _oidc_provider(self, seed, name, inputs):
        arn = self._arn("iam", "oidc-provider/" + str(inputs.get("url", "")).removeprefix("https://"), region=False)
        return arn, {"arn": arn}

    def _random_password(self, seed, name, inputs):
        return f"{name}-id", {"result": _hex(seed, int(inputs.get("length", 32)))}

    # Which of these each type gets: offline/engine/resource_types.py (set below the class).
    _SHAPES: dict[str, Any] = {}
    KNOWN_TYPES: frozenset[str] = frozenset()

    def _instance(self, name: str, inputs: dict) -> dict:
        refusal = user_data_refusal(name, inputs)
        if refusal:
            raise ValueError(refusal)
        subnet_id = inputs.get("subnetId")
        subnet = self.subnets.get(subnet_id)
        if subnet is None:
            raise ValueError(f"InvalidSubnetID.NotFound: instance {name}: subnet {subnet_id!r} does not exist")
        net = ipaddress.IPv4Network(subnet["cidr"])
        ip = inputs.get("privateIp")
        if ip:
            addr = ipaddress.IPv4Address(ip)
            offset = int(addr) - int(net.network_address)
            if addr not in net:
                raise ValueError(f"InvalidParameterValue: instance {name}: address {ip} does not fall within subnet {net}")
            if offset < 4 or addr == net.broadcast_address:
                raise ValueError(f"InvalidParameterValue: instance {name}: address {ip} is reserved by AWS in {net}")
        else:
            taken = set(self.used_ips)
            addr = next(h for h in list(net.hosts())[3:] if str(h) not in taken)
            ip = str(addr)
        if ip in self.used_ips:
            raise ValueError(f"InvalidIPAddress.InUse: instance {name}: {ip} is already used by {self.used_ips[ip]}")
        self.used_ips[ip] = name
        out = {
            "privateIp": ip,
            "privateDns": private_dns_name(ip, self.region),
            "availabilityZone": subnet["az"],
            "primaryNetworkInterfaceId": f"eni-{_hex(name)}",
        }
        if inputs.get("associatePublicIpAddress"):
            n = int(_hex(name, 4), 16)
            out["publicIp"] = f"203.0.113.{n % 250 + 1}"
            out["publicDns"] = f"ec2-203-0-113-{n % 250 + 1}.compute-1.amazonaws.com"
        else:
            out["publicIp"] = ""
        return out

    def call(self, args: pulumi.runtime.MockCallArgs):
        """An invoke; AWS's refusal is the invoke's failure, which the program may catch (as with
        the real engine)."""
        try:
            return self._call(args)
        except ValueError as err:
            return {}, [("", str(err))]

    def _call(self, args: pulumi.runtime.MockCallArgs):
        tok, a = args.token, dict(args.args)
        if tok.startswith("aws:") and region_refusal(self.region):
            raise ValueError(region_refusal(self.region))
        if tok == "aws:index/getAvailabilityZones:getAvailabilityZones":
            return {
                "names": list(self.azs),
                "zoneIds": [f"{self.region[:2]}{self.region.split('-')[1][:1]}{self.region[-1]}-az{i + 1}" for i in range(len(self.azs))],
                "id": self.region,
                "groupNames": [self.region] * len(self.azs),
            }
        if tok == "aws:ec2/getAmi:getAmi":
            ids = [v for f in a.get("filters") or [] if f["name"] == "image-id" for v in f["values"]]
            owner = CANONICAL_OWNERS[self.partition]
            if not ids and a.get("owners") and owner not in a["owners"]:
                # Another vendor's image (issue 35): the one provider_checks.VENDOR_IMAGES publishes here, if any.
                names = [v for f in a.get("filters") or [] if f["name"] == "name" for v in f["values"]]
                for vendor, published_by, arch, name in vendor_images(self.partition):
                    if published_by in a["owners"] and any(fnmatch.fnmatchcase(name, n) for n in names):
                        ami = vendor_image_id(self.region, vendor, arch)
                        return {"id": ami, "imageId": ami, "name": name, "ownerId": published_by,
                                "architecture": arch, "virtualizationType": "hvm"}
                raise ValueError(f"Your query returned no results (no Canonical image under owners {a['owners']} in "
                                 f"{self.region}; Canonical publishes there as {owner}).")
            if not ids:
                names = [v for f in a.get("filters") or [] if f["name"] == "name" for v in f["values"]]
                if names and "-arm64-" in names[0]:  # Canonical's arm64 (Graviton) images
                    return dict(UBUNTU_IMAGE, id=UBUNTU_ARM64_IMAGE_ID, imageId=UBUNTU_ARM64_IMAGE_ID, ownerId=owner,
                                name=UBUNTU_IMAGE["name"].replace("-amd64-", "-arm64-"), architecture="arm64")
                return dict(UBUNTU_IMAGE, ownerId=owner)
            ami = ids[0]
            if self.images is not None and ami not in self.images:
                raise ValueError(f"Your query returned no results (image {ami}). Please change your search criteria and try again.")
            found = (self.images or {}).get(ami, {})
            return {"id": ami, "imageId": ami, "name": f"image {ami}", "ownerId": ACCOUNT_ID,
                    "architecture": found.get("architecture", "x86_64"),
                    "virtualizationType": found.get("virtualizationType", "hvm")}
        if tok == "aws:ec2/getKeyPair:getKeyPair":
            name = a.get("keyName")
            if self.key_pairs is not None and name not in self.key_pairs:
                raise ValueError(f"InvalidKeyPair.NotFound: The key pair '{name}' does not exist")
            return {"id": f"key-{_hex(name or '')}", "keyPairId": f"key-{_hex(name or '')}", "keyName": name,
                    "arn": self._arn("ec2", f"key-pair/{name}"), "fingerprint": "", "keyType": "ed25519", "tags": {}}
        if tok == "aws:ec2/getInstanceType:getInstanceType":
            itype = a.get("instanceType")
            if itype not in INSTANCE_TYPES:
                raise ValueError(f"InvalidInstanceType: The following supplied instance types do not exist: [{itype}]")
            vcpus, mib, archs, virts = INSTANCE_TYPES[itype]
            return {"id": itype, "instanceType": itype, "defaultVcpus": vcpus, "memorySize": mib,
                    "supportedArchitectures": list(archs), "supportedVirtualizationTypes": list(virts)}
        if tok == "aws:ec2/getInstanceTypes:getInstanceTypes":
            # DescribeInstanceTypes with the instance-type filter (wildcards allowed): the suggestions for a
            # misspelt type (components/plan/lookups.py instance_type_suggestion).

            patterns = [v for f in a.get("filters") or [] if f["name"] == "instance-type" for v in f["values"]]
            found = sorted(t for t in INSTANCE_TYPES if any(fnmatch.fnmatchcase(t, p) for p in patterns or ["*"]))
            return {"id": self.region, "instanceTypes": found}
        if tok == "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings":
            values = {f["name"]: f["values"] for f in a.get("filters") or []}
            pairs = [(t, z) for t in values.get("instance-type", INSTANCE_TYPES) for z in values.get("location", self.azs)
                     if t in INSTANCE_TYPES and z in self.azs and (t, z) not in self.unoffered]
            return {"id": self.region, "instanceTypes": [t for t, _ in pairs], "locations": [z for _, z in pairs],
                    "locationTypes": ["availability-zone"] * len(pairs)}
        if tok == "aws:ec2/getSubnet:getSubnet":
            sid = a.get("id")
            if sid not in self.existing:
                raise ValueError(f"InvalidSubnetID.NotFound: the subnet ID '{sid}' does not exist")
            found = self.existing[sid]
            return {"id": sid, "cidrBlock": found["cidr"], "availabilityZone": found["az"],
                    "vpcId": found["vpc"], "arn": self._arn("ec2", f"subnet/{sid}"),
                    "privateDnsHostnameTypeOnLaunch": found.get("hostnameType", "ip-name")}
        if tok == "aws:ec2/getVpc:getVpc":
            vpc = a.get("id")
            if vpc not in {s["vpc"] for s in self.existing.values()}:
                raise ValueError(f"InvalidVpcID.NotFound: the vpc ID '{vpc}' does not exist")
            dns = self.vpc_dns.get(vpc, (True, True))
            return {"id": vpc, "enableDnsSupport": dns[0], "enableDnsHostnames": dns[1], "cidrBlock": "10.0.0.0/8"}
        if tok == "aws:ec2/getRouteTable:getRouteTable":
            sid = a.get("subnetId")
            if sid is None:
                raise ValueError("no main route table in the emulated VPC")
            found = self.existing[sid]
            route = found.get("route", "igw" if found.get("public") else "nat")
            routes = {"igw": [route_result(cidrBlock="0.0.0.0/0", gatewayId="igw-0123456789abcdef0")],
                      "nat": [route_result(cidrBlock="0.0.0.0/0", natGatewayId="nat-0123456789abcdef0")],
                      "none": []}[route]
            return {"id": f"rtb-{_hex(sid)}", "routeTableId": f"rtb-{_hex(sid)}", "routes": routes, "subnetId": sid,
                    "vpcId": found["vpc"], "associations": []}
        if tok == "aws:ec2/getSecurityGroups:getSecurityGroups":
            # DescribeSecurityGroups with vpc-id and tag:<key> filters (the only ones the program uses).
            values = {f["name"]: set(f["values"]) for f in a.get("filters") or []}
            ids = sorted(g for g, v in self.security_groups.items()
                         if v["vpcId"] in values.get("vpc-id", {v["vpcId"]})
                         and all(v.get("tags", {}).get(k[4:]) in want for k, want in values.items()
                                 if k.startswith("tag:")))
            return {"id": self.region, "ids": ids, "vpcIds": [self.security_groups[g]["vpcId"] for g in ids],
                    "arns": [self._arn("ec2", f"security-group/{g}") for g in ids]}
        if tok == "aws:vpc/getSecurityGroupRules:getSecurityGroupRules":
            values = {f["name"]: set(f["values"]) for f in a.get("filters") or []}
            unknown = set(values) - {"group-id"}
            if unknown:
                raise ValueError(f"the offline mocks answer DescribeSecurityGroupRules by group-id only, not {unknown}")
            ids = sorted(r for r, v in self.security_group_rules.items() if v["groupId"] in values.get("group-id", ()))
            return {"id": self.region, "ids": ids}
        if tok == "aws:vpc/getSecurityGroupRule:getSecurityGroupRule":
            rid = a.get("securityGroupRuleId")
            if rid not in self.security_group_rules:
                raise ValueError(f"InvalidSecurityGroupRuleId.NotFound: {rid}")
            r = self.security_group_rules[rid]
            return {"id": rid, "securityGroupRuleId": rid, "securityGroupId": r["groupId"],
                    "arn": self._arn("ec2", f"security-group-rule/{rid}"), "isEgress": r.get("isEgress", False),
                    "ipProtocol": r.get("ipProtocol", "tcp"), "fromPort": r.get("fromPort", -1),
                    "toPort": r.get("toPort", -1), "cidrIpv4": r.get("cidrIpv4", ""), "cidrIpv6": "",
                    "description": r.get("description", ""), "prefixListId": "",
                    "referencedSecurityGroupId": r.get("referencedGroupId", ""), "tags": dict(r.get("tags") or {})}
        if tok == "aws:ssm/getParameter:getParameter":
            # Parameters the account holds besides what the program creates (e.g. a published kubeconfig).
            name = a.get("name")
            if name not in self.parameters:
                raise ValueError(f"ParameterNotFound: {name}")
            return {"id": name, "name": name, "value": self.parameters[name], "type": "SecureString",
                    "arn": self._arn("ssm", f"parameter{name}"), "version": 1, "insecureValue": "",
                    "withDecryption": a.get("withDecryption", True)}
        if tok == "aws:s3/getBucket:getBucket":
            # Buckets the account holds besides what the program creates (one kept by a destroy).
            name = a.get("bucket")
            if name not in self.buckets | self.foreign_buckets | set(self.objects):
                raise ValueError(f"NotFound: bucket {name} does not exist")
            return {"id": name, "bucket": name, "arn": f"arn:{self.partition}:s3:::{name}", "region": self.region,
                    "bucketRegion": self.region}
        if tok == "aws:s3/getObjects:getObjects":
            name, prefix = a.get("bucket"), a.get("prefix") or ""
            if name not in self.objects:
                raise ValueError(f"NoSuchBucket: listing S3 Bucket ({name}) Objects")
            return {"id": name, "bucket": name, "keys": sorted(k for k in self.objects[name] if k.startswith(prefix)),
                    "commonPrefixes": [], "owners": [], "requestCharged": ""}
        if tok == "aws:ec2/getVpcEndpoint:getVpcEndpoint":
            raise ValueError("no matching EC2 VPC Endpoint found")
        if tok == "aws:s3/getBuckets:getBuckets":
            # ListBuckets: this account's buckets only.
            prefix = a.get("prefix") or ""
            return {"id": self.region, "buckets": [
                {"name": b, "bucketArn": f"arn:{self.partition}:s3:::{b}", "bucketRegion": self.region, "creationDate": ""}
                for b in sorted(self.buckets) if b.startswith(prefix)]}
        if tok == "aws:ec2/getInstances:getInstances":
            values = {f["name"]: set(f["values"]) for f in a.get("filters") or []}
            ips = [ip for ip, tags in sorted(self.instances.items())
                   if ip in values.get("private-ip-address", {ip})
                   and self.spot_requests.get(ip) in values.get("spot-instance-request-id", {self.spot_requests.get(ip)})
                   and all(tags.get(k[len("tag:"):]) in v for k, v in values.items() if k.startswith("tag:"))]
            return {"id": self.region, "ids": [f"i-{_hex(ip)}" for ip in ips], "privateIps": ips, "publicIps": [],
                    "ipv6Addresses": []}
        if tok == "aws:ec2/getNetworkInterfaces:getNetworkInterfaces":
            values = {f["name"]: f["values"] for f in a.get("filters") or []}
            taken = [f"eni-{_hex(ip)}" for ip in values.get("addresses.private-ip-address", []) if ip in self.taken_ips]
            return {"id": "enis", "ids": taken}
        if tok == "aws:index/getCallerIdentity:getCallerIdentity":
            return {"accountId": ACCOUNT_ID, "arn": f"arn:{self.partition}:iam::{ACCOUNT_ID}:user/ci", "userId": "AIDA", "id": ACCOUNT_ID}
        if tok == "aws:index/getPartition:getPartition":
            return {"partition": self.partition, "dnsSuffix": dns_suffix(self.partition), "id": self.partition}
        if tok == "aws:index/getRegion:getRegion":
            return {"name": self.region, "region": self.region, "id": self.region}
        raise NotImplementedError(f"the offline mocks do not answer {tok}; add it to offline/engine/fake_aws.py")


def _fake(spec: str) -> Any:
    """A type's `fake` in offline/engine/resource_types.py as an AwsLikeMocks shape."""
    kind, _, arg = spec.partition(":")
    if kind == "prefix":
        return AwsLikeMocks.__dict__["_prefixed"](arg)
    if kind == "elb":
        return AwsLikeMocks.__dict__["_elb"](arg)
    return AwsLikeMocks.__dict__[spec]


AwsLikeMocks._SHAPES = {t: _fake(r.fake) for t, r in TYPES.items() if r.fake is not None}
AwsLikeMocks.KNOWN_TYPES = frozenset(AwsLikeMocks._SHAPES)
