"""Stack configuration: read once, validated completely, handed to components as frozen objects.

`parse()` is pure: it takes the flat config map Pulumi gives a program (``"rke-aws:key" ->
string``, structured values JSON-encoded) and returns a `StackConfig`, or raises `ConfigError`
listing every problem at once. `load()` is the only function that touches Pulumi's runtime.
Nothing else in the program reads configuration.

What one key can check alone (type, range, allowed values, pattern, unknown keys) is declared in
model.py, with the defaults and descriptions; this module adds the rules that span keys
(CIDRs inside the VPC, bring-your-own completeness, pool topology, versions per distribution,
secrets) and builds the objects below from the model's validated objects (`_plain`): a field named
like a model key takes its value, and a model key without a field reads through (`_FromModel`), so
a new plain key needs no line here.
"""

from __future__ import annotations

import ipaddress
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from . import model, partitions, versions
from . import tags as tagsets
from .errors import ConfigError  # noqa: F401 - raised here, and part of this module's interface
from .model import (  # noqa: F401 - the defaults are part of this module's interface
    DEFAULT_AZ_COUNT,
    DEFAULT_BACKUP_EXPIRE_DAYS,
    DEFAULT_BACKUP_INTERVAL_HOURS,
    DEFAULT_BACKUP_RETENTION,
    DEFAULT_ENDPOINT,
    DEFAULT_IMDS_HOP_LIMIT,
    DEFAULT_KUBERNETES_VERSION,
    DEFAULT_MARKET,
    DEFAULT_ROOT_VOLUME_GB,
    DEFAULT_VPC_CIDR,
    MAX_AZ_COUNT,
    MAX_CLUSTER_ID,
    MAX_POOL_BLOCKS,
    MAX_USER_TAGS,
)

# The configuration namespace is the Pulumi project's name: the CLI namespaces every key Pulumi.yaml declares,
# every bare key of a stack file and of `pulumi config set` with it (pulumi/pulumi pkg/workspace/config.go
# mergeConfig, sdk/go/common/workspace/loaders.go stackConfigNamespacedWithProject, pkg/cmd/pulumi/config/io.go
# parseConfigKey), and `pulumi new` renames the project (pkg/cmd/pulumi/project/newcmd/new.go). `parse` takes
# it from `project` (pulumi.get_project()); NAMESPACE is this repository's project name, the namespace of its
# sample stacks and test fixtures, and the one messages outside `parse` still name.
NAMESPACE = "rke-aws"
ROLES = ("controlplane", "etcd", "worker")

TOP_LEVEL_KEYS = model.keys(model.StackConfiguration)
NETWORK_KEYS = model.keys(model.Network)
ACCESS_KEYS = model.keys(model.Access)
POOL_KEYS = model.keys(model.NodePool)
CCM_KEYS = model.keys(model.Ccm)
CONTROL_PLANE_KEYS = model.keys(model.ControlPlane)
ETCD_BACKUP_KEYS = model.keys(model.EtcdBackup)
ADDONS_KEYS = model.keys(model.Addons)
ROTATION_KEYS = model.keys(model.Rotation)
PROXY_KEYS = model.keys(model.Proxy)
INGRESS_KEYS = model.keys(model.Ingress)
BYO_KEYS = ("vpcId", "publicSubnetIds", "privateSubnetIds")
CIDR_KEYS = ("vpcCidr", "publicSubnetCidrs", "privateSubnetCidrs", "natGateways")
# Pulumi.yaml declares these with default "" (its schema cannot express "the stack name" or
# "per distribution"); an empty value therefore means "use the program's default".
EMPTY_MEANS_DEFAULT = ("clusterId", "kubernetesVersion", "kubeconfig", "confirmClusterState")
# Scalar keys arrive as the text the user wrote (the model reads numbers and booleans from text);
# only structured keys (sections, nodePools, tags) are JSON. Derived from the model, so a new
# scalar key needs nothing here.
SCALAR_KEYS = tuple(k for k in TOP_LEVEL_KEYS if k not in (*model.SECTIONS, "nodePools", "tags"))
# Booleans arrive as "true"/"false" (a YAML boolean) or the text written; the model reads exactly the
# spellings the schema allows (model.BOOL_TEXTS), which JSON would loosen ("true\n", " true").
BOOL_KEYS = tuple(k for k in SCALAR_KEYS if model.StackConfiguration.model_fields[k].annotation is bool)
# Plain string keys: every other scalar.
STRING_KEYS = tuple(k for k in SCALAR_KEYS if k not in BOOL_KEYS)

# etcd: "an etcd cluster probably should have no more than seven nodes" (etcd FAQ, "What is maximum
# cluster size?"; k3s's maintainers say the same for RKE2/k3s servers, k3s-io/k3s discussions #8082,
# #9552): every member slows every write. It also bounds user data: each RKE2 server's boot script
# lists the other servers (PEER_IPS), and EC2 takes 16 KiB of user data (node/cloud_init.py USER_DATA_LIMIT).
MAX_ETCD_MEMBERS = 7
MIN_VPC_PREFIX, MAX_VPC_PREFIX = model.MIN_VPC_PREFIX, model.MAX_VPC_PREFIX
# The in-tree AWS provider was removed in Kubernetes 1.27.
IN_TREE_REMOVED_MINOR = 27
RFC1918 = tuple(ipaddress.IPv4Network(n) for n in model.RFC1918_CIDRS)
CLUSTER_NETWORKS = tuple(ipaddress.IPv4Network(n) for n in model.CLUSTER_NETWORKS)
RKE1_EOL = ("RKE1 reached end of life on 2025-07-31 and rancher/rke is archived (last release v1.8.14); plan a "
            "move to RKE2 (https://docs.rke2.io/install/migrate)")
FLAG_RE = re.compile(model.FLAG_PATTERN)
# CCM flags this program sets itself (components/plan/ccm_values.py); --v may be overridden.
PROGRAM_FLAGS = model.PROGRAM_FLAGS
CLUSTER_ID_RE = re.compile(model.CLUSTER_ID_PATTERN)
RKE_VERSION_RE = re.compile(model.RKE_VERSION_PATTERN)
RKE2_VERSION_RE = re.compile(model.RKE2_VERSION_PATTERN)
SUBNET_ID_RE = re.compile(model.SUBNET_ID_PATTERN)
AZ_RE = re.compile(model.AZ_PATTERN)
REGION_RE = re.compile(model.REGION_PATTERN)
RESERVED_TAG_PREFIXES = model.RESERVED_TAG_PREFIXES
TAG_CHARS_RE = re.compile(model.TAG_CHARS + "*")
TAG_KEY_RE = re.compile(model.TAG_KEY_PATTERN)
TAG_VALUE_RE = re.compile(model.TAG_VALUE_PATTERN)
REASON_RE = re.compile(model.REASON_PATTERN)
# AWS tagging rules: at most 50 tags per resource.
AWS_MAX_TAGS = 50
# The tags a resource may carry from this program (the most on an instance).
PROGRAM_TAG_KEYS = ("Name", "kubernetes.io/cluster/<id>", "rke-aws/pool", "rke-aws/roles",
                    "rke-aws/imds-hop-limit-reason", "kubernetes.io/role/*")
assert MAX_USER_TAGS == AWS_MAX_TAGS - len(PROGRAM_TAG_KEYS)


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


