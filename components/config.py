"""Stack configuration: read once, validated completely, handed to components as frozen objects.

`parse()` is pure: it takes the flat config map Pulumi gives a program (``"rke-aws:key" ->
string``, structured values JSON-encoded) and returns a `StackConfig`, or raises `ConfigError`
listing every problem at once. `load()` is the only function that touches Pulumi's runtime.
Nothing else in the program reads configuration.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from . import partition as partitions
from . import tags as tagsets
from . import versions

NAMESPACE = "rke-aws"

DISTRIBUTIONS = ("rke", "rke2")
ROLES = ("controlplane", "etcd", "worker")
NAT_MODES = ("none", "single", "perAz")
SUBNET_TIERS = ("private", "public")
CCM_INSTALL_MODES = ("helm", "manifest")

# Three AZs survive the loss of one zone with etcd quorum intact.
DEFAULT_AZ_COUNT = 3
# AWS regions have at most six AZs that are not local zones.
MAX_AZ_COUNT = 6
# 65k addresses: room for the 16 subnet slots the layout in network_plan.py carves.
DEFAULT_VPC_CIDR = "10.0.0.0/16"
# One NAT gateway is the cheapest layout that still gives private nodes a way out.
DEFAULT_NAT = "single"
# Nodes reachable through Session Manager need no SSH port open anywhere.
DEFAULT_SSM = True
# Canonical's Ubuntu images log in as `ubuntu`; RKE's cluster.yml needs the SSH user.
DEFAULT_SSH_USER = "ubuntu"
# gp3 root volume: images, etcd data and container layers fit in 50 GiB for typical nodes.
DEFAULT_ROOT_VOLUME_GB = 50
# A general-purpose size that runs a control plane or a small worker.
DEFAULT_INSTANCE_TYPE = "m6i.large"
DEFAULT_SUBNET_TIER = "private"
# The CCM chart version this program's Helm values are written against.
DEFAULT_CCM_CHART_VERSION = versions.CCM_CHART_VERSION
DEFAULT_CCM_INSTALL = "helm"
DEFAULT_KUBERNETES_VERSION = {
    "rke": versions.RKE_KUBERNETES_VERSION,
    "rke2": versions.RKE2_VERSION,
}
# VPC sizes AWS allows are /16../28; the subnet layout needs four more bits, so /24 at most.
MIN_VPC_PREFIX, MAX_VPC_PREFIX = 16, 24
# AWS's EBS gp3 limits.
MIN_ROOT_GB, MAX_ROOT_GB = 8, 16384
# Pools are laid out in fixed address blocks per subnet (see node_plan.py).
MAX_POOL_BLOCKS = 8
# The in-tree AWS provider was removed in Kubernetes 1.27.
IN_TREE_REMOVED_MINOR = 27

RFC1918 = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))

TOP_LEVEL_KEYS = (
    "distribution",
    "clusterId",
    "network",
    "access",
    "nodePools",
    "kubernetesVersion",
    "ccm",
    "controlPlane",
    "etcdBackup",
    "addons",
    "hardening",
    "kubeconfig",
    "tags",
    "protectServers",
)
NETWORK_KEYS = (
    "vpcCidr",
    "availabilityZones",
    "natGateways",
    "publicSubnetCidrs",
    "privateSubnetCidrs",
    "vpcId",
    "publicSubnetIds",
    "privateSubnetIds",
)
# Pulumi.yaml declares these with default "" (its schema cannot express "the stack name" or
# "per distribution"); an empty value therefore means "use the program's default".
EMPTY_MEANS_DEFAULT = ("clusterId", "kubernetesVersion", "kubeconfig")
# Plain string keys arrive as the text the user wrote; only structured keys are JSON.
STRING_KEYS = ("distribution", "clusterId", "kubernetesVersion", "kubeconfig", "hardening")
BYO_KEYS = ("vpcId", "publicSubnetIds", "privateSubnetIds")
CIDR_KEYS = ("vpcCidr", "publicSubnetCidrs", "privateSubnetCidrs", "natGateways")
ACCESS_KEYS = ("adminCidrs", "sshKeyName", "sshUser", "sshKeyPath", "ssm", "allowWorldAdmin")
POOL_KEYS = ("name", "roles", "count", "instanceType", "subnet", "rootVolumeGb", "ami", "ipBlock",
             "imdsHopLimit", "imdsHopLimitReason")
CCM_KEYS = ("chartVersion", "leaderMigration", "extraArgs", "install", "image")
CONTROL_PLANE_KEYS = ("endpoint",)
ETCD_BACKUP_KEYS = ("enabled", "bucket", "folder", "intervalHours", "retention", "expireDays", "kmsKeyArn")
ADDONS_KEYS = ("ebsCsi",)
HARDENING_MODES = ("none", "cis")
# etcd snapshots every 6 hours, 28 kept (a week), objects expire after 30 days: RKE2's own
# defaults are 12 h / 5 snapshots, too few to reach back past a bad weekend.
DEFAULT_BACKUP_INTERVAL_HOURS = 6
DEFAULT_BACKUP_RETENTION = 28
DEFAULT_BACKUP_EXPIRE_DAYS = 30
BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
FOLDER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$")
# A key ARN, not an alias ARN: IAM grants on an alias ARN do not cover the key it points to.
KMS_KEY_ARN_RE = re.compile(r"^arn:(aws|aws-us-gov|aws-cn):kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$")
RKE1_EOL = ("RKE1 reached end of life on 2025-07-31 and rancher/rke is archived (last release v1.8.14); plan a "
            "move to RKE2 (https://docs.rke2.io/install/migrate)")
# dns: a Route 53 private zone whose name resolves to every server (no load balancer to pay for);
# nlb: an internal Network Load Balancer on 9345 and 6443 behind the same name.
ENDPOINT_MODES = ("dns", "nlb")
DEFAULT_ENDPOINT = "dns"
# IMDS hop limit: 1 keeps instance credentials away from pods on the pod network (the CCM runs on
# the host network); 2 hands the node role to every pod on the node, so it needs a stated reason.
DEFAULT_IMDS_HOP_LIMIT = 1
IMAGE_RE = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::\d+)?(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*:[\w][\w.-]{0,127}$")

FLAG_RE = re.compile(r"^--[a-z0-9][a-z0-9-]*(=\S.*)?$")
# CCM flags this program sets itself (components/ccm_values.py); --v may be overridden.
PROGRAM_FLAGS = ("--cloud-provider", "--configure-cloud-routes", "--use-service-account-credentials")
# IAM role and instance profile names (64 characters at most) are "<clusterId>-controlplane-" plus
# Pulumi's 7-character suffix: 64 - 21 leaves 43 for the cluster ID.
MAX_CLUSTER_ID = 43
CLUSTER_ID_RE = re.compile(rf"^[a-z][a-z0-9-]{{0,{MAX_CLUSTER_ID - 1}}}$")
POOL_NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,30}$")
RKE_VERSION_RE = re.compile(r"^v1\.(\d+)\.\d+-rancher\d+-\d+$")
RKE2_VERSION_RE = re.compile(r"^v1\.(\d+)\.\d+\+rke2r\d+$")
AMI_RE = re.compile(r"^ami-[0-9a-f]{8,17}$")
VPC_ID_RE = re.compile(r"^vpc-[0-9a-f]{8,17}$")
SUBNET_ID_RE = re.compile(r"^subnet-[0-9a-f]{8,17}$")
INSTANCE_TYPE_RE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")
AZ_RE = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$")
REGION_RE = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")
# AWS tag keys may not start with aws:; the cluster and load-balancer role tags are ours to set.
RESERVED_TAG_PREFIXES = ("aws:", tagsets.CLUSTER_TAG_PREFIX, "kubernetes.io/role/", "rke-aws/")
# AWS tagging rules (IAM roles included): keys 1-128, values 0-256 characters of letters, digits,
# spaces and + - = . _ : / @; at most 50 tags per resource.
TAG_CHARS_RE = re.compile(r"[\w\s+\-=.:/@]*")
AWS_MAX_TAGS = 50
# The tags a resource may carry from this program (the most on an instance).
PROGRAM_TAG_KEYS = ("Name", "kubernetes.io/cluster/<id>", "rke-aws/pool", "rke-aws/roles",
                    "rke-aws/imds-hop-limit-reason", "kubernetes.io/role/*")
MAX_USER_TAGS = AWS_MAX_TAGS - len(PROGRAM_TAG_KEYS)


class ConfigError(Exception):
    """All problems found in one stack configuration."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid stack configuration ({len(self.problems)} problem(s)):\n{lines}")


