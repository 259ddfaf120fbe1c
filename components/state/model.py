"""What one update of a cluster leaves for the next: the typed, versioned state (issue 33 item 1).

A `ClusterState` is the stack outputs a run exports (flat at the top level for this repository's 0.x stacks,
nested under the cluster's key for programs with several clusters: components/rke_cluster.py) and what the
next run reads back (components/state/io.py) before anything is planned. This module is the only place the
output keys are spelled: each field's alias is its key (camelCase of the field name), `wire()` turns field
names into keys for writing, `from_outputs` (components/state/migrations.py) reads every shape an earlier
release wrote.

Adding what a node records (one more output key): one field on `NodeState` with a default that older
outputs get (None, or what those releases did), written in components/aws/nodes.py through `NodeState.wire`;
a migration only when older outputs mean something else than that default. Readers of a newer state ignore
what they do not know (`extra="ignore"`), so an older release still reads it.

Pure: no Pulumi, no AWS. Numbers come back from the engine as doubles (a protobuf Struct), and the model
takes 2.0 as the integer 2 (it used to drop them: a node's recorded index or address block was then
recomputed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

STATE_VERSION: Literal[3] = 3  # 1: the first releases' outputs, 2: 0.1's, 3: with stateVersion (0.2)


class _State(BaseModel):
    """A part of the state: camelCase keys as written, frozen, unknown keys ignored (a newer release's)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="ignore")

    # Fields the reading side derives (migrations) that no run writes.
    _DERIVED: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def output_key(cls, field: str) -> str:
        """The output key of a field (raises KeyError for a field the model does not have)."""
        info = cls.model_fields[field]
        return info.alias or field

    @classmethod
    def wire(cls, **values: Any) -> dict[str, Any]:
        """Output keys for field names, in the order given: what a run exports (values may be Pulumi
        Outputs). An unknown name, or a field only the reading side derives, is a TypeError."""
        out: dict[str, Any] = {}
        for name, value in values.items():
            if name not in cls.model_fields or name in cls._DERIVED:
                raise TypeError(f"{cls.__name__} has no output {name!r}")
            out[cls.output_key(name)] = value
        return out


class NodeBuild(_State):
    """What a node boots with (issue 37's rotation: components/plan/stale.py compares two of them): under a
    node's `wanted`, what the configuration asks a node booted now to be; on the node itself (NodeState's
    fields of the same names), what runs. None: not recorded (outputs of releases before rotation)."""

    image: str | None = None
    instance_type: str | None = None
    boot_digest: str | None = None  # of the user data, without what reaches running nodes anyway
    root_volume_gb: int | None = None


class NodeState(_State):
    """One node as the last update placed and launched it (`nodes[]`)."""

    name: str
    pool: str
    index: int
    roles: tuple[str, ...] = ()
    private_ip: str
    availability_zone: str
    # The subnet key ("private-0"); outputs of the first releases named none: the tier alone (migrations).
    subnet: str | None = None
    ip_block: int | None = None
    key_name: str | None = None
    instance_type: str | None = None  # None: outputs from before it was exported
    market: str = "on-demand"  # outputs without it come from releases that launched on-demand only
    instance_id: str | None = None
    private_dns: str | None = None
    public_ip: str | None = None
    # Spot nodes: their persistent request and the end date EC2 reports for it (None: none or unknown).
    spot_request_id: str | None = None
    spot_valid_until: str | None = None
    # Rotation (issue 37; None / False in outputs of releases before it): the instance's URN (what `rke-aws
    # rotate` replaces), what runs besides instance_type (the instance's image, a digest of its user data,
    # its root volume: an update keeps the ignored inputs' old values), what a node booted now would be
    # (`wanted`), and whether it is the initialising RKE2 server (rotated last).
    urn: str | None = None
    image: str | None = None
    boot_digest: str | None = None
    root_volume_gb: int | None = None
    wanted: NodeBuild | None = None
    first_server: bool = False
    # The pool's `os` the node was launched with (issue 35); outputs leave it out for Ubuntu 24.04, what every
    # node ran before `os` existed (so None is Ubuntu).
    os: str | None = None

    @property
    def running(self) -> dict[str, Any]:
        """What runs, by output key (the keys of `wanted`): components/plan/stale.py compares the two."""
        return NodeBuild.wire(image=self.image, instance_type=self.instance_type, boot_digest=self.boot_digest,
                              root_volume_gb=self.root_volume_gb)

    @property
    def tier(self) -> str:
        """public | private: the subnet's tier."""
        return (self.subnet or "private").split("-")[0]

    @property
    def key(self) -> tuple[str, int]:
        return (self.pool, self.index)

    @property
    def is_etcd(self) -> bool:
        return "etcd" in self.roles


class SubnetState(_State):
    """A subnet the cluster's nodes use (`subnets.<key>`); `id` None when it was saved unknown."""

    availability_zone: str | None = None
    cidr: str | None = None
    id: str | None = None


class RemovedMember(_State):
    """An etcd member an earlier update removed from the stack, not yet known gone from etcd
    (`etcdMembersRemoved[]`)."""

    name: str
    private_ip: str


class SnapshotsState(_State):
    """Where and how servers take etcd snapshots (`etcdSnapshotsRunning`). interval_hours and retention None:
    not known (outputs of releases before they were exported)."""

    bucket: str
    folder: str = ""
    interval_hours: int | None = None
    retention: int | None = None
    kms_key_arn: str | None = None

    @property
    def location(self) -> str:
        return f"s3://{self.bucket}/{self.folder}"

    def same_as(self, other: SnapshotsState) -> bool:
        def eq(a: Any, b: Any) -> bool:
            return a is None or b is None or a == b
        return (self.bucket, self.folder, self.kms_key_arn) == (other.bucket, other.folder, other.kms_key_arn) and \
            eq(self.interval_hours, other.interval_hours) and eq(self.retention, other.retention)

    def output(self) -> dict[str, Any]:
        return self.wire(bucket=self.bucket, folder=self.folder, interval_hours=self.interval_hours,
                         retention=self.retention, kms_key_arn=self.kms_key_arn)

    @classmethod
    def from_location(cls, location: str | None) -> SnapshotsState | None:
        """s3://bucket/folder (etcdSnapshotLocation) with interval and retention unknown."""
        if not location or not location.startswith("s3://"):
            return None
        bucket, _, folder = location[len("s3://"):].partition("/")
        return cls(bucket=bucket, folder=folder)


class RancherState(_State):
    """The imported cluster in Rancher (`rancherCluster`)."""

    name: str | None = None
    upgrades: str | None = None  # rancher.upgrades: rke-aws | rancher
    id: str | None = None  # its ID there (c-xxxxx)
    url: str | None = None
    # The agent's environment set in Rancher (None: outputs from before it was set, whose agent had none)
    agent_env_vars: dict[str, str] | None = None
    # Manifest mode: the servers' deploy controller is known to have applied the registration manifest.
    registration_applied: bool = False
    # Helm mode: the agent's objects are kept on delete (releases before it deleted them first).
    agent_kept_on_delete: bool = False


class ClusterState(_State):
    """A cluster's outputs after its last update (module docstring). Every field is an output key but the
    three the migrations derive (`children_keyed`, `version_recorded`, `releases_unnamed`)."""

    _DERIVED: ClassVar[frozenset[str]] = frozenset({"children_keyed", "version_recorded", "releases_unnamed"})

    state_version: Literal[3] = STATE_VERSION
    cluster_id: str | None = None
    distribution: str | None = None
    kubernetes_version: str | None = None
    region: str | None = None
    control_plane_endpoint: str | None = None
    control_plane_endpoint_type: str | None = None  # dns | nlb (None: not exported)
    kubernetes_api_url: str | None = None
    vpc_id: str | None = None
    subnet_ids: dict[str, str] = {}
    subnets: dict[str, SubnetState] = {}
    security_group_id: str | None = None
    instance_profile_names: dict[str, str] = {}
    instance_profile_arns: dict[str, str] = {}
    nodes: tuple[NodeState, ...] = ()
    ccm_image: str | None = None
    ccm_values: dict[str, Any] | None = None
    # The CCM's Helm release status: stacks deployed before installedInCluster existed set only this.
    ccm_release_status: Any = None
    installed_in_cluster: tuple[str, ...] = ()  # what an update installed through a kubeconfig
    # ---- RKE1
    rke_cluster_yml: str | None = None
    # ---- RKE2
    rke2_registration_address: str | None = None
    rke2_token_parameter: str | None = None
    rke2_agent_token_parameter: str | None = None  # clusters created before agent tokens have none
    rke2_init_marker_parameter: str | None = None
    rke2_kubeconfig_parameter: str | None = None  # its first server publishes the admin kubeconfig
    rke2_manifest_path: str | None = None  # ccm.install: manifest was used (the servers mirror this path)
    rke2_manifests: tuple[str, ...] = ()  # the file names under it
    rke2_manifests_removing: tuple[str, ...] = ()  # emptied ones whose removal is not known done
    # ---- day 2: what the next update judges against
    kubernetes_version_confirmed: str | None = None  # the version every node was last known to run
    kubernetes_version_assumed: bool = False  # ... only assumed (from outputs that did not record it)
    etcd_members_removed: tuple[RemovedMember, ...] = ()
    etcd_snapshots_running: SnapshotsState | None = None  # None: no S3 snapshots
    etcd_snapshot_location: str | None = None  # s3://bucket/folder the nodes were configured with
    etcd_bucket_managed: bool | None = None  # None: outputs from before it existed
    ebs_csi: bool | None = None  # addons.ebsCsi as last deployed; None: from before the option
    hardening: str | None = None  # None: from before the option
    ingress_controller: str | None = None  # RKE2: what the servers' config.yaml names (None: not known)
    pod_security_exemptions: tuple[str, ...] | None = None  # hardening cis: what servers' PSA file exempts
    proxy: dict[str, str] | None = None  # HTTP(S)_PROXY/NO_PROXY the nodes booted with (None: no proxy)
    rancher_cluster: RancherState | None = None
    # ---- workload identity (issue 36; plan/identity.py)
    identity_issuer_url: str | None = None  # the issuer the servers were configured with (None: irsa off)
    identity_signing: bool | None = None  # ... signing with the cluster's key (False: only trusting it)
    identity_key_generations: tuple[int, ...] = ()  # the key generations the servers trust (identity.keyGeneration)
    identity_signing_generation: int | None = None  # ... and the one that signs
    identity_ebs_csi: dict[str, bool] | None = None  # identity_ebs_csi.EbsCredentials (None: the key, as before)
    identity_role_arns: dict[str, str] = {}  # <namespace>/<name> -> role ARN
    identity_discovery: str | None = None  # the issuer's discovery document (public; a BYO issuer publishes it)
    identity_jwks: str | None = None  # ... and its JWKS
    # ---- derived by the migrations, never written
    children_keyed: bool = True  # children keyed by CIDR / subnet ID (releases from kubernetesVersionConfirmed)
    version_recorded: bool = True  # kubernetesVersionConfirmed was recorded (else: assumed from the version)
    releases_unnamed: bool = False  # ccmReleaseStatus without installedInCluster: releases, names unknown

    # ---- what the planner asks of it --------------------------------------------------------------------

    @property
    def etcd_members(self) -> tuple[NodeState, ...]:
        return tuple(n for n in self.nodes if n.is_etcd)

    def pool_nodes(self, pool: str) -> dict[int, NodeState]:
        return {n.index: n for n in self.nodes if n.pool == pool}

    @property
    def subnet_zones(self) -> dict[str, str]:
        """Subnet key -> availability zone."""
        return {k: str(s.availability_zone) for k, s in self.subnets.items()}

    @property
    def known_subnet_ids(self) -> dict[str, str]:
        """Subnet key -> ID, for the subnets whose ID was saved known."""
        return {k: s.id for k, s in self.subnets.items() if s.id}

    @property
    def has_agent_token(self) -> bool:
        return bool(self.rke2_agent_token_parameter)

    @property
    def has_kubeconfig_parameter(self) -> bool:
        return bool(self.rke2_kubeconfig_parameter)

    @property
    def has_cluster_releases(self) -> bool:
        """The CCM Release (and with it what needs the cluster) was installed through a kubeconfig."""
        return bool(self.installed_in_cluster) or self.releases_unnamed

    @property
    def manifest_mode(self) -> bool:
        """RKE2 ccm.install: manifest was used (the servers' helm-controller owns the charts)."""
        return bool(self.rke2_manifest_path)

    @property
    def has_snapshots(self) -> bool:
        return self.etcd_snapshot_location is not None

    @property
    def rancher_agent_unkept(self) -> bool:
        """The helm-mode agent was applied without retainOnDelete (a release before agentKeptOnDelete):
        deleting it would go before the cluster's."""
        return (self.rancher_cluster is not None and bool(self.installed_in_cluster)
                and not self.rancher_cluster.agent_kept_on_delete)

    def running_ccm_install(self) -> str | None:
        """How the running cluster got its CCM: manifest (the servers mirror manifests and no update
        installed it through a kubeconfig), helm, or None (nothing says)."""
        if self.distribution != "rke2" or not self.nodes:
            return None
        return "manifest" if self.manifest_mode and not self.has_cluster_releases else "helm"


# Outputs a flat (0.x) stack exports besides its state: secrets, which the state never holds (a nested
# program exports `RkeCluster.join_token` itself), and the version marker.
FLAT_SECRET_OUTPUTS = {"join_token": "rke2Token"}


def flat_secret_key(name: str) -> str:
    return FLAT_SECRET_OUTPUTS[name]


def aliases() -> Mapping[str, str]:
    """Field name -> output key of ClusterState (the written ones): docs/reference/outputs.md."""
    return {name: ClusterState.output_key(name) for name in ClusterState.model_fields if name not in ClusterState._DERIVED}
