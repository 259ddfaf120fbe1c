"""Tag sets. The CCM finds everything it manages through `kubernetes.io/cluster/<clusterId>`."""

from __future__ import annotations

from collections.abc import Mapping

OWNED = "owned"  # lifecycle tied to this cluster: created by this program
SHARED = "shared"  # pre-existing, used by this cluster, never deleted with it
ROLE_ELB = "kubernetes.io/role/elb"  # public subnets: internet-facing load balancers
ROLE_INTERNAL_ELB = "kubernetes.io/role/internal-elb"  # private subnets: internal load balancers
CLUSTER_TAG_PREFIX = "kubernetes.io/cluster/"


def cluster_tag_key(cluster_id: str) -> str:
    return f"{CLUSTER_TAG_PREFIX}{cluster_id}"


def named(name: str, extra: Mapping[str, str]) -> dict[str, str]:
    """Tags for a resource the CCM never looks at: the user's tags plus Name."""
    return {**extra, "Name": name}


def cluster_owned(cluster_id: str, name: str, extra: Mapping[str, str]) -> dict[str, str]:
    """Tags for a resource this program creates and the CCM must find."""
    return {**named(name, extra), cluster_tag_key(cluster_id): OWNED}


def subnet_role_tag(tier: str) -> str:
    return ROLE_ELB if tier == "public" else ROLE_INTERNAL_ELB


def subnet(cluster_id: str, name: str, tier: str, extra: Mapping[str, str]) -> dict[str, str]:
    return {**cluster_owned(cluster_id, name, extra), subnet_role_tag(tier): "1"}


def cluster_tags_in(tags: Mapping[str, str] | None) -> list[str]:
    return sorted(k for k in (tags or {}) if k.startswith(CLUSTER_TAG_PREFIX))