def snake(key: str) -> str:
    """A model key as the parsed objects name it: rootVolumeGb -> root_volume_gb."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), key)


def camel(name: str) -> str:
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


class _FromModel:
    """A parsed section whose plain keys come from its model section (model.py) without a line here.

    The dataclass fields below are the typed, derived or cross-checked views components use; any
    other key of `MODEL` reads through from `source`, the model object `parse()` validated (its
    default when the object was built by hand), under its snake_case name, lists as tuples. So a
    new plain key is one field in model.py (tests/unit/test_config_model_single.py proves it).
    """

    MODEL: ClassVar[type[model.BaseModel]]

    def __getattr__(self, name: str) -> Any:
        # Only for names the class does not have; private and dunder names (copy, pickle) never read through.
        if name.startswith("_") or name == "source":
            raise AttributeError(name)
        section = type(self).MODEL
        source = self.__dict__.get("source")
        if source is None:
            source = section()
        key = camel(name)
        if key not in type(source).model_fields or snake(key) != name:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = getattr(source, key)
        return tuple(value) if isinstance(value, list) else value


def _plain(cls: type, obj: model.BaseModel, **derived: Any) -> Any:
    """`cls` built from the validated model object: every field named like a model key takes its
    value (lists as tuples), `derived` the rest; `obj` stays the source of keys without a field."""
    names = {f for f in cls.__dataclass_fields__ if f != "source"}  # type: ignore[attr-defined]
    values: dict[str, Any] = {}
    for name in names - set(derived):
        value = getattr(obj, camel(name))
        values[name] = tuple(value) if isinstance(value, list) else value
    return cls(**values, **derived, source=obj)


def _source() -> Any:
    # The validated model object: not compared or shown (the typed fields are), set by keyword only.
    return field(default=None, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class NodePool(_FromModel):
    MODEL = model.NodePool
    name: str
    roles: tuple[str, ...]
    count: int
    instance_type: str
    subnet: str
    root_volume_gb: int
    ami: str | None
    ip_block: int | None  # None: assigned at plan time (plan/nodes.py)
    imds_hop_limit: int = DEFAULT_IMDS_HOP_LIMIT
    imds_hop_limit_reason: str | None = None
    market: str = DEFAULT_MARKET  # or "spot" (worker-only pools)
    source: Any = _source()

    @property
    def is_spot(self) -> bool:
        return self.market == "spot"

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
class NetworkConfig(_FromModel):
    MODEL = model.Network
    vpc_cidr: str | None
    availability_zones: tuple[str, ...] | None  # explicit names, or None: look up `az_count`
    az_count: int
    nat_gateways: str
    public_subnet_cidrs: tuple[str, ...] | None
    private_subnet_cidrs: tuple[str, ...] | None
    vpc_id: str | None = None
    public_subnet_ids: tuple[str, ...] | None = None
    private_subnet_ids: tuple[str, ...] | None = None
    source: Any = _source()

    @property
    def bring_your_own(self) -> bool:
        return self.vpc_id is not None


@dataclass(frozen=True)
class AccessConfig(_FromModel):
    MODEL = model.Access
    admin_cidrs: tuple[str, ...]
    ssh_key_name: str | None
    ssh_user: str
    ssh_key_path: str | None
    ssm: bool
    allow_world_admin: bool = False
    source: Any = _source()


@dataclass(frozen=True)
class CcmConfig(_FromModel):
    MODEL = model.Ccm
    chart_version: str
    leader_migration: bool
    extra_args: tuple[str, ...]
    install: str
    image: str | None = None  # explicit "repository:tag"; None: versions.CCM_IMAGE_TAGS by minor
    source: Any = _source()

    def image_for(self, kubernetes_minor: int) -> str:
        return self.image or f"{versions.CCM_IMAGE_REPOSITORY}:{versions.CCM_IMAGE_TAGS[kubernetes_minor]}"


@dataclass(frozen=True)
class EtcdBackupConfig(_FromModel):
    MODEL = model.EtcdBackup
    enabled: bool = True
    bucket: str | None = None  # an existing bucket; None: one is created per cluster
    folder: str | None = None  # None: the cluster ID
    interval_hours: int = DEFAULT_BACKUP_INTERVAL_HOURS
    retention: int = DEFAULT_BACKUP_RETENTION
    expire_days: int = DEFAULT_BACKUP_EXPIRE_DAYS
    kms_key_arn: str | None = None  # None: SSE-S3
    source: Any = _source()


@dataclass(frozen=True)
class AddonsConfig(_FromModel):
    MODEL = model.Addons
    # None: on for a new stack, off for one deployed before the option existed (history.py).
    ebs_csi: bool | None = None
    source: Any = _source()


@dataclass(frozen=True)
class ProxyConfig(_FromModel):
    """proxy: one URL given stands for both (most proxies take http and CONNECT alike)."""
    MODEL = model.Proxy
    http_proxy: str
    https_proxy: str
    no_proxy: tuple[str, ...] = ()  # the user's entries; plan/proxy.py adds the cluster's own
    source: Any = _source()


@dataclass(frozen=True)
class RancherConfig(_FromModel):
    MODEL = model.Rancher
    url: str
    token: Secret
    cluster_name: str
    upgrades: str = model.DEFAULT_RANCHER_UPGRADES  # "rke-aws" | "rancher"
    source: Any = _source()

    @property
    def rancher_upgrades(self) -> bool:
        return self.upgrades == "rancher"


@dataclass(frozen=True)
class IngressConfig(_FromModel):
    """ingress: `controller` reads through (None: not set; components/plan/ingress.py decides)."""
    MODEL = model.Ingress
    source: Any = _source()


@dataclass(frozen=True)
class ControlPlaneConfig(_FromModel):
    """controlPlane: endpoint is StackConfig.endpoint (kept there for its consumers); other keys read through."""
    MODEL = model.ControlPlane
    source: Any = _source()


@dataclass(frozen=True)
class RotationConfig(_FromModel):
    """rotation: read through (max_unavailable_agents); used by components/ops/rotate.py."""
    MODEL = model.Rotation
    source: Any = _source()


@dataclass(frozen=True)
class StackConfig(_FromModel):
    """The top-level scalar keys not listed here read through from the model's StackConfiguration."""
    MODEL = model.StackConfiguration
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
    kubeconfig: Secret | None
    tags: Mapping[str, str] = field(default_factory=dict)
    protect_servers: bool = False
    warnings: tuple[str, ...] = ()
    endpoint: str = DEFAULT_ENDPOINT
    etcd_backup: EtcdBackupConfig = field(default_factory=EtcdBackupConfig)
    addons: AddonsConfig = field(default_factory=AddonsConfig)
    hardening: str = "none"
    allow_uninstall: bool = False
    # ---- day 2 (history.py): confirmation codes for what the program cannot read from the cluster
    confirm_cluster_state: str | None = None
    proxy: ProxyConfig | None = None
    rancher: RancherConfig | None = None  # None: not registered in Rancher
    control_plane: ControlPlaneConfig = field(default_factory=ControlPlaneConfig)
    ingress: IngressConfig = field(default_factory=IngressConfig)
    rotation: RotationConfig = field(default_factory=RotationConfig)
    source: Any = _source()

    @property
    def cluster_tag_key(self) -> str:
        return tagsets.cluster_tag_key(self.cluster_id)

    @property
    def partition(self) -> partitions.Partition:
        return partitions.of_region(self.region)

    @property
    def kubernetes_minor(self) -> int:
        return kubernetes_minor(self.distribution, self.kubernetes_version) or 0


def kubernetes_minor(distribution: str, version: str) -> int | None:
    pattern = RKE_VERSION_RE if distribution == "rke" else RKE2_VERSION_RE
    m = pattern.fullmatch(version)
    return int(m.group(1)) if m else None


_S = TypeVar("_S", bound=model.BaseModel)


class _Problems:
    """Collects problems with the key path they belong to."""

    def __init__(self, namespace: str = NAMESPACE) -> None:
        self.items: list[str] = []
        self.namespace = namespace

    def add(self, key: str, message: str) -> None:
        self.items.append(f"{self.namespace}:{key}: {message}")

    def check(self, section: type[_S], raw: Any, where: tuple) -> _S:
        """The model's verdict on one key: the valid part of `raw`, its problems recorded."""
        obj, problems = model.check(section, raw, where)
        for key, message in problems:
            self.add(key, message)
        return obj


def _missing(section: type[model.BaseModel], key: str) -> str:
    msg = model._meta(section.model_fields[key], model.Msg)
    assert msg is not None, f"{section.__name__}.{key} says what is missing with a Msg"
    return msg.missing


TAG_RULE = "use ASCII letters, digits, space and _ . : / = + - @"
RESERVED_TAG = ("is reserved (Name, kubernetes.io/cluster/*, kubernetes.io/role/* and rke-aws/* are set by this program, "
                "KubernetesCluster is the CCM's legacy cluster tag, aws:* is AWS's; compared in any letter case, as "
                "IAM compares keys); choose another key")


def _tag_key_problem(k: str) -> str | None:
    """Why AWS (IAM, EC2, SSM, KMS, S3) or the CCM would refuse this tag key, or None; the verdict
    is TAG_KEY_RE's, the checks below only name the rule."""
    if TAG_KEY_RE.fullmatch(k):
        return None
    if not k.strip(" "):
        return "is empty; tag keys need 1 to 128 characters"
    low = k.strip(" ").lower()
    if any(low.startswith(pre) for pre in RESERVED_TAG_PREFIXES) or low in (x.lower() for x in model.RESERVED_TAG_KEYS):
        return RESERVED_TAG
    if len(k) > 128:
        return f"is {len(k)} characters long; AWS allows 128-character keys and 256-character values"
    if not TAG_CHARS_RE.fullmatch(k):
        return f"has characters AWS does not take in tag keys of every service (IAM, SSM); {TAG_RULE}"
    return "starts or ends with a space; remove it (AWS would keep a key that differs from what you see)"