class Secret:
    """A configuration value that must never be printed."""

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret(****)"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True)
class NodePool:
    name: str
    roles: tuple[str, ...]
    count: int
    instance_type: str
    subnet: str
    root_volume_gb: int
    ami: Optional[str]
    ip_block: Optional[int]  # None: assigned at plan time (node_plan.py)
    imds_hop_limit: int = DEFAULT_IMDS_HOP_LIMIT
    imds_hop_limit_reason: Optional[str] = None

    @property
    def is_controlplane(self) -> bool:
        return "controlplane" in self.roles

    @property
    def is_etcd(self) -> bool:
        return "etcd" in self.roles

    @property
    def is_worker(self) -> bool:
        return "worker" in self.roles

    @property
    def is_server(self) -> bool:
        """RKE2: pools with controlplane/etcd run `rke2-server`; worker-only pools run `rke2-agent`."""
        return self.is_controlplane or self.is_etcd


@dataclass(frozen=True)
class NetworkConfig:
    vpc_cidr: Optional[str]
    availability_zones: Optional[tuple[str, ...]]  # explicit names, or None: look up `az_count`
    az_count: int
    nat_gateways: str
    public_subnet_cidrs: Optional[tuple[str, ...]]
    private_subnet_cidrs: Optional[tuple[str, ...]]
    vpc_id: Optional[str] = None
    public_subnet_ids: Optional[tuple[str, ...]] = None
    private_subnet_ids: Optional[tuple[str, ...]] = None

    @property
    def bring_your_own(self) -> bool:
        return self.vpc_id is not None


@dataclass(frozen=True)
class AccessConfig:
    admin_cidrs: tuple[str, ...]
    ssh_key_name: Optional[str]
    ssh_user: str
    ssh_key_path: Optional[str]
    ssm: bool
    allow_world_admin: bool = False


@dataclass(frozen=True)
class CcmConfig:
    chart_version: str
    leader_migration: bool
    extra_args: tuple[str, ...]
    install: str
    image: Optional[str] = None  # explicit "repository:tag"; None: versions.CCM_IMAGE_TAGS by minor

    def image_for(self, kubernetes_minor: int) -> str:
        return self.image or f"{versions.CCM_IMAGE_REPOSITORY}:{versions.CCM_IMAGE_TAGS[kubernetes_minor]}"


@dataclass(frozen=True)
class EtcdBackupConfig:
    enabled: bool = True
    bucket: Optional[str] = None  # an existing bucket; None: one is created per cluster
    folder: Optional[str] = None  # None: the cluster ID
    interval_hours: int = DEFAULT_BACKUP_INTERVAL_HOURS
    retention: int = DEFAULT_BACKUP_RETENTION
    expire_days: int = DEFAULT_BACKUP_EXPIRE_DAYS
    kms_key_arn: Optional[str] = None  # None: SSE-S3


