"""The stack configuration as one typed model: keys, types, defaults and why, allowed values,
ranges, patterns and descriptions, in one place.

The model checks what one key can check alone (its type, range, allowed values, pattern, unknown
keys); config.py keeps the rules that need several keys or a look-up, and turns the result into
the frozen objects components receive. From the model come the JSON Schema editors use for stack
files (schema/stack-config.schema.json), the README's configuration reference and the keys
Pulumi.yaml declares (offline/schema.py writes them; tests fail when one drifts).

Messages keep the program's style, `rke-aws:<key path>: <value> <what is wrong>; <what is allowed>`:
`Msg` beside a field says how its value is described.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypeAlias, TypeVar

import annotated_types
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, StringConstraints, ValidationError
from pydantic.fields import FieldInfo
from pydantic.json_schema import WithJsonSchema
from pydantic_core import ErrorDetails, PydanticCustomError

from ..diagnostics import suggest
from . import versions
from .patterns import ci, cidr_regex, int_set_regex, literal, whole

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
# The CCM chart version this program's Helm values are written against.
DEFAULT_CCM_CHART_VERSION = versions.CCM_CHART_VERSION
# A Helm release tracked in the stack; manifest mode is the RKE2 alternative without a kubeconfig.
DEFAULT_CCM_INSTALL: Final = "helm"
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


INT_TEXT_RE = re.compile(INT_TEXT_PATTERN)


def _numeric_string(value: Any) -> Any:
    # `pulumi config set --path a.b 3` stores the text "3"; ASCII digits only (int() would also
    # take "٣" or " 3 ", which the schema could not say the same way).
    if isinstance(value, str) and INT_TEXT_RE.fullmatch(value):
        return int(value)
    return value


def _boolean_string(value: Any) -> Any:
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
        yield BeforeValidator(_numeric_string)


Bool = Annotated[bool, Strict(), BeforeValidator(_boolean_string)]


def _whole_hours(value: Any) -> Any:
    if isinstance(value, bool):  # True == 1 would pass as one hour
        raise PydanticCustomError("literal_error", "a boolean is not a number of hours")
    return _numeric_string(value)


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


class _Section(BaseModel):
    """Every key is optional: a field's default (often None, "not set") is not validated, a value
    given must have the field's type. Whether a key is required is config.py's rule (its message
    names what to set). Patterns run on Python's re, which the JSON Schema validators use too (the
    default Rust engine has no look-ahead; components/settings/patterns.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True, regex_engine="python-re")


# ---- why a pattern refused a value (the verdict is the pattern's; these only name the rule) ------

def _bucket_why(v: str) -> str | None:
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


def _folder_why(v: str) -> str | None:
    segments = v.split("/")
    if any(s == "" for s in segments):
        return "has an empty segment (a leading, trailing or double /)"
    if any(s in (".", "..") for s in segments):
        return "has a '.' or '..' segment (k3s cleans the path, the node role's grant does not)"
    return None


def _cluster_id_why(v: str) -> str | None:
    return "starts with 'sg-', which AWS refuses as the start of a security group name" if v.startswith("sg-") else None


def _image_why(v: str) -> str | None:
    if re.search(r":latest$", v):
        return "is pinned to 'latest', which moves (a CCM must not become newer than the cluster)"
    return None


def _kms_why(v: str) -> str | None:
    m = re.fullmatch(r"arn:([a-z-]+):kms:([a-z0-9-]+):.*", v)
    if m and m.group(1) in ("aws", "aws-us-gov", "aws-cn"):
        region = m.group(2)
        want = "aws-us-gov" if region.startswith("us-gov-") else "aws-cn" if region.startswith("cn-") else "aws"
        if want != m.group(1):
            return f"names partition {m.group(1)}, but {region} is in {want}"
    return None