def _tag_value_problem(v: str) -> str | None:
    if TAG_VALUE_RE.fullmatch(v):
        return None
    if len(v) > 256:
        return f"is {len(v)} characters long; AWS allows 128-character keys and 256-character values"
    return f"has characters AWS does not take in tag values of every service (IAM, SSM); {TAG_RULE}"


_json = model._json
shown = model.shown


class _TooDeep(Exception):
    pass


def _decode(raw: Any) -> Any:
    """Structured config arrives JSON-encoded; plain strings stay strings."""
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except RecursionError:
        raise _TooDeep() from None
    except (TypeError, ValueError):
        return raw


def canonical_cidr(p: _Problems, key: str, value: str, example: str) -> ipaddress.IPv4Network | None:
    """An IPv4 CIDR written the one way AWS stores it, or None (the problem recorded, naming the
    canonical form when there is one: netmask, host-mask, host-bits or bare-address forms)."""
    try:
        net = ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        try:
            loose = ipaddress.IPv4Network(value, strict=False)
        except ValueError:
            p.add(key, f"{shown(value)} is not an IPv4 CIDR ({exc}); write it like {example}")
            return None
        p.add(key, f"{shown(value)} is not a network address (host bits set); the network is {loose}: write that, "
                   "or the CIDR you meant")
        return None
    if str(net) != value:
        p.add(key, f"{shown(value)} is not in canonical form; write {net}")
        return None
    return net


def _private_net(p: _Problems, key: str, value: str, prefixes: tuple[int, int], what: str) -> ipaddress.IPv4Network | None:
    """A canonical RFC 1918 CIDR of a prefix in `prefixes`, clear of the cluster's own networks."""
    net = canonical_cidr(p, key, value, "10.0.0.0/16")
    if net is None:
        return None
    if not any(net.subnet_of(r) for r in RFC1918):
        p.add(key, f"{shown(value)} is not a private (RFC 1918) range; use a block inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16")
        return None
    if not prefixes[0] <= net.prefixlen <= prefixes[1]:
        p.add(key, f"{shown(value)} has prefix /{net.prefixlen}; {what} /{prefixes[0]} to /{prefixes[1]}")
        return None
    for cluster_net in CLUSTER_NETWORKS:
        if net.overlaps(cluster_net):
            which = "pod" if str(cluster_net) == model.POD_CIDR else "service"
            p.add(key, f"{shown(value)} overlaps {cluster_net}, the cluster's {which} network (RKE2 and RKE1 default): "
                       f"nodes would send traffic for those addresses into the cluster; use a block outside "
                       f"{' and '.join(model.CLUSTER_NETWORKS)}")
            return None
    return net


def _zones(p: _Problems, raw: Any) -> tuple[tuple[str, ...] | None, int]:
    """network.availabilityZones: a count (looked up at plan time) or zone names; the model's
    schema has both forms, the check is here (one key, two types)."""
    key = "network.availabilityZones"
    if raw is None:
        return None, DEFAULT_AZ_COUNT
    if not isinstance(raw, list):
        n = model._numeric_string(raw)
        if isinstance(n, bool) or not isinstance(n, int):
            p.add(key, f"{_json(raw)} is not a whole number; use an integer from 1 to {MAX_AZ_COUNT}")
        elif not 1 <= n <= MAX_AZ_COUNT:
            p.add(key, f"{n} is out of range; use an integer from 1 to {MAX_AZ_COUNT}")
        else:
            return None, n
        return None, DEFAULT_AZ_COUNT
    if not all(isinstance(n, str) for n in raw):
        p.add(key, f"{_json(raw)} is not a list of strings; expected a list of availability zone names like us-west-2a")
        return None, DEFAULT_AZ_COUNT
    for n in raw:
        if not AZ_RE.fullmatch(n):
            p.add(key, f"{shown(n)} is not an availability zone name; write it like us-west-2a")
    if len(set(raw)) != len(raw):
        p.add(key, f"{_json(raw)} lists a zone twice; each zone once")
    if not 1 <= len(raw) <= MAX_AZ_COUNT:
        p.add(key, f"{len(raw)} zones listed; list 1 to {MAX_AZ_COUNT}")
    return tuple(raw), len(raw)


def _parse_network(p: _Problems, raw: Any) -> NetworkConfig:
    net = p.check(model.Network, raw, ("network",))
    given = net.model_fields_set
    az_names, az_count = _zones(p, net.availabilityZones)

    byo_given = [k for k in BYO_KEYS if k in given]
    if byo_given:
        for k in CIDR_KEYS:
            if k in given:
                p.add(f"network.{k}", f"cannot be combined with bring-your-own network ({', '.join(byo_given)}); remove {k} or the IDs")
        for k in BYO_KEYS:
            if k not in given and not (isinstance(raw, dict) and k in raw):
                p.add(f"network.{k}", f"missing; bring-your-own network needs all of {', '.join(BYO_KEYS)}")
        ids = {k: tuple(getattr(net, k) or ()) for k in ("publicSubnetIds", "privateSubnetIds")}
        for k, lst in ids.items():
            for s in lst:
                if not SUBNET_ID_RE.fullmatch(s):
                    p.add(f"network.{k}", f"{shown(s)} is not a subnet ID; write it like subnet-0123456789abcdef0")
        # The zones are the subnets' (looked up at plan time); availabilityZones, when given, must agree.
        zones_given = net.availabilityZones is not None
        if not zones_given and ids["publicSubnetIds"] and "privateSubnetIds" in given:
            az_count = len(ids["privateSubnetIds"]) or az_count
        for k in ("publicSubnetIds", "privateSubnetIds"):
            if k in given and len(ids[k]) != az_count:
                source = "availability zone(s)" if zones_given else "private subnet(s), one per zone"
                p.add(f"network.{k}", f"{len(ids[k])} subnet(s) for {az_count} {source}; give one per zone, in zone order")
        seen_ids: dict[str, str] = {}
        for k, lst in ids.items():
            for i, s in enumerate(lst):
                here = f"network.{k}[{i}]"
                if s in seen_ids:
                    p.add(here, f"'{s}' is already listed as {seen_ids[s]}; each subnet is either public or private, once")
                else:
                    seen_ids[s] = here
        return _plain(
            NetworkConfig, net, vpc_cidr=None, availability_zones=az_names, az_count=az_count, nat_gateways="none",
            public_subnet_cidrs=None, private_subnet_cidrs=None,
            # Keep bring-your-own mode even when vpcId was rejected, so no CIDR-mode errors follow.
            vpc_id=net.vpcId or "", public_subnet_ids=ids["publicSubnetIds"], private_subnet_ids=ids["privateSubnetIds"],
        )

    vpc_net = _private_net(p, "network.vpcCidr", net.vpcCidr, (MIN_VPC_PREFIX, MAX_VPC_PREFIX), "use")
    subnet_cidrs: dict[str, tuple[str, ...] | None] = {}
    seen: list[tuple[str, ipaddress.IPv4Network]] = []
    for k in ("publicSubnetCidrs", "privateSubnetCidrs"):
        lst = getattr(net, k)
        if lst is None:
            subnet_cidrs[k] = None
            continue
        if len(lst) != az_count:
            p.add(f"network.{k}", f"{len(lst)} CIDR(s) for {az_count} availability zone(s); give one per zone, in zone order")
        for i, c in enumerate(lst):
            sub = _private_net(p, f"network.{k}[{i}]", c, (model.MIN_SUBNET_PREFIX, model.MAX_SUBNET_PREFIX),
                               "AWS subnets are")
            if sub is None:
                continue
            if vpc_net is not None and not sub.subnet_of(vpc_net):
                p.add(f"network.{k}[{i}]", f"'{c}' is outside the VPC {net.vpcCidr}; use a block inside it")
            for other_key, other_net in seen:
                if sub.overlaps(other_net):
                    p.add(f"network.{k}[{i}]", f"'{c}' overlaps {other_key} ({other_net}); subnets must not overlap")
            seen.append((f"network.{k}[{i}]", sub))
        subnet_cidrs[k] = tuple(lst)
    cidrs_given = [k for k in ("publicSubnetCidrs", "privateSubnetCidrs") if isinstance(raw, dict) and k in raw]
    if len(cidrs_given) == 1:
        other = "privateSubnetCidrs" if cidrs_given[0] == "publicSubnetCidrs" else "publicSubnetCidrs"
        p.add(f"network.{other}", f"missing; network.{cidrs_given[0]} is set, and derived {other} could overlap it: give both lists or neither")
    return _plain(
        NetworkConfig, net, availability_zones=az_names, az_count=az_count,
        public_subnet_cidrs=subnet_cidrs["publicSubnetCidrs"], private_subnet_cidrs=subnet_cidrs["privateSubnetCidrs"],
        vpc_id=None, public_subnet_ids=None, private_subnet_ids=None,
    )


