"""Pulumi mocks that answer the way AWS would wherever the program can observe the answer.

What the program sees from AWS: IDs and ARNs of the right shape per type, an instance's private
IP (the one asked for, or one allocated inside its subnet) and the private DNS name AWS derives
from it and the region, a public IP only when one was asked for, the availability zones and the
AMI look-ups. Requests AWS would refuse (an address outside the subnet, a reserved or taken
address, an unknown subnet) fail here too.
"""

from __future__ import annotations

import hashlib
import ipaddress
from typing import Any, Optional

import pulumi

ACCOUNT_ID = "123456789012"


def known_regions() -> frozenset[str]:
    """Every region of every partition botocore knows (its bundled endpoints data)."""
    global _KNOWN_REGIONS
    if _KNOWN_REGIONS is None:
        import boto3

        session = boto3.Session()
        _KNOWN_REGIONS = frozenset(r for part in session.get_available_partitions()
                                   for r in session.get_available_regions("ec2", partition_name=part))
    return _KNOWN_REGIONS


_KNOWN_REGIONS: Optional[frozenset[str]] = None


def region_refusal(region: str) -> Optional[str]:
    """What the AWS provider answers every call with when configured for a region that does not
    exist (its region validation, before any API call), or None."""
    return None if region in known_regions() else f"configuring the AWS provider: invalid AWS Region: {region}"


ROUTE_KEYS = ("carrierGatewayId", "cidrBlock", "coreNetworkArn", "destinationPrefixListId", "egressOnlyGatewayId",
              "gatewayId", "instanceId", "ipv6CidrBlock", "localGatewayId", "natGatewayId", "networkInterfaceId",
              "odbNetworkArn", "transitGatewayId", "vpcEndpointId", "vpcPeeringConnectionId")


def route_result(**given: str) -> dict[str, str]:
    """One route of the getRouteTable answer (the SDK wants every field present)."""
    return {k: given.get(k, "") for k in ROUTE_KEYS}


def _hex(seed: str, n: int = 17) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def private_dns_name(ip: str, region: str) -> str:
    """EC2's IP-based private DNS name: us-east-1 uses ec2.internal, other regions <region>.compute.internal."""
    host = "ip-" + ip.replace(".", "-")
    return f"{host}.ec2.internal" if region == "us-east-1" else f"{host}.{region}.compute.internal"