class Network(_Section):
    """network: a VPC this program creates (CIDR keys), or yours (ID keys)."""

    vpcCidr: Annotated[str, SchemaPattern(VPC_CIDR_PATTERN), Msg(what="an IPv4 CIDR like 10.0.0.0/16", reason="room for the 16 subnet slots the layout carves", type_name="CIDR")] = Field(
        DEFAULT_VPC_CIDR, description=f"VPC CIDR: RFC 1918, /16 to /24, canonical, not overlapping RKE's pod and service networks ({POD_CIDR}, {SERVICE_CIDR}).")
    availabilityZones: OrUnset[Annotated[Any, WithJsonSchema({"anyOf": [
        {"type": "integer", "minimum": 1, "maximum": MAX_AZ_COUNT},
        {"type": "string", "pattern": whole(int_set_regex(range(1, MAX_AZ_COUNT + 1)))},
        {"type": "array", "items": {"type": "string", "pattern": AZ_PATTERN}, "minItems": 1, "maxItems": MAX_AZ_COUNT,
         "uniqueItems": True}]}),
        Msg(default=f"`{DEFAULT_AZ_COUNT}` (bring-your-own: the subnets' zones)", type_name="int or list",
            reason="three zones survive the loss of one with etcd quorum intact")]] = Field(
        None, description=f"Number of zones (1-{MAX_AZ_COUNT}, looked up) or explicit zone names.")
    natGateways: Annotated[Literal["none", "single", "perAz"], Msg(kind="a NAT layout", allowed="none, single, perAz", reason="the cheapest layout that still gives private nodes a way out")] = Field(
        DEFAULT_NAT, description="NAT layout for private subnets (none only with public pools).")
    publicSubnetCidrs: OrUnset[Annotated[list[Annotated[str, SchemaPattern(SUBNET_CIDR_PATTERN)]], Msg(what="IPv4 CIDRs", default="derived", type_name="list of CIDRs"),
                                 WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_CIDR_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="One public subnet per zone, inside the VPC, non-overlapping (give both lists or neither).")
    privateSubnetCidrs: OrUnset[Annotated[list[Annotated[str, SchemaPattern(SUBNET_CIDR_PATTERN)]], Msg(what="IPv4 CIDRs", default="derived", type_name="list of CIDRs"),
                                  WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_CIDR_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="One private subnet per zone, inside the VPC, non-overlapping (give both lists or neither).")
    vpcId: OrUnset[Annotated[str, NonEmpty(VPC_ID_PATTERN), Msg(what="a VPC ID like vpc-0123456789abcdef0", type_name="VPC ID")]] = Field(
        None, description="Bring-your-own VPC (with publicSubnetIds and privateSubnetIds; excludes the CIDR keys and natGateways).")
    publicSubnetIds: OrUnset[Annotated[list[Annotated[str, SchemaPattern(SUBNET_ID_PATTERN)]], Msg(what="subnet IDs like subnet-0123456789abcdef0", type_name="list of subnet IDs"),
                               WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_ID_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="Bring-your-own public subnets, one per zone, in zone order.")
    privateSubnetIds: OrUnset[Annotated[list[Annotated[str, SchemaPattern(SUBNET_ID_PATTERN)]], Msg(what="subnet IDs like subnet-0123456789abcdef0", type_name="list of subnet IDs"),
                                WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": SUBNET_ID_PATTERN}, "uniqueItems": True})]] = Field(
        None, description="Bring-your-own private subnets, one per zone, in zone order.")


class Access(_Section):
    """access: how people reach the nodes."""

    adminCidrs: Annotated[list[Annotated[str, SchemaPattern(ADMIN_CIDR_PATTERN)]], Msg(what="IPv4 CIDRs like 203.0.113.0/24", type_name="list of CIDRs"),
                          WithJsonSchema({"type": "array", "items": {"type": "string", "pattern": ADMIN_CIDR_PATTERN},
                                          "uniqueItems": True, "maxItems": MAX_ADMIN_CIDRS})] = Field(
        [], description=f"Sources allowed to reach SSH (22) and the API (6443); canonical, unique, at most {MAX_ADMIN_CIDRS} "
                        f"(security group rule quota); together no more than {WORLD_ADMIN_DESCRIPTION} without allowWorldAdmin.")
    sshKeyName: OrUnset[Annotated[str, NonEmpty(SSH_KEY_NAME_PATTERN, max_length=255), Msg(what="an EC2 key pair name: 1-255 printable ASCII characters, no space at either end")]] = Field(
        None, description="EC2 key pair for the nodes, looked up at plan time (changing it replaces every node: refused by the quorum guard).")
    sshUser: Annotated[str, NonEmpty(SSH_USER_PATTERN, max_length=32), Msg(what="a Linux user name: 1-32 characters of a-z, 0-9, _ and -, starting with a letter or _", reason="Canonical's Ubuntu images log in as ubuntu")] = Field(
        DEFAULT_SSH_USER, description="Login user written into cluster.yml and the RKE1 boot script.")
    sshKeyPath: OrUnset[Annotated[str, NonEmpty(SSH_KEY_PATH_PATTERN), Msg(what="a path to the private key for rke up, without control characters")]] = Field(
        None, description="Private key path written into cluster.yml (ssh_key_path).")
    ssm: Annotated[Bool, Msg(reason="nodes reachable through Session Manager need no SSH port open")] = Field(
        DEFAULT_SSM, description="Session Manager on the nodes (an inline policy with the agent's actions only).")
    allowWorldAdmin: Annotated[Bool, Msg()] = Field(
        False, description="Allow adminCidrs that open the admin ports to the internet (0.0.0.0/0, or pieces of it; warned).")


Role = Literal["controlplane", "etcd", "worker"]


class NodePool(_Section):
    """nodePools[i]: a group of identical nodes."""

    name: OrUnset[Annotated[str, NonEmpty(POOL_NAME_PATTERN), Msg(what="1-31 chars of a-z, 0-9 and -, starting with a letter", missing="missing; every pool needs a name")]] = Field(
        None, description="Pool name (a-z0-9-, unique).")
    roles: OrUnset[Annotated[Annotated[list[Role], Field(min_length=1)], Msg(
        kind="a role", item="{repr} is not a role; use controlplane, etcd or worker",
        type="{json} is not a non-empty list; use a list of controlplane, etcd or worker",
        missing="missing; list the pool's roles from controlplane, etcd and worker", type_name="list")]] = Field(
        None, description="Subset of controlplane, etcd, worker. RKE2: a pool with controlplane or etcd runs "
        "servers; one with only one of them runs split roles (etcd-only or control-plane-only servers; needs "
        "controlPlane.endpoint nlb).")
    count: OrUnset[Annotated[int, Whole(0, 500), Msg(missing="missing; give the number of nodes (0 to 500)")]] = Field(
        None, description="Number of nodes, 0-500.")
    instanceType: Annotated[str, NonEmpty(INSTANCE_TYPE_PATTERN), Msg(what="an EC2 instance type like m6i.large", reason="a general-purpose size that runs a control plane or a small worker")] = Field(
        DEFAULT_INSTANCE_TYPE, description="EC2 instance type, looked up at plan time (offered in the pool's zones, the image's architecture).")
    subnet: Annotated[Literal["private", "public"], Msg(kind="a subnet tier", reason="nodes stay off the internet unless asked")] = Field(
        DEFAULT_SUBNET_TIER, description="Subnet tier; public nodes get a public IP.")
    rootVolumeGb: Annotated[int, Whole(MIN_ROOT_GB, MAX_ROOT_GB), Msg(reason="images, etcd data and container layers fit for typical nodes")] = Field(
        DEFAULT_ROOT_VOLUME_GB, description=f"Encrypted gp3 root volume size ({MIN_ROOT_GB}-{MAX_ROOT_GB}).")
    ami: OrUnset[Annotated[str, NonEmpty(AMI_PATTERN), Msg(what="an AMI ID like ami-0123456789abcdef0", default="latest Ubuntu 24.04 LTS for the instance type's architecture, amd64 or arm64 (Canonical, per partition)", type_name="AMI ID")]] = Field(
        None, description="Node image, looked up at plan time (its architecture and virtualization must suit instanceType).")
    ipBlock: OrUnset[Annotated[int, Whole(0, MAX_POOL_BLOCKS - 1), Msg(default="lowest free block")]] = Field(
        None, description=f"Address block 0-{MAX_POOL_BLOCKS - 1} (see \"Node names and addresses\").")
    imdsHopLimit: Annotated[int, Whole(1, 2), Msg(reason="keeps the node role's credentials away from pods on the pod network")] = Field(
        DEFAULT_IMDS_HOP_LIMIT, description="IMDS hop limit; 2 lets every pod take the node role's credentials.")
    imdsHopLimitReason: OrUnset[Annotated[str, SchemaPattern(REASON_PATTERN), Msg(what="why pods need the node role")]] = Field(
        None, description="Required with imdsHopLimit 2; becomes an instance tag.")
    market: Annotated[Literal["on-demand", "spot"], Msg(kind="a market", reason="capacity AWS never takes back")] = Field(
        DEFAULT_MARKET, description="spot: persistent spot requests that stop on interruption and keep the node's "
                                    "address and name (worker-only pools, RKE1 ones in private subnets; fixed for running nodes).")


class Ccm(_Section):
    """ccm: the aws-cloud-controller-manager."""

    chartVersion: Annotated[str, NonEmpty(CHART_VERSION_PATTERN), Msg(what="a chart version like 0.0.11", reason="the version this program's Helm values are written against")] = Field(
        DEFAULT_CCM_CHART_VERSION, description="aws-cloud-controller-manager chart version.")
    leaderMigration: Annotated[Bool, Msg()] = Field(
        False, description="In-tree to out-of-tree migration phase (Kubernetes 1.26 and older only).")
    extraArgs: Annotated[list[Annotated[str, SchemaPattern(FLAG_ITEM_PATTERN)]], Msg(what="flags like --v=4", type_name="list")] = Field(
        [], description="Extra CCM flags, one --name=value each (ASCII, no spaces; not the flags this program sets).")
    install: Annotated[Literal["helm", "manifest"], Msg(kind="an install mode", reason="a Helm release the stack tracks")] = Field(
        DEFAULT_CCM_INSTALL, description="manifest: RKE2 manifests mirrored from SSM instead of a Release.")
    image: OrUnset[Annotated[str, NonEmpty(IMAGE_PATTERN), Msg(
        what="an image reference pinned by a tag other than latest and/or an @sha256: digest, like "
             "registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.4",
        default="by minor", type_name="image ref", why=_image_why)]] = Field(
        None, description="CCM image repository:tag (or @sha256:digest) instead of versions.CCM_IMAGE_TAGS; not latest.")


class ControlPlane(_Section):
    """controlPlane: how nodes and clients reach the servers."""

    endpoint: Annotated[Literal["dns", "nlb"], Msg(kind="an endpoint kind", reason="a Route 53 name over the servers costs no load balancer")] = Field(
        DEFAULT_ENDPOINT, description="The control-plane endpoint: Route 53 name over the servers, or an internal NLB.")


class EtcdBackup(_Section):
    """etcdBackup: etcd snapshots to S3."""

    enabled: Annotated[Bool, Msg(reason="snapshots are the way back after losing the control plane")] = Field(
        True, description="etcd snapshots to S3.")
    bucket: OrUnset[Annotated[str, NonEmpty(BUCKET_PATTERN), Msg(what="an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens, "
                                                    "by S3's general purpose bucket naming rules)",
                                               default="created per cluster", type_name="bucket name", why=_bucket_why)]] = Field(
        None, description="An existing bucket to write to instead (then no bucket is created).")
    folder: OrUnset[Annotated[str, NonEmpty(FOLDER_PATTERN, max_length=200), Msg(what="a key prefix like prod/etcd (no leading, trailing or double /, no . or .. segment)",
                                                               default="`clusterId`", type_name="key prefix", why=_folder_why)]] = Field(
        None, description="Folder in the bucket; the node role may touch nothing outside it.")
    intervalHours: Annotated[Hours, Msg(kind="an interval that divides a day", allowed=", ".join(map(str, HOURS[:-1])) + f" or {HOURS[-1]}",
                                        type_name="int", reason="RKE2's own 12 h reaches back too little")] = Field(
        DEFAULT_BACKUP_INTERVAL_HOURS, description="Hours between snapshots (RKE2 cron 0 */N * * *, RKE1 interval_hours).")
    retention: Annotated[int, Whole(1, 1000), Msg(reason="a week at the default interval; RKE2's own default keeps 5")] = Field(
        DEFAULT_BACKUP_RETENTION, description="Snapshots kept.")
    expireDays: Annotated[int, Whole(1, 3650), Msg(reason="old snapshots hold old Secrets")] = Field(
        DEFAULT_BACKUP_EXPIRE_DAYS, description="Days the created bucket keeps old versions (pruned or replaced snapshots); current ones are pruned by count (not with bucket).")
    kmsKeyArn: OrUnset[Annotated[str, NonEmpty(KMS_KEY_ARN_PATTERN), Msg(
        what="a KMS key ARN (not an alias) in its region's partition, like "
             "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        default="SSE-S3", type_name="KMS key ARN", why=_kms_why)]] = Field(
        None, description="SSE-KMS with this key (a key of the cluster's region).")


class Addons(_Section):
    """addons: what else is installed into the cluster."""

    ebsCsi: OrUnset[Annotated[Bool, Msg(default="on for a new stack; then as last deployed")]] = Field(
        None, description="aws-ebs-csi-driver with a default gp3 StorageClass; its controller uses an IAM user of its own.")


# New RKE2 stacks get Traefik where their release offers it: RKE2's own default for new clusters from
# v1.36, while ingress-nginx is retired upstream (March 2026), gets no more updates and cannot run alone
# from v1.37 (versions.RKE2_INGRESS_NGINX_ALONE_REMOVED_MINOR).
DEFAULT_INGRESS_CONTROLLER: Final = "traefik"


class Ingress(_Section):
    """ingress: the ingress controller the cluster's servers deploy."""

    controller: OrUnset[Annotated[Literal["traefik", "ingress-nginx", "none"], Msg(
        kind="an ingress controller", allowed="traefik, ingress-nginx or none",
        default=f"new RKE2 stacks: {DEFAULT_INGRESS_CONTROLLER} (ingress-nginx on releases without it); running "
                "stacks: what they run; RKE1: RKE's nginx")]] = Field(
        None, description="RKE2's ingress-controller (traefik, ingress-nginx, none; ingress-nginx alone ends with "
                          "v1.37); RKE1's ingress.provider (ingress-nginx or none). A running cluster changes it by "
                          "hand (README).")


def _proxy_url_why(v: str) -> str | None:
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


def _no_proxy_why(v: str) -> str | None:
    if v == "*":
        return "would send nothing through the proxy"
    if v.startswith("*."):
        return "is a wildcard only Go reads; write the domain with a leading dot (.example.com)"
    if re.fullmatch(r"[^/]+:[0-9]+", v):
        return "has a port, which only Go reads"
    if re.fullmatch(r"[0-9.]+/[0-9]+", v):
        return "is not a canonical IPv4 CIDR"
    return None


class Proxy(_Section):
    """proxy: the HTTP(S) proxy nodes, RKE2 or Docker, the CCM and the EBS CSI controller go out through."""

    httpProxy: OrUnset[Annotated[str, NonEmpty(PROXY_URL_PATTERN, max_length=300), Msg(
        what="a proxy URL like http://proxy.example.com:3128 (http or https, a host, a port; no credentials)",
        default="httpsProxy", type_name="URL", why=_proxy_url_why)]] = Field(
        None, description="HTTP_PROXY for plain-http requests (apt mirrors); defaults to httpsProxy.")
    httpsProxy: OrUnset[Annotated[str, NonEmpty(PROXY_URL_PATTERN, max_length=300), Msg(
        what="a proxy URL like http://proxy.example.com:3128 (http or https, a host, a port; no credentials)",
        default="httpProxy", type_name="URL", why=_proxy_url_why)]] = Field(
        None, description="HTTPS_PROXY for https requests (SSM, AWS APIs, RKE2 and image downloads); defaults to httpProxy.")
    noProxy: Annotated[list[Annotated[str, NonEmpty(NO_PROXY_ITEM_PATTERN, max_length=254)]], Msg(
        what="NO_PROXY entries: host names, .domain suffixes, IPv4 addresses or canonical CIDRs", type_name="list",
        default="`[]`", why=_no_proxy_why),
        WithJsonSchema({"type": "array", "items": {"type": "string", "maxLength": 254, "pattern": NO_PROXY_ITEM_PATTERN},
                        "uniqueItems": True, "maxItems": MAX_NO_PROXY_ITEMS})] = Field(
        [], description=f"What else bypasses the proxy (VPC endpoints' names, internal registries); at most "
                        f"{MAX_NO_PROXY_ITEMS}, {MAX_NO_PROXY_CHARS} characters together. The VPC, pod and service "
                        "networks, .svc, .cluster.local, .internal, IMDS, localhost and the endpoint are always added.")


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


def _rancher_cluster_name_why(v: str) -> str | None:
    if v == RANCHER_LOCAL_CLUSTER:
        return ("is the name every Rancher gives the cluster it runs in, and Rancher refuses a second cluster of a "
                "name it has")
    return None


class Rancher(_Section):
    """rancher: register the cluster in Rancher as an imported cluster (the rancher2 provider)."""

    url: OrUnset[Annotated[str, NonEmpty(RANCHER_URL_PATTERN, max_length=2048), Msg(
        what=RANCHER_URL_WHAT,
        missing="missing; set Rancher's https address", type_name="URL", why=rancher_url_why)]] = Field(
        None, description="Rancher's address (https; a certificate every client trusts: a public CA).")
    token: OrUnset[Annotated[Annotated[str, Strict()], Msg(type="is not text; the token is a string like token-xxxxx:yyyy, set "
                                                        "with `pulumi config set --secret --path rancher.token <token>`",
                                                   missing="missing; set it with `pulumi config set --secret --path rancher.token <token>`",
                                                   type_name="encrypted string", default="required")]] = Field(
        None, description="Rancher API token (token-xxxxx:yyyy) of a user who may create clusters; a `secure:` value only.")
    clusterName: OrUnset[Annotated[str, NonEmpty(RANCHER_CLUSTER_NAME_PATTERN), Msg(
        what="a lowercase DNS label: 1-63 chars of a-z, 0-9 and -, starting and ending with a letter or digit, not local",
        default="`clusterId`", type_name="string", why=_rancher_cluster_name_why)]] = Field(
        None, description="The cluster's name in Rancher (renamed in place).")
    upgrades: Annotated[Literal["rke-aws", "rancher"], Msg(kind="an upgrade owner", allowed="rke-aws or rancher",
                                                           reason="kubernetesVersion stays the one place a version is set")] = Field(
        DEFAULT_RANCHER_UPGRADES, description="Who upgrades RKE2: rke-aws (its own Plans; Rancher's version management off, Rancher >= 2.11) or rancher (Rancher's own SUC and Plans; this program writes none).")


# Agents rotation may have down at once (components/ops/rotate.py): kops' default for a rolling update
# without surge (docs/operations/rolling-update.md, maxUnavailable 1); servers always go one at a time.
DEFAULT_MAX_UNAVAILABLE_AGENTS: Final = 1


class Rotation(_Section):
    """rotation: how `python3 -m offline.tasks rotate <stack>` replaces stale nodes (docs/operations/rotate.md)."""

    maxUnavailableAgents: Annotated[int, Whole(1, 100), Msg(reason="one drained node at a time keeps the most capacity")] = Field(
        DEFAULT_MAX_UNAVAILABLE_AGENTS, description="Agents drained and replaced together; servers always go one at a time.")


class StackConfiguration(_Section):
    """Keys in the project's namespace (Pulumi.yaml `name`; `pulumi config set <key>`)."""

    distribution: OrUnset[Annotated[Literal["rke", "rke2"], Msg(kind="a distribution", missing="missing; set rke or rke2", default="required", declare=True)]] = Field(
        None, description="Kubernetes distribution: rke (RKE1) or rke2; cannot change on a running stack.")
    clusterId: OrUnset[Annotated[str, NonEmpty(CLUSTER_ID_PATTERN), Msg(
        pattern=f"{{json}} is not a cluster ID; {CLUSTER_ID_RULE}",
        default="stack name", declare=True, type_name="string", why=_cluster_id_why)]] = Field(
        None, description=f"`<CLUSTERID>` of the `kubernetes.io/cluster/<CLUSTERID>` tag; 1-{MAX_CLUSTER_ID} chars of a-z0-9-, starting with a letter, not sg-.")
    network: OrUnset[Annotated[Network, Msg()]] = Field(None, description=Network.__doc__)
    access: OrUnset[Annotated[Access, Msg()]] = Field(None, description=Access.__doc__)
    nodePools: OrUnset[Annotated[list[NodePool], Msg(
        type='{json} is not a non-empty list of pools; each pool is {{name, roles, count, ...}}',
        default="three servers (controlplane, etcd) named server and two workers named agents, of instanceType's default")]] = Field(
        None, description="The node pools; at least one pool with controlplane, one with etcd and one with worker.")
    kubernetesVersion: OrUnset[Annotated[str, SchemaPattern(whole(f"{RKE_VERSION_BODY}|{RKE2_VERSION_BODY}")), Msg(
        default=f"new stacks: RKE `{versions.RKE_KUBERNETES_VERSION}`, RKE2 `{versions.RKE2_VERSION}`; running stacks: what they run",
        declare=True, type_name="string")]] = Field(
        None, description="RKE: v1.X.Y-rancherN-N; RKE2: v1.X.Y+rke2rN; a release components/settings/versions.py knows; one minor up "
                          "at a time; RKE2 etcd 3.5 -> 3.6 only from 3.5.26.")
    ccm: OrUnset[Annotated[Ccm, Msg()]] = Field(None, description=Ccm.__doc__)
    controlPlane: OrUnset[Annotated[ControlPlane, Msg()]] = Field(None, description=ControlPlane.__doc__)
    etcdBackup: OrUnset[Annotated[EtcdBackup, Msg()]] = Field(None, description=EtcdBackup.__doc__)
    addons: OrUnset[Annotated[Addons, Msg()]] = Field(None, description=Addons.__doc__)
    proxy: OrUnset[Annotated[Proxy, Msg()]] = Field(None, description=Proxy.__doc__)
    rancher: OrUnset[Annotated[Rancher, Msg(default="unset (not registered)")]] = Field(None, description=Rancher.__doc__)
    ingress: OrUnset[Annotated[Ingress, Msg()]] = Field(None, description=Ingress.__doc__)
    rotation: OrUnset[Annotated[Rotation, Msg()]] = Field(None, description=Rotation.__doc__)
    hardening: Annotated[Literal["none", "cis"], Msg(kind="a hardening profile", declare=True, reason="the CIS profile enforces Pod Security restricted, which many workloads fail")] = Field(
        "none", description="RKE2's CIS profile with its host preparation, audit policy and Pod Security restricted (RKE2 only).")
    kubeconfig: OrUnset[Annotated[Annotated[str, Strict()], Msg(default="unset", declare=True, type_name="encrypted string")]] = Field(
        None, description="kubeconfig of the running cluster (pulumi config set --secret, or make kubeconfig for RKE1); RKE2 uses the one its first server published when unset.")
    tags: OrUnset[Annotated[dict[str, Annotated[str, Strict()]], Msg(
        item="{json} is not a string; tag values are strings", type_name="map", default="`{}`"),
        # config.py checks keys and values with the same patterns, and says why with the count.
        WithJsonSchema({"type": "object", "maxProperties": MAX_USER_TAGS, "propertyNames": {"pattern": TAG_KEY_PATTERN},
                        "additionalProperties": {"type": "string", "pattern": TAG_VALUE_PATTERN}})]] = Field(
        None, description=f"Extra tags on every taggable resource (at most {MAX_USER_TAGS}; keys 1-128 and values 0-256 of "
                          "ASCII letters, digits, space and _ . : / = + - @; not Name, KubernetesCluster, aws:*, "
                          "kubernetes.io/cluster/*, kubernetes.io/role/*, rke-aws/* in any letter case).")
    allowUninstall: Annotated[Bool, Msg(declare=True, reason="an update never uninstalls the CCM by accident")] = Field(
        False, description="Let one update leave out what the last one installed in the cluster (installedInCluster): "
                           "without a kubeconfig (the cluster is gone), or switching ccm.install to manifest after "
                           "`pulumi state delete` of the releases; Pulumi deletes what is still in the state.")
    protectServers: Annotated[Bool, Msg(declare=True, reason="replacing servers deliberately stays one command")] = Field(
        False, description="Protect controlplane/etcd instances from deletion and replacement (pulumi protect).")

    # ---- day 2: what the user vouches for about the running cluster (issue 23; history.py) ----
    confirmClusterState: OrUnset[Annotated[str, NonEmpty(CONFIRM_CODES_PATTERN), Msg(
        pattern="{json} is not a confirmation code; copy the code a refusal or warning printed (like version-0123456789)",
        default="unset", declare=True, type_name="string")]] = Field(
        None, description="Codes a refusal or warning printed (space-separated), each confirming one exact statement "
                          "about the running cluster when it cannot be read; a code confirms nothing once the state moves on.")


SECTIONS: dict[str, type[_Section]] = {
    "network": Network, "access": Access, "ccm": Ccm, "controlPlane": ControlPlane,
    "etcdBackup": EtcdBackup, "addons": Addons, "proxy": Proxy, "rancher": Rancher, "ingress": Ingress,
    "rotation": Rotation,
}


def keys(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(model.model_fields)


# ---- checking values against the model --------------------------------------------------------

def _json(value: Any) -> str:
    return json_text(value)


_M = TypeVar("_M")


def _meta(info: Any, cls: type[_M]) -> _M | None:
    """The field's first `cls` metadata object (a Msg, a Whole), or None."""
    for m in getattr(info, "metadata", ()):
        if isinstance(m, cls):
            return m
    return _find(info.annotation, cls) if hasattr(info, "annotation") else None


def _find(annotation: Any, cls: type) -> Any:
    """The first `cls` object in an annotation's Annotated metadata, searched depth-first."""
    for m in getattr(annotation, "__metadata__", ()):
        if isinstance(m, cls):
            return m
    for arg in typing.get_args(annotation):
        found = _find(arg, cls)
        if found is not None:
            return found
    return None


def _submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _submodel(arg)
        if found is not None:
            return found
    return None


def path_text(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _at(value: Any, loc: tuple) -> Any:
    for part in loc:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _message(model: type[BaseModel], err: ErrorDetails, raw: Any, where: tuple) -> tuple[tuple, str]:
    """(key path, message) of one pydantic error, in the program's words."""
    loc, kind, value = tuple(err["loc"]), err["type"], err.get("input")
    # Walk to the field: (info, its model, the index where the field's own value starts).
    cls: type[BaseModel] | None = model
    info: FieldInfo | None = None
    depth = 0
    for i, part in enumerate(loc):
        if isinstance(part, str) and cls is not None and part in cls.model_fields:
            info, depth = cls.model_fields[part], i + 1
            cls = _submodel(info.annotation)
        elif isinstance(part, str) and cls is not None and kind == "extra_forbidden" and i == len(loc) - 1:
            return loc, unknown_key_message(part, cls.model_fields)
        elif isinstance(part, str):
            cls = None  # a map key
        # a list index (of a list of models, `cls` stays the item model)
    if kind in ("model_type", "dict_type", "model_attributes_type") and (info is None or depth == len(loc)):
        model_msg = _meta(info, Msg) if info is not None else None
        name = path_text(where + loc)
        return loc, (model_msg.type.format(json=_json(value)) if model_msg and model_msg.type
                     else f"{_json(value)} is not an object; expected a map of {name} settings")
    msg: Msg = _meta(info, Msg) or Msg()
    field_loc, inner = loc[:depth], loc[depth:]
    if inner:  # an item of a list (reported at the list) or a map (at its key)
        container = _at(raw, field_loc)
        if isinstance(inner[0], str):
            field_loc = field_loc + inner[:1]
        if kind.endswith("_type") and not msg.item:
            return field_loc, _type_message(msg, container, list_of=True)
        if msg.item:
            return field_loc, msg.item.format(json=_json(value), repr=repr(value) if isinstance(value, str) else _json(value))
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return loc, f"{_json(value)} is not a whole number; {_int_range(info)}"
    if kind in ("greater_than_equal", "less_than_equal"):
        return loc, f"{value} is out of range; {_int_range(info)}"
    if kind in ("bool_type", "bool_parsing"):
        return loc, f"{_json(value)} is not a boolean; use true or false"
    if kind == "literal_error":
        assert info is not None  # a value out of a Literal belongs to a field
        allowed = msg.allowed or " or ".join(str(a) for a in typing.get_args(_find_literal(info.annotation)))
        return loc, f"{_json(value)} is not {msg.kind}; use {allowed}"
    if kind == "string_too_short":
        return loc, f"is empty; expected {msg.what or 'a non-empty string'}"
    if kind == "string_too_long":
        return loc, f"{shown(value)} is longer than {err.get('ctx', {}).get('max_length')} characters; expected {msg.what}"
    if kind == "string_pattern_mismatch":
        reason = msg.why(value) if msg.why and isinstance(value, str) else None
        if msg.pattern:
            return loc, msg.pattern.format(json=_json(value), value=value).replace(
                " is not ", f" ({reason}) is not " if reason else " is not ", 1)
        return loc, f"{shown(value)} {reason or 'is not valid'}; expected {msg.what}"
    if kind in ("list_type", "too_short", "string_type", "dict_type") or kind.endswith("_type"):
        return loc, _type_message(msg, value)
    return loc, f"{_json(value)} is not valid ({err.get('msg')}); expected {msg.what or 'another value'}"


def _int_range(info: FieldInfo | None) -> str:
    rng = _meta(info, Whole)
    assert rng is not None, "an integer error belongs to a key declared with Whole(lo, hi)"
    return f"use an integer from {rng.lo} to {rng.hi}"


# The candidate a key is most likely a typo of (letter case ignored), or None.
closest = suggest


def unknown_key_message(key: str, allowed: Iterable[str]) -> str:
    """An unknown key's message: the closest allowed key (a typo, most likely) and all of them."""
    allowed = list(allowed)
    close = closest(key, allowed)
    hint = f"did you mean {close}? " if close else ""
    return f"unknown key; {hint}allowed keys are {', '.join(allowed)}"


def _find_literal(annotation: Any) -> Any:
    if typing.get_origin(annotation) is Literal:
        return annotation
    for arg in typing.get_args(annotation):
        found = _find_literal(arg)
        if found is not None:
            return found
    return None


def _type_message(msg: Msg, value: Any, list_of: bool = False) -> str:
    if msg.type:
        return msg.type.format(json=_json(value))
    if list_of or isinstance(value, list) or msg.type_name.startswith("list"):
        return f"{_json(value)} is not a list of strings; expected a list of {msg.what}"
    return f"{_json(value)} is not a string; expected {msg.what or 'a non-empty string'}"


_S = TypeVar("_S", bound=BaseModel)


def check(model: type[_S], raw: Any, where: tuple = ()) -> tuple[_S, list[tuple[str, str]]]:
    """Validate `raw` against `model`: (the validated object, or what of it is valid; problems).

    A field with a problem is left out and validation repeated, so the caller gets every valid
    field (the defaults for the others) and can still judge the rules that span several keys.
    """
    if raw is None:
        return model(), []
    problems: list[tuple[str, str]] = []
    if isinstance(raw, dict):  # `key: ~` is refused (the schema refuses it too); the key keeps its default
        problems += [(path_text(where + (k,)), NULL_PROBLEM) for k, v in raw.items() if v is None]
        raw = {k: v for k, v in raw.items() if v is not None}
    current = raw
    for _ in range(len(model.model_fields) + 2):
        try:
            return model.model_validate(current), problems
        except ValidationError as exc:
            errors = exc.errors()
            drop: set = set()
            for err in errors:
                loc, text = _message(model, err, current, where)
                problems.append((path_text(where + loc), text))
                if not err["loc"] or not isinstance(current, dict):
                    return model(), problems
                drop.add(err["loc"][0])
            current = {k: v for k, v in current.items() if k not in drop}
    raise AssertionError(f"{model.__name__}: validation did not settle")  # pragma: no cover
