"""The stack keys as one typed model: each section a frozen pydantic model whose fields are snake_case and
whose aliases are the stack keys (`vpc_cidr` <- `vpcCidr`), with types, defaults and why, allowed values,
ranges, patterns and descriptions in one place (the vocabulary: settings/fields.py).

The model checks what one key can check alone (its type, range, allowed values, pattern, unknown keys);
the rules that span keys are settings/rules/ (Diagnostics, every problem at once), and what depends on the
running cluster is settings/resolve.py. `ClusterKeys` is the top level of a stack file; settings/args.py
adds the ways in (`RkeClusterArgs`). From this model come the JSON Schema editors use for stack files
(schema/stack-config.schema.json), the configuration reference and the keys Pulumi.yaml declares
(offline/schema.py writes them; tests fail when one drifts).

A section built in Python (`NodePool(name=..., roles=[...], count=3)`) is checked as the stack file is:
a bad value raises ConfigError in the program's words (settings/section.py `Section._program_words`), every
field at once. The sections of the network, of the cluster's parts, of what it reaches outside AWS and of
workload identity are in sections_network.py, sections_cluster.py, sections_external.py and
sections_identity.py; their names are importable from here.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SecretStr, Strict
from pydantic.json_schema import WithJsonSchema

from . import versions
from .fields import (
    AMI_PATTERN,
    BUCKET_PATTERN,
    CLUSTER_ID_PATTERN,
    CLUSTER_ID_RULE,
    CONFIRM_CODES_PATTERN,
    DEFAULT_IMDS_HOP_LIMIT,
    DEFAULT_INSTANCE_TYPE,
    DEFAULT_MARKET,
    DEFAULT_MAX_UNAVAILABLE_AGENTS,
    DEFAULT_OS,
    DEFAULT_ROOT_VOLUME_GB,
    DEFAULT_SUBNET_TIER,
    FOLDER_PATTERN,
    INSTANCE_TYPE_PATTERN,
    MAX_CLUSTER_ID,
    MAX_POOL_BLOCKS,
    MAX_ROOT_GB,
    MAX_USER_TAGS,
    MIN_ROOT_GB,
    POOL_NAME_PATTERN,
    REASON_PATTERN,
    RKE2_VERSION_BODY,
    RKE_VERSION_BODY,
    TAG_KEY_PATTERN,
    TAG_VALUE_PATTERN,
    Bool,
    Msg,
    NonEmpty,
    OrUnset,
    OsName,
    SchemaPattern,
    Whole,
    bucket_why,
    cluster_id_why,
    folder_why,
)
from .messages import stack_keys
from .patterns import whole

# The sections' common base (settings/section.py), named as the classes here have always named it.
from .section import Section as _Section
from .sections_cluster import Addons, Ccm, ControlPlane, EtcdBackup, Ingress
from .sections_external import Proxy, Rancher
from .sections_identity import Identity
from .sections_identity import IdentityRole as IdentityRole
from .sections_network import Access, Network

ROLES: tuple[str, ...] = ("controlplane", "etcd", "worker")
Role = Literal["controlplane", "etcd", "worker"]

class NodePool(_Section):
    """nodePools[i]: a group of identical nodes."""

    name: OrUnset[Annotated[str, NonEmpty(POOL_NAME_PATTERN), Msg(what="1-31 chars of a-z, 0-9 and -, starting with a letter", missing="missing; every pool needs a name")]] = Field(
        None, description="Pool name (a-z0-9-, unique).")
    roles: OrUnset[Annotated[Annotated[tuple[Role, ...], Field(min_length=1)], Msg(
        kind="a role", item="{repr} is not a role; {hint}use controlplane, etcd or worker",
        type="{json} is not a non-empty list; use a list of controlplane, etcd or worker",
        missing="missing; list the pool's roles from controlplane, etcd and worker", type_name="list")]] = Field(
        None, description="Subset of controlplane, etcd, worker. RKE2: a pool with controlplane or etcd runs "
        "servers; one with only one of them runs split roles (etcd-only or control-plane-only servers; needs "
        "controlPlane.endpoint nlb).")
    count: OrUnset[Annotated[int, Whole(0, 500), Msg(missing="missing; give the number of nodes (0 to 500)")]] = Field(
        None, description="Number of nodes, 0-500.")
    instance_type: Annotated[str, NonEmpty(INSTANCE_TYPE_PATTERN), Msg(what="an EC2 instance type like m6i.large", reason="a general-purpose size that runs a control plane or a small worker")] = Field(
        DEFAULT_INSTANCE_TYPE, description="EC2 instance type, looked up at plan time (offered in the pool's zones, the image's architecture).")
    subnet: Annotated[Literal["private", "public"], Msg(kind="a subnet tier", reason="nodes stay off the internet unless asked")] = Field(
        DEFAULT_SUBNET_TIER, description="Subnet tier; public nodes get a public IP.")
    root_volume_gb: Annotated[int, Whole(MIN_ROOT_GB, MAX_ROOT_GB), Msg(reason="images, etcd data and container layers fit for typical nodes")] = Field(
        DEFAULT_ROOT_VOLUME_GB, description=f"Encrypted gp3 root volume size ({MIN_ROOT_GB}-{MAX_ROOT_GB}).")
    ami: OrUnset[Annotated[str, NonEmpty(AMI_PATTERN), Msg(what="an AMI ID like ami-0123456789abcdef0", default="latest Ubuntu 24.04 LTS for the instance type's architecture, amd64 or arm64 (Canonical, per partition)", type_name="AMI ID")]] = Field(
        None, description="Node image, looked up at plan time (its architecture and virtualization must suit instanceType).")
    ip_block: OrUnset[Annotated[int, Whole(0, MAX_POOL_BLOCKS - 1), Msg(default="lowest free block")]] = Field(
        None, description=f"Address block 0-{MAX_POOL_BLOCKS - 1} (see \"Node names and addresses\").")
    imds_hop_limit: Annotated[int, Whole(1, 2), Msg(reason="keeps the node role's credentials away from pods on the pod network")] = Field(
        DEFAULT_IMDS_HOP_LIMIT, description="IMDS hop limit; 2 lets every pod take the node role's credentials.")
    imds_hop_limit_reason: OrUnset[Annotated[str, SchemaPattern(REASON_PATTERN), Msg(what="why pods need the node role")]] = Field(
        None, description="Required with imdsHopLimit 2; becomes an instance tag.")
    market: Annotated[Literal["on-demand", "spot"], Msg(kind="a market", reason="capacity AWS never takes back")] = Field(
        DEFAULT_MARKET, description="spot: persistent spot requests that stop on interruption and keep the node's "
                                    "address and name (worker-only pools, RKE1 ones in private subnets; fixed for running nodes).")
    os: Annotated[OsName, Msg(kind="an operating system", reason="what every pool ran before `os` existed")] = Field(
        DEFAULT_OS, description="The nodes' OS: the vendor's latest image per partition and architecture (or `ami`), "
                                "its login user and boot steps (docs/features/airgap-os-fips.md, 'Operating systems, SELinux and FIPS'); a "
                                "running pool's nodes go stale and `rke-aws rotate` replaces them.")

    @property
    def is_spot(self) -> bool:
        return self.market == "spot"

    @property
    def is_controlplane(self) -> bool:
        return "controlplane" in (self.roles or ())

    @property
    def is_etcd(self) -> bool:
        return "etcd" in (self.roles or ())

    @property
    def is_worker(self) -> bool:
        return "worker" in (self.roles or ())

    @property
    def is_server(self) -> bool:
        """RKE2: pools with controlplane/etcd run `rke2-server`; worker-only pools run `rke2-agent`."""
        return self.is_controlplane or self.is_etcd


class Rotation(_Section):
    """rotation: how `rke-aws rotate <stack>` replaces stale nodes (docs/operations/rotate.md)."""

    max_unavailable_agents: Annotated[int, Whole(1, 100), Msg(reason="one drained node at a time keeps the most capacity")] = Field(
        DEFAULT_MAX_UNAVAILABLE_AGENTS, description="Agents drained and replaced together; servers always go one at a time.")


class Registry(_Section):
    """registry: a private registry (mirror) every image this program deploys is pulled through (issue 35)."""

    mirrors: Annotated[dict[str, Annotated[str, Strict()]], Msg(
        item="{json} is not a mirror endpoint; give https://host[:port][/path]", type_name="map", default="`{}`"),
        WithJsonSchema({"type": "object", "additionalProperties": {"type": "string"}})] = Field(
        default_factory=dict, description="Upstream registry host (docker.io, registry.k8s.io, public.ecr.aws, or \"*\") "
                                          "-> the mirror's endpoint (https://host[:port][/path]).")
    username: OrUnset[Annotated[str, NonEmpty(whole(r"[!-~]+"), max_length=255), Msg(what="a user name of printable ASCII without spaces")]] = Field(
        None, description="The mirror's user (with password; https mirrors only).")
    password: OrUnset[Annotated[SecretStr, Strict(), Msg(
        type="is not text; set it with `pulumi config set --secret --path registry.password <password>`",
        type_name="encrypted string", default="unset")]] = Field(
        None, description="The mirror's password: a `secure:` value only; nodes read it from an SSM SecureString, never from user data.")
    ca_bundle: OrUnset[Annotated[str, Strict(), Msg(what="a PEM bundle", type_name="PEM")]] = Field(
        None, description="PEM certificates the nodes trust for the mirror (a private CA).")
    system_default: OrUnset[Annotated[str, NonEmpty(whole(r"[!-.0-~]+"), max_length=255), Msg(what="host[:port] of a registry")]] = Field(
        None, description="RKE2's system-default-registry (host[:port]): RKE2's own images and bundled charts come from it.")
    charts: OrUnset[Annotated[str, NonEmpty(whole(r'(https|oci)://[!-"$-/0->@-~]+'), max_length=2048), Msg(
        what="a chart repository URL: https://host[/path] (a Helm repository) or oci://host[/path] (an OCI registry)",
        default="the charts' public repositories", type_name="URL")]] = Field(
        None, description="Where the CCM and EBS CSI charts come from instead of their public repositories (the same chart "
                          "names and versions); required with airgap. Read without credentials (caBundle is trusted).")


class Airgap(_Section):
    """airgap: RKE2 nodes that never reach the internet: RKE2 from your bucket (or preinstalled), images from `registry`."""

    artifacts_bucket: OrUnset[Annotated[str, NonEmpty(BUCKET_PATTERN), Msg(
        what="an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens)", type_name="bucket name", why=bucket_why)]] = Field(
        None, description="Bucket (in the cluster's region) holding RKE2's release assets (docs/features/airgap-os-fips.md).")
    artifacts_prefix: OrUnset[Annotated[str, NonEmpty(FOLDER_PATTERN, max_length=200), Msg(
        what="a key prefix like rke2 (no leading, trailing or double /)", default="bucket root", type_name="key prefix", why=folder_why)]] = Field(
        None, description="Key prefix of the artifacts in the bucket (<prefix>/<release>/...).")
    preinstalled: Annotated[Bool, Msg(reason="installing from the bucket needs no image of your own")] = Field(
        False, description="The nodes' image already holds RKE2 of kubernetesVersion (no bucket needed).")

    @property
    def from_bucket(self) -> bool:
        return not self.preinstalled


class ClusterKeys(_Section):
    """The stack keys (Pulumi.yaml `name` is their namespace; `pulumi config set <key>`), snake_case here."""

    distribution: OrUnset[Annotated[Literal["rke", "rke2"], Msg(kind="a distribution", missing="missing; set rke or rke2", default="required", declare=True)]] = Field(
        None, description="Kubernetes distribution: rke (RKE1) or rke2; cannot change on a running stack.")
    cluster_id: OrUnset[Annotated[str, NonEmpty(CLUSTER_ID_PATTERN), Msg(
        pattern=f"{{json}} is not a cluster ID; {CLUSTER_ID_RULE}",
        default="stack name", declare=True, type_name="string", why=cluster_id_why)]] = Field(
        None, description=f"`<CLUSTERID>` of the `kubernetes.io/cluster/<CLUSTERID>` tag; 1-{MAX_CLUSTER_ID} chars of a-z0-9-, starting with a letter, not sg-.")
    network: Annotated[Network, Msg()] = Field(default_factory=Network, description=Network.__doc__)
    access: Annotated[Access, Msg()] = Field(default_factory=Access, description=Access.__doc__)
    node_pools: OrUnset[Annotated[tuple[NodePool, ...], Msg(
        type='{json} is not a non-empty list of pools; each pool is {{name, roles, count, ...}}',
        default="three servers (controlplane, etcd) named server and two workers named agents, of instanceType's default")]] = Field(
        None, description="The node pools; at least one pool with controlplane, one with etcd and one with worker.")
    kubernetes_version: OrUnset[Annotated[str, SchemaPattern(whole(f"{RKE_VERSION_BODY}|{RKE2_VERSION_BODY}")), Msg(
        default=f"new stacks: RKE `{versions.RKE_KUBERNETES_VERSION}`, RKE2 `{versions.RKE2_VERSION}`; running stacks: what they run",
        declare=True, type_name="string")]] = Field(
        None, description="RKE: v1.X.Y-rancherN-N; RKE2: v1.X.Y+rke2rN; a release components/settings/versions.py knows; one minor up "
                          "at a time; RKE2 etcd 3.5 -> 3.6 only from 3.5.26.")
    ccm: Annotated[Ccm, Msg()] = Field(default_factory=Ccm, description=Ccm.__doc__)
    control_plane: Annotated[ControlPlane, Msg()] = Field(default_factory=ControlPlane, description=ControlPlane.__doc__)
    etcd_backup: Annotated[EtcdBackup, Msg()] = Field(default_factory=EtcdBackup, description=EtcdBackup.__doc__)
    addons: Annotated[Addons, Msg()] = Field(default_factory=Addons, description=Addons.__doc__)
    proxy: OrUnset[Annotated[Proxy, Msg()]] = Field(None, description=Proxy.__doc__)
    # Never the value when it is not a map: it may hold the token.
    rancher: OrUnset[Annotated[Rancher, Msg(default="unset (not registered)", type=(
        "is not a map; expected {{url, token, clusterName, upgrades}} (set each with "
        "`pulumi config set [--secret] --path rancher.<key> <value>`)"))]] = Field(None, description=Rancher.__doc__)
    ingress: Annotated[Ingress, Msg()] = Field(default_factory=Ingress, description=Ingress.__doc__)
    rotation: Annotated[Rotation, Msg()] = Field(default_factory=Rotation, description=Rotation.__doc__)
    hardening: Annotated[Literal["none", "cis"], Msg(kind="a hardening profile", declare=True, reason="the CIS profile enforces Pod Security restricted, which many workloads fail")] = Field(
        "none", description="RKE2's CIS profile with its host preparation, audit policy and Pod Security restricted (RKE2 only).")
    kubeconfig: OrUnset[Annotated[SecretStr, Strict(), Msg(default="unset", declare=True, type_name="encrypted string")]] = Field(
        None, description="kubeconfig of the running cluster (pulumi config set --secret, or make kubeconfig for RKE1); RKE2 uses the one its first server published when unset.")
    tags: OrUnset[Annotated[dict[str, Annotated[str, Strict()]], Msg(
        item="{json} is not a string; tag values are strings", type_name="map", default="`{}`"),
        # settings/rules/tags.py checks keys and values with the same patterns, and says why with the count.
        WithJsonSchema({"type": "object", "maxProperties": MAX_USER_TAGS, "propertyNames": {"pattern": TAG_KEY_PATTERN},
                        "additionalProperties": {"type": "string", "pattern": TAG_VALUE_PATTERN}})]] = Field(
        None, description=f"Extra tags on every taggable resource (at most {MAX_USER_TAGS}; keys 1-128 and values 0-256 of "
                          "ASCII letters, digits, space and _ . : / = + - @; not Name, KubernetesCluster, aws:*, "
                          "kubernetes.io/cluster/*, kubernetes.io/role/*, rke-aws/* in any letter case).")
    allow_uninstall: Annotated[Bool, Msg(declare=True, reason="an update never uninstalls the CCM by accident")] = Field(
        False, description="Let one update leave out what the last one installed in the cluster (installedInCluster): "
                           "without a kubeconfig (the cluster is gone), or switching ccm.install to manifest after "
                           "`pulumi state delete` of the releases; Pulumi deletes what is still in the state.")
    protect_servers: Annotated[Bool, Msg(declare=True, reason="replacing servers deliberately stays one command")] = Field(
        False, description="Protect controlplane/etcd instances from deletion and replacement (pulumi protect).")

    # ---- day 2: what the user vouches for about the running cluster (issue 23; plan/history.py) ----
    confirm_cluster_state: OrUnset[Annotated[str, NonEmpty(CONFIRM_CODES_PATTERN), Msg(
        pattern="{json} is not a confirmation code; copy the code a refusal or warning printed (like version-0123456789)",
        default="unset", declare=True, type_name="string")]] = Field(
        None, description="Codes a refusal or warning printed (space-separated), each confirming one exact statement "
                          "about the running cluster when it cannot be read; a code confirms nothing once the state moves on.")
    fips: Annotated[Bool, Msg(declare=True, reason="FIPS mode needs an OS and images that support it")] = Field(
        False, description="RKE2 with its FIPS 140 build on OSes in FIPS mode (RHEL/Rocky 9 and AL2023 switched at first "
                           "boot, others from your FIPS `ami`); x86_64, Canal, RKE2 only ("
                           "docs/features/airgap-os-fips.md, 'Operating systems, SELinux and FIPS').")
    identity: Annotated[Identity, Msg()] = Field(default_factory=Identity, description=Identity.__doc__)
    registry: OrUnset[Annotated[Registry, Msg(default="unset (public registries)", type=(
        "is not a map; expected {{mirrors, username, password, caBundle, systemDefault}}"))]] = Field(None, description=Registry.__doc__)
    airgap: OrUnset[Annotated[Airgap, Msg(default="unset (nodes reach the internet)")]] = Field(None, description=Airgap.__doc__)


# The sections by stack key (a map of settings each), in the stack file's order.
SECTIONS: dict[str, type[_Section]] = {
    "network": Network, "access": Access, "ccm": Ccm, "controlPlane": ControlPlane,
    "etcdBackup": EtcdBackup, "addons": Addons, "proxy": Proxy, "rancher": Rancher, "ingress": Ingress,
    "rotation": Rotation,
    "identity": Identity,
    "registry": Registry,
    "airgap": Airgap,
}


TOP_LEVEL_KEYS = stack_keys(ClusterKeys)
POOL_KEYS = stack_keys(NodePool)
