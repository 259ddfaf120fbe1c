"""What one stack key can be: its default and why, its pattern, its range, how its problems read.

The vocabulary settings/args.py declares the keys with (`Msg`, `Whole`, `NonEmpty`, `SchemaPattern`,
`Bool`, `Hours`, `OrUnset`), the defaults with their one-line reasons, the patterns (ASCII, one meaning in
Python's re and ECMA-262: settings/patterns.py) and the "why" helpers that name the rule a refused value
breaks. Pure: no pydantic model lives here.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypeAlias, TypeVar

import annotated_types
from pydantic import BeforeValidator, Strict, StringConstraints
from pydantic.json_schema import WithJsonSchema
from pydantic_core import PydanticCustomError

from . import versions
from .patterns import ci, cidr_regex, literal, whole

# ---- defaults, each with its reason -----------------------------------------------------------

# Three AZs survive the loss of one zone with etcd quorum intact.
DEFAULT_AZ_COUNT = 3
# AWS regions have at most six AZs that are not local zones.
MAX_AZ_COUNT = 6
# 65k addresses: room for the 16 subnet slots the layout in plan/network.py carves.
DEFAULT_VPC_CIDR = "10.0.0.0/16"
# One NAT gateway is the cheapest layout that still gives private nodes a way out.
DEFAULT_NAT: Final = "single"
# Nodes reachable through Session Manager need no SSH port open anywhere.
DEFAULT_SSM = True
# Canonical's Ubuntu images log in as `ubuntu`; RKE's cluster.yml needs the SSH user.
DEFAULT_SSH_USER = "ubuntu"
# gp3 root volume: images, etcd data and container layers fit in 50 GiB for typical nodes.
DEFAULT_ROOT_VOLUME_GB = 50
# A general-purpose size that runs a control plane or a small worker.
DEFAULT_INSTANCE_TYPE = "m6i.large"
# A stack without nodePools (what `pulumi new` writes) gets the smallest layout that survives the loss of a
# server: three servers (etcd quorum tolerates one failure) and two workers, so workloads survive one too.
DEFAULT_NODE_POOLS = ({"name": "server", "roles": ["controlplane", "etcd"], "count": 3},
                      {"name": "agents", "roles": ["worker"], "count": 2})
# On-demand capacity is never taken back by AWS; spot is a pool's explicit choice (workers only).
DEFAULT_MARKET: Final = "on-demand"
# Nodes stay off the internet unless a pool asks for public addresses.
DEFAULT_SUBNET_TIER: Final = "private"
# The operating systems a pool may run (settings/os_images.py OS_IMAGES has one row each, with its sources).
OS_NAMES = ("ubuntu-24.04", "rhel-9", "rocky-9", "sles-15", "sle-micro-6", "al2023")
OsName = Literal["ubuntu-24.04", "rhel-9", "rocky-9", "sles-15", "sle-micro-6", "al2023"]
# What every pool ran before `os` existed: a running stack's nodes keep booting what they booted.
DEFAULT_OS: Final = "ubuntu-24.04"
# The CCM chart version this program's Helm values are written against.
DEFAULT_CCM_CHART_VERSION = versions.CCM_CHART_VERSION
# How the CCM reaches a NEW cluster (a running one keeps what its state records: settings/resolve.py ccm_install).
# RKE2: manifests its servers mirror from SSM, so one `pulumi up` converges and never needs a way into the
# cluster (issue 34.8); RKE1 has no manifest directory: a Helm release through the kubeconfig.
DEFAULT_CCM_INSTALL: Final = {"rke": "helm", "rke2": "manifest"}
DEFAULT_KUBERNETES_VERSION = {"rke": versions.RKE_KUBERNETES_VERSION, "rke2": versions.RKE2_VERSION}
# AWS's EBS gp3 limits.
MIN_ROOT_GB, MAX_ROOT_GB = 8, 16384
# Pools are laid out in fixed address blocks per subnet (see plan/nodes.py).
MAX_POOL_BLOCKS = 8
# IMDS hop limit: 1 keeps instance credentials away from pods on the pod network (the CCM runs on
# the host network); 2 hands the node role to every pod on the node, so it needs a stated reason.
DEFAULT_IMDS_HOP_LIMIT = 1
# dns: a Route 53 private zone whose name resolves to every server (no load balancer to pay for);
# nlb: an internal Network Load Balancer on 9345 and 6443 behind the same name.
DEFAULT_ENDPOINT: Final = "dns"
# etcd snapshots every 6 hours, 28 kept (a week), objects expire after 30 days: RKE2's own
# defaults are 12 h / 5 snapshots, too few to reach back past a bad weekend.
DEFAULT_BACKUP_INTERVAL_HOURS: Final = 6
DEFAULT_BACKUP_RETENTION = 28
DEFAULT_BACKUP_EXPIRE_DAYS = 30
# IAM role and instance profile names (64 characters at most) are "<clusterId>-controlplane-" plus
# Pulumi's 7-character suffix: 64 - 21 leaves 43 for the cluster ID.
MAX_CLUSTER_ID = 43
# AWS allows 50 tags per resource; this program sets up to 6 itself (config.PROGRAM_TAG_KEYS).
MAX_USER_TAGS = 44
CLUSTER_ID_RULE = f"use 1-{MAX_CLUSTER_ID} chars of a-z, 0-9 and -, starting with a letter, not sg-"
# Inbound rules per security group: 60 by default (Amazon VPC quotas, "Inbound or outbound rules per
# security group"). The node group holds one rule for the nodes, two per admin CIDR (22, 6443) and,
# with the NLB endpoint, one per endpoint port; the CCM adds rules to that (cluster-tagged) group
# for every LoadBalancer Service (kubernetes/cloud-provider-aws pkg/providers/v1/aws_loadbalancer.go
# updateInstanceSecurityGroupsForNLB: ports x client CIDRs plus health-check and MTU rules; a Classic
# ELB one rule). 20 stay free for those: about ten single-port NLB Services with the default
# client range.
SG_INBOUND_RULE_QUOTA = 60
CCM_RULE_HEADROOM = 20
MAX_ADMIN_CIDRS = (SG_INBOUND_RULE_QUOTA - CCM_RULE_HEADROOM - 1) // 2  # the dns endpoint; nlb allows fewer
# Admin CIDRs that together cover more public addresses than one /8 (16,777,216: the largest block
# a registry ever assigned to one organisation) are not "your networks": they are treated like
# 0.0.0.0/0. Private, shared (100.64.0.0/10) and other non-public space does not count.
WORLD_ADMIN_PUBLIC_ADDRESSES = 1 << 24
WORLD_ADMIN_DESCRIPTION = "a /8's worth of public addresses"

# ---- patterns (components/settings/patterns.py: ASCII, one meaning in Python's re and ECMA-262) ------------

# The pod and service networks RKE2 and RKE1 use when none is configured (this program configures
# none): a VPC or subnet overlapping them sends the nodes' traffic for those addresses into the
# cluster's overlay instead. RKE2: docs.rke2.io reference/server_config, cluster-cidr and
# service-cidr (rancher/rke2 pkg/cli/cmds/server.go copies k3s's flags and their defaults); RKE1:
# rancher/rke cluster/defaults.go DefaultClusterCIDR, DefaultServiceClusterIPRange.
POD_CIDR, SERVICE_CIDR = "10.42.0.0/16", "10.43.0.0/16"
CLUSTER_NETWORKS = (POD_CIDR, SERVICE_CIDR)
RFC1918_CIDRS = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
# VPC sizes AWS allows are /16../28; the subnet layout needs four more bits, so /24 at most.
MIN_VPC_PREFIX, MAX_VPC_PREFIX = 16, 24
# AWS subnets are /16 to /28.
MIN_SUBNET_PREFIX, MAX_SUBNET_PREFIX = 16, 28

# Security group names may not begin with "sg-" (terraform-provider-aws internal/service/ec2/
# vpc_security_group.go, name / name_prefix validators); pulumi-aws auto-names every group from its
# resource name, "<clusterId>-nodes-<suffix>", so such a cluster ID breaks every group. The text `null` is
# what the CLI hands a program for `clusterId: ~` (config.py refuses it as null): the schema refuses it too.
CLUSTER_ID_PATTERN = whole(rf"(?!sg-|null$)[a-z][a-z0-9-]{{0,{MAX_CLUSTER_ID - 1}}}")
POOL_NAME_PATTERN = whole(r"[a-z][a-z0-9-]{0,30}")
POOL_NAME_RE = re.compile(POOL_NAME_PATTERN)
# Release names as Rancher writes them, canonical only (no leading zeros: v1.033.5 and v1.33.05 name
# no release) and ASCII digits; group 1 is the minor. config.py further accepts only the releases
# components/settings/versions.py knows.
RKE_VERSION_BODY = r"v1\.(0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)-rancher[1-9][0-9]*-[1-9][0-9]*"
RKE2_VERSION_BODY = r"v1\.(0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\+rke2r[1-9][0-9]*"
RKE_VERSION_PATTERN = whole(RKE_VERSION_BODY)
RKE2_VERSION_PATTERN = whole(RKE2_VERSION_BODY)
AMI_PATTERN = whole(r"ami-[0-9a-f]{8,17}")
VPC_ID_PATTERN = whole(r"vpc-[0-9a-f]{8,17}")
SUBNET_ID_PATTERN = whole(r"subnet-[0-9a-f]{8,17}")
INSTANCE_TYPE_PATTERN = whole(r"[a-z][a-z0-9-]{0,30}\.[a-z0-9]{1,30}")
REGION_PATTERN = whole(r"[a-z]{2}(?:-[a-z]+)+-[0-9]")
AZ_PATTERN = whole(r"[a-z]{2}(?:-[a-z]+)+-[0-9][a-z]")
# SemVer numbers have no leading zeros (Helm resolves chart versions as SemVer).
CHART_VERSION_PATTERN = whole(r"(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)")
# An image reference (distribution/reference grammar, lowercase repository) pinned by a tag other
# than `latest`, by a digest, or both (a digest pins even `latest`): `latest` moves, and a CCM image
# must not be newer than the cluster (Kubernetes' version-skew policy).
_IMAGE_REPO = r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
_IMAGE_DIGEST = r"@sha256:[0-9a-f]{64}"
IMAGE_PATTERN = whole(rf"{_IMAGE_REPO}(?::(?!latest$)[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}}(?:{_IMAGE_DIGEST})?|{_IMAGE_DIGEST})")
# S3 general purpose bucket naming rules (AWS S3 User Guide, "General purpose bucket naming
# rules"; terraform-provider-aws internal/service/s3/bucket.go validBucketName): 3-63 lowercase
# letters, digits, dots and hyphens, starting and ending with a letter or digit; no "..", no IP
# address form; reserved prefixes xn--, sthree-, amzn-s3-demo-; reserved suffixes -s3alias,
# --ol-s3, .mrap, --x-s3, --table-s3. And each dot-separated label starts and ends with a letter
# or digit (no ".-" or "-."), the DNS rule for virtual-hosted-style addressing.
S3_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
S3_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
BUCKET_PATTERN = whole(
    "(?!" + "|".join(literal(x) for x in S3_RESERVED_PREFIXES) + ")"
    r"(?![0-9]{1,3}(?:\.[0-9]{1,3}){3}$)"
    "(?!.*(?:" + "|".join(literal(x) for x in S3_RESERVED_SUFFIXES) + ")$)"
    r"(?!.*(?:\.\.|\.-|-\.))"
    r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
# k3s joins folder and name with path.Join, which cleans the path ("a/./b" -> "a/b", "a/../b" ->
# "b"); the node role's grant names the folder as written: every upload would be AccessDenied.
# So no empty (leading, trailing, double /), "." or ".." segment.
_FOLDER_SEGMENT = r"(?!\.{1,2}(?:/|$))[A-Za-z0-9._-]+"
FOLDER_PATTERN = whole(rf"[A-Za-z0-9][A-Za-z0-9._-]*(?:/{_FOLDER_SEGMENT})*")
# A key ARN, not an alias ARN (IAM grants on an alias ARN do not cover the key it points to), in
# the partition of its own region; key IDs are UUIDs, multi-Region keys mrk- and 32 hex digits.
_KMS_KEY_ID = r"(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32})"
KMS_KEY_ARN_PATTERN = whole(
    r"arn:(?:aws:kms:(?!cn-|us-gov-)|aws-us-gov:kms:(?=us-gov-)|aws-cn:kms:(?=cn-))"
    rf"[a-z]{{2}}(?:-[a-z]+)+-[0-9]:[0-9]{{12}}:key/{_KMS_KEY_ID}")
# EC2 key pair names: up to 255 ASCII characters (EC2 API reference, CreateKeyPair/ImportKeyPair
# KeyName; terraform-provider-aws internal/service/ec2/ec2_key_pair.go: length 0-255). Printable
# ones only, and no space at either end (it would not be the key the console shows).
SSH_KEY_NAME_PATTERN = whole(r"[!-~](?:[ -~]{0,253}[!-~])?")
# A Linux user name as useradd (shadow-utils is_valid_user_name) and Ubuntu's adduser NAME_REGEX
# accept it, at most 32 characters (utmp): it is written into a boot script run under `set -eu`
# and into cluster.yml.
SSH_USER_PATTERN = whole(r"[a-z_][a-z0-9_-]{0,31}")
# A path on the machine running `rke up`: any text without control characters.
SSH_KEY_PATH_PATTERN = whole(r"[^\x00-\x1f\x7f]{1,4096}")
# CCM flags: one argv element each, --name or --name=value, the value printable ASCII without
# spaces (a space or a zero-width character inside would make one broken argument, and the CCM
# exits at start). The flags this program sets itself (ccm_values.py) are refused.
PROGRAM_FLAGS = ("--cloud-provider", "--configure-cloud-routes", "--use-service-account-credentials")
FLAG_PATTERN = whole(r"--[a-z0-9][a-z0-9-]*(?:=[!-~]+)?")
FLAG_ITEM_PATTERN = whole(
    "(?!(?:" + "|".join(literal(f) for f in PROGRAM_FLAGS) + ")(?:=|$))" + r"--[a-z0-9][a-z0-9-]*(?:=[!-~]+)?")
# AWS tags (IAM tagKeyType/tagValueType and SSM TagKey/TagValue: letters, digits, separators and
# _ . : / = + - @; EC2, KMS and S3 at least as much): ASCII letters, digits, the space and
# _ . : / = + - @. IAM, SSM and the rest allow Unicode letters too, but `\p{L}` means nothing to
# Python's re and needs a flag in ECMA-262, so neither the program nor an editor could check it
# the same way: ASCII only. Keys 1-128 characters without a space at either end, values 0-256.
TAG_CHARS = r"[A-Za-z0-9 _.:/=+@-]"
_TAG_EDGE = r"[A-Za-z0-9_.:/=+@-]"
# Keys this program sets, or AWS reserves, compared as IAM compares keys (case-insensitively):
# aws:* (AWS), Name, kubernetes.io/cluster/* and KubernetesCluster (a second cluster tag stops the
# CCM, "ClusterID tags did not match": kubernetes/cloud-provider-aws pkg/providers/v1/tags.go),
# kubernetes.io/role/* and rke-aws/* (this program's).
RESERVED_TAG_PREFIXES = ("aws:", "kubernetes.io/cluster/", "kubernetes.io/role/", "rke-aws/")
RESERVED_TAG_KEYS = ("Name", "KubernetesCluster")
TAG_KEY_PATTERN = whole(
    "(?!(?:" + "|".join(ci(x) for x in RESERVED_TAG_PREFIXES) + "))"
    "(?!(?:" + "|".join(ci(x) for x in RESERVED_TAG_KEYS) + ")$)"
    rf"{_TAG_EDGE}(?:{TAG_CHARS}{{0,126}}{_TAG_EDGE})?")
TAG_VALUE_PATTERN = whole(rf"{TAG_CHARS}{{0,256}}")
# imdsHopLimitReason becomes a tag value and must say something.
REASON_PATTERN = whole(rf"(?=[ ]*{_TAG_EDGE}){TAG_CHARS}{{1,256}}")
# Canonical IPv4 CIDRs only (no netmask, zero-padded or host-bits form; AWS answers a non-canonical
# one with InvalidParameterValue or stores another text, and every later diff differs).
ADMIN_CIDR_PATTERN = whole(cidr_regex(["0.0.0.0/0"], 0, 32))
VPC_CIDR_PATTERN = whole(cidr_regex(RFC1918_CIDRS, MIN_VPC_PREFIX, MAX_VPC_PREFIX, CLUSTER_NETWORKS))
SUBNET_CIDR_PATTERN = whole(cidr_regex(RFC1918_CIDRS, MIN_SUBNET_PREFIX, MAX_SUBNET_PREFIX, CLUSTER_NETWORKS))
# Numbers and booleans as text: what `pulumi config set --path a.b 3` stores.
INT_TEXT_PATTERN = whole(r"-?(?:0|[1-9][0-9]*)")
BOOL_TEXTS = ("true", "false", "True", "False", "TRUE", "FALSE")
# confirmClusterState: codes history.Statement prints (<topic>-<10 hex>), separated by spaces or commas.
CONFIRM_CODES_PATTERN = whole(r"[a-z]+-[0-9a-f]{10}(?:[ ,]+[a-z]+-[0-9a-f]{10})*")

# ---- proxy (the `proxy` section) ----
# A proxy URL the boot scripts' curl, Go's net/http (RKE2, containerd, the CCM, the EBS CSI driver)
# and Docker all read the same way: scheme http or https (Go's http.ProxyFromEnvironment and curl
# take both), a host name or IPv4 address, an explicit port (without one curl assumes 1080, Go 80 or
# 443: curl's --proxy documentation, "If the port number is not specified in the proxy string, it is
# assumed to be 1080"), nothing after it but an optional "/". No user:password@: the URL is written
# into EC2 user data, which DescribeInstanceAttribute shows in plain text (config.py says so).
_IPV4 = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}"
_HOST_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
# A DNS name of at most 253 characters, not made of digits and dots only (that is an address).
_HOST_NAME = rf"(?![0-9.]+(?:[:/]|$))(?=[A-Za-z0-9.-]{{1,253}}(?:[:/]|$)){_HOST_LABEL}(?:\.{_HOST_LABEL})*"
_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
PROXY_URL_PATTERN = whole(rf"https?://(?:{_IPV4}|{_HOST_NAME}):{_PORT}/?")
# NO_PROXY entries curl and Go read alike: a host name, a .domain suffix (both match subdomains), an
# IPv4 address or a canonical IPv4 CIDR (curl >= 7.86; Go's golang.org/x/net/http/httpproxy). Not
# `*` (bypasses the proxy for everything), not `*.domain` (Go only; curl would take it literally),
# no host:port (Go only).
NO_PROXY_ITEM_PATTERN = whole(rf"{_IPV4}|{cidr_regex(['0.0.0.0/0'], 0, 32)}|\.?{_HOST_NAME}")
MAX_NO_PROXY_ITEMS = 32
# The joined list is written several times into every node's user data (boot script, RKE2's or
# Docker's environment): 2048 characters keeps the worst case inside USER_DATA_BUDGET.
MAX_NO_PROXY_CHARS = 2048


@dataclass(frozen=True)
class Msg:
    """How a field's problems read, and how the reference shows it."""

    what: str = ""  # what a valid value is: "an EC2 key pair name"
    kind: str = ""  # for allowed values: "a NAT layout" -> '"x" is not a NAT layout; use ...'
    allowed: str = ""  # the allowed values as the message lists them (default: "a or b")
    pattern: str = ""  # message for a value the pattern refuses ({json}, {value})
    type: str = ""  # message for a value of the wrong type ({json})
    item: str = ""  # message for a bad item of a list or map ({json}, {repr})
    missing: str = ""  # message when a required key is absent
    default: str = ""  # the default as the reference shows it, when it is not a plain value
    reason: str = ""  # why the default
    type_name: str = ""  # the type as the reference shows it
    declare: bool = False  # declared in Pulumi.yaml (scalar top-level keys)
    why: Callable[[str], str | None] | None = None  # which rule a value the pattern refuses breaks
    # A value never to be shown (it may carry a credential): (code, message) instead of the pattern's message.
    hide: Callable[[str], tuple[str, str] | None] | None = None


