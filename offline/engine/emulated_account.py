"""Pulumi mocks backed by an emulated AWS account (moto, in process): `make plan`, snapshots, doctor.

Every AWS resource the program registers is created through boto3 in a moto account, so IDs,
private IPs, private DNS names and public IPs come from moto, and moto's refusals (unknown subnet,
address outside the subnet or already taken, duplicate rule, unknown instance profile, ...) fail
the plan. The account stays up after the run (until `stop()`), so it can be inspected with boto3
(components/ops/doctor.py `--emulated`, tests/emulated/test_doctor.py).

Determinism: moto draws every identifier from one seedable Random. The run seeds it once at
start, and again before each resource from that resource's type and name, so IDs do not depend
on the order in which Pulumi's worker threads happen to register resources.

Where moto is laxer than AWS, the gap is closed here (marked "moto gap"): AWS-reserved addresses,
unknown key pairs, AMIs and instance types, moto's plain exceptions for address conflicts, AWS
managed policies that moto does not load by default. No network and no credentials are used:
the session carries fake keys and moto intercepts every call while the mock is active.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import ipaddress
import json
import os
import random
import re
import string
import threading
import zlib
from collections.abc import Callable, Iterable
from typing import Any

import boto3
import pulumi
from botocore.exceptions import ClientError

from rke_aws.settings import versions
from rke_aws_offline.engine.fake_aws import CANONICAL_OWNERS, region_refusal, route_result, user_data_refusal
from rke_aws_offline.engine.harness import unwrap_secrets
from rke_aws_offline.engine.resource_types import TYPES

ACCOUNT_ID = "123456789012"  # moto's default account
# The Canonical image the emulated account publishes (moto's built-in AMIs have no Ubuntu 24.04),
# under the account Canonical publishes from in the region's partition (fake_aws.CANONICAL_OWNERS,
# written out from Canonical's "Find Ubuntu images on AWS", not taken from the program), so a
# program that asks the wrong owner finds no image.
EMULATED_UBUNTU_AMI = {
    "name": versions.UBUNTU_AMI_NAME.replace("*", "20250101"),
    "creation_date": _dt.datetime(2025, 1, 1, tzinfo=_dt.UTC),
}
ROOT_DEVICE = "/dev/sda1"  # Ubuntu images' root device
# Set while an emulated account is active (unless already set): moto's ~5000 built-in AMIs cost
# 0.1 s per region and include no Canonical Ubuntu 24.04.
_MOTO_ENV = {"MOTO_EC2_LOAD_DEFAULT_AMIS": "false"}
_LOADER = None  # one botocore data loader per process: service models are parsed once


def _new_session(region: str) -> boto3.Session:
    """A fresh boto3 session per emulated account, over a fresh botocore session that shares the
    process's data loader. (Sharing the botocore session itself is wrong: every boto3.Session
    registers its S3 class hooks on it again, and creating an S3 client then fails with "Cannot
    inject class attribute upload_file"; its region would also leak between accounts.) Explicit fake
    keys: nothing here ever reads the user's credentials."""
    global _LOADER
    import botocore.session

    core = botocore.session.Session()
    if _LOADER is None:
        _LOADER = core.get_component("data_loader")
    else:
        core.register_component("data_loader", _LOADER)
    return boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                         aws_session_token="testing", region_name=region, botocore_session=core)


class EmulatedAwsError(ValueError):
    """A request the emulated account (or AWS) refuses; the message names the resource."""


def _partition_of(region: str) -> str:
    # A throwaway session: the shared one must be created after moto patches botocore (start()).
    import botocore.session

    return botocore.session.Session().get_partition_for_region(region)