def _parse_etcd_backup(p: _Problems, raw: Any, region: str | None) -> EtcdBackupConfig:
    b = p.check(model.EtcdBackup, raw, ("etcdBackup",))
    if b.bucket is not None and isinstance(raw, dict) and "expireDays" in raw:
        p.add("etcdBackup.expireDays", f"applies to the bucket this program creates, but etcdBackup.bucket names "
                                       f"'{b.bucket}'; set expiry on that bucket, or remove one of the keys")
    kms = b.kmsKeyArn
    if kms and region and REGION_RE.fullmatch(region) and kms.split(":")[3] != region:
        # SSE-KMS takes a key of the bucket's region (the cluster's), in its partition.
        theirs, ours = kms.split(":")[1], partitions.of_region(region).name
        where = f"{kms.split(':')[3]} (partition {theirs}, not {ours})" if theirs != ours else kms.split(":")[3]
        p.add("etcdBackup.kmsKeyArn", f"'{kms}' is a key in {where}, but the cluster and its snapshot "
                                      f"bucket are in {region}; use a key of {region}")
    return _plain(EtcdBackupConfig, b)


# Address space nobody on the internet sends from (IANA special-purpose registry, "globally
# reachable: false"): admin CIDRs there do not count towards the world-admin threshold.
NOT_PUBLIC = tuple(ipaddress.IPv4Network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
    "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3"))


def public_addresses(nets: Iterable[ipaddress.IPv4Network]) -> int:
    """How many public addresses the union of `nets` covers (overlaps counted once)."""
    union = list(ipaddress.collapse_addresses(nets))
    total = sum(n.num_addresses for n in union)
    private = list(ipaddress.collapse_addresses(NOT_PUBLIC))
    for u in union:
        for q in private:
            if u.overlaps(q):
                total -= (u if u.subnet_of(q) else q).num_addresses
    return total


WORLD_TEXT = (f"more than {model.WORLD_ADMIN_DESCRIPTION} ({model.WORLD_ADMIN_PUBLIC_ADDRESSES:,}): that is the "
              "internet, not your networks")


def _parse_access(p: _Problems, raw: Any, warnings: list[str]) -> AccessConfig:
    acc = p.check(model.Access, raw, ("access",))
    seen: dict[str, int] = {}
    nets: list[ipaddress.IPv4Network] = []
    world = model.WORLD_ADMIN_PUBLIC_ADDRESSES
    consent = "list your networks, or set access.allowWorldAdmin true if that is really meant"
    for i, c in enumerate(acc.adminCidrs):
        key = f"access.adminCidrs[{i}]"
        net = canonical_cidr(p, key, c, "203.0.113.0/24")
        if net is None:
            continue
        if c in seen:
            p.add(key, f"'{c}' is already listed as access.adminCidrs[{seen[c]}]; list each CIDR once")
            continue
        seen[c] = i
        nets.append(net)
        alone = public_addresses([net])
        if alone > world:
            reach = "the whole internet" if net.prefixlen == 0 else f"{alone:,} public addresses, {WORLD_TEXT}"
            if acc.allowWorldAdmin:
                warnings.append(f"{NAMESPACE}:{key}: '{c}' opens SSH (22) and the Kubernetes API (6443) to {reach} "
                                "(access.allowWorldAdmin is true)")
            else:
                p.add(key, f"'{c}' opens SSH (22) and the Kubernetes API (6443) to {reach}; {consent}")
    together = public_addresses(nets)
    if together > world and all(public_addresses([n]) <= world for n in nets):
        # The internet in pieces (0.0.0.0/1 + 128.0.0.0/1, or many /4s): judged as a whole.
        text = (f"together open SSH (22) and the Kubernetes API (6443) to {together:,} public addresses, {WORLD_TEXT}")
        if acc.allowWorldAdmin:
            warnings.append(f"{NAMESPACE}:access.adminCidrs: {text} (access.allowWorldAdmin is true)")
        else:
            p.add("access.adminCidrs", f"{text}; {consent}")
    return _plain(AccessConfig, acc)


PROXY_CREDENTIALS = (
    "holds credentials (user:password@): the proxy URL is written into every node's EC2 user data, which "
    "anyone allowed ec2:DescribeInstanceAttribute reads in plain text, so this program does not take them; "
    "let the proxy authorise the cluster by source address (the VPC CIDR or the node security group)")


def _parse_proxy(p: _Problems, raw: Any) -> ProxyConfig | None:
    if raw is None:
        return None
    given = isinstance(raw, dict) and any(k in raw for k in ("httpProxy", "httpsProxy"))
    if isinstance(raw, dict):
        # Never echoed: a value with credentials must not reach a message or a log.
        for k in ("httpProxy", "httpsProxy"):
            if isinstance(raw.get(k), str) and "@" in raw[k]:
                p.add(f"proxy.{k}", PROXY_CREDENTIALS)
                raw = {key: v for key, v in raw.items() if key != k}
    px = p.check(model.Proxy, raw, ("proxy",))
    seen: dict[str, int] = {}
    for i, entry in enumerate(px.noProxy):
        if entry.lower() in seen:
            p.add(f"proxy.noProxy[{i}]", f"'{entry}' is already listed as proxy.noProxy[{seen[entry.lower()]}]; "
                                         "list each entry once")
        seen.setdefault(entry.lower(), i)
    if len(px.noProxy) > model.MAX_NO_PROXY_ITEMS:
        p.add("proxy.noProxy", f"lists {len(px.noProxy)} entries; at most {model.MAX_NO_PROXY_ITEMS} (a .domain "
                               "suffix covers every name under it)")
    joined = ",".join(px.noProxy)
    if len(joined) > model.MAX_NO_PROXY_CHARS:
        p.add("proxy.noProxy", f"is {len(joined)} characters joined; at most {model.MAX_NO_PROXY_CHARS} (it is "
                               "written into every node's user data, which EC2 limits to 16 KiB)")
    url = px.httpsProxy or px.httpProxy
    if url is None:
        if not given and isinstance(raw, dict):
            p.add("proxy", "sets no httpProxy or httpsProxy; give the proxy's URL, like "
                           "{httpsProxy: http://proxy.example.com:3128}, or remove the proxy section")
        return None
    return _plain(ProxyConfig, px, http_proxy=px.httpProxy or url, https_proxy=url)


def node_group_inbound_rules(admin_cidrs: int, endpoint: str, distribution: str | None) -> int:
    """Inbound rules this program puts on the node security group: one for the nodes, two per admin
    CIDR (22 and 6443; security.rule_plans) and, with the NLB endpoint, one per endpoint port
    (9345 and 6443 for RKE2, 6443 for RKE1; endpoint.py). The NLB's own group holds fewer (one per
    port and one per admin CIDR). tests/program/test_hostile.py counts the registered rules against it."""
    ports = (2 if distribution == "rke2" else 1) if endpoint == "nlb" else 0
    return 1 + 2 * admin_cidrs + ports


def _check_rule_quota(p: _Problems, access: AccessConfig, endpoint: str, distribution: str | None) -> None:
    n = len(access.admin_cidrs)
    rules = node_group_inbound_rules(n, endpoint, distribution)
    room = model.SG_INBOUND_RULE_QUOTA - model.CCM_RULE_HEADROOM
    if rules > room:
        most = max(i for i in range(n + 1) if node_group_inbound_rules(i, endpoint, distribution) <= room)
        p.add("access.adminCidrs", f"{n} CIDRs need {rules} inbound rules on the node security group (one for the "
                                   "nodes, two per CIDR for ports 22 and 6443"
                                   + (", one per load balancer port" if endpoint == "nlb" else "")
                                   + f"); AWS allows {model.SG_INBOUND_RULE_QUOTA} per group by default and "
                                   f"{model.CCM_RULE_HEADROOM} stay free for the rules the CCM adds for LoadBalancer "
                                   f"Services: list at most {most} (merge neighbouring ranges into larger CIDRs)")