INT_TEXT_RE = re.compile(INT_TEXT_PATTERN)


def numeric_string(value: Any) -> Any:
    # `pulumi config set --path a.b 3` stores the text "3"; ASCII digits only (int() would also
    # take "٣" or " 3 ", which the schema could not say the same way).
    if isinstance(value, str) and INT_TEXT_RE.fullmatch(value):
        return int(value)
    return value


def boolean_string(value: Any) -> Any:
    if isinstance(value, str) and value in BOOL_TEXTS:
        return value.lower() == "true"
    return value


# A key's constrained type is written the way a type checker reads it, `Annotated[int, Whole(0, 500)]`: the
# Python type first, then metadata objects pydantic expands into its own constraints (annotated_types'
# GroupedMetadata, as pydantic's StringConstraints is). A call in the type position would be opaque to mypy.

@dataclass(frozen=True)
class Whole(annotated_types.GroupedMetadata):
    """An integer from `lo` to `hi`, given as a number or its decimal text; `_message` names the range."""

    lo: int
    hi: int

    def __iter__(self) -> Iterator[object]:
        yield Strict()
        # Constraints before the string conversion: they land on the integer (and in the schema as minimum/maximum).
        yield annotated_types.Ge(self.lo)
        yield annotated_types.Le(self.hi)
        yield BeforeValidator(numeric_string)