@dataclass(frozen=True)
class AddonsConfig:
    # None: on for a new stack, off for one deployed before the option existed (history.py).
    ebs_csi: Optional[bool] = None


@dataclass(frozen=True)
class StackConfig:
    project: str
    stack: str
    region: str
    distribution: str
    cluster_id: str
    network: NetworkConfig
    access: AccessConfig
    node_pools: tuple[NodePool, ...]
    kubernetes_version: str
    ccm: CcmConfig
    kubeconfig: Optional[Secret]
    tags: Mapping[str, str] = field(default_factory=dict)
    protect_servers: bool = False
    warnings: tuple[str, ...] = ()
    endpoint: str = DEFAULT_ENDPOINT
    etcd_backup: EtcdBackupConfig = field(default_factory=EtcdBackupConfig)
    addons: AddonsConfig = field(default_factory=AddonsConfig)
    hardening: str = "none"

    @property
    def cluster_tag_key(self) -> str:
        return tagsets.cluster_tag_key(self.cluster_id)

    @property
    def partition(self) -> partitions.Partition:
        return partitions.of_region(self.region)

    @property
    def kubernetes_minor(self) -> int:
        return kubernetes_minor(self.distribution, self.kubernetes_version) or 0


def kubernetes_minor(distribution: str, version: str) -> Optional[int]:
    pattern = RKE_VERSION_RE if distribution == "rke" else RKE2_VERSION_RE
    m = pattern.fullmatch(version)
    return int(m.group(1)) if m else None