def _hex(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def _tag_list(tags: dict | None) -> list[dict[str, str]]:
    return [{"Key": k, "Value": str(v)} for k, v in sorted((tags or {}).items())]


def _tag_spec(resource_type: str, tags: dict | None) -> list[dict]:
    return [{"ResourceType": resource_type, "Tags": _tag_list(tags)}] if tags else []


class MotoMocks(pulumi.runtime.Mocks):
    """Pulumi mocks that create every resource in an in-process moto account.

    Use as `with MotoMocks(region) as mocks: harness.run_program(config, stack, mocks=mocks)`, or
    call `start()` / `stop()`. Only one emulated account can be active in a process at a time.
    `key_pairs`: key pairs the account already holds; with `create_missing_key_pairs` (default) a
    key pair an instance names is created on the fly, as the stack assumes it exists.
    `setup(session)` runs right after start, e.g. to create pre-existing subnets.
    """

    _active: MotoMocks | None = None
    _class_lock = threading.Lock()

    def __init__(self, region: str, seed: str = "rke-aws", key_pairs: Iterable[str] = (),
                 create_missing_key_pairs: bool = True,
                 setup: Callable[[boto3.Session], None] | None = None):
        self.region = region
        self.seed = seed
        self.key_pairs = tuple(key_pairs)
        self.create_missing_key_pairs = create_missing_key_pairs
        self.setup = setup
        self.resources: list[tuple[str, str, dict]] = []
        self.ids: dict[str, str] = {}  # "<type>::<name>" -> physical ID
        self._lock = threading.RLock()
        self._mock = None
        self._env: dict[str, str | None] = {}
        self._session: boto3.Session | None = None
        self._clients: dict[str, Any] = {}
        # moto gap: RunInstances with spot market options creates no spot request in moto; AWS does, and
        # DescribeInstances filters by it (spot-instance-request-id). Instance ID -> request ID.
        self.spot_requests: dict[str, str] = {}
        # A region AWS does not have: the provider refuses every call (moto would raise KeyError).
        self.refusal = region_refusal(region)
        self.partition = "aws" if self.refusal else _partition_of(region)

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return self._mock is not None

    def start(self) -> MotoMocks:
        if self.active:
            return self
        from moto import mock_aws

        with MotoMocks._class_lock:
            if MotoMocks._active is not None:
                raise RuntimeError("another emulated AWS account is active; stop() it first")
            self._env = {k: os.environ.get(k) for k in _MOTO_ENV}
            for k, v in _MOTO_ENV.items():
                os.environ.setdefault(k, v)
            self._mock = mock_aws()
            self._mock.start(reset=True)
            MotoMocks._active = self
        self._seed(f"{self.seed}:{self.region}")
        self._session = _new_session(self.region)
        self._clients = {}
        if self.refusal:
            return self  # an account in no region: every call is refused (see _require_active)
        try:
            self._ec2().describe_vpcs()  # creates the region's default VPC now, under the run's seed
            self._publish_ubuntu_ami()
            for key in self.key_pairs:
                self._seed(f"{self.seed}:keypair::{key}")
                self._ec2().create_key_pair(KeyName=key)
            if self.setup:
                self.setup(self._session)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        with MotoMocks._class_lock:
            if self._mock is not None:
                self._mock.stop()
                self._mock = None
                for k, v in self._env.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            if MotoMocks._active is self:
                MotoMocks._active = None
            self._session = None
            self._clients = {}

    def __enter__(self) -> MotoMocks:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def session(self) -> boto3.Session:
        """A boto3 session on the emulated account (only while it is active)."""
        if self._session is None:
            raise RuntimeError("the emulated AWS account is not active")
        return self._session

    def client(self, service: str):
        """A boto3 client on the emulated account (only while it is active), as the program's resources see it."""
        return self._iam() if service == "iam" else self._client(service)

    def _require_active(self, what: str) -> None:
        # Never restart a stopped account here: a registration that arrives after its run failed
        # (from Pulumi's worker threads) would otherwise start an account nobody stops, and the
        # next run would find "another emulated AWS account is active".
        if not self.active:
            raise EmulatedAwsError(f"AccountStopped: {what}: the emulated AWS account is not active")
        if self.refusal:
            raise EmulatedAwsError(self.refusal)

    def _client(self, service: str):
        self._require_active(f"{service} client")
        if service not in self._clients:
            self._clients[service] = self._session.client(service)
        return self._clients[service]

    def _ec2(self):
        return self._client("ec2")

    @staticmethod
    def _seed(seed: str) -> None:
        from moto.moto_api._internal import mock_random

        mock_random.seed(seed)

    def _publish_ubuntu_ami(self) -> None:
        # moto gap: its built-in AMIs have no Canonical Ubuntu 24.04 image, and RegisterImage would
        # make the image ours, not Canonical's; so the image is put into the backend directly.
        from moto.ec2.models import ec2_backends
        from moto.ec2.models.amis import Ami

        backend = ec2_backends[ACCOUNT_ID][self.region]
        # Canonical's names: ubuntu-noble-24.04-<amd64|arm64>-server-<date>, EC2 architectures x86_64 / arm64.
        for deb_arch, ec2_arch in (("amd64", "x86_64"), ("arm64", "arm64")):
            ami_id = "ami-" + _hex(f"ubuntu:{self.region}" + ("" if deb_arch == "amd64" else ":arm64"), 17)
            backend.amis[ami_id] = Ami(
                backend, ami_id, name=EMULATED_UBUNTU_AMI["name"].replace("-amd64-", f"-{deb_arch}-"),
                owner_id=CANONICAL_OWNERS[self.partition],
                public=True, virtualization_type="hvm", architecture=ec2_arch, hypervisor="xen",
                root_device_type="ebs", root_device_name=ROOT_DEVICE, region_name=self.region,
                creation_date=EMULATED_UBUNTU_AMI["creation_date"],
            )

    # ---- Pulumi mocks --------------------------------------------------------------------------

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        typ, name = args.typ, args.name
        inputs = unwrap_secrets(dict(args.inputs))
        with self._lock:
            self._require_active(f"{typ.split(':')[-1]} {name}")
            self._seed(f"{self.seed}:{typ}::{name}")
            self.resources.append((typ, name, inputs))
            handler = self._HANDLERS.get(typ) or self._OUTSIDE_AWS.get(typ)
            if handler is None and args.custom:
                # Never fake what is not known: a new resource type is declared in offline/engine/resource_types.py
                # with its handler here before the emulated account accepts it.
                raise EmulatedAwsError(f"UnknownResourceType: {typ} {name}: the emulated account does not know this "
                                       "resource type; declare it in offline/engine/resource_types.py")
            try:
                rid, extra = handler(self, name, inputs) if handler else (f"{name}-id", {})  # a component
            except ClientError as err:
                e = err.response.get("Error", {})
                raise EmulatedAwsError(f"{e.get('Code')}: {typ.split(':')[-1]} {name}: {e.get('Message')}") from None
            self.ids[f"{typ}::{name}"] = rid
            state = dict(inputs)
            state.update(extra)
            return rid, state

    def call(self, args: pulumi.runtime.MockCallArgs):
        """An invoke. AWS's refusal comes back as the invoke's failure, as the engine returns a
        provider's error to the program (which may catch it); raising here would instead fail the
        whole run from Pulumi's RPC bookkeeping, past the program."""
        tok, a = args.token, unwrap_secrets(dict(args.args))
        with self._lock:
            try:
                self._require_active(tok)
                try:
                    return self._call(tok, a)
                except ClientError as err:
                    e = err.response.get("Error", {})
                    raise EmulatedAwsError(f"{e.get('Code')}: {tok}: {e.get('Message')}") from None
            except EmulatedAwsError as err:
                return {}, [("", str(err))]

    # ---- invokes ---------------------------------------------------------------------------

    @staticmethod
    def _filters(a: dict) -> list[dict]:
        return [{"Name": f["name"], "Values": list(f["values"])} for f in a.get("filters") or []]

    def _call(self, tok: str, a: dict) -> dict:
        ec2 = self._ec2()
        if tok == "aws:index/getAvailabilityZones:getAvailabilityZones":
            filters = self._filters(a)
            if a.get("state"):
                filters.append({"Name": "state", "Values": [a["state"]]})
            zones = ec2.describe_availability_zones(Filters=filters)["AvailabilityZones"]
            zones = sorted(zones, key=lambda z: z["ZoneName"])
            return {"id": self.region, "names": [z["ZoneName"] for z in zones],
                    "zoneIds": [z["ZoneId"] for z in zones],
                    "groupNames": [z.get("GroupName", self.region) for z in zones]}
        if tok == "aws:ec2/getAmi:getAmi":
            kwargs: dict[str, Any] = {"Filters": self._filters(a)}
            if a.get("owners"):
                kwargs["Owners"] = list(a["owners"])
            images = ec2.describe_images(**kwargs)["Images"]
            if not images:
                raise EmulatedAwsError("Your query returned no results. Please change your search criteria and try again.")
            if len(images) > 1 and not a.get("mostRecent"):
                raise EmulatedAwsError("Your query returned more than one result. Please try a more specific search criteria, or set `most_recent` attribute to true.")
            img = sorted(images, key=lambda i: (i.get("CreationDate", ""), i["ImageId"]))[-1]
            return {"id": img["ImageId"], "imageId": img["ImageId"], "name": img.get("Name"),
                    "ownerId": img.get("OwnerId"), "architecture": img.get("Architecture"),
                    "virtualizationType": img.get("VirtualizationType"),
                    "rootDeviceName": img.get("RootDeviceName"), "creationDate": img.get("CreationDate")}
        if tok == "aws:ec2/getKeyPair:getKeyPair":
            name = a.get("keyName")
            if not ec2.describe_key_pairs(Filters=[{"Name": "key-name", "Values": [name]}])["KeyPairs"]:
                if not self.create_missing_key_pairs:
                    raise EmulatedAwsError(f"InvalidKeyPair.NotFound: The key pair '{name}' does not exist")
                self._seed(f"{self.seed}:keypair::{name}")  # as at RunInstances: the stack assumes it exists
                ec2.create_key_pair(KeyName=name)
            (pair,) = ec2.describe_key_pairs(KeyNames=[name])["KeyPairs"]
            return {"id": pair["KeyPairId"], "keyPairId": pair["KeyPairId"], "keyName": pair["KeyName"],
                    "fingerprint": pair.get("KeyFingerprint", ""), "keyType": pair.get("KeyType", "rsa"),
                    "arn": self._arn("ec2", f"key-pair/{name}"), "tags": {}}
        if tok == "aws:ec2/getInstanceType:getInstanceType":
            (t,) = ec2.describe_instance_types(InstanceTypes=[a["instanceType"]])["InstanceTypes"]
            return {"id": t["InstanceType"], "instanceType": t["InstanceType"],
                    "defaultVcpus": t["VCpuInfo"]["DefaultVCpus"], "memorySize": t["MemoryInfo"]["SizeInMiB"],
                    "supportedArchitectures": t["ProcessorInfo"]["SupportedArchitectures"],
                    "supportedVirtualizationTypes": t.get("SupportedVirtualizationTypes", [])}
        if tok == "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings":
            location_type = a.get("locationType") or "region"
            filters = self._filters(a)
            offers = ec2.describe_instance_type_offerings(LocationType=location_type, Filters=filters)["InstanceTypeOfferings"]
            if not offers and not self._has_offerings_data(location_type):
                # moto gap: it has no offerings data for GovCloud and China regions (moto/ec2/resources/
                # instance_type_offerings); there every type it knows is offered in every zone asked for.
                values = {f["Name"]: f["Values"] for f in filters}
                known = {t["InstanceType"] for t in ec2.describe_instance_types(
                    InstanceTypes=values.get("instance-type", []))["InstanceTypes"]} if values.get("instance-type") else set()
                offers = [{"InstanceType": t, "Location": z} for t in sorted(known) for z in values.get("location", [])]
            return {"id": self.region, "instanceTypes": [o["InstanceType"] for o in offers],
                    "locations": [o["Location"] for o in offers], "locationTypes": [location_type] * len(offers)}
        if tok == "aws:ec2/getVpc:getVpc":
            (vpc,) = ec2.describe_vpcs(VpcIds=[a["id"]])["Vpcs"]
            attr = {k: ec2.describe_vpc_attribute(VpcId=a["id"], Attribute=k)[k[0].upper() + k[1:]]["Value"]
                    for k in ("enableDnsSupport", "enableDnsHostnames")}
            return {"id": vpc["VpcId"], "cidrBlock": vpc["CidrBlock"], **attr}
        if tok == "aws:ec2/getRouteTable:getRouteTable":
            filters = self._filters(a)
            if a.get("subnetId"):
                filters.append({"Name": "association.subnet-id", "Values": [a["subnetId"]]})
            if a.get("vpcId"):
                filters.append({"Name": "vpc-id", "Values": [a["vpcId"]]})
            tables = ec2.describe_route_tables(Filters=filters)["RouteTables"]
            if len(tables) != 1:
                raise EmulatedAwsError(f"query returned {len(tables)} route tables, expected one")
            t = tables[0]
            key = {"DestinationCidrBlock": "cidrBlock", "GatewayId": "gatewayId", "NatGatewayId": "natGatewayId",
                   "TransitGatewayId": "transitGatewayId", "NetworkInterfaceId": "networkInterfaceId",
                   "InstanceId": "instanceId", "VpcPeeringConnectionId": "vpcPeeringConnectionId"}
            routes = [route_result(**{key[k]: v for k, v in r.items() if k in key}) for r in t.get("Routes", [])
                      if r.get("GatewayId") != "local"]
            return {"id": t["RouteTableId"], "routeTableId": t["RouteTableId"], "vpcId": t["VpcId"], "routes": routes,
                    "associations": []}
        if tok == "aws:s3/getBucket:getBucket":
            name = a["bucket"]
            try:
                self._s3().head_bucket(Bucket=name)
            except Exception:  # noqa: BLE001 - botocore's 404
                raise EmulatedAwsError(f"NotFound: bucket {name} does not exist") from None
            return {"id": name, "bucket": name, "arn": f"arn:{self.partition}:s3:::{name}", "region": self.region}
        if tok == "aws:s3/getBuckets:getBuckets":
            prefix = a.get("prefix") or ""
            found = [b for b in self._s3().list_buckets().get("Buckets", []) if b["Name"].startswith(prefix)]
            return {"id": self.region, "buckets": [
                {"name": b["Name"], "bucketArn": f"arn:{self.partition}:s3:::{b['Name']}", "bucketRegion": self.region,
                 "creationDate": str(b.get("CreationDate", ""))} for b in found]}
        if tok == "aws:ec2/getInstances:getInstances":
            filters = self._filters(a)
            by_request = [set(f["Values"]) for f in filters if f["Name"] == "spot-instance-request-id"]
            kwargs: dict[str, Any] = {"Filters": [f for f in filters if f["Name"] != "spot-instance-request-id"]}
            if a.get("instanceStateNames"):
                kwargs["Filters"].append({"Name": "instance-state-name", "Values": list(a["instanceStateNames"])})
            found = [i for r in ec2.describe_instances(**kwargs)["Reservations"] for i in r["Instances"]
                     if all(self.spot_requests.get(i["InstanceId"]) in v for v in by_request)]
            return {"id": self.region, "ids": [i["InstanceId"] for i in found],
                    "privateIps": [i.get("PrivateIpAddress", "") for i in found], "publicIps": [], "ipv6Addresses": []}
        if tok == "aws:ssm/getParameter:getParameter":
            param = self._client("ssm").get_parameter(Name=a["name"], WithDecryption=bool(a.get("withDecryption")))["Parameter"]
            return {"id": param["Name"], "name": param["Name"], "value": param["Value"], "type": param["Type"],
                    "arn": param["ARN"], "version": param["Version"], "insecureValue": "",
                    "withDecryption": bool(a.get("withDecryption"))}
        if tok == "aws:ec2/getNetworkInterfaces:getNetworkInterfaces":
            enis = ec2.describe_network_interfaces(Filters=self._filters(a))["NetworkInterfaces"]
            return {"id": self.region, "ids": sorted(e["NetworkInterfaceId"] for e in enis)}
        if tok == "aws:ec2/getSubnet:getSubnet":
            (s,) = ec2.describe_subnets(SubnetIds=[a["id"]])["Subnets"]
            return {"id": s["SubnetId"], "arn": self._arn("ec2", f"subnet/{s['SubnetId']}"), "cidrBlock": s["CidrBlock"],
                    "availabilityZone": s["AvailabilityZone"], "availabilityZoneId": s.get("AvailabilityZoneId"),
                    "vpcId": s["VpcId"], "tags": {t["Key"]: t["Value"] for t in s.get("Tags", [])},
                    "privateDnsHostnameTypeOnLaunch": (s.get("PrivateDnsNameOptionsOnLaunch") or {}).get("HostnameType", "ip-name")}
        if tok == "aws:index/getCallerIdentity:getCallerIdentity":
            ident = self._client("sts").get_caller_identity()
            return {"id": ident["Account"], "accountId": ident["Account"], "arn": ident["Arn"], "userId": ident["UserId"]}
        if tok == "aws:index/getPartition:getPartition":
            suffix = "amazonaws.com.cn" if self.partition == "aws-cn" else "amazonaws.com"
            return {"id": self.partition, "partition": self.partition, "dnsSuffix": suffix,
                    "reverseDnsPrefix": ".".join(reversed(suffix.split(".")))}
        if tok == "aws:index/getRegion:getRegion":
            return {"id": self.region, "name": self.region, "region": self.region,
                    "endpoint": f"ec2.{self.region}.amazonaws.com"}
        raise NotImplementedError(f"the emulated account does not answer {tok}; add it to offline/engine/emulated_account.py")

    def _has_offerings_data(self, location_type: str) -> bool:
        from moto.ec2.models.instance_types import INSTANCE_TYPE_OFFERINGS

        return bool(INSTANCE_TYPE_OFFERINGS.get(location_type, {}).get(self.region))

    # ---- resources -------------------------------------------------------------------------

    def _arn(self, service: str, resource: str, region: bool = True) -> str:
        return f"arn:{self.partition}:{service}:{self.region if region else ''}:{ACCOUNT_ID}:{resource}"

    def _in_partition(self, arn: str) -> str:
        # moto gap: IAM ARNs in GovCloud come back as arn:aws:...; AWS gives arn:aws-us-gov:...
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
        return given or f"{name}-{_hex(name, 7)}"

    def _vpc(self, name, i):
        ec2 = self._ec2()
        vpc = ec2.create_vpc(CidrBlock=i["cidrBlock"], InstanceTenancy=i.get("instanceTenancy", "default"),
                             TagSpecifications=_tag_spec("vpc", i.get("tags")))["Vpc"]
        vid = vpc["VpcId"]
        # AWS takes one attribute per ModifyVpcAttribute call.
        if "enableDnsSupport" in i:
            ec2.modify_vpc_attribute(VpcId=vid, EnableDnsSupport={"Value": bool(i["enableDnsSupport"])})
        if "enableDnsHostnames" in i:
            ec2.modify_vpc_attribute(VpcId=vid, EnableDnsHostnames={"Value": bool(i["enableDnsHostnames"])})
        attr = {k: ec2.describe_vpc_attribute(VpcId=vid, Attribute=k)[k[0].upper() + k[1:]]["Value"]
                for k in ("enableDnsSupport", "enableDnsHostnames")}
        main_rt = ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": [vid]},
                                                     {"Name": "association.main", "Values": ["true"]}])["RouteTables"]
        default_sg = ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [vid]},
                                                           {"Name": "group-name", "Values": ["default"]}])["SecurityGroups"]
        return vid, {**attr, "arn": self._arn("ec2", f"vpc/{vid}"), "ownerId": vpc.get("OwnerId", ACCOUNT_ID),
                     "dhcpOptionsId": vpc.get("DhcpOptionsId"),
                     "mainRouteTableId": main_rt[0]["RouteTableId"] if main_rt else "",
                     "defaultRouteTableId": main_rt[0]["RouteTableId"] if main_rt else "",
                     "defaultSecurityGroupId": default_sg[0]["GroupId"] if default_sg else ""}

    def _subnet(self, name, i):
        ec2 = self._ec2()
        kwargs = {"VpcId": i["vpcId"], "CidrBlock": i["cidrBlock"], "TagSpecifications": _tag_spec("subnet", i.get("tags"))}
        if i.get("availabilityZone"):
            kwargs["AvailabilityZone"] = i["availabilityZone"]
        s = ec2.create_subnet(**kwargs)["Subnet"]
        if i.get("mapPublicIpOnLaunch"):
            ec2.modify_subnet_attribute(SubnetId=s["SubnetId"], MapPublicIpOnLaunch={"Value": True})
        return s["SubnetId"], {"arn": self._arn("ec2", f"subnet/{s['SubnetId']}"),  # moto gap: SubnetArn is always arn:aws
                               "availabilityZone": s["AvailabilityZone"], "availabilityZoneId": s.get("AvailabilityZoneId"),
                               "ownerId": s.get("OwnerId", ACCOUNT_ID)}

    def _subnet_cidr_reservation(self, name, i):
        # moto implements subnet CIDR reservations (and refuses one outside the subnet or
        # overlapping another); it does not keep auto-assigned addresses out of them.
        kwargs = {"SubnetId": i["subnetId"], "Cidr": i["cidrBlock"], "ReservationType": i["reservationType"]}
        if i.get("description"):
            kwargs["Description"] = i["description"]
        r = self._ec2().create_subnet_cidr_reservation(**kwargs)["SubnetCidrReservation"]
        return r["SubnetCidrReservationId"], {"ownerId": r.get("OwnerId", ACCOUNT_ID)}

    def _internet_gateway(self, name, i):
        ec2 = self._ec2()
        igw = ec2.create_internet_gateway(TagSpecifications=_tag_spec("internet-gateway", i.get("tags")))["InternetGateway"]
        gid = igw["InternetGatewayId"]
        if i.get("vpcId"):
            ec2.attach_internet_gateway(InternetGatewayId=gid, VpcId=i["vpcId"])
        return gid, {"arn": self._arn("ec2", f"internet-gateway/{gid}"), "ownerId": ACCOUNT_ID}

    def _route_table(self, name, i):
        if i.get("routes"):
            raise NotImplementedError(f"RouteTable {name}: inline routes are not emulated; use aws.ec2.Route")
        rt = self._ec2().create_route_table(VpcId=i["vpcId"], TagSpecifications=_tag_spec("route-table", i.get("tags")))["RouteTable"]
        rid = rt["RouteTableId"]
        return rid, {"arn": self._arn("ec2", f"route-table/{rid}"), "ownerId": ACCOUNT_ID}

    def _route(self, name, i):
        kwargs = {"RouteTableId": i["routeTableId"], "DestinationCidrBlock": i["destinationCidrBlock"]}
        for key, arg in (("gatewayId", "GatewayId"), ("natGatewayId", "NatGatewayId"),
                         ("networkInterfaceId", "NetworkInterfaceId"), ("transitGatewayId", "TransitGatewayId"),
                         ("vpcPeeringConnectionId", "VpcPeeringConnectionId")):
            if i.get(key):
                kwargs[arg] = i[key]
        self._ec2().create_route(**kwargs)
        # The provider's ID for a route: r-<route table><crc32 of the destination>.
        rid = f"r-{i['routeTableId']}{zlib.crc32(i['destinationCidrBlock'].encode())}"
        return rid, {"state": "active", "origin": "CreateRoute"}

    def _route_table_association(self, name, i):
        kwargs = {"RouteTableId": i["routeTableId"]}
        if i.get("subnetId"):
            kwargs["SubnetId"] = i["subnetId"]
        if i.get("gatewayId"):
            kwargs["GatewayId"] = i["gatewayId"]
        return self._ec2().associate_route_table(**kwargs)["AssociationId"], {}

    def _eip(self, name, i):
        a = self._ec2().allocate_address(Domain=i.get("domain", "vpc"),
                                         TagSpecifications=_tag_spec("elastic-ip", i.get("tags")))
        aid = a["AllocationId"]
        return aid, {"allocationId": aid, "publicIp": a["PublicIp"], "domain": a.get("Domain", "vpc"),
                     "arn": self._arn("ec2", f"elastic-ip/{aid}"),
                     "publicDns": f"ec2-{a['PublicIp'].replace('.', '-')}.{self.region}.compute.amazonaws.com"}

    def _nat_gateway(self, name, i):
        kwargs = {"SubnetId": i["subnetId"], "ConnectivityType": i.get("connectivityType", "public"),
                  "TagSpecifications": _tag_spec("natgateway", i.get("tags"))}
        if i.get("allocationId"):
            kwargs["AllocationId"] = i["allocationId"]
        n = self._ec2().create_nat_gateway(**kwargs)["NatGateway"]
        addr = (n.get("NatGatewayAddresses") or [{}])[0]
        return n["NatGatewayId"], {"privateIp": addr.get("PrivateIp"), "publicIp": addr.get("PublicIp"),
                                   "networkInterfaceId": addr.get("NetworkInterfaceId")}

    def _security_group(self, name, i):
        if i.get("ingress") or i.get("egress"):
            raise NotImplementedError(f"SecurityGroup {name}: inline rules are not emulated; use aws.vpc rule resources")
        ec2 = self._ec2()
        gname = self._autoname(name, i.get("name"))
        kwargs = {"GroupName": gname, "Description": i.get("description") or "Managed by Pulumi",
                  "TagSpecifications": _tag_spec("security-group", i.get("tags"))}
        if i.get("vpcId"):
            kwargs["VpcId"] = i["vpcId"]
        gid = ec2.create_security_group(**kwargs)["GroupId"]
        # The AWS provider deletes the allow-all egress rule AWS puts on every new group, so only
        # the program's rules remain (and its own allow-all egress rule is not a duplicate).
        ec2.revoke_security_group_egress(GroupId=gid, IpPermissions=[{"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
        return gid, {"arn": self._arn("ec2", f"security-group/{gid}"), "ownerId": ACCOUNT_ID, "name": gname}

    def _sg_rule(self, name, i, egress: bool):
        perm: dict[str, Any] = {"IpProtocol": str(i["ipProtocol"])}
        if perm["IpProtocol"] not in ("-1", "all") and i.get("fromPort") is not None:
            perm["FromPort"] = int(i["fromPort"])
            perm["ToPort"] = int(i["toPort"])
        desc = {"Description": i["description"]} if i.get("description") else {}
        if i.get("cidrIpv4"):
            perm["IpRanges"] = [{"CidrIp": i["cidrIpv4"], **desc}]
        elif i.get("cidrIpv6"):
            perm["Ipv6Ranges"] = [{"CidrIpv6": i["cidrIpv6"], **desc}]
        elif i.get("referencedSecurityGroupId"):
            perm["UserIdGroupPairs"] = [{"GroupId": i["referencedSecurityGroupId"], **desc}]
        elif i.get("prefixListId"):
            perm["PrefixListIds"] = [{"PrefixListId": i["prefixListId"], **desc}]
        else:
            raise EmulatedAwsError(f"MissingParameter: security group rule {name}: no source/destination given")
        call = self._ec2().authorize_security_group_egress if egress else self._ec2().authorize_security_group_ingress
        out = call(GroupId=i["securityGroupId"], IpPermissions=[perm],
                   TagSpecifications=_tag_spec("security-group-rule", i.get("tags")))
        rid = out["SecurityGroupRules"][0]["SecurityGroupRuleId"]
        return rid, {"securityGroupRuleId": rid, "arn": self._arn("ec2", f"security-group-rule/{rid}")}

    def _ingress(self, name, i):
        return self._sg_rule(name, i, egress=False)

    def _egress(self, name, i):
        return self._sg_rule(name, i, egress=True)

    def _instance(self, name, i):
        ec2 = self._ec2()
        label = f"instance {name}"
        subnet_id = i.get("subnetId")
        try:
            (subnet,) = ec2.describe_subnets(SubnetIds=[subnet_id])["Subnets"]
        except ClientError:
            raise EmulatedAwsError(f"InvalidSubnetID.NotFound: {label}: the subnet ID '{subnet_id}' does not exist") from None
        net = ipaddress.IPv4Network(subnet["CidrBlock"])
        ip = i.get("privateIp")
        if ip:
            addr = ipaddress.IPv4Address(ip)
            if addr not in net:
                raise EmulatedAwsError(f"InvalidParameterValue: {label}: address {ip} does not fall within the subnet's address range {net}")
            # moto gap: it hands out the network address, the first three hosts and the broadcast
            # address; AWS reserves them.
            if int(addr) - int(net.network_address) < 4 or addr == net.broadcast_address:
                raise EmulatedAwsError(f"InvalidParameterValue: {label}: address {ip} is reserved by AWS in {net}")
        ami = i.get("ami")
        # moto gap: AMI, key pair and instance type are not validated unless moto's import-time
        # settings say so; AWS refuses unknown ones.
        try:
            (image,) = ec2.describe_images(ImageIds=[ami])["Images"]
        except (ClientError, ValueError):
            raise EmulatedAwsError(f"InvalidAMIID.NotFound: {label}: the image id '[{ami}]' does not exist") from None
        itype = i.get("instanceType") or "m1.small"
        try:
            ec2.describe_instance_types(InstanceTypes=[itype])
        except ClientError:
            raise EmulatedAwsError(f"InvalidInstanceType: {label}: instance type '{itype}' does not exist") from None
        key = i.get("keyName")
        if key:
            if not ec2.describe_key_pairs(Filters=[{"Name": "key-name", "Values": [key]}])["KeyPairs"]:
                if not self.create_missing_key_pairs:
                    raise EmulatedAwsError(f"InvalidKeyPair.NotFound: {label}: the key pair '{key}' does not exist")
                self._seed(f"{self.seed}:keypair::{key}")  # its own stream: IDs stay order-independent
                ec2.create_key_pair(KeyName=key)

        groups = list(i.get("vpcSecurityGroupIds") or [])
        kwargs: dict[str, Any] = {"ImageId": ami, "InstanceType": itype, "MinCount": 1, "MaxCount": 1}
        if i.get("associatePublicIpAddress"):
            # Only a network interface specification can ask for a public address.
            nic: dict[str, Any] = {"DeviceIndex": 0, "SubnetId": subnet_id, "AssociatePublicIpAddress": True, "Groups": groups}
            if ip:
                nic["PrivateIpAddress"] = ip
            kwargs["NetworkInterfaces"] = [nic]
        else:
            kwargs["SubnetId"] = subnet_id
            if ip:
                kwargs["PrivateIpAddress"] = ip
            if groups:
                kwargs["SecurityGroupIds"] = groups
        if i.get("iamInstanceProfile"):
            kwargs["IamInstanceProfile"] = {"Name": i["iamInstanceProfile"]}
        if key:
            kwargs["KeyName"] = key
        refusal = user_data_refusal(name, i)
        if refusal:
            raise EmulatedAwsError(refusal)
        if i.get("userData"):
            kwargs["UserData"] = i["userData"]
        elif i.get("userDataBase64"):
            kwargs["UserData"] = base64.b64decode(i["userDataBase64"])  # boto3 base64-encodes it again
        md = i.get("metadataOptions") or {}
        if md:
            kwargs["MetadataOptions"] = {k: v for k, v in {
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
            kwargs["BlockDeviceMappings"] = [{"DeviceName": image.get("RootDeviceName") or ROOT_DEVICE, "Ebs": ebs}]
        market = i.get("instanceMarketOptions") or {}
        if market.get("marketType"):
            spot = market.get("spotOptions") or {}
            kwargs["InstanceMarketOptions"] = {"MarketType": market["marketType"], "SpotOptions": {k: v for k, v in {
                "SpotInstanceType": spot.get("spotInstanceType"),
                "InstanceInterruptionBehavior": spot.get("instanceInterruptionBehavior"),
                "ValidUntil": spot.get("validUntil"),
            }.items() if v is not None}}
        specs = _tag_spec("instance", i.get("tags")) + _tag_spec("volume", i.get("volumeTags"))
        if specs:
            kwargs["TagSpecifications"] = specs
        # Re-seeded here so the look-ups above (and a key pair created on the way) leave the IDs alone.
        self._seed(f"{self.seed}:aws:ec2/instance:Instance::{name}:run")
        try:
            inst = ec2.run_instances(**kwargs)["Instances"][0]
        except ClientError:
            raise
        except Exception as exc:  # moto gap: address conflicts come back as plain exceptions
            msg = str(exc)
            code = "InvalidIPAddress.InUse" if "in use" in msg else "InvalidParameterValue"
            raise EmulatedAwsError(f"{code}: {label}: {msg} (private IP {ip}, subnet {subnet_id})") from None
        iid = inst["InstanceId"]
        if "NetworkInterfaces" in kwargs and groups:
            # moto gap: groups given in a network interface spec reach the interface but not the
            # instance's SecurityGroups, which AWS (and the CCM) read from the primary interface.
            ec2.modify_instance_attribute(InstanceId=iid, Groups=groups)
        nic0 = (inst.get("NetworkInterfaces") or [{}])[0]
        spot = {}
        if (i.get("instanceMarketOptions") or {}).get("marketType") == "spot":
            self.spot_requests[iid] = "sir-" + _hex(f"{self.seed}:{name}:spot", 8)
            spot = {"spotInstanceRequestId": self.spot_requests[iid], "instanceLifecycle": "spot"}
        return iid, {
            **spot,
            "arn": self._arn("ec2", f"instance/{iid}"),
            "privateIp": inst.get("PrivateIpAddress", ""),
            "privateDns": inst.get("PrivateDnsName", ""),
            "publicIp": inst.get("PublicIpAddress", "") or "",
            "publicDns": inst.get("PublicDnsName", "") or "",
            "availabilityZone": inst["Placement"]["AvailabilityZone"],
            "primaryNetworkInterfaceId": nic0.get("NetworkInterfaceId", ""),
            "instanceState": inst["State"]["Name"],
        }

    def _iam(self):
        if self.partition == "aws-us-gov" and "iam" not in self._clients:
            # moto gap: it picks the IAM backend from the region in the endpoint's host name, and
            # GovCloud's global endpoint (iam.us-gov.amazonaws.com) names none, so roles would land
            # in the commercial partition where EC2 in GovCloud cannot find their profiles.
            self._require_active("iam client")
            self._clients["iam"] = self._session.client("iam", endpoint_url=f"https://iam.{self.region}.amazonaws.com")
        return self._client("iam")

    def _role(self, name, i):
        rname = self._autoname(name, i.get("name"))
        kwargs = {"RoleName": rname, "AssumeRolePolicyDocument": i["assumeRolePolicy"], "Path": i.get("path") or "/"}
        if i.get("description"):
            kwargs["Description"] = i["description"]
        if i.get("tags"):
            kwargs["Tags"] = _tag_list(i["tags"])
        role = self._iam().create_role(**kwargs)["Role"]
        return rname, {"name": rname, "arn": self._in_partition(role["Arn"]), "uniqueId": role["RoleId"]}

    def _role_policy(self, name, i):
        pname = self._autoname(name, i.get("name"))
        self._check_policy_partition(f"role policy {name}", i["policy"])
        iam = self._iam()
        existing = [iam.get_role_policy(RoleName=i["role"], PolicyName=n)["PolicyDocument"]
                    for n in iam.list_role_policies(RoleName=i["role"])["PolicyNames"] if n != pname]
        self._check_policy_size(f"role policy {name}", "role",
                                [i["policy"]] + [d if isinstance(d, str) else json.dumps(d) for d in existing])
        self._iam().put_role_policy(RoleName=i["role"], PolicyName=pname, PolicyDocument=i["policy"])
        return f"{i['role']}:{pname}", {"name": pname}

    def _role_policy_attachment(self, name, i):
        arn = i["policyArn"]
        self._check_policy_partition(f"attachment {name}", arn)
        self._iam().attach_role_policy(RoleName=i["role"], PolicyArn=arn)
        return f"{i['role']}-{_hex(arn, 12)}", {}

    def _instance_profile(self, name, i):
        pname = self._autoname(name, i.get("name"))
        kwargs = {"InstanceProfileName": pname, "Path": i.get("path") or "/"}
        if i.get("tags"):
            kwargs["Tags"] = _tag_list(i["tags"])
        prof = self._iam().create_instance_profile(**kwargs)["InstanceProfile"]
        if i.get("role"):
            self._iam().add_role_to_instance_profile(InstanceProfileName=pname, RoleName=i["role"])
        return pname, {"name": pname, "arn": self._in_partition(prof["Arn"]), "uniqueId": prof["InstanceProfileId"]}

    def _ssm_parameter(self, name, i):
        pname = i.get("name") or name
        value = i["value"] if i.get("value") is not None else i.get("insecureValue")
        kwargs = {"Name": pname, "Value": str(value), "Type": i.get("type", "String")}
        if i.get("description"):
            kwargs["Description"] = i["description"]
        if i.get("tags"):
            kwargs["Tags"] = _tag_list(i["tags"])
        if i.get("keyId"):
            kwargs["KeyId"] = i["keyId"]
        if i.get("tier"):
            kwargs["Tier"] = i["tier"]
        if kwargs.get("Tier", "Standard") == "Standard" and len(kwargs["Value"].encode()) > 4096:
            # moto gap: AWS refuses standard parameters over 4 KB.
            raise EmulatedAwsError(f"ValidationException: parameter {name}: standard parameters hold at most 4096 bytes")
        ssm = self._client("ssm")
        out = ssm.put_parameter(**kwargs)
        arn = ssm.get_parameter(Name=pname)["Parameter"]["ARN"]
        return pname, {"name": pname, "arn": arn, "version": out["Version"], "tier": out.get("Tier", "Standard")}

    def _user(self, name, i):
        uname = self._autoname(name, i.get("name"))
        kwargs: dict[str, Any] = {"UserName": uname, "Path": i.get("path") or "/"}
        if i.get("tags"):
            kwargs["Tags"] = _tag_list(i["tags"])
        user = self._iam().create_user(**kwargs)["User"]
        return uname, {"name": uname, "arn": self._in_partition(user["Arn"]), "uniqueId": user["UserId"]}

    # IAM's size quotas (non-whitespace characters), which moto does not enforce: inline policies
    # of a user 2,048 in all, of a role 10,240 in all; a managed policy 6,144.
    IAM_QUOTAS = {"user": 2048, "role": 10240, "managed": 6144}

    @staticmethod
    def _policy_size(document: str) -> int:
        return len("".join(document.split()))

    def _check_policy_size(self, label: str, kind: str, documents: list[str]) -> None:
        size = sum(self._policy_size(d) for d in documents)
        if size > self.IAM_QUOTAS[kind]:
            raise EmulatedAwsError(f"LimitExceeded: {label}: Maximum policy size of {self.IAM_QUOTAS[kind]} bytes "
                                   f"exceeded ({size}, {kind} policies)")

    def _iam_policy(self, name, i):
        pname = self._autoname(name, i.get("name"))
        self._check_policy_partition(f"policy {name}", i["policy"])
        self._check_policy_size(f"policy {name}", "managed", [i["policy"]])
        kwargs: dict[str, Any] = {"PolicyName": pname, "PolicyDocument": i["policy"], "Path": i.get("path") or "/"}
        if i.get("description"):
            kwargs["Description"] = i["description"]
        if i.get("tags"):
            kwargs["Tags"] = _tag_list(i["tags"])
        pol = self._iam().create_policy(**kwargs)["Policy"]
        arn = self._in_partition(pol["Arn"])
        return arn, {"name": pname, "arn": arn, "policyId": pol["PolicyId"]}

    def _user_policy_attachment(self, name, i):
        arn = i["policyArn"]
        self._check_policy_partition(f"attachment {name}", arn)
        self._iam().attach_user_policy(UserName=i["user"], PolicyArn=arn)
        return f"{i['user']}-{_hex(arn, 12)}", {}

    def _user_policy(self, name, i):
        pname = self._autoname(name, i.get("name"))
        self._check_policy_partition(f"user policy {name}", i["policy"])
        self._iam().put_user_policy(UserName=i["user"], PolicyName=pname, PolicyDocument=i["policy"])
        return f"{i['user']}:{pname}", {"name": pname}

    def _access_key(self, name, i):
        key = self._iam().create_access_key(UserName=i["user"])["AccessKey"]
        return key["AccessKeyId"], {"secret": key["SecretAccessKey"], "status": key["Status"]}

    def _kms_key(self, name, i):
        kwargs: dict[str, Any] = {"Description": i.get("description") or "",
                                  "KeyUsage": i.get("keyUsage") or "ENCRYPT_DECRYPT"}
        if i.get("policy"):
            self._check_policy_partition(f"key {name}", i["policy"])
            kwargs["Policy"] = i["policy"]
        if i.get("tags"):
            kwargs["Tags"] = [{"TagKey": k, "TagValue": str(v)} for k, v in sorted(i["tags"].items())]
        kms = self._client("kms")
        meta = kms.create_key(**kwargs)["KeyMetadata"]
        if i.get("enableKeyRotation"):
            kms.enable_key_rotation(KeyId=meta["KeyId"])
        return meta["KeyId"], {"keyId": meta["KeyId"], "arn": self._in_partition(meta["Arn"])}

    def _kms_alias(self, name, i):
        if not str(i.get("name", "")).startswith("alias/"):
            raise EmulatedAwsError(f"ValidationException: alias {name}: the name must start with alias/")
        kms = self._client("kms")
        kms.create_alias(AliasName=i["name"], TargetKeyId=i["targetKeyId"])
        arn = next(a["AliasArn"] for a in kms.list_aliases()["Aliases"] if a["AliasName"] == i["name"])
        return i["name"], {"arn": self._in_partition(arn), "targetKeyArn": None}

    def _s3(self):
        return self._client("s3")

    def _bucket(self, name, i):
        bucket = self._autoname(name, i.get("bucket"))
        kwargs: dict[str, Any] = {"Bucket": bucket}
        if self.region != "us-east-1":  # AWS refuses a LocationConstraint of us-east-1 and needs one elsewhere
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": self.region}
        if i.get("objectLockEnabled"):
            kwargs["ObjectLockEnabledForBucket"] = True
        self._s3().create_bucket(**kwargs)
        if i.get("tags"):
            self._s3().put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": _tag_list(i["tags"])})
        return bucket, {"bucket": bucket, "arn": f"arn:{self.partition}:s3:::{bucket}", "region": self.region}

    def _bucket_versioning(self, name, i):
        conf = i["versioningConfiguration"]
        self._s3().put_bucket_versioning(Bucket=i["bucket"], VersioningConfiguration={"Status": conf["status"]})
        return i["bucket"], {}

    def _bucket_encryption(self, name, i):
        rules = []
        for rule in i["rules"]:
            default = rule["applyServerSideEncryptionByDefault"]
            by_default = {"SSEAlgorithm": default["sseAlgorithm"]}
            if default.get("kmsMasterKeyId"):
                by_default["KMSMasterKeyID"] = default["kmsMasterKeyId"]
            rules.append({"ApplyServerSideEncryptionByDefault": by_default,
                          "BucketKeyEnabled": bool(rule.get("bucketKeyEnabled"))})
        self._s3().put_bucket_encryption(Bucket=i["bucket"], ServerSideEncryptionConfiguration={"Rules": rules})
        return i["bucket"], {}

    def _bucket_public_access(self, name, i):
        keys = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
        self._s3().put_public_access_block(Bucket=i["bucket"], PublicAccessBlockConfiguration={
            k[0].upper() + k[1:]: bool(i.get(k)) for k in keys})
        return i["bucket"], {}

    def _bucket_policy(self, name, i):
        self._check_policy_partition(f"bucket policy {name}", i["policy"])
        self._s3().put_bucket_policy(Bucket=i["bucket"], Policy=i["policy"])
        return i["bucket"], {}

    def _bucket_lifecycle(self, name, i):
        rules = []
        for r in i["rules"]:
            rule: dict[str, Any] = {"ID": r["id"], "Status": r["status"], "Filter": {"Prefix": (r.get("filter") or {}).get("prefix", "")}}
            exp = r.get("expiration") or {}
            if exp.get("days") is not None:
                rule["Expiration"] = {"Days": int(exp["days"])}
            elif exp.get("expiredObjectDeleteMarker") is not None:
                rule["Expiration"] = {"ExpiredObjectDeleteMarker": bool(exp["expiredObjectDeleteMarker"])}
            if r.get("noncurrentVersionExpiration"):
                rule["NoncurrentVersionExpiration"] = {"NoncurrentDays": int(r["noncurrentVersionExpiration"]["noncurrentDays"])}
            if r.get("abortIncompleteMultipartUpload"):
                rule["AbortIncompleteMultipartUpload"] = {
                    "DaysAfterInitiation": int(r["abortIncompleteMultipartUpload"]["daysAfterInitiation"])}
            rules.append(rule)
        self._s3().put_bucket_lifecycle_configuration(Bucket=i["bucket"], LifecycleConfiguration={"Rules": rules})
        return i["bucket"], {}

    def _zone(self, name, i):
        kwargs: dict[str, Any] = {"Name": i["name"], "CallerReference": f"{name}-{_hex(name, 8)}"}
        vpcs = i.get("vpcs") or []
        if vpcs:
            vpc_id = vpcs[0]["vpcId"]
            self._ec2().describe_vpcs(VpcIds=[vpc_id])  # AWS refuses an unknown VPC
            kwargs["VPC"] = {"VPCRegion": vpcs[0].get("vpcRegion") or self.region, "VPCId": vpc_id}
            kwargs["HostedZoneConfig"] = {"PrivateZone": True, "Comment": i.get("comment") or ""}
        zone = self._client("route53").create_hosted_zone(**kwargs)["HostedZone"]
        zid = zone["Id"].rsplit("/", 1)[-1]
        return zid, {"zoneId": zid, "arn": f"arn:{self.partition}:route53:::hostedzone/{zid}",
                     "nameServers": []}

    def _record(self, name, i):
        record: dict[str, Any] = {"Name": i["name"], "Type": i["type"], "TTL": int(i.get("ttl") or 300),
                                  "ResourceRecords": [{"Value": v} for v in i.get("records") or []]}
        self._client("route53").change_resource_record_sets(
            HostedZoneId=i["zoneId"], ChangeBatch={"Changes": [{"Action": "CREATE", "ResourceRecordSet": record}]})
        return f"{i['zoneId']}_{i['name']}_{i['type']}", {"fqdn": i["name"]}

    def _load_balancer(self, name, i):
        kwargs: dict[str, Any] = {"Name": i.get("name") or self._autoname(name, None)[:32], "Subnets": list(i.get("subnets") or []),
                                  "Scheme": "internal" if i.get("internal") else "internet-facing",
                                  "Type": i.get("loadBalancerType") or "application"}
        if i.get("securityGroups"):
            kwargs["SecurityGroups"] = list(i["securityGroups"])
        lb = self._client("elbv2").create_load_balancer(**kwargs)["LoadBalancers"][0]
        return lb["LoadBalancerArn"], {"arn": lb["LoadBalancerArn"], "dnsName": lb["DNSName"],
                                       "zoneId": lb.get("CanonicalHostedZoneId", "")}

    def _target_group(self, name, i):
        hc = i.get("healthCheck") or {}
        kwargs: dict[str, Any] = {"Name": i.get("name") or self._autoname(name, None)[:32], "Protocol": i["protocol"],
                                  "Port": int(i["port"]), "VpcId": i["vpcId"], "TargetType": i.get("targetType") or "instance"}
        if hc:
            kwargs.update(HealthCheckProtocol=hc.get("protocol"), HealthCheckPath=hc.get("path"),
                          HealthCheckPort=str(hc.get("port")))
        tg = self._client("elbv2").create_target_group(**{k: v for k, v in kwargs.items() if v is not None})["TargetGroups"][0]
        return tg["TargetGroupArn"], {"arn": tg["TargetGroupArn"]}

    def _target_group_attachment(self, name, i):
        self._client("elbv2").register_targets(TargetGroupArn=i["targetGroupArn"],
                                               Targets=[{"Id": i["targetId"], "Port": int(i["port"])}])
        return f"{i['targetGroupArn']}-{i['targetId']}", {}

    def _listener(self, name, i):
        actions = [{"Type": a["type"], "TargetGroupArn": a["targetGroupArn"]} for a in i.get("defaultActions") or []]
        ls = self._client("elbv2").create_listener(LoadBalancerArn=i["loadBalancerArn"], Protocol=i["protocol"],
                                                   Port=int(i["port"]), DefaultActions=actions)["Listeners"][0]
        return ls["ListenerArn"], {"arn": ls["ListenerArn"]}

    def _ec2_tag(self, name, i):
        self._ec2().create_tags(Resources=[i["resourceId"]], Tags=[{"Key": i["key"], "Value": i["value"]}])
        return f"{i['resourceId']},{i['key']}", {}

    # ---- outside AWS: stable, fake, no emulation ----------------------------------------------------

    def _random_password(self, name, i):
        typ = "random:index/randomPassword:RandomPassword"
        rng = random.Random(f"{self.seed}:{typ}:{name}")  # deterministic, unrelated to moto's
        pool = string.ascii_letters + string.digits + ("" if i.get("special") is False else "!@#$%&*()-_=+[]{}<>:?")
        return "none", {"result": "".join(rng.choice(pool) for _ in range(int(i.get("length", 16))))}

    def _helm_release(self, name, i):
        return f"{i.get('namespace', 'default')}/{i.get('name', name)}", {"status": {
            "name": i.get("name", name), "namespace": i.get("namespace", "default"), "chart": i.get("chart"),
            "version": i.get("version"), "status": "deployed", "revision": 1}}

    def _rancher_cluster(self, name, i):
        from rke_aws_offline.engine.fake_aws import rancher_cluster_answer
        return rancher_cluster_answer(f"{self.seed}:{name}")

    def _in_cluster(self, name, i):  # a Kubernetes object or the provider that reaches the cluster
        return f"{name}-id", {}

    # Which handler each type gets: offline/engine/resource_types.py (set below the class); outside AWS: the
    # random password, the Kubernetes objects and provider, which no AWS API answers.
    _OUTSIDE_AWS: dict[str, Any] = {}
    _HANDLERS: dict[str, Any] = {}
    KNOWN_TYPES: frozenset[str] = frozenset()


_EMULATED = {t: MotoMocks.__dict__[r.emulate] for t, r in TYPES.items() if r.emulate is not None}
MotoMocks._HANDLERS = {t: h for t, h in _EMULATED.items() if t.startswith("aws:")}
MotoMocks._OUTSIDE_AWS = {t: h for t, h in _EMULATED.items() if not t.startswith("aws:")}
MotoMocks.KNOWN_TYPES = frozenset(_EMULATED)


# ---- running a stack in the emulated account ------------------------------------------------

def stack_prerequisites(config: dict[str, str]) -> dict[str, Any]:
    """What a stack assumes its account already has: the SSH key pair it names."""
    access = json.loads(config.get("rke-aws:access") or "{}")
    return {"key_pairs": [access["sshKeyName"]] if access.get("sshKeyName") else []}


def build(config: dict[str, str], stack: str, *, mocks: MotoMocks | None = None, preview: bool = False):
    """Run the program against a fresh emulated account; returns (run, mocks) with the account left active.

    The caller stops the account (`mocks.stop()`); on failure it is stopped here.
    """
    from rke_aws_offline.engine import harness

    region = config.get("aws:region", "us-west-2")
    mocks = mocks or MotoMocks(region, **stack_prerequisites(config))
    mocks.start()
    try:
        run = harness.run_program(config, stack=stack, preview=preview, mocks=mocks)
    except BaseException as err:
        harness.drain_leftover_tasks()
        mocks.stop()
        refusal = emulator_refusal(err)
        if refusal is not None:  # the account's refusal, without Pulumi's wrapping
            _quiet_abandoned_refusals()
            raise EmulatedAwsError(str(refusal)) from err
        raise
    return run, mocks


def _quiet_abandoned_refusals() -> None:
    """Keep asyncio from logging, when they are garbage-collected, the many futures of a failed run
    that carry the refusal already raised ("Future exception was never retrieved")."""
    from pulumi.runtime.sync_await import _ensure_event_loop

    loop = _ensure_event_loop()
    previous = loop.get_exception_handler()
    if getattr(previous, "_rke_aws_quiet", False):
        return

    def handler(lp, context):
        if emulator_refusal(context.get("exception") or Exception()) is not None:
            return
        if previous is not None:
            previous(lp, context)
        else:
            lp.default_exception_handler(context)

    handler._rke_aws_quiet = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)


def emulator_refusal(err: BaseException) -> EmulatedAwsError | None:
    """The emulated account's refusal behind an error of a program run, if that is what it is."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [err]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, EmulatedAwsError):
            return e
        # An error raised `from None` (the program's own clean messages) hides what it replaced.
        todo += [e.__cause__] + ([] if e.__suppress_context__ else [e.__context__])
    return None


def build_stack(stack: str, **kwargs):
    from rke_aws_offline.engine import harness

    return build(harness.stack_config(stack), stack, **kwargs)