Bool = Annotated[bool, Strict(), BeforeValidator(boolean_string)]


def _whole_hours(value: Any) -> Any:
    if isinstance(value, bool):  # True == 1 would pass as one hour
        raise PydanticCustomError("literal_error", "a boolean is not a number of hours")
    return numeric_string(value)


# Snapshot intervals a cron `0 */N * * *` spaces evenly over a day.
HourCount = Literal[1, 2, 3, 4, 6, 8, 12, 24]
HOURS: tuple[int, ...] = typing.get_args(HourCount)
Hours = Annotated[HourCount, BeforeValidator(_whole_hours)]


@dataclass(frozen=True)
class NonEmpty(annotated_types.GroupedMetadata):
    """A non-empty string, matching `pattern` when given: `Annotated[str, NonEmpty(PATTERN)]`."""

    pattern: str | None = None
    max_length: int | None = None

    def __iter__(self) -> Iterator[object]:
        yield Strict()
        yield from StringConstraints(min_length=1, max_length=self.max_length, pattern=self.pattern)


@dataclass(frozen=True)
class SchemaPattern(annotated_types.GroupedMetadata):
    """A string checked by config.py (its message depends on other keys, or needs more words than
    a pattern's); the schema still says the form, and tests/tooling/test_schema.py holds both to one verdict."""

    pattern: str

    def __iter__(self) -> Iterator[object]:
        yield Strict()
        yield WithJsonSchema({"type": "string", "pattern": self.pattern})