class _Problems:
    """Collects problems with the key path they belong to."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, key: str, message: str) -> None:
        self.items.append(f"{NAMESPACE}:{key}: {message}")


def _tag_key_problem(k: str) -> Optional[str]:
    if not k or not k.strip():
        return "is empty; tag keys need 1 to 128 characters"
    if any(k.lower().startswith(pre) for pre in RESERVED_TAG_PREFIXES) or k == "Name":
        return ("is reserved (Name, kubernetes.io/cluster/*, kubernetes.io/role/* and rke-aws/* are set by this "
                "program, aws:* by AWS); choose another key")
    if len(k) > 128:
        return "is too long; AWS allows 128-char keys and 256-char values"
    if not TAG_CHARS_RE.fullmatch(k):
        return "has characters AWS does not allow in tags; use letters, digits, spaces and + - = . _ : / @"
    return None


def _tag_value_problem(v: Any) -> Optional[str]:
    if not isinstance(v, str):
        return f"{_json(v)} is not a string"
    if len(v) > 256:
        return "is too long; AWS allows 128-char keys and 256-char values"
    if not TAG_CHARS_RE.fullmatch(v):
        return "has characters AWS does not allow in tags; use letters, digits, spaces and + - = . _ : / @"
    return None


def _json(value: Any) -> str:
    return json.dumps(value)


def _decode(raw: Optional[str]) -> Any:
    """Structured config arrives JSON-encoded; plain strings stay strings."""
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return raw


def _unknown_keys(p: _Problems, key: str, obj: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for k in obj:
        if k not in allowed:
            p.add(f"{key}.{k}" if key else k, f"unknown key; allowed keys are {', '.join(allowed)}")


def _expect_obj(p: _Problems, key: str, value: Any) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        p.add(key, f"{_json(value)} is not an object; expected a map of {key} settings")
        return {}
    return value


def _int(p: _Problems, key: str, value: Any, lo: int, hi: int) -> Optional[int]:
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        p.add(key, f"{_json(value)} is not a whole number; use an integer from {lo} to {hi}")
        return None
    if not lo <= value <= hi:
        p.add(key, f"{value} is out of range; use an integer from {lo} to {hi}")
        return None
    return value


def _bool(p: _Problems, key: str, value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    p.add(key, f"{_json(value)} is not a boolean; use true or false")
    return default


def _str(p: _Problems, key: str, value: Any, pattern: Optional[re.Pattern] = None, what: str = "") -> Optional[str]:
    if value is None:
        return None
    if value == "":
        p.add(key, f"is empty; expected {what or 'a non-empty string'}")
        return None
    if not isinstance(value, str):
        p.add(key, f"{_json(value)} is not a string; expected {what or 'a non-empty string'}")
        return None
    if pattern is not None and not pattern.fullmatch(value):
        p.add(key, f"'{value}' is not valid; expected {what}")
        return None
    return value


def _str_list(p: _Problems, key: str, value: Any, what: str) -> Optional[list]:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        p.add(key, f"{_json(value)} is not a list of strings; expected a list of {what}")
        return None
    return value


def _private_net(p: _Problems, key: str, value: str) -> Optional[ipaddress.IPv4Network]:
    try:
        net = ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        p.add(key, f"'{value}' is not an IPv4 CIDR ({exc}); write it like 10.0.0.0/16")
        return None
    if not any(net.subnet_of(r) for r in RFC1918):
        p.add(key, f"'{value}' is not a private (RFC 1918) range; use a block inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16")
        return None
    return net


def _parse_network(p: _Problems, raw: Any) -> NetworkConfig:
    net = _expect_obj(p, "network", raw)
    _unknown_keys(p, "network", net, NETWORK_KEYS)

    azs_raw = net.get("availabilityZones", DEFAULT_AZ_COUNT)
    az_names: Optional[tuple[str, ...]] = None
    az_count = DEFAULT_AZ_COUNT
    if isinstance(azs_raw, list):
        names = _str_list(p, "network.availabilityZones", azs_raw, "availability zone names like us-west-2a")
        if names is not None:
            bad = [n for n in names if not AZ_RE.fullmatch(n)]
            for n in bad:
                p.add("network.availabilityZones", f"'{n}' is not an availability zone name; write it like us-west-2a")
            if len(set(names)) != len(names):
                p.add("network.availabilityZones", f"{_json(names)} lists a zone twice; each zone once")
            if not 1 <= len(names) <= MAX_AZ_COUNT:
                p.add("network.availabilityZones", f"{len(names)} zones listed; list 1 to {MAX_AZ_COUNT}")
            az_names = tuple(names)
            az_count = len(names)
    else:
        n = _int(p, "network.availabilityZones", azs_raw, 1, MAX_AZ_COUNT)
        az_count = n if n is not None else DEFAULT_AZ_COUNT

    byo_given = [k for k in BYO_KEYS if k in net]
    if byo_given:
        mixed = [k for k in CIDR_KEYS if k in net]
        for k in mixed:
            p.add(f"network.{k}", f"cannot be combined with bring-your-own network ({', '.join(byo_given)}); remove {k} or the IDs")
        for k in BYO_KEYS:
            if k not in net:
                p.add(f"network.{k}", f"missing; bring-your-own network needs all of {', '.join(BYO_KEYS)}")
        vpc_id = _str(p, "network.vpcId", net.get("vpcId"), VPC_ID_RE, "a VPC ID like vpc-0123456789abcdef0")
        ids: dict[str, Optional[tuple[str, ...]]] = {}
        for k in ("publicSubnetIds", "privateSubnetIds"):
            lst = _str_list(p, f"network.{k}", net.get(k), "subnet IDs like subnet-0123456789abcdef0") or []
            for s in lst:
                if not SUBNET_ID_RE.fullmatch(s):
                    p.add(f"network.{k}", f"'{s}' is not a subnet ID; write it like subnet-0123456789abcdef0")
            ids[k] = tuple(lst)
        # The zones are the subnets' (looked up at plan time); availabilityZones, when given, must agree.
        zones_given = "availabilityZones" in net
        if not zones_given and ids["publicSubnetIds"] and ids["privateSubnetIds"] is not None:
            az_count = len(ids["privateSubnetIds"]) or az_count
        for k in ("publicSubnetIds", "privateSubnetIds"):
            if k in net and len(ids[k]) != az_count:
                source = "availability zone(s)" if zones_given else "private subnet(s), one per zone"
                p.add(f"network.{k}", f"{len(ids[k])} subnet(s) for {az_count} {source}; give one per zone, in zone order")
        seen_ids: dict[str, str] = {}
        for k in ("publicSubnetIds", "privateSubnetIds"):
            for i, s in enumerate(ids[k] or ()):
                here = f"network.{k}[{i}]"
                if s in seen_ids:
                    p.add(here, f"'{s}' is already listed as {seen_ids[s]}; each subnet is either public or private, once")
                else:
                    seen_ids[s] = here
        return NetworkConfig(
            vpc_cidr=None,
            availability_zones=az_names,
            az_count=az_count,
            nat_gateways="none",
            public_subnet_cidrs=None,
            private_subnet_cidrs=None,
            # Keep bring-your-own mode even when vpcId was rejected, so no CIDR-mode errors follow.
            vpc_id=vpc_id or "",
            public_subnet_ids=ids["publicSubnetIds"],
            private_subnet_ids=ids["privateSubnetIds"],
        )

    vpc_cidr = net.get("vpcCidr", DEFAULT_VPC_CIDR)
    vpc_net = None
    if _str(p, "network.vpcCidr", vpc_cidr, what="an IPv4 CIDR like 10.0.0.0/16") is not None:
        vpc_net = _private_net(p, "network.vpcCidr", vpc_cidr)
        if vpc_net is not None and not MIN_VPC_PREFIX <= vpc_net.prefixlen <= MAX_VPC_PREFIX:
            p.add("network.vpcCidr", f"'{vpc_cidr}' has prefix /{vpc_net.prefixlen}; use /{MIN_VPC_PREFIX} to /{MAX_VPC_PREFIX}")
            vpc_net = None

    nat = net.get("natGateways", DEFAULT_NAT)
    if nat not in NAT_MODES:
        p.add("network.natGateways", f"{_json(nat)} is not a NAT layout; use {', '.join(NAT_MODES)}")
        nat = DEFAULT_NAT

    subnet_cidrs: dict[str, Optional[tuple[str, ...]]] = {}
    seen: list[tuple[str, ipaddress.IPv4Network]] = []
    for k in ("publicSubnetCidrs", "privateSubnetCidrs"):
        lst = _str_list(p, f"network.{k}", net.get(k), "IPv4 CIDRs")
        if lst is None:
            subnet_cidrs[k] = None
            continue
        if len(lst) != az_count:
            p.add(f"network.{k}", f"{len(lst)} CIDR(s) for {az_count} availability zone(s); give one per zone, in zone order")
        for i, c in enumerate(lst):
            sub = _private_net(p, f"network.{k}[{i}]", c)
            if sub is None:
                continue
            if vpc_net is not None and not sub.subnet_of(vpc_net):
                p.add(f"network.{k}[{i}]", f"'{c}' is outside the VPC {vpc_cidr}; use a block inside it")
            if sub.prefixlen > 28:
                p.add(f"network.{k}[{i}]", f"'{c}' is smaller than /28; AWS subnets are /16 to /28")
            for other_key, other in seen:
                if sub.overlaps(other):
                    p.add(f"network.{k}[{i}]", f"'{c}' overlaps {other_key} ({other}); subnets must not overlap")
            seen.append((f"network.{k}[{i}]", sub))
        subnet_cidrs[k] = tuple(lst)

    given = [k for k in ("publicSubnetCidrs", "privateSubnetCidrs") if k in net]
    if len(given) == 1:
        other = "privateSubnetCidrs" if given[0] == "publicSubnetCidrs" else "publicSubnetCidrs"
        p.add(f"network.{other}", f"missing; network.{given[0]} is set, and derived {other} could overlap it: give both lists or neither")
    return NetworkConfig(
        vpc_cidr=vpc_cidr if isinstance(vpc_cidr, str) else DEFAULT_VPC_CIDR,
        availability_zones=az_names,
        az_count=az_count,
        nat_gateways=nat,
        public_subnet_cidrs=subnet_cidrs["publicSubnetCidrs"],
        private_subnet_cidrs=subnet_cidrs["privateSubnetCidrs"],
    )


def _parse_etcd_backup(p: _Problems, raw: Any, region: Optional[str]) -> EtcdBackupConfig:
    b = _expect_obj(p, "etcdBackup", raw)
    _unknown_keys(p, "etcdBackup", b, ETCD_BACKUP_KEYS)
    bucket = _str(p, "etcdBackup.bucket", b.get("bucket"), BUCKET_RE,
                  "an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens)")
    if bucket is not None and "expireDays" in b:
        p.add("etcdBackup.expireDays", f"applies to the bucket this program creates, but etcdBackup.bucket names "
                                       f"'{bucket}'; set expiry on that bucket, or remove one of the keys")
    kms = _str(p, "etcdBackup.kmsKeyArn", b.get("kmsKeyArn"), KMS_KEY_ARN_RE,
               "a KMS key ARN (not an alias) like arn:aws:kms:us-west-2:111122223333:key/1234abcd-...")
    if kms and region and REGION_RE.fullmatch(region) and kms.split(":")[3] != region:
        # SSE-KMS takes a key of the bucket's region (the cluster's), in its partition.
        p.add("etcdBackup.kmsKeyArn", f"'{kms}' is a key in {kms.split(':')[3]}, but the cluster and its snapshot "
                                      f"bucket are in {region}; use a key of {region}")
    return EtcdBackupConfig(
        enabled=_bool(p, "etcdBackup.enabled", b.get("enabled"), True),
        bucket=bucket,
        folder=_str(p, "etcdBackup.folder", b.get("folder"), FOLDER_RE, "a key prefix like prod/etcd (no leading /)"),
        interval_hours=_int(p, "etcdBackup.intervalHours", b.get("intervalHours", DEFAULT_BACKUP_INTERVAL_HOURS), 1, 24)
        or DEFAULT_BACKUP_INTERVAL_HOURS,
        retention=_int(p, "etcdBackup.retention", b.get("retention", DEFAULT_BACKUP_RETENTION), 1, 1000)
        or DEFAULT_BACKUP_RETENTION,
        expire_days=_int(p, "etcdBackup.expireDays", b.get("expireDays", DEFAULT_BACKUP_EXPIRE_DAYS), 1, 3650)
        or DEFAULT_BACKUP_EXPIRE_DAYS,
        kms_key_arn=kms,
    )


def _parse_access(p: _Problems, raw: Any, warnings: list[str]) -> AccessConfig:
    acc = _expect_obj(p, "access", raw)
    _unknown_keys(p, "access", acc, ACCESS_KEYS)
    admin = _str_list(p, "access.adminCidrs", acc.get("adminCidrs", []), "IPv4 CIDRs like 203.0.113.0/24") or []
    allow_world = _bool(p, "access.allowWorldAdmin", acc.get("allowWorldAdmin"), False)
    seen: dict[str, int] = {}
    for i, c in enumerate(admin):
        key = f"access.adminCidrs[{i}]"
        try:
            net = ipaddress.IPv4Network(c, strict=True)
        except ValueError as exc:
            p.add(key, f"'{c}' is not an IPv4 CIDR ({exc}); write it like 203.0.113.0/24")
            continue
        if str(net) != c:
            p.add(key, f"'{c}' is not in canonical form; write {net}")
        elif c in seen:
            p.add(key, f"'{c}' is already listed as access.adminCidrs[{seen[c]}]; list each CIDR once")
        elif net.prefixlen == 0 and not allow_world:
            p.add(key, f"'{c}' opens SSH (22) and the Kubernetes API (6443) to the whole internet; list your "
                       "networks, or set access.allowWorldAdmin true if that is really meant")
        elif net.prefixlen == 0:
            warnings.append(f"{NAMESPACE}:{key}: '{c}' opens SSH (22) and the Kubernetes API (6443) to the whole "
                            "internet (access.allowWorldAdmin is true)")
        seen.setdefault(c, i)
    return AccessConfig(
        admin_cidrs=tuple(admin),
        ssh_key_name=_str(p, "access.sshKeyName", acc.get("sshKeyName"), what="an EC2 key pair name"),
        ssh_user=_str(p, "access.sshUser", acc.get("sshUser", DEFAULT_SSH_USER), what="a login user name") or DEFAULT_SSH_USER,
        ssh_key_path=_str(p, "access.sshKeyPath", acc.get("sshKeyPath"), what="a path to the private key for rke up"),
        ssm=_bool(p, "access.ssm", acc.get("ssm"), DEFAULT_SSM),
        allow_world_admin=allow_world,
    )


def _parse_pools(p: _Problems, raw: Any, distribution: Optional[str], warnings: list[str]) -> tuple[NodePool, ...]:
    if raw is None:
        p.add("nodePools", "missing; list at least one pool with controlplane, one with etcd and one with worker")
        return ()
    if not isinstance(raw, list) or not raw:
        p.add("nodePools", f"{_json(raw)} is not a non-empty list of pools; each pool is {{name, roles, count, ...}}")
        return ()
    pools: list[NodePool] = []
    names: dict[str, int] = {}
    blocks: dict[int, str] = {}
    for i, item in enumerate(raw):
        key = f"nodePools[{i}]"
        if not isinstance(item, dict):
            p.add(key, f"{_json(item)} is not a pool object; write {{name, roles, count, instanceType, ...}}")
            continue
        _unknown_keys(p, key, item, POOL_KEYS)
        name = _str(p, f"{key}.name", item.get("name"), POOL_NAME_RE, "1-31 chars of a-z, 0-9 and -, starting with a letter")
        if "name" not in item:
            p.add(f"{key}.name", "missing; every pool needs a name")
        if name is not None:
            if name in names:
                p.add(f"{key}.name", f"'{name}' is already used by nodePools[{names[name]}]; pool names are unique")
            names[name] = i
        roles_raw = item.get("roles")
        roles: list[str] = []
        if roles_raw is None:
            p.add(f"{key}.roles", "missing; list the pool's roles from controlplane, etcd and worker")
        elif not isinstance(roles_raw, list) or not roles_raw:
            p.add(f"{key}.roles", f"{_json(roles_raw)} is not a non-empty list; use a list of controlplane, etcd or worker")
        else:
            for r in roles_raw:
                if r not in ROLES:
                    p.add(f"{key}.roles", f"{_json(r) if not isinstance(r, str) else repr(r)} is not a role; use controlplane, etcd or worker")
                elif r in roles:
                    p.add(f"{key}.roles", f"'{r}' is listed twice; list each role once")
                else:
                    roles.append(r)
        count = _int(p, f"{key}.count", item.get("count"), 0, 500) if "count" in item else None
        if "count" not in item:
            p.add(f"{key}.count", "missing; give the number of nodes (0 to 500)")
        itype = _str(p, f"{key}.instanceType", item.get("instanceType", DEFAULT_INSTANCE_TYPE), INSTANCE_TYPE_RE, "an EC2 instance type like m6i.large")
        tier = item.get("subnet", DEFAULT_SUBNET_TIER)
        if tier not in SUBNET_TIERS:
            p.add(f"{key}.subnet", f"{_json(tier)} is not a subnet tier; use private or public")
        root = _int(p, f"{key}.rootVolumeGb", item.get("rootVolumeGb", DEFAULT_ROOT_VOLUME_GB), MIN_ROOT_GB, MAX_ROOT_GB)
        ami = _str(p, f"{key}.ami", item.get("ami"), AMI_RE, "an AMI ID like ami-0123456789abcdef0")
        block = _int(p, f"{key}.ipBlock", item["ipBlock"], 0, MAX_POOL_BLOCKS - 1) if "ipBlock" in item else None
        if block is not None:
            if block in blocks:
                p.add(f"{key}.ipBlock", f"{block} is already used by pool '{blocks[block]}'; give each pool its own ipBlock (0 to {MAX_POOL_BLOCKS - 1})")
            blocks[block] = name or key
        hop = _int(p, f"{key}.imdsHopLimit", item.get("imdsHopLimit", DEFAULT_IMDS_HOP_LIMIT), 1, 2)
        reason = item.get("imdsHopLimitReason")
        if hop == 2 and not (isinstance(reason, str) and reason.strip()):
            p.add(f"{key}.imdsHopLimitReason", "missing; imdsHopLimit 2 lets every pod on the pool's nodes take the "
                                               "node role's credentials: state why in imdsHopLimitReason, or keep 1")
        elif reason is not None and hop != 2:
            p.add(f"{key}.imdsHopLimitReason", "is set but imdsHopLimit is not 2; remove it")
        elif hop == 2:
            tag_problem = _tag_value_problem(reason)
            if tag_problem:
                p.add(f"{key}.imdsHopLimitReason", f"becomes an instance tag value and {tag_problem}")
            else:
                warnings.append(f"{NAMESPACE}:{key}.imdsHopLimit: 2: pods on the pool's nodes can read the node "
                                f"role's credentials from IMDS (reason given: {reason.strip()})")
        ordered = tuple(r for r in ROLES if r in roles)
        if distribution == "rke2" and roles and ("controlplane" in roles) != ("etcd" in roles):
            p.add(
                f"{key}.roles",
                f"{_json(list(ordered))} is not an RKE2 node type; an RKE2 server runs both controlplane and etcd: use [controlplane, etcd] (optionally with worker) or [worker]",
            )
        if name is not None and roles and count is not None and itype and tier in SUBNET_TIERS and root and hop:
            pools.append(NodePool(name, ordered, count, itype, tier, root, ami, block, hop,
                                  reason.strip() if hop == 2 and isinstance(reason, str) else None))
    return tuple(pools)


def _check_topology(p: _Problems, pools: tuple[NodePool, ...], warnings: list[str]) -> None:
    def members(pred) -> int:
        return sum(pl.count for pl in pools if pred(pl))

    if members(lambda pl: pl.is_controlplane) == 0:
        p.add("nodePools", "no node has the controlplane role; add a pool with controlplane and count >= 1")
    etcd = members(lambda pl: pl.is_etcd)
    if etcd == 0:
        p.add("nodePools", "no node has the etcd role; add a pool with etcd and count >= 1")
    elif etcd % 2 == 0:
        warnings.append(
            f"{NAMESPACE}:nodePools: {etcd} etcd members; an even count tolerates no more failures than {etcd - 1} (quorum): use an odd count"
        )
    if members(lambda pl: pl.is_worker) == 0:
        p.add("nodePools", "no node can run workloads; add a pool with the worker role and count >= 1")


def parse(raw: Mapping[str, Any], *, project: str, stack: str, region: Optional[str],
          secret_keys: Iterable[str] = ()) -> StackConfig:
    """Turn the flat config map into a validated `StackConfig`, or raise `ConfigError`.

    `secret_keys`: the keys the engine marks secret (set with `pulumi config set --secret`).
    """
    secret_keys = frozenset(secret_keys)
    p = _Problems()
    warnings: list[str] = []
    values: dict[str, Any] = {}
    prefix = f"{NAMESPACE}:"
    for full_key, value in raw.items():
        if not full_key.startswith(prefix):
            continue
        key = full_key[len(prefix):]
        if key not in TOP_LEVEL_KEYS:
            p.add(key, f"unknown key; allowed keys are {', '.join(TOP_LEVEL_KEYS)}")
            continue
        if key in EMPTY_MEANS_DEFAULT and value == "":
            continue
        values[key] = value if key in STRING_KEYS else _decode(value)

    if region is None:
        p.items.append("aws:region: missing; set it with `pulumi config set aws:region <region>`")
    elif not REGION_RE.fullmatch(region):
        p.items.append(f"aws:region: '{region}' is not an AWS region; write it like us-west-2")

    distribution = values.get("distribution")
    if distribution is None:
        p.add("distribution", "missing; set rke or rke2")
    elif distribution not in DISTRIBUTIONS:
        p.add("distribution", f"{_json(distribution)} is not a distribution; use rke or rke2")
        distribution = None

    cluster_id = values.get("clusterId", stack)
    if not isinstance(cluster_id, str) or not CLUSTER_ID_RE.fullmatch(cluster_id):
        source = "" if "clusterId" in values else " (defaulted from the stack name; set clusterId)"
        p.add("clusterId", f"{_json(cluster_id)} is not a cluster ID{source}; use 1-{MAX_CLUSTER_ID} chars of a-z, 0-9 and -, starting with a letter")

    network = _parse_network(p, values.get("network"))
    if network.availability_zones and region and REGION_RE.fullmatch(region):
        for n in network.availability_zones:
            if AZ_RE.fullmatch(n) and n[:-1] != region:
                p.add("network.availabilityZones", f"'{n}' is not a zone of {region}; use zones like {region}a")
    access = _parse_access(p, values.get("access"), warnings)
    pools_raw = values.get("nodePools")
    pools = _parse_pools(p, pools_raw, distribution, warnings)
    # Topology is judged only on a complete pool list: a pool rejected above would otherwise
    # show up again as "no controlplane" or "no worker".
    if pools and isinstance(pools_raw, list) and len(pools) == len(pools_raw):
        _check_topology(p, pools, warnings)
        if not network.bring_your_own and network.nat_gateways == "none":
            for i, pool in enumerate(pools):
                if pool.subnet == "private" and pool.count:
                    p.add(f"nodePools[{i}].subnet", "'private' needs a way out for the bootstrap downloads, but network.natGateways is none; use single or perAz, or subnet public")

    kver = values.get("kubernetesVersion")
    if kver is None and distribution:
        kver = DEFAULT_KUBERNETES_VERSION[distribution]
    if distribution and kver is not None:
        if not isinstance(kver, str) or kubernetes_minor(distribution, kver) is None:
            form = "v1.32.5-rancher1-1" if distribution == "rke" else "v1.33.5+rke2r1"
            p.add("kubernetesVersion", f"{_json(kver)} is not an {distribution.upper()} Kubernetes version; write it like {form}")
            kver = None

    ccm_raw = _expect_obj(p, "ccm", values.get("ccm"))
    _unknown_keys(p, "ccm", ccm_raw, CCM_KEYS)
    chart = _str(p, "ccm.chartVersion", ccm_raw.get("chartVersion", DEFAULT_CCM_CHART_VERSION), re.compile(r"^\d+\.\d+\.\d+$"), "a chart version like 0.0.11")
    migration = _bool(p, "ccm.leaderMigration", ccm_raw.get("leaderMigration"), False)
    extra = _str_list(p, "ccm.extraArgs", ccm_raw.get("extraArgs", []), "flags like --v=4") or []
    for i, a in enumerate(extra):
        if not FLAG_RE.fullmatch(a):
            p.add(f"ccm.extraArgs[{i}]", f"'{a}' is not a flag; write each flag as one --name=value entry")
        elif a.split("=")[0] in PROGRAM_FLAGS:
            p.add(f"ccm.extraArgs[{i}]", f"'{a}' is set by this program; remove it")
        elif a.split("=")[0] == "--enable-leader-migration" and migration:
            p.add(f"ccm.extraArgs[{i}]", f"'{a}' is already set by ccm.leaderMigration; remove it")
    image = _str(p, "ccm.image", ccm_raw.get("image"), IMAGE_RE,
                 "an image reference with a tag, like registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.4")
    minor = kubernetes_minor(distribution, kver) if (distribution and kver) else None
    if minor is not None and image is None and minor not in versions.CCM_IMAGE_TAGS:
        known = ", ".join(f"1.{m}" for m in sorted(versions.CCM_IMAGE_TAGS))
        p.add("kubernetesVersion", f"{kver}: no aws-cloud-controller-manager release is known for Kubernetes 1.{minor} "
                                   f"(a CCM must not be newer than the cluster); use a minor with one ({known}) "
                                   "or set ccm.image to a cloud-controller-manager image for 1." + str(minor))
    install = ccm_raw.get("install", DEFAULT_CCM_INSTALL)
    if install not in CCM_INSTALL_MODES:
        p.add("ccm.install", f"{_json(install)} is not an install mode; use helm or manifest")
    elif install == "manifest" and distribution == "rke":
        p.add("ccm.install", "'manifest' needs RKE2's manifests directory; with rke use helm")
    if migration and kver and distribution:
        minor = kubernetes_minor(distribution, kver)
        if minor is not None and minor >= IN_TREE_REMOVED_MINOR:
            p.add(
                "ccm.leaderMigration",
                f"true needs the in-tree aws provider, which Kubernetes {kver} (>= 1.{IN_TREE_REMOVED_MINOR}) no longer has; migrate on 1.26 or earlier, or set leaderMigration false",
            )

    tags_raw = _expect_obj(p, "tags", values.get("tags"))
    tags: dict[str, str] = {}
    for k, v in tags_raw.items():
        key_problem = _tag_key_problem(k)
        if key_problem:
            p.add(f"tags.{k}", key_problem)
        elif not isinstance(v, str):
            p.add(f"tags.{k}", f"{_json(v)} is not a string; tag values are strings")
        elif _tag_value_problem(v):
            p.add(f"tags.{k}", f"value {_tag_value_problem(v)}")
        else:
            tags[k] = v
    if len(tags_raw) > MAX_USER_TAGS:
        p.add("tags", f"{len(tags_raw)} tags; AWS allows {AWS_MAX_TAGS} per resource and this program sets up to "
                      f"{len(PROGRAM_TAG_KEYS)} itself ({', '.join(PROGRAM_TAG_KEYS)}): use at most {MAX_USER_TAGS}")

    protect = _bool(p, "protectServers", values.get("protectServers"), False)

    backup = _parse_etcd_backup(p, values.get("etcdBackup"), region)
    addons_raw = _expect_obj(p, "addons", values.get("addons"))
    _unknown_keys(p, "addons", addons_raw, ADDONS_KEYS)
    addons = AddonsConfig(ebs_csi=_bool(p, "addons.ebsCsi", addons_raw.get("ebsCsi"), None) if "ebsCsi" in addons_raw else None)
    hardening = values.get("hardening", "none")
    if hardening not in HARDENING_MODES:
        p.add("hardening", f"{_json(hardening)} is not a hardening profile; use none or cis")
        hardening = "none"
    elif hardening == "cis" and distribution == "rke":
        p.add("hardening", "'cis' applies RKE2's CIS profile; RKE1 clusters are hardened through cluster.yml by hand")
    if distribution == "rke":
        warnings.append(f"{NAMESPACE}:distribution: rke: {RKE1_EOL}")
        # RKE1 etcd nodes take the snapshots; etcd-only pools share the worker/etcd role.
        etcd_only = [pool.name for pool in pools or () if pool.is_etcd and not pool.is_controlplane]
        if backup.enabled and etcd_only:
            warnings.append(f"{NAMESPACE}:etcdBackup: pools {', '.join(etcd_only)} run etcd without controlplane and use "
                            "the worker/etcd role, so every worker node's role may read the etcd snapshots (every "
                            "Secret of the cluster); put etcd with controlplane to keep snapshots off worker nodes")

    cp_raw = _expect_obj(p, "controlPlane", values.get("controlPlane"))
    _unknown_keys(p, "controlPlane", cp_raw, CONTROL_PLANE_KEYS)
    endpoint = cp_raw.get("endpoint", DEFAULT_ENDPOINT)
    if endpoint not in ENDPOINT_MODES:
        p.add("controlPlane.endpoint", f"{_json(endpoint)} is not an endpoint kind; use dns or nlb")
        endpoint = DEFAULT_ENDPOINT

    kubeconfig = values.get("kubeconfig")
    if kubeconfig is not None and not kubeconfig.strip():
        p.add("kubeconfig", "is blank; set it with `pulumi config set --secret kubeconfig < kubeconfig.yaml` or remove it")
        kubeconfig = None
    elif kubeconfig is not None and f"{NAMESPACE}:kubeconfig" not in secret_keys:
        # Pulumi.yaml cannot declare it `secret: true` (see there), so the program insists instead:
        # a plain-text kubeconfig would sit in the stack file, in git, unencrypted.
        p.add("kubeconfig", "is stored as plain text in the stack file; it holds cluster-admin credentials: "
                            "set it with `pulumi config set --secret kubeconfig < kubeconfig.yaml`")
        kubeconfig = None

    if p.items:
        raise ConfigError(p.items)
    assert distribution and kver and chart and isinstance(cluster_id, str) and region
    return StackConfig(
        project=project,
        stack=stack,
        region=region,
        distribution=distribution,
        cluster_id=cluster_id,
        network=network,
        access=access,
        node_pools=pools,
        kubernetes_version=kver,
        ccm=CcmConfig(chart, migration, tuple(extra), install, image),
        kubeconfig=Secret(kubeconfig) if kubeconfig else None,
        tags=tags,
        protect_servers=protect,
        warnings=tuple(warnings),
        endpoint=endpoint,
        etcd_backup=backup,
        addons=addons,
        hardening=hardening,
    )


def load() -> StackConfig:
    """Read this stack's configuration from the Pulumi runtime (the only place that does)."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    raw: dict[str, Any] = dict(runtime_config.get_config_env())
    raw.update(runtime_config.CONFIG.get())
    secret = set(runtime_config.get_config_secret_keys_env()) | {k for k in raw if runtime_config.is_config_secret(k)}
    region = raw.get("aws:region")
    return parse(raw, project=pulumi.get_project(), stack=pulumi.get_stack(), region=region, secret_keys=secret)
