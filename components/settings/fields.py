"""What one stack key can be: its default and why, its pattern, its range, how its problems read.

The vocabulary settings/args.py declares the keys with (`Msg`, `Whole`, `NonEmpty`, `SchemaPattern`,
`Bool`, `Hours`, `OrUnset`), the defaults with their one-line reasons, the patterns (ASCII, one meaning in
Python's re and ECMA-262: settings/patterns.py) and the "why" helpers that name the rule a refused value
breaks. Pure: no pydantic model lives here.

The defaults are here; the rest lives by concern beside it and is importable from here as before:
settings/field_patterns.py (the patterns and the facts behind them), settings/field_types.py (the
annotated types, the text forms, how a value is shown), settings/field_reasons.py (why a value was
refused; values never shown).
"""

from __future__ import annotations

from typing import Final, Literal

from . import versions

# The rest of the vocabulary, re-exported (`as`) so that `from .fields import X` goes on working.
from .field_patterns import ADMIN_CIDR_PATTERN as ADMIN_CIDR_PATTERN
from .field_patterns import AMI_PATTERN as AMI_PATTERN
from .field_patterns import AZ_PATTERN as AZ_PATTERN
from .field_patterns import BOOL_TEXTS as BOOL_TEXTS
from .field_patterns import BUCKET_PATTERN as BUCKET_PATTERN
from .field_patterns import CHART_VERSION_PATTERN as CHART_VERSION_PATTERN
from .field_patterns import CLUSTER_ID_PATTERN as CLUSTER_ID_PATTERN
from .field_patterns import CLUSTER_ID_RULE as CLUSTER_ID_RULE
from .field_patterns import CLUSTER_NETWORKS as CLUSTER_NETWORKS
from .field_patterns import CONFIRM_CODES_PATTERN as CONFIRM_CODES_PATTERN
from .field_patterns import FLAG_ITEM_PATTERN as FLAG_ITEM_PATTERN
from .field_patterns import FLAG_PATTERN as FLAG_PATTERN
from .field_patterns import FOLDER_PATTERN as FOLDER_PATTERN
from .field_patterns import IMAGE_PATTERN as IMAGE_PATTERN
from .field_patterns import INSTANCE_TYPE_PATTERN as INSTANCE_TYPE_PATTERN
from .field_patterns import INT_TEXT_PATTERN as INT_TEXT_PATTERN
from .field_patterns import KMS_KEY_ARN_PATTERN as KMS_KEY_ARN_PATTERN
from .field_patterns import MAX_CLUSTER_ID as MAX_CLUSTER_ID
from .field_patterns import MAX_NO_PROXY_CHARS as MAX_NO_PROXY_CHARS
from .field_patterns import MAX_NO_PROXY_ITEMS as MAX_NO_PROXY_ITEMS
from .field_patterns import MAX_SUBNET_PREFIX as MAX_SUBNET_PREFIX
from .field_patterns import MAX_VPC_PREFIX as MAX_VPC_PREFIX
from .field_patterns import MIN_SUBNET_PREFIX as MIN_SUBNET_PREFIX
from .field_patterns import MIN_VPC_PREFIX as MIN_VPC_PREFIX
from .field_patterns import NO_PROXY_ITEM_PATTERN as NO_PROXY_ITEM_PATTERN
from .field_patterns import POD_CIDR as POD_CIDR
from .field_patterns import POOL_NAME_PATTERN as POOL_NAME_PATTERN
from .field_patterns import POOL_NAME_RE as POOL_NAME_RE
from .field_patterns import PROGRAM_FLAGS as PROGRAM_FLAGS
from .field_patterns import PROXY_URL_PATTERN as PROXY_URL_PATTERN
from .field_patterns import RANCHER_CLUSTER_NAME_PATTERN as RANCHER_CLUSTER_NAME_PATTERN
from .field_patterns import RANCHER_LOCAL_CLUSTER as RANCHER_LOCAL_CLUSTER
from .field_patterns import RANCHER_URL_PATTERN as RANCHER_URL_PATTERN
from .field_patterns import RANCHER_URL_RE as RANCHER_URL_RE
from .field_patterns import RANCHER_URL_WHAT as RANCHER_URL_WHAT
from .field_patterns import REASON_PATTERN as REASON_PATTERN
from .field_patterns import REGION_PATTERN as REGION_PATTERN
from .field_patterns import RESERVED_TAG_KEYS as RESERVED_TAG_KEYS
from .field_patterns import RESERVED_TAG_PREFIXES as RESERVED_TAG_PREFIXES
from .field_patterns import RFC1918_CIDRS as RFC1918_CIDRS
from .field_patterns import RKE2_VERSION_BODY as RKE2_VERSION_BODY
from .field_patterns import RKE2_VERSION_PATTERN as RKE2_VERSION_PATTERN
from .field_patterns import RKE_VERSION_BODY as RKE_VERSION_BODY
from .field_patterns import RKE_VERSION_PATTERN as RKE_VERSION_PATTERN
from .field_patterns import S3_RESERVED_PREFIXES as S3_RESERVED_PREFIXES
from .field_patterns import S3_RESERVED_SUFFIXES as S3_RESERVED_SUFFIXES
from .field_patterns import SERVICE_CIDR as SERVICE_CIDR
from .field_patterns import SSH_KEY_NAME_PATTERN as SSH_KEY_NAME_PATTERN
from .field_patterns import SSH_KEY_PATH_PATTERN as SSH_KEY_PATH_PATTERN
from .field_patterns import SSH_USER_PATTERN as SSH_USER_PATTERN
from .field_patterns import SUBNET_CIDR_PATTERN as SUBNET_CIDR_PATTERN
from .field_patterns import SUBNET_ID_PATTERN as SUBNET_ID_PATTERN
from .field_patterns import TAG_CHARS as TAG_CHARS
from .field_patterns import TAG_KEY_PATTERN as TAG_KEY_PATTERN
from .field_patterns import TAG_VALUE_PATTERN as TAG_VALUE_PATTERN
from .field_patterns import VPC_CIDR_PATTERN as VPC_CIDR_PATTERN
from .field_patterns import VPC_ID_PATTERN as VPC_ID_PATTERN
from .field_reasons import PROXY_CREDENTIALS as PROXY_CREDENTIALS
from .field_reasons import RANCHER_URL_HIDDEN as RANCHER_URL_HIDDEN
from .field_reasons import bucket_why as bucket_why
from .field_reasons import cluster_id_why as cluster_id_why
from .field_reasons import folder_why as folder_why
from .field_reasons import image_why as image_why
from .field_reasons import kms_why as kms_why
from .field_reasons import no_proxy_why as no_proxy_why
from .field_reasons import proxy_credentials as proxy_credentials
from .field_reasons import proxy_url_why as proxy_url_why
from .field_reasons import rancher_cluster_name_why as rancher_cluster_name_why
from .field_reasons import rancher_url_hidden as rancher_url_hidden
from .field_reasons import rancher_url_problem as rancher_url_problem
from .field_reasons import rancher_url_why as rancher_url_why
from .field_types import EMPTY_PROBLEM as EMPTY_PROBLEM
from .field_types import HOURS as HOURS
from .field_types import INT_TEXT_RE as INT_TEXT_RE
from .field_types import NULL_PROBLEM as NULL_PROBLEM
from .field_types import Bool as Bool
from .field_types import HourCount as HourCount
from .field_types import Hours as Hours
from .field_types import Msg as Msg
from .field_types import NonEmpty as NonEmpty
from .field_types import OrUnset as OrUnset
from .field_types import SchemaPattern as SchemaPattern
from .field_types import Whole as Whole
from .field_types import boolean_string as boolean_string
from .field_types import json_text as json_text
from .field_types import number as number
from .field_types import numeric_string as numeric_string
from .field_types import shown as shown

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
# AWS allows 50 tags per resource; this program sets up to 6 itself (config.PROGRAM_TAG_KEYS).
MAX_USER_TAGS = 44
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

# New RKE2 stacks get Traefik where their release offers it: RKE2's own default for new clusters from
# v1.36, while ingress-nginx is retired upstream (March 2026), gets no more updates and cannot run alone
# from v1.37 (versions.RKE2_INGRESS_NGINX_ALONE_REMOVED_MINOR).
DEFAULT_INGRESS_CONTROLLER: Final = "traefik"
# Who writes the RKE2 upgrade Plans once the cluster is registered: this program (its own
# system-upgrade-controller, Rancher's version management off), or Rancher (its own SUC in cattle-system).
DEFAULT_RANCHER_UPGRADES: Final = "rke-aws"

# Agents rotation may have down at once (components/ops/rotate/): kops' default for a rolling update
# without surge (maxUnavailable 1, kops docs/operations/rolling-update.md); servers always go one at a time.
DEFAULT_MAX_UNAVAILABLE_AGENTS = 1