def shown(value: Any, limit: int = 80) -> str:
    """A value as a message shows it: 'text' when it is plain printable ASCII, else JSON (control,
    zero-width and non-ASCII characters escaped); long values cut."""
    if isinstance(value, str) and re.fullmatch(r"[ -&(-~]*", value) and len(value) <= limit:
        return f"'{value}'"
    text = json_text(value)
    size = len(value) if isinstance(value, str) else len(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({size} characters)"


def number(value: Any) -> str:
    """A number as a message shows it, as the user wrote it: 6, not 6.0. Numbers read back from the
    stack's last outputs are doubles (a protobuf Struct: pulumi/pulumi sdk/python/lib/pulumi/runtime/
    rpc.py), so an exported 6 comes back 6.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def json_text(value: Any) -> str:
    """json.dumps that cannot fail: hostile input nests deeper than the encoder recurses."""
    try:
        return json.dumps(value)
    except (RecursionError, TypeError, ValueError):
        return "<a value nested too deeply to show>"


NULL_PROBLEM = "is null (YAML `~`, `null` or nothing after the colon); give a value, or remove the key for its default"
# What the Pulumi CLI hands a program today for a top-level `key: ~` (offline/engine/harness.py says why).
EMPTY_PROBLEM = ("is empty (what the Pulumi CLI passes for `key: ~` or nothing after the colon); give a value, or remove "
                 "the key for its default")


_T = TypeVar("_T")
if TYPE_CHECKING:
    # A key whose default is None ("not set"): its attribute reads a value or None, while a value given
    # must have the key's type (pydantic validates what is given, never the default; `key: ~` is refused).
    # Type checkers see the Optional; pydantic sees the bare type, so None stays an invalid input.
    OrUnset: TypeAlias = _T | None
else:
    class OrUnset:
        def __class_getitem__(cls, item: Any) -> Any:
            return item



# ---- why a pattern refused a value (the verdict is the pattern's; these only name the rule) ------

def bucket_why(v: str) -> str | None:
    if not 3 <= len(v) <= 63:
        return f"has {len(v)} characters (3 to 63)"
    if not re.fullmatch(r"[a-z0-9.-]+", v):
        return "has characters other than lowercase letters, digits, dots and hyphens"
    if not (v[0].isalnum() and v[-1].isalnum()):
        return "does not start and end with a letter or digit"
    for bad in ("..", ".-", "-."):
        if bad in v:
            return f"contains '{bad}' (each dot-separated label starts and ends with a letter or digit)"
    if re.fullmatch(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}", v):
        return "is formatted as an IP address"
    for pre in S3_RESERVED_PREFIXES:
        if v.startswith(pre):
            return f"starts with '{pre}', a prefix S3 reserves"
    for suf in S3_RESERVED_SUFFIXES:
        if v.endswith(suf):
            return f"ends with '{suf}', a suffix S3 reserves"
    return None


def folder_why(v: str) -> str | None:
    segments = v.split("/")
    if any(s == "" for s in segments):
        return "has an empty segment (a leading, trailing or double /)"
    if any(s in (".", "..") for s in segments):
        return "has a '.' or '..' segment (k3s cleans the path, the node role's grant does not)"
    return None


def cluster_id_why(v: str) -> str | None:
    return "starts with 'sg-', which AWS refuses as the start of a security group name" if v.startswith("sg-") else None


def image_why(v: str) -> str | None:
    if re.search(r":latest$", v):
        return "is pinned to 'latest', which moves (a CCM must not become newer than the cluster)"
    return None


def kms_why(v: str) -> str | None:
    m = re.fullmatch(r"arn:([a-z-]+):kms:([a-z0-9-]+):.*", v)
    if m and m.group(1) in ("aws", "aws-us-gov", "aws-cn"):
        region = m.group(2)
        want = "aws-us-gov" if region.startswith("us-gov-") else "aws-cn" if region.startswith("cn-") else "aws"
        if want != m.group(1):
            return f"names partition {m.group(1)}, but {region} is in {want}"
    return None




# New RKE2 stacks get Traefik where their release offers it: RKE2's own default for new clusters from
# v1.36, while ingress-nginx is retired upstream (March 2026), gets no more updates and cannot run alone
# from v1.37 (versions.RKE2_INGRESS_NGINX_ALONE_REMOVED_MINOR).
DEFAULT_INGRESS_CONTROLLER: Final = "traefik"


def proxy_url_why(v: str) -> str | None:
    if not re.fullmatch(r"[!-~]*", v):
        return "has a space, a control or a non-ASCII character"
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9+.-]*)://(.*)", v)
    if not m:
        return "has no scheme:// (write http://host:port)"
    if m.group(1) not in ("http", "https"):
        return f"has scheme {m.group(1)}; the proxy variables take http or https"
    port = re.fullmatch(r"[^/]*:([0-9]+)/?", m.group(2))
    if not port:
        return "has no :port, or something after the port (a path, query or fragment)"
    if not 1 <= int(port.group(1)) <= 65535:
        return f"has port {port.group(1)} (1 to 65535)"
    return None


def no_proxy_why(v: str) -> str | None:
    if v == "*":
        return "would send nothing through the proxy"
    if v.startswith("*."):
        return "is a wildcard only Go reads; write the domain with a leading dot (.example.com)"
    if re.fullmatch(r"[^/]+:[0-9]+", v):
        return "has a port, which only Go reads"
    if re.fullmatch(r"[0-9.]+/[0-9]+", v):
        return "is not a canonical IPv4 CIDR"
    return None





# Rancher's address: https only (the API token travels with every call), a host name or IPv4 address
# and an optional port, nothing after it but an optional "/". The rancher2 provider keeps only scheme,
# user info, host and port: it empties the path and calls <host>/v3 (terraform-provider-rancher2
# rancher2/util.go NormalizeURL, config.go rancher2ClientAPIVersion), so a path would be dropped in
# silence while doctor and the outputs kept it. The host is a DNS name Go's resolver takes (labels of
# 1-63 letters, digits and inner hyphens, at most 253 characters: Go net/dnsclient.go isDomainName
# answers "no such host" for anything else) and the port one Go can dial (1-65535: url.Parse checks
# only that it is digits). No user info, query or fragment (config.py refuses those without echoing).
RANCHER_URL_PATTERN = whole(rf"https://(?:{_IPV4}|{_HOST_NAME})(?::{_PORT})?/?")
RANCHER_URL_RE = re.compile(RANCHER_URL_PATTERN)
RANCHER_URL_WHAT = ("Rancher's https address like https://rancher.example.com or https://rancher.example.com:8443 "
                    "(a host and an optional port; no path, query, fragment or credentials)")
# The name the imported cluster gets in Rancher: a lowercase DNS label (RFC 1123), the rule Rancher's
# provisioning clusters follow; kept for imported ones too so the name works in both of Rancher's APIs.
# Not `local`: the name every Rancher gives the cluster it runs in (rancher/rancher pkg/data/dashboard/
# cluster_data.go), and Rancher refuses a second cluster of a name it has, letter case ignored
# (pkg/api/norman/store/cluster/cluster_store.go canUseClusterName).
RANCHER_LOCAL_CLUSTER: Final = "local"
RANCHER_CLUSTER_NAME_PATTERN = whole(rf"(?!{RANCHER_LOCAL_CLUSTER}$)[a-z0-9](?:[a-z0-9-]{{0,61}}[a-z0-9])?")
# Who writes the RKE2 upgrade Plans once the cluster is registered: this program (its own
# system-upgrade-controller, Rancher's version management off), or Rancher (its own SUC in cattle-system).
DEFAULT_RANCHER_UPGRADES: Final = "rke-aws"


def rancher_url_why(v: str) -> str | None:
    """Which rule a refused rancher.url breaks (config.py has already refused, unseen, one with @, ? or #)."""
    if not re.fullmatch(r"[!-~]*", v):
        return "has a space, a control or a non-ASCII character"
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)(.*)", v)
    if not m:
        return "has no https:// (write https://rancher.example.com)"
    if m.group(1).lower() != "https":
        return "is not https (the API token would cross the network in clear text)"
    if m.group(1) != "https":
        return "has its scheme in capitals (write https://)"
    host, _, port = m.group(2).partition(":")
    path = m.group(3)
    if path not in ("", "/"):
        return (f"has a path ({path}), which the rancher2 provider drops: it calls <host>/v3 whatever follows the "
                "host (terraform-provider-rancher2 rancher2/util.go NormalizeURL); Rancher answers at its host's root")
    if ":" in m.group(2) and not re.fullmatch(r"[1-9][0-9]{0,4}", port):
        return f"has port '{port}' (write 1 to 65535, or leave the port out for 443)"
    if port and int(port) > 65535:
        return f"has port {port} (1 to 65535)"
    labels = host.split(".")
    if not re.fullmatch(r"[A-Za-z0-9.-]*", host):
        return "has a host name with characters other than letters, digits, '.' and '-'"
    if len(host) > 253:
        return f"has a host name of {len(host)} characters (at most 253)"
    if any(not label for label in labels):
        return "has an empty DNS label (two dots in a row, or a dot at either end)"
    bad = next((label for label in labels if len(label) > 63), None)
    if bad:
        return f"has a DNS label of {len(bad)} characters (at most 63)"
    bad = next((label for label in labels if label.startswith("-") or label.endswith("-")), None)
    if bad:
        return f"has a DNS label that starts or ends with '-' ({bad})"
    return None


def rancher_cluster_name_why(v: str) -> str | None:
    if v == RANCHER_LOCAL_CLUSTER:
        return ("is the name every Rancher gives the cluster it runs in, and Rancher refuses a second cluster of a "
                "name it has")
    return None



# ---- values that may carry a credential: refused without ever being shown --------------------------

PROXY_CREDENTIALS = (
    "holds credentials (user:password@): the proxy URL is written into every node's EC2 user data, which "
    "anyone allowed ec2:DescribeInstanceAttribute reads in plain text, so this program does not take them; "
    "let the proxy authorise the cluster by source address (the VPC CIDR or the node security group)")
RANCHER_URL_HIDDEN = (
    "holds user info (user:password@), a query or a fragment, not shown here as it may carry a credential; write "
    "Rancher's address alone, like https://rancher.example.com: the API token (rancher.token) authenticates")


def proxy_credentials(v: str) -> tuple[str, str] | None:
    return ("proxy.credentials", PROXY_CREDENTIALS) if "@" in v else None


def rancher_url_hidden(v: str) -> tuple[str, str] | None:
    return ("rancher.url-hidden", RANCHER_URL_HIDDEN) if any(c in v for c in "@?#") else None


def rancher_url_problem(url: str) -> str | None:
    """Why `url` may not be rancher.url, without ever showing it when it could carry a credential
    (user info, a query or a fragment); None when it is accepted. The message follows the key name."""
    if rancher_url_hidden(url):
        return RANCHER_URL_HIDDEN
    if RANCHER_URL_RE.fullmatch(url):
        return None
    reason = rancher_url_why(url)
    return f"{shown(url)} {reason or 'is not valid'}; expected {RANCHER_URL_WHAT}"


# Agents rotation may have down at once (components/ops/rotate/): kops' default for a rolling update
# without surge (maxUnavailable 1, kops docs/operations/rolling-update.md); servers always go one at a time.
DEFAULT_MAX_UNAVAILABLE_AGENTS = 1