def _parse_pools(p: _Problems, raw: Any, distribution: str | None, warnings: list[str]) -> tuple[NodePool, ...]:
    if raw is None:
        raw = [dict(pool) for pool in model.DEFAULT_NODE_POOLS]
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
        pool = p.check(model.NodePool, item, ("nodePools", i))  # reports `key: ~` too
        nulls = {k for k, v in item.items() if v is None}
        item = {k: v for k, v in item.items() if v is not None}
        for required in ("name", "roles", "count"):
            if required not in item and required not in nulls:
                p.add(f"{key}.{required}", _missing(model.NodePool, required))
        if pool.name is not None:
            if pool.name in names:
                p.add(f"{key}.name", f"'{pool.name}' is already used by nodePools[{names[pool.name]}]; pool names are unique")
            names[pool.name] = i
        given_roles = item.get("roles")
        raw_roles = given_roles if isinstance(given_roles, list) else []
        for r in {r for r in raw_roles if isinstance(r, str) and raw_roles.count(r) > 1 and r in ROLES}:
            p.add(f"{key}.roles", f"'{r}' is listed twice; list each role once")
        roles = tuple(r for r in ROLES if r in (pool.roles or ()))
        if pool.ipBlock is not None:
            if pool.ipBlock in blocks:
                p.add(f"{key}.ipBlock", f"{pool.ipBlock} is already used by pool '{blocks[pool.ipBlock]}'; give each "
                                        f"pool its own ipBlock (0 to {MAX_POOL_BLOCKS - 1})")
            blocks[pool.ipBlock] = pool.name or key
        hop, reason = pool.imdsHopLimit, pool.imdsHopLimitReason
        if "imdsHopLimitReason" in item and reason is None:
            pass  # not a string: the model said so
        elif reason is not None and not REASON_RE.fullmatch(reason):
            if not reason.strip(" "):
                p.add(f"{key}.imdsHopLimitReason", f"{shown(reason)} is blank; state why pods on the pool's nodes need "
                                                   "the node role's credentials (it becomes the instance tag "
                                                   "rke-aws/imds-hop-limit-reason)")
            else:
                p.add(f"{key}.imdsHopLimitReason", f"becomes an instance tag value and {_tag_value_problem(reason)}")
        elif hop == 2 and reason is None:
            p.add(f"{key}.imdsHopLimitReason", "missing; imdsHopLimit 2 lets every pod on the pool's nodes take the "
                                               "node role's credentials: state why in imdsHopLimitReason, or keep 1")
        elif reason is not None and hop != 2:
            p.add(f"{key}.imdsHopLimitReason", "is set but imdsHopLimit is not 2; remove it")
        elif hop == 2 and reason is not None:  # always set here: a missing reason is refused above
            warnings.append(f"{NAMESPACE}:{key}.imdsHopLimit: 2: pods on the pool's nodes can read the node "
                            f"role's credentials from IMDS (reason given: {reason.strip()})")
        if pool.market == "spot" and {"controlplane", "etcd"} & set(roles):
            p.add(f"{key}.market", f"'spot' for a pool with {_json([r for r in roles if r != 'worker'])}: AWS takes "
                                   "spot capacity back at two minutes' notice, and servers hold etcd quorum and the "
                                   "API; spot is for worker-only pools: put the workers in a pool of their own")
        elif pool.market == "spot" and distribution == "rke" and pool.subnet == "public" and pool.count:
            # EC2 User Guide, "Public IPv4 addresses": released when the instance stops, a new one when
            # it starts. rke dials each node at its cluster.yml `address` (rancher/rke hosts/dialer.go)
            # and tells nodes apart by it (hosts.GetToDeleteHosts), and cluster.yml writes a public
            # node's public address (node/rke1_cluster.py).
            p.add(f"{key}.market", "'spot' for an RKE1 pool in public subnets: a spot interruption stops the instance "
                                   "and EC2 gives it a new public IP when it starts again, while `rke up` reaches and "
                                   "identifies each node by the address in the stored rkeClusterYml (its public IP), "
                                   "which then names no node; put the spot pool in private subnets (subnet: "
                                   "private, addressed by its fixed private IP) or keep it on-demand (a running "
                                   "pool: add the new pool, then set this one's count to 0)")
        complete = set(item) <= set(pool.model_fields_set) and pool.name and pool.count is not None
        if complete and pool.roles and len(set(pool.roles)) == len(pool.roles):
            pools.append(_plain(NodePool, pool, roles=roles,
                                imds_hop_limit_reason=reason.strip(" ") if hop == 2 and reason else None))
    return tuple(pools)


def split_server_pools(distribution: str | None, pools: tuple[NodePool, ...]) -> list[str]:
    """RKE2 server pools that run only etcd or only the control plane (rke2-docs install/server_roles.md:
    etcd-only servers set disable-apiserver/-controller-manager/-scheduler, control-plane-only ones
    disable-etcd and always `server:`)."""
    if distribution != "rke2":
        return []
    return [pl.name for pl in pools if pl.is_controlplane != pl.is_etcd]


def _check_topology(p: _Problems, pools: tuple[NodePool, ...], warnings: list[str], running_etcd_members: int = 0) -> None:
    def members(pred: Callable[[NodePool], bool]) -> int:
        return sum(pl.count for pl in pools if pred(pl))

    if members(lambda pl: pl.is_controlplane) == 0:
        p.add("nodePools", "no node has the controlplane role; add a pool with controlplane and count >= 1")
    etcd = members(lambda pl: pl.is_etcd)
    if etcd == 0:
        p.add("nodePools", "no node has the etcd role; add a pool with etcd and count >= 1")
    elif etcd % 2 == 0:
        warnings.append(
            # etcd tolerates (m - 1) // 2 failed members: 4 tolerate 1, like 3, with one more that can fail.
            f"{NAMESPACE}:nodePools: {etcd} etcd members tolerate {(etcd - 1) // 2} failure(s), like {etcd - 1}: the "
            f"extra member adds no tolerance, only one more that can fail; use an odd count ({etcd - 1} or {etcd + 1})"
        )
    if etcd > MAX_ETCD_MEMBERS:
        which = ", ".join(f"{pl.name}: {pl.count}" for pl in pools if pl.is_etcd and pl.count)
        why = (f"etcd recommends no more than {MAX_ETCD_MEMBERS} (etcd FAQ, \"What is maximum cluster size?\"): every "
               "member slows every write, and every RKE2 server's user data lists the others (EC2 takes 16 KiB)")
        if etcd > running_etcd_members:
            p.add("nodePools", f"{etcd} etcd members (pools with etcd: {which}); at most {MAX_ETCD_MEMBERS}: {why}; use 3, 5 or 7")
        else:  # a running cluster from before the limit: it may keep its members and go down one at a time
            warnings.append(f"{NAMESPACE}:nodePools: {etcd} etcd members ({which}); {why}: lower the count one member "
                            f"per `pulumi up` to {MAX_ETCD_MEMBERS} or fewer")
    if members(lambda pl: pl.is_worker) == 0:
        p.add("nodePools", "no node can run workloads; add a pool with the worker role and count >= 1")


# A release tag (v1.33.4, 1.33.4-eks-1); anything else (stable, main, dev) is a moving tag.
VERSION_TAG_RE = re.compile(r":v?[0-9]+\.[0-9]+(?:\.[0-9]+)?(?:[-+._][A-Za-z0-9.-]*)?$")