class AwsLikeMocks(pulumi.runtime.Mocks):
    def __init__(self, region: str, available_azs: Optional[list[str]] = None,
                 existing_subnets: Optional[dict[str, dict[str, str]]] = None):
        """`existing_subnets`: pre-existing subnets of the account, id -> {cidr, az, vpc} and optionally
        public (bool: its route table has an igw- route), route ("igw" | "nat" | "none") and hostnameType."""
        self.region = region
        self.azs = available_azs or [f"{region}{letter}" for letter in "abcd"]
        self.existing = dict(existing_subnets or {})
        # Bring-your-own details a test may set: VPC -> (dns support, dns hostnames); addresses in use.
        self.vpc_dns: dict[str, tuple[bool, bool]] = {}
        self.taken_ips: set[str] = set()
        self.parameters: dict[str, str] = {}
        self.buckets: set[str] = set()
        # Buckets of other accounts that HeadBucket still answers for (their policy lets us list them).
        self.foreign_buckets: set[str] = set()
        # Instances of the account besides what the program creates: private IP -> their tags.
        self.instances: dict[str, dict[str, str]] = {}
        self.subnets: dict[str, dict[str, Any]] = {k: {"cidr": v["cidr"], "az": v["az"]} for k, v in self.existing.items()}
        self.used_ips: dict[str, str] = {}  # ip -> instance name
        self.resources: list[tuple[str, str, dict]] = []

    def _arn(self, service: str, resource: str, region: bool = True) -> str:
        return f"arn:aws:{service}:{self.region if region else ''}:{ACCOUNT_ID}:{resource}"

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        typ, name, inputs = args.typ, args.name, dict(args.inputs)
        if typ.startswith("aws:") and region_refusal(self.region):
            raise ValueError(region_refusal(self.region))
        self.resources.append((typ, name, inputs))
        seed = f"{typ}:{name}"
        state = dict(inputs)
        if typ == "aws:ec2/vpc:Vpc":
            rid = f"vpc-{_hex(seed)}"
            state.update(arn=self._arn("ec2", f"vpc/{rid}"), ownerId=ACCOUNT_ID,
                         mainRouteTableId=f"rtb-{_hex(seed + 'main')}",
                         defaultSecurityGroupId=f"sg-{_hex(seed + 'default')}")
        elif typ == "aws:ec2/subnet:Subnet":
            rid = f"subnet-{_hex(seed)}"
            cidr = inputs.get("cidrBlock")
            ipaddress.IPv4Network(cidr)  # AWS refuses a malformed CIDR
            self.subnets[rid] = {"cidr": cidr, "az": inputs.get("availabilityZone")}
            state.update(arn=self._arn("ec2", f"subnet/{rid}"), ownerId=ACCOUNT_ID)
        elif typ == "aws:ec2/instance:Instance":
            rid = f"i-{_hex(seed)}"
            state.update(self._instance(name, inputs))
            state.update(arn=self._arn("ec2", f"instance/{rid}"), instanceState="running")
        elif typ == "aws:iam/role:Role":
            role_name = inputs.get("name") or f"{name}-{_hex(seed, 7)}"
            rid = role_name
            state.update(name=role_name, arn=self._arn("iam", f"role/{role_name}", region=False),
                         uniqueId=f"AROA{_hex(seed, 16).upper()}")
        elif typ == "aws:iam/instanceProfile:InstanceProfile":
            prof = inputs.get("name") or f"{name}-{_hex(seed, 7)}"
            rid = prof
            state.update(name=prof, arn=self._arn("iam", f"instance-profile/{prof}", region=False),
                         uniqueId=f"AIPA{_hex(seed, 16).upper()}")
        elif typ == "aws:ec2/securityGroup:SecurityGroup":
            rid = f"sg-{_hex(seed)}"
            state.update(arn=self._arn("ec2", f"security-group/{rid}"), ownerId=ACCOUNT_ID,
                         name=inputs.get("name") or f"{name}-{_hex(seed, 7)}")
        elif typ == "aws:ec2/eip:Eip":
            rid = f"eipalloc-{_hex(seed)}"
            n = int(_hex(seed, 4), 16)
            state.update(allocationId=rid, publicIp=f"198.51.100.{n % 250 + 1}")
        elif typ == "aws:route53/zone:Zone":
            rid = "Z" + _hex(seed, 20).upper()
            state.update(zoneId=rid, arn=f"arn:aws:route53:::hostedzone/{rid}", nameServers=[])
        elif typ in ("aws:lb/loadBalancer:LoadBalancer", "aws:lb/targetGroup:TargetGroup", "aws:lb/listener:Listener"):
            kind = {"aws:lb/loadBalancer:LoadBalancer": "loadbalancer/net", "aws:lb/targetGroup:TargetGroup": "targetgroup",
                    "aws:lb/listener:Listener": "listener/net"}[typ]
            rid = self._arn("elasticloadbalancing", f"{kind}/{inputs.get('name') or name}/{_hex(seed, 16)}")
            state.update(arn=rid)
            if typ == "aws:lb/loadBalancer:LoadBalancer":
                state.update(dnsName=f"{inputs.get('name') or name}-{_hex(seed, 10)}.elb.{self.region}.amazonaws.com",
                             zoneId="Z" + _hex(seed + "zone", 13).upper())
        elif typ == "aws:ssm/parameter:Parameter":
            rid = inputs.get("name") or name
            state.update(arn=self._arn("ssm", f"parameter{rid}"))
        elif typ == "aws:iam/user:User":
            rid = inputs.get("name") or f"{name}-{_hex(seed, 7)}"
            state.update(name=rid, arn=self._arn("iam", f"user{inputs.get('path', '/')}{rid}", region=False),
                         uniqueId=f"AIDA{_hex(seed, 16).upper()}")
        elif typ == "aws:iam/policy:Policy":
            pname = inputs.get("name") or f"{name}-{_hex(seed, 7)}"
            rid = self._arn("iam", f"policy{inputs.get('path', '/')}{pname}", region=False)
            state.update(name=pname, arn=rid, policyId=f"ANPA{_hex(seed, 16).upper()}")
        elif typ == "aws:iam/accessKey:AccessKey":
            rid = f"AKIA{_hex(seed, 16).upper()}"
            state.update(secret=_hex(seed + "secret", 40), status="Active")
        elif typ == "aws:kms/key:Key":
            h = _hex(seed, 32)
            rid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"  # KMS key ids are UUIDs
            state.update(keyId=rid, arn=self._arn("kms", f"key/{rid}"))
        elif typ == "aws:kms/alias:Alias":
            rid = inputs.get("name") or name
            state.update(arn=self._arn("kms", rid))
        elif typ == "aws:s3/bucket:Bucket":
            rid = inputs.get("bucket") or f"{name}-{_hex(seed, 7)}"
            state.update(bucket=rid, arn=f"arn:aws:s3:::{rid}", region=self.region,
                         bucketDomainName=f"{rid}.s3.amazonaws.com")
        else:
            prefix = {
                "aws:ec2/internetGateway:InternetGateway": "igw-",
                "aws:ec2/natGateway:NatGateway": "nat-",
                "aws:ec2/routeTable:RouteTable": "rtb-",
                "aws:ec2/routeTableAssociation:RouteTableAssociation": "rtbassoc-",
                "aws:ec2/route:Route": "r-",
                "aws:ec2/subnetCidrReservation:SubnetCidrReservation": "scr-",
                "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr-",
                "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "sgr-",
            }.get(typ)
            rid = f"{prefix}{_hex(seed)}" if prefix else f"{name}-id"
            if typ == "random:index/randomPassword:RandomPassword":
                state["result"] = _hex(seed, int(inputs.get("length", 32)))
            if typ == "aws:iam/rolePolicy:RolePolicy":
                state.setdefault("name", f"{name}-{_hex(seed, 7)}")
        return rid, state

    def _instance(self, name: str, inputs: dict) -> dict:
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
            return {"id": "ami-0a1b2c3d4e5f60718", "imageId": "ami-0a1b2c3d4e5f60718",
                    "name": "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20261101",
                    "ownerId": "099720109477", "architecture": "x86_64"}
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
            if name not in self.buckets | self.foreign_buckets:
                raise ValueError(f"NotFound: bucket {name} does not exist")
            return {"id": name, "bucket": name, "arn": f"arn:aws:s3:::{name}", "region": self.region}
        if tok == "aws:s3/getBuckets:getBuckets":
            # ListBuckets: this account's buckets only.
            prefix = a.get("prefix") or ""
            return {"id": self.region, "buckets": [
                {"name": b, "bucketArn": f"arn:aws:s3:::{b}", "bucketRegion": self.region, "creationDate": ""}
                for b in sorted(self.buckets) if b.startswith(prefix)]}
        if tok == "aws:ec2/getInstances:getInstances":
            values = {f["name"]: set(f["values"]) for f in a.get("filters") or []}
            ips = [ip for ip, tags in sorted(self.instances.items())
                   if ip in values.get("private-ip-address", {ip})
                   and all(tags.get(k[len("tag:"):]) in v for k, v in values.items() if k.startswith("tag:"))]
            return {"id": self.region, "ids": [f"i-{_hex(ip)}" for ip in ips], "privateIps": ips, "publicIps": [],
                    "ipv6Addresses": []}
        if tok == "aws:ec2/getNetworkInterfaces:getNetworkInterfaces":
            values = {f["name"]: f["values"] for f in a.get("filters") or []}
            taken = [f"eni-{_hex(ip)}" for ip in values.get("addresses.private-ip-address", []) if ip in self.taken_ips]
            return {"id": "enis", "ids": taken}
        if tok == "aws:index/getCallerIdentity:getCallerIdentity":
            return {"accountId": ACCOUNT_ID, "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/ci", "userId": "AIDA", "id": ACCOUNT_ID}
        if tok == "aws:index/getPartition:getPartition":
            return {"partition": "aws", "dnsSuffix": "amazonaws.com", "id": "aws"}
        if tok == "aws:index/getRegion:getRegion":
            return {"name": self.region, "region": self.region, "id": self.region}
        raise NotImplementedError(f"the offline mocks do not answer {tok}; add it to offline/mocks.py")
