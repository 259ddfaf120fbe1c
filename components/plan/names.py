"""Every name this program derives from the cluster ID, in one place: DNS names, SSM parameter names,
the snapshot bucket, the KMS alias. Pure; AWS's own name rules are checked where the names are used."""

from __future__ import annotations

import hashlib

KUBE_API_PORT = 6443
SSH_PORT = 22
# Ports opened to access.adminCidrs: SSH for `rke up`, the API for kubectl.
ADMIN_PORTS = (SSH_PORT, KUBE_API_PORT)

# The Pod Security admission file CIS servers boot with (node/rke2_config.py writes it; plan/rancher.py
# names it in what it tells the user to edit).
PSA_CONFIG_PATH = "/etc/rancher/rke2/rke-aws-pss.yaml"


def cidr_key(cidr: str) -> str:
    """A child's name part for a CIDR: 10.0.0.0/8 -> 10-0-0-0-8 (a CIDR names one rule)."""
    return cidr.replace(".", "-").replace("/", "-").replace(":", "-")


ENDPOINT_DOMAIN = "rke-aws.internal"


def zone_name(cluster_id: str) -> str:
    return f"{cluster_id}.{ENDPOINT_DOMAIN}"


def endpoint_name(cluster_id: str) -> str:
    return f"api.{zone_name(cluster_id)}"


RKE2_SUPERVISOR_PORT = 9345


# S3 refuses bucket names starting with these (S3 User Guide, "General purpose bucket naming rules").
RESERVED_BUCKET_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")


def bucket_name(cluster_id: str, account_id: str, region: str) -> str:
    """Globally unique and known at preview: the cluster ID plus a digest of account and region.

    Never a name S3 refuses: the cluster ID (a-z, 0-9, -, starting with a letter) gives lowercase
    letters, digits and hyphens, at most 54 characters, ending in the hex digest (no reserved suffix,
    no IP form, no dots); a reserved prefix (a cluster named xn--..., sthree-... or amzn-s3-demo-...)
    gets "etcd-" in front, the only names that change (no bucket could be created under them)."""
    digest = hashlib.sha256(f"{account_id}:{region}:{cluster_id}".encode()).hexdigest()[:8]
    name = f"{cluster_id[:40].rstrip('-')}-etcd-{digest}"
    if name.startswith(RESERVED_BUCKET_PREFIXES):
        name = f"etcd-{name}"
    return name


KUBECONFIG_PENDING = "pending"  # until the first server publishes the real one

# Files the servers' manifest sync owns in RKE2's manifests directory start with this; the deploy
# controller names each Addon after its file (up to the first dot), so Addons are "<prefix><base name>".
MANIFEST_PREFIX = "rke-aws-"


def kubeconfig_parameter_name(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/admin-kubeconfig"


def token_parameter_name(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/rke2-join-token"


def agent_token_parameter_name(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/rke2-agent-token"


def registry_password_parameter_name(cluster_id: str) -> str:
    """The private registry's password (`registry.password`), a SecureString every node reads at boot."""
    return f"/rke-aws/{cluster_id}/registry-password"


def marker_parameter_name(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/rke2-initialized"


def kubeconfig_key_alias(cluster_id: str) -> str:
    """The key the published kubeconfig is encrypted with, as both Pulumi and the first server name it."""
    return f"alias/rke-aws/{cluster_id}/admin-kubeconfig"


def manifest_path(cluster_id: str) -> str:
    return f"/rke-aws/{cluster_id}/manifests"