def _parse_ccm(p: _Problems, raw: Any, distribution: str | None, kver: str | None,
               warnings: list[str]) -> CcmConfig:
    ccm = p.check(model.Ccm, raw, ("ccm",))
    for i, a in enumerate(ccm.extraArgs):
        if not FLAG_RE.fullmatch(a):
            p.add(f"ccm.extraArgs[{i}]", f"{shown(a)} is not a flag; write each flag as one --name=value entry "
                                         "(ASCII, no spaces or invisible characters: each entry is one argument)")
        elif a.split("=")[0] in PROGRAM_FLAGS:
            p.add(f"ccm.extraArgs[{i}]", f"'{a}' is set by this program; remove it")
        elif a.split("=")[0] == "--enable-leader-migration" and ccm.leaderMigration:
            p.add(f"ccm.extraArgs[{i}]", f"'{a}' is already set by ccm.leaderMigration; remove it")
    if ccm.image and "@sha256:" not in ccm.image and not VERSION_TAG_RE.search(ccm.image):
        warnings.append(f"{NAMESPACE}:ccm.image: '{ccm.image}' is pinned by a tag that does not look like a release "
                        "(vX.Y.Z); a registry may move it: pin the digest too (image:tag@sha256:...)")
    minor = kubernetes_minor(distribution, kver) if (distribution and kver) else None
    if minor is not None and ccm.image is None and minor not in versions.CCM_IMAGE_TAGS:
        known = ", ".join(f"1.{m}" for m in sorted(versions.CCM_IMAGE_TAGS))
        p.add("kubernetesVersion", f"{kver}: no aws-cloud-controller-manager release is known for Kubernetes 1.{minor} "
                                   f"(a CCM must not be newer than the cluster); use a minor with one ({known}) "
                                   "or set ccm.image to a cloud-controller-manager image for 1." + str(minor))
    if ccm.install == "manifest" and distribution == "rke":
        p.add("ccm.install", "'manifest' needs RKE2's manifests directory; with rke use helm")
    if ccm.leaderMigration and minor is not None and minor >= IN_TREE_REMOVED_MINOR:
        p.add("ccm.leaderMigration",
              f"true needs the in-tree aws provider, which Kubernetes {kver} (>= 1.{IN_TREE_REMOVED_MINOR}) no longer "
              "has; migrate on 1.26 or earlier, or set leaderMigration false")
    return _plain(CcmConfig, ccm)


def _parse_tags(p: _Problems, raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    checked = p.check(model.StackConfiguration, {"tags": raw}, ()).tags or {}
    tags: dict[str, str] = {}
    folded: dict[str, str] = {}
    for k, v in (raw if isinstance(raw, dict) else {}).items():
        where = f"tags.{k}" if re.fullmatch(r"[ -~]*", k) else f"tags[{_json(k)}]"
        key_problem = _tag_key_problem(k)
        if key_problem:
            plain = key_problem == RESERVED_TAG or not k.strip(" ")
            p.add(where, key_problem if plain else f"{shown(k)} {key_problem}")
        elif isinstance(v, str) and _tag_value_problem(v):
            p.add(where, f"value {shown(v)} {_tag_value_problem(v)}")
        elif k.lower() in folded:
            # IAM, which tags the node roles, compares keys case-insensitively: one key twice.
            p.add(where, f"'{k}' and '{folded[k.lower()]}' differ only in letter case, which IAM counts as "
                         "the same key; keep one")
        elif k in checked:
            tags[k] = v
        folded.setdefault(k.lower(), k)
    if isinstance(raw, dict) and len(raw) > MAX_USER_TAGS:
        p.add("tags", f"{len(raw)} tags; AWS allows {AWS_MAX_TAGS} per resource and this program sets up to "
                      f"{len(PROGRAM_TAG_KEYS)} itself ({', '.join(PROGRAM_TAG_KEYS)}): use at most {MAX_USER_TAGS}")
    return tags


def known_releases(distribution: str) -> Iterable[str]:
    """The releases components/settings/versions.py knows for a distribution."""
    return versions.RKE_RELEASES if distribution == "rke" else versions.RKE2_RELEASES


def _kubernetes_version(p: _Problems, given: str | None, distribution: str | None,
                        running_version: str | None, warnings: list[str]) -> str | None:
    """kubernetesVersion, or what the stack runs when it is not set (a new default never upgrades a
    running cluster), or the default for a new stack. Only canonical release names of the
    distribution, and only releases versions.py knows, or the one the stack runs now."""
    if distribution is None:
        return None
    default = DEFAULT_KUBERNETES_VERSION[distribution]
    running = running_version if running_version and kubernetes_minor(distribution, running_version) is not None else None
    kver = given if given is not None else (running or default)
    if given is None and running and running != default:
        warnings.append(f"{NAMESPACE}:kubernetesVersion: not set, so this stack stays on {running}, which it runs (the "
                        f"default for new stacks is {default}); set kubernetesVersion to upgrade")
    minor = kubernetes_minor(distribution, kver)
    if minor is None:
        form = "v1.X.Y-rancherN-M" if distribution == "rke" else "v1.X.Y+rke2rN"
        p.add("kubernetesVersion", f"{_json(kver)} is not an {distribution.upper()} release name; write it like {default} "
                                   f"({form}, digits 0-9 without leading zeros)")
        return None
    known = known_releases(distribution)
    if kver not in known and kver != running:
        same = sorted((r for r in known if kubernetes_minor(distribution, r) == minor), key=_release_key)
        # Every known release parses (tests/unit/test_versions.py); the filter only tells the type checker.
        minors = sorted({m for m in (kubernetes_minor(distribution, r) for r in known) if m is not None})
        # A known release of a minor without a CCM image tag is refused unless ccm.image is set
        # (_parse_ccm): the list says so rather than offer it plainly (review finding 9).
        needs = " (no CCM image of this program for 1.{m}: needs ccm.image)"
        listed = (f"known 1.{minor} releases: {', '.join(same)}"
                  + (needs.format(m=minor) if minor not in versions.CCM_IMAGE_TAGS else "") if same else
                  f"no 1.{minor} release is known; known minors: "
                  + ", ".join(f"1.{m}" + (" (needs ccm.image)" if m not in versions.CCM_IMAGE_TAGS else "")
                              for m in minors))
        where = ("RKE_RELEASES, from the rke releases' own lists" if distribution == "rke" else
                 "RKE2_RELEASES, from RKE2's release notes, with each release's etcd version")
        p.add("kubernetesVersion", f"{_json(kver)} is not a release this program knows; {listed}. A newer release goes "
                                   f"into components/settings/versions.py {where}")
        return None
    return kver


def _check_ingress(p: _Problems, controller: str | None, distribution: str | None, kver: str | None) -> None:
    """What one release can deploy. RKE1: cluster.yml's ingress.provider, nginx or none (rancher/rke
    cluster/addons.go deployIngress); RKE2: versions.RKE2_TRAEFIK_SINCE. Whether a running cluster
    may change, and ingress-nginx from v1.37 on, are plan/ingress.py's and guards.py's."""
    if controller is None or distribution is None:
        return
    if distribution == "rke":
        if controller == "traefik":
            p.add("ingress.controller", "'traefik' is not an RKE1 ingress provider: RKE deploys ingress-nginx or "
                                        "nothing (cluster.yml ingress.provider nginx or none); use ingress-nginx or none")
        return
    if kver is not None and controller == "traefik" and not versions.rke2_patch_at_least(kver, *versions.RKE2_TRAEFIK_SINCE):
        p.add("ingress.controller", f"'traefik' is bundled from RKE2 v1.30.3 (and in every 1.31 and later), but "
                                    f"kubernetesVersion {kver} ships ingress-nginx only; use ingress-nginx or none, or a "
                                    "later release")


RANCHER_CLUSTER_NAME_RE = re.compile(model.RANCHER_CLUSTER_NAME_PATTERN)
RANCHER_URL_HIDDEN = (
    "holds user info (user:password@), a query or a fragment, not shown here as it may carry a credential; write "
    "Rancher's address alone, like https://rancher.example.com: the API token (rancher.token) authenticates")
RANCHER_TOKEN_SET = "`pulumi config set --secret --path rancher.token <token>`"


def rancher_url_problem(url: str) -> str | None:
    """Why `url` may not be rancher.url, without ever showing it when it could carry a credential
    (user info, a query or a fragment); None when it is accepted. The message follows the key name."""
    if any(c in url for c in "@?#"):
        return RANCHER_URL_HIDDEN
    if model.RANCHER_URL_RE.fullmatch(url):
        return None
    reason = model.rancher_url_why(url)
    return f"{model.shown(url)} {reason or 'is not valid'}; expected {model.RANCHER_URL_WHAT}"


def rancher_token_problem(token: str) -> str | None:
    """Why `token` may not be rancher.token (never showing it), or None. The rancher2 provider sends it
    as `Authorization: Bearer <token>` as given (rancher/norman clientbase/common.go getAuthHeader):
    a `Bearer ` of the user's own would be sent twice, and whitespace at either end (a newline from
    `pulumi config set ... < file`) would become part of the header; Go's net/http refuses a header
    value with a control character (golang.org/x/net/http/httpguts ValidHeaderFieldValue). Refused
    rather than trimmed: the stored secret stays the one that is used."""
    if not token.strip():
        return f"is blank; set Rancher's API token (token-<id>:<secret>) with {RANCHER_TOKEN_SET}"
    if re.match(r"(?i)\s*bearer(?:\s|$)", token):
        return ("starts with 'Bearer': the rancher2 provider adds 'Bearer ' itself (it sends Authorization: Bearer "
                f"<token>), so it would be sent twice; set the token alone (token-<id>:<secret>) with {RANCHER_TOKEN_SET}")
    if token != token.strip():
        return ("has whitespace at either end (a newline from a file, most likely): the provider would send it as part "
                f"of the Authorization header; set it again without, with {RANCHER_TOKEN_SET}")
    if any(unicodedata.category(c) == "Cc" for c in token):
        return ("has a control character inside it: the provider would send it in the Authorization header, which Go's "
                f"net/http refuses; set it again without, with {RANCHER_TOKEN_SET}")
    return None


def _parse_rancher(p: _Problems, raw: Any, given: bool, secret: bool, distribution: str | None,
                   cluster_id: str | None, pools: tuple[NodePool, ...] = ()) -> RancherConfig | None:
    """rancher: every key checked, the token never shown (not even in a message)."""
    if not given:
        return None
    if not isinstance(raw, dict):
        # Never the value: it may hold the token.
        p.add("rancher", "is not a map; expected {url, token, clusterName, upgrades} (set each with "
                         "`pulumi config set [--secret] --path rancher.<key> <value>`)")
        return None
    before = len(p.items)
    url_given = "url" in raw
    if isinstance(raw.get("url"), str) and any(c in raw["url"] for c in "@?#"):
        # Never echoed (like the proxy keys): user info or a query may hold a credential.
        p.add("rancher.url", RANCHER_URL_HIDDEN)
        raw = {k: v for k, v in raw.items() if k != "url"}
    section = p.check(model.Rancher, raw, ("rancher",))
    if not url_given:
        p.add("rancher.url", _missing(model.Rancher, "url"))
    token = section.token
    if "token" not in raw:
        p.add("rancher.token", _missing(model.Rancher, "token"))
    elif isinstance(token, str):
        if not secret:
            # Like the kubeconfig: a plain-text token would sit in the stack file, in git, unencrypted.
            p.add("rancher.token", "is stored as plain text in the stack file; it acts as a Rancher user: set it with "
                                   f"{RANCHER_TOKEN_SET}")
            token = None
        elif (why := rancher_token_problem(token)) is not None:
            p.add("rancher.token", why)
            token = None
    name = section.clusterName
    if "clusterName" not in raw and cluster_id == model.RANCHER_LOCAL_CLUSTER:
        p.add("rancher.clusterName", "missing, and clusterId 'local' is the name every Rancher gives the cluster it "
                                     "runs in, and Rancher refuses a second cluster of a name it has; set "
                                     "rancher.clusterName to another lowercase DNS label")
    elif "clusterName" not in raw and cluster_id is not None and not RANCHER_CLUSTER_NAME_RE.fullmatch(cluster_id):
        p.add("rancher.clusterName", f"missing, and clusterId {_json(cluster_id)} is not a name Rancher takes (it ends "
                                     "with -); set rancher.clusterName to a lowercase DNS label")
    name = name or cluster_id
    if section.upgrades == "rancher" and distribution == "rke":
        p.add("rancher.upgrades", "'rancher' but distribution is rke: Rancher manages the version of imported RKE2 and "
                                  "K3s clusters only (its imported-cluster-version-management is recognised on those); "
                                  "use rke-aws (rke up with a new kubernetesVersion)")
    etcd_only = [pl.name for pl in pools if pl.is_etcd and not pl.is_controlplane] if distribution == "rke2" else []
    if section.upgrades == "rancher" and etcd_only:
        p.add("rancher.upgrades", f"'rancher' with etcd-only server pools ({', '.join(etcd_only)}): Rancher's worker "
              "Plan takes every node without the control-plane label, etcd-only servers too, and upgrades them with "
              "the worker concurrency (rancher/rancher pkg/controllers/management/k3sbasedupgrade template.go, "
              "deployPlans.go), which whoever may edit the cluster in Rancher can raise (Edit Config > Upgrade Strategy) "
              "and this program cannot pin for an imported cluster: several etcd members would restart at once. Use rancher.upgrades: "
              "rke-aws (its own etcd Plan upgrades them one at a time after the control plane), or give the etcd pools "
              "the controlplane role too")
    if len(p.items) > before or not (section.url and token and name):
        return None
    return _plain(RancherConfig, section, url=section.url.rstrip("/"), token=Secret(token), cluster_name=name)


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"[0-9]+", release))


