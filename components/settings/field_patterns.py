"""The patterns a stack key's value must match, with the facts behind them (ASCII only, one meaning in
Python's re and ECMA-262: settings/patterns.py). Part of the vocabulary settings/fields.py gathers."""

from __future__ import annotations

import re
from typing import Final

from .patterns import ci, cidr_regex, literal, whole

# IAM role and instance profile names (64 characters at most) are "<clusterId>-controlplane-" plus
# Pulumi's 7-character suffix: 64 - 21 leaves 43 for the cluster ID.
MAX_CLUSTER_ID = 43
CLUSTER_ID_RULE = f"use 1-{MAX_CLUSTER_ID} chars of a-z, 0-9 and -, starting with a letter, not sg-"

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

# ---- rancher (the `rancher` section) ----
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
