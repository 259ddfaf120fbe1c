"""What the planner decides before the first resource (ClusterPlan) and what the assembly builds from
(ClusterSpec: the configuration, the plan, and the cluster's last state)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic
from ..settings.resolve import ClusterConfig as StackConfig
from ..state.model import ClusterState, RemovedMember
from . import ingress as ingress_plan
from .addons import ManifestPlan
from .backups import BackupPlan, SnapshotTransition
from .day2.confirmations import Observed
from .day2.etcd import EtcdState
from .day2.versions import VersionState
from .identity import IdentityPlan
from .network import PlannedSubnet
from .nodes import PlannedNode
from .proxy import ProxyEnv
from .rancher import RegistrationState


@dataclass(frozen=True)
class ClusterPlan:
    azs: tuple[str, ...]
    subnets: tuple[PlannedSubnet, ...]
    nodes: tuple[PlannedNode, ...]
    # Pool name -> the default image of its CPU architecture (pools without `ami`).
    default_amis: Mapping[str, str] = field(default_factory=dict)
    previous: ClusterState | None = None
    ccm_image: str = ""
    notes: tuple[Diagnostic, ...] = ()  # what the user should know about this update (logged)
    warnings: tuple[Diagnostic, ...] = ()  # what may surprise the user (logged as warnings)
    backup: BackupPlan | None = None
    ebs_csi: bool = False
    published_kubeconfig: str | None = None  # RKE2: what the first server published (secret)
    account_id: str = ""
    # ---- day 2: what runs, as far as this update knows (plan/day2, running.py)
    observed: Observed = Observed()
    version: VersionState | None = None
    etcd: EtcdState | None = None
    etcd_removed: tuple[RemovedMember, ...] = ()  # etcdMembersRemoved after this update
    version_confirmed: str | None = None  # kubernetesVersionConfirmed after this update
    snapshots: SnapshotTransition = SnapshotTransition(None, ())
    manifests: ManifestPlan | None = None
    in_cluster: tuple[str, ...] = ()  # what this update installs through the kubeconfig
    keep_ebs_credentials: bool = False  # the driver is being uninstalled from manifests: its key stays
    # Admin rules of a stack whose state still names them by list position: child name -> the name
    # the existing rule for that CIDR and port has in the state (security.admin_rule_aliases).
    admin_aliases: Mapping[str, str] = field(default_factory=dict)
    proxy: ProxyEnv | None = None  # `proxy`, with what always bypasses it (plan/proxy.py)
    ingress: ingress_plan.IngressPlan | None = None  # RKE2: the servers' ingress controller (plan/ingress.py)
    # Manifest mode with `rancher`: whether the registration manifest is known applied (then skipped)
    rancher_registration: RegistrationState | None = None
    # Pool name -> its CPU architecture (x86_64 | arm64), from EC2's description of its instance type: the OS
    # steps of its nodes' boot (issue 35).
    pool_archs: Mapping[str, str] = field(default_factory=dict)
    identity: IdentityPlan | None = None  # identity.serviceAccounts irsa (plan/identity.py)

    @property
    def server_ips(self) -> tuple[str, ...]:
        """RKE2 servers (any with controlplane or etcd), RKE1 controlplane nodes: the peers an initialising
        server probes."""
        return tuple(n.private_ip for n in self.nodes if n.runs_api_server or n.runs_etcd_supervisor)

    @property
    def api_server_ips(self) -> tuple[str, ...]:
        """The endpoint's 6443 targets (and the DNS name's addresses): nodes running kube-apiserver."""
        return tuple(n.private_ip for n in self.nodes if n.runs_api_server)

    @property
    def supervisor_ips(self) -> tuple[str, ...]:
        """The endpoint's 9345 targets (RKE2): servers running etcd, whose supervisors take joining servers
        and agents alike. Without split roles these are the API servers."""
        return tuple(n.private_ip for n in self.nodes if n.runs_etcd_supervisor)

    @property
    def first_deployment(self) -> bool:
        return self.previous is None


@dataclass(frozen=True)
class ClusterSpec:
    """The resolved spec the assembly builds: the configuration, the plan, and what the cluster's last state
    decides about the resources. Everything here is known before the first resource."""
    config: StackConfig
    plan: ClusterPlan
    previous: ClusterState | None = None

    @property
    def legacy_names(self) -> bool:
        """Last updated by a release that named some children by list position: they get aliases from those
        names (components/aws/security.py, endpoint.py, network.py)."""
        return self.previous is not None and not self.previous.children_keyed

    @property
    def legacy_subnet_keys(self) -> dict[str, str] | None:
        if not self.legacy_names or self.previous is None:
            return None
        return {v: k for k, v in self.previous.known_subnet_ids.items()}

    @property
    def snapshot_roles(self) -> tuple[str, ...]:
        """The roles whose nodes take snapshots: RKE2 servers; RKE1 etcd nodes (their pool's role)."""
        return tuple(sorted({n.iam_role for n in self.plan.nodes if n.pool.is_etcd} or {"controlplane"}))

    @property
    def node_roles(self) -> tuple[str, ...]:
        """The IAM roles the cluster's nodes run under."""
        return tuple(sorted({n.iam_role for n in self.plan.nodes} or {"controlplane", "worker"}))

    @property
    def agent_token(self) -> bool:
        """Clusters created before agent tokens keep one token (components/aws/join_secrets.py)."""
        return self.plan.first_deployment or bool(self.previous and self.previous.has_agent_token)

    @property
    def cluster_exists(self) -> bool:
        return bool(self.previous and self.previous.etcd_members)

    @property
    def publish_kubeconfig(self) -> bool:
        """New clusters only: a running cluster's first server never re-reads its user data."""
        return self.plan.first_deployment or bool(self.previous and self.previous.has_kubeconfig_parameter)

    @property
    def had_cluster_releases(self) -> bool:
        return bool(self.previous and self.previous.has_cluster_releases)