# Namespaces something reads: this program's, and the providers' and engine's it runs with. The
# random provider (components/aws/join_secrets.py) takes no configuration (pulumi-random's schema has no
# config variables: the SDK has no `config` module), so `random:` keys would be ignored too.
KNOWN_NAMESPACES = ("aws", "kubernetes", "pulumi")
# The one key the program treats as a secret; every other value becomes names, tags, addresses or
# settings that AWS and the stack's state show in plain text.
# `rancher` holds the Rancher API token: the CLI marks a structured key secret as a whole when a value
# inside it is `secure:` (pulumi/pulumi sdk/go/common/resource/config/map.go SecureKeys), so the
# program can only require the key to be secret (and never shows its text).
SECRET_KEYS = ("kubeconfig", "rancher")
SECRET_AS_TEXT = ("is encrypted (a `secure:` value, set with --secret), but the program uses it as plain text: it becomes "
                  "names, tags, addresses or settings that AWS, the preview and the stack's state show unencrypted; "
                  "store it without --secret (`pulumi config set [--path] ...`), or leave it out")


# A `secure:` proxy value (`pulumi config set --secret --path proxy.httpsProxy ...`) would still end
# up in plain text in the user data; credentials are refused (PROXY_CREDENTIALS), so nothing in the
# proxy section needs to be secret.
PROXY_SECRET = ("is encrypted (a `secure:` value), but proxy URLs are written into every node's EC2 user data, which "
                "ec2:DescribeInstanceAttribute shows in plain text, and this program takes no proxy credentials; store "
                "the proxy without --secret and let the proxy authorise the cluster by source address")


def _own_key(p: _Problems, full_key: Any, warnings: list[str]) -> str | None:
    """The key of this project's namespace (`p.namespace`, the project's name) `full_key` names, or None
    (another namespace's key, or refused)."""
    ns = p.namespace
    printable = isinstance(full_key, str) and re.fullmatch(r"[ -~]+", full_key) is not None
    text = full_key if printable else shown(full_key)
    if not isinstance(full_key, str) or full_key.count(":") != 1:
        p.items.append(f"{text}: not a configuration key; keys are <namespace>:<name>, like {ns}:nodePools")
        return None
    namespace, key = full_key.split(":")
    if namespace == ns:
        if key not in TOP_LEVEL_KEYS:
            p.add(key if printable else shown(key), model.unknown_key_message(key, TOP_LEVEL_KEYS))
            return None
        return key
    if namespace not in KNOWN_NAMESPACES:
        # A typo of the namespace (rke_aws:, rke-aws2:) would leave the setting silently unused; so would the
        # keys of a project renamed since (`pulumi new`, a new `name:` in Pulumi.yaml).
        candidates = [f"{ns}:{k}" for k in TOP_LEVEL_KEYS] + ["aws:region", "aws:profile"]
        close = f"{ns}:{key}" if key in TOP_LEVEL_KEYS else model.closest(full_key, candidates)
        hint = f"did you mean {close}? " if close else ""
        p.items.append(f"{text}: unknown namespace "
                       f"{shown(namespace)}, which nothing reads; {hint}this project's keys are {ns}:<key> (its "
                       f"name in Pulumi.yaml), and the providers and engine read {', '.join(n + ':' for n in KNOWN_NAMESPACES)}")
    elif namespace == "kubernetes":
        warnings.append(f"{full_key}: the program's Kubernetes provider is explicit, configured from "
                        f"{ns}:kubeconfig (or the kubeconfig the first server published); it ignores "
                        "kubernetes:* settings")
    return None


def parse(raw: Mapping[str, Any], *, project: str, stack: str, region: str | None,
          secret_keys: Iterable[str] = (), running_version: str | None = None,
          running_etcd_members: int = 0) -> StackConfig:
    """Turn the flat config map into a validated `StackConfig`, or raise `ConfigError`.

    `secret_keys`: the keys the engine marks secret (set with `pulumi config set --secret`).
    `running_version`, `running_etcd_members`: the kubernetesVersion and etcd member count of the
    stack's last outputs (history.read()), if any.
    """
    secret_keys = frozenset(secret_keys)
    ns = project  # the configuration namespace (see NAMESPACE)
    p = _Problems(ns)
    warnings: list[str] = []
    values: dict[str, Any] = {}
    given: set[str] = set()  # keys present, even when refused (no "missing" for them)
    for full_key, value in raw.items():
        key = _own_key(p, full_key, warnings)
        if key is None:
            continue
        given.add(key)
        if full_key in secret_keys and key not in SECRET_KEYS:
            # Neither read nor shown: its text must not reach a message, a tag or a name.
            p.add(key, PROXY_SECRET if key == "proxy" else SECRET_AS_TEXT)
            continue
        if value == "null":
            # What the CLI hands a program for `key: ~` (pulumi/pulumi sdk/go/common/resource/config:
            # a YAML null is an object value whose text is JSON `null`); for a string key that would
            # otherwise be a cluster, or a profile, named "null".
            p.add(key, model.NULL_PROBLEM)
            continue
        if value == "":
            if key not in EMPTY_MEANS_DEFAULT:  # Pulumi.yaml's default "" for those: the program's default
                p.add(key, model.EMPTY_PROBLEM)
            continue
        try:
            values[key] = value if key in SCALAR_KEYS else _decode(value)
        except _TooDeep:
            p.add(key, "nests deeper than the program reads; flatten it")

    if region is None:
        p.items.append("aws:region: missing; set it with `pulumi config set aws:region <region>`")
    elif not isinstance(region, str) or not REGION_RE.fullmatch(region):
        p.items.append(f"aws:region: {shown(region)} is not an AWS region; write it like us-west-2")
        region = None

    # The scalar keys, through the model; the structured ones below, section by section.
    scalars = {k: v for k, v in values.items() if k in SCALAR_KEYS}
    top = p.check(model.StackConfiguration, scalars, ())
    distribution = top.distribution
    if "distribution" not in given:
        p.add("distribution", _missing(model.StackConfiguration, "distribution"))
    if "clusterId" in values:
        cluster_id = top.clusterId
    elif CLUSTER_ID_RE.fullmatch(stack):
        cluster_id = stack
    else:
        cluster_id = None
        p.add("clusterId", f"{_json(stack)} is not a cluster ID (defaulted from the stack name; set clusterId); "
                           f"{model.CLUSTER_ID_RULE}")

    network = _parse_network(p, values.get("network"))
    if network.availability_zones and region and REGION_RE.fullmatch(region):
        for n in network.availability_zones:
            if AZ_RE.fullmatch(n) and n[:-1] != region:
                p.add("network.availabilityZones", f"'{n}' is not a zone of {region}; use zones like {region}a")
    access = _parse_access(p, values.get("access"), warnings)
    pools_raw = values.get("nodePools")
    pools = _parse_pools(p, pools_raw, distribution, warnings) if "nodePools" in values or "nodePools" not in given else ()
    # Topology is judged only on a complete pool list: a pool rejected above would otherwise
    # show up again as "no controlplane" or "no worker".
    if pools and isinstance(pools_raw, list) and len(pools) == len(pools_raw):
        _check_topology(p, pools, warnings, running_etcd_members)
        if not network.bring_your_own and network.nat_gateways == "none":
            for i, pool in enumerate(pools):
                if pool.subnet == "private" and pool.count:
                    p.add(f"nodePools[{i}].subnet", "'private' needs a way out for the bootstrap downloads, but "
                                                    "network.natGateways is none; use single or perAz, or subnet public")

    kver = _kubernetes_version(p, top.kubernetesVersion, distribution, running_version, warnings)

    ccm = _parse_ccm(p, values.get("ccm"), distribution, kver, warnings)
    tags = _parse_tags(p, values.get("tags"))
    backup = _parse_etcd_backup(p, values.get("etcdBackup"), region)
    proxy = _parse_proxy(p, values.get("proxy"))
    if proxy and access.ssm and any(u.startswith("https://") for u in (proxy.http_proxy, proxy.https_proxy)):
        # AWS Systems Manager User Guide, "Configure SSM Agent to use a proxy on Linux nodes".
        warnings.append(f"{ns}:proxy: an https:// proxy, which Session Manager does not support (AWS "
                        "Systems Manager User Guide, \"Configure SSM Agent to use a proxy\"): access.ssm sessions may "
                        "fail; the boot, RKE2 and the CCM are not affected")
    addons = p.check(model.Addons, values.get("addons"), ("addons",))
    control_plane = p.check(model.ControlPlane, values.get("controlPlane"), ("controlPlane",))
    endpoint = control_plane.endpoint
    split = split_server_pools(distribution, pools)
    if split and endpoint == "dns":
        p.add("controlPlane.endpoint", f"'dns' cannot serve split RKE2 server roles (pools {', '.join(split)}): one "
                                       "DNS name answers every port with the same addresses, but the API (6443) runs "
                                       "only on controlplane nodes and joining servers need etcd nodes' supervisors "
                                       "(9345); use nlb (a target group per port), or give every server pool both "
                                       "controlplane and etcd")
    _check_rule_quota(p, access, endpoint, distribution)
    if top.hardening == "cis" and distribution == "rke":
        p.add("hardening", "'cis' applies RKE2's CIS profile; RKE1 clusters are hardened through cluster.yml by hand")
    if distribution == "rke":
        warnings.append(f"{ns}:distribution: rke: {RKE1_EOL}")
        # RKE1 etcd nodes take the snapshots; etcd-only pools share the worker/etcd role.
        etcd_only = [pool.name for pool in pools if pool.is_etcd and not pool.is_controlplane]
        if backup.enabled and etcd_only:
            warnings.append(f"{ns}:etcdBackup: pools {', '.join(etcd_only)} run etcd without controlplane and use "
                            "the worker/etcd role, so every worker node's role may read the etcd snapshots (every "
                            "Secret of the cluster); put etcd with controlplane to keep snapshots off worker nodes")

    ingress = p.check(model.Ingress, values.get("ingress"), ("ingress",))
    rotation = p.check(model.Rotation, values.get("rotation"), ("rotation",))
    _check_ingress(p, ingress.controller, distribution, kver)

    rancher = _parse_rancher(p, values.get("rancher"), "rancher" in given, f"{ns}:rancher" in secret_keys,
                             distribution, cluster_id, pools)

    kubeconfig = top.kubeconfig
    if kubeconfig is not None and not kubeconfig.strip():
        p.add("kubeconfig", "is blank; set it with `pulumi config set --secret kubeconfig < kubeconfig.yaml` or remove it")
        kubeconfig = None
    elif kubeconfig is not None and f"{ns}:kubeconfig" not in secret_keys:
        # Pulumi.yaml cannot declare it `secret: true` (see there), so the program insists instead:
        # a plain-text kubeconfig would sit in the stack file, in git, unencrypted.
        p.add("kubeconfig", "is stored as plain text in the stack file; it holds cluster-admin credentials: "
                            "set it with `pulumi config set --secret kubeconfig < kubeconfig.yaml`")
        kubeconfig = None

    if p.items:
        raise ConfigError(p.items)
    assert distribution and kver and cluster_id and region
    return StackConfig(
        project=project, stack=stack, region=region, distribution=distribution, cluster_id=cluster_id,
        network=network, access=access, node_pools=pools, kubernetes_version=kver, ccm=ccm,
        kubeconfig=Secret(kubeconfig) if kubeconfig else None, tags=tags, protect_servers=top.protectServers,
        warnings=tuple(warnings), endpoint=endpoint, etcd_backup=backup,
        addons=_plain(AddonsConfig, addons), hardening=top.hardening, allow_uninstall=top.allowUninstall,
        confirm_cluster_state=top.confirmClusterState, proxy=proxy, rancher=rancher,
        control_plane=_plain(ControlPlaneConfig, control_plane), ingress=_plain(IngressConfig, ingress),
        rotation=_plain(RotationConfig, rotation), source=top,
    )

