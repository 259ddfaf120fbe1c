"""Everything decided before the first resource is registered: zones, subnets, node identities.

Look-ups (availability zones, existing subnets) are plain invokes, so their answers are
ordinary values at preview time and every node name is known in `pulumi preview`. Others check,
before anything is registered, what EC2 would refuse only at RunInstances: the key pair, each
pool's instance type (offered where its nodes go, the image's architecture and virtualization).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi_aws as aws

from ..settings import versions
from ..settings.config import ConfigError, StackConfig, split_server_pools
from ..settings.load import load_config
from . import ccm_values, cluster_documents, rancher, running
from . import ingress as ingress_plan
from .cluster_documents import AGENT_PLAN, ETCD_PLAN, SERVER_PLAN, upgrade_manifests
from .guards import (
    cluster_id_problems,
    etcd_growth_problems,
    ingress_removal_problems,
    market_problems,
    quorum_problems,
    region_problems,
    role_problems,
    version_problems,
)
from .history import (
    CONFIRM_CLI_KEY,
    CONFIRM_KEY,
    EtcdState,
    Observed,
    Previous,
    Snapshots,
    SnapshotTransition,
    Statement,
    VersionState,
    etcd_removed_after,
    etcd_state,
    parse_codes,
    parse_version,
    snapshot_transition,
    version_state,
)
from .lookups import (
    _account,
    _available_zones,
    _bucket_exists,
    _bucket_owned,
    _collect,
    _default_route,
    _existing_subnets,
    _interfaces,
    _looked_up,
    _own_node_holds,
    _route_table,
    _zones,
    published_kubeconfig_problem,
    vpc_cidrs,
)
from .names import (
    ADMIN_PORTS,
    KUBE_API_PORT,
    KUBECONFIG_PENDING,
    bucket_name,
    cidr_key,
    endpoint_name,
    kubeconfig_parameter_name,
)
from .network import PlannedSubnet, plan_subnets
from .nodes import CapacityError, PlannedNode, plan_nodes
from .proxy import ProxyEnv, proxy_env
from .snapshots import EtcdS3, etcd_s3_keys


@dataclass(frozen=True)
class ClusterPlan:
    azs: tuple[str, ...]
    subnets: tuple[PlannedSubnet, ...]
    nodes: tuple[PlannedNode, ...]
    # Pool name -> the default image of its CPU architecture (pools without `ami`).
    default_amis: Mapping[str, str] = field(default_factory=dict)
    previous: Previous | None = None
    ccm_image: str = ""
    notes: tuple[str, ...] = ()  # what the user should know about this update (logged)
    warnings: tuple[str, ...] = ()  # what may surprise the user (logged as warnings)
    backup: BackupPlan | None = None
    ebs_csi: bool = False
    published_kubeconfig: str | None = None  # RKE2: what the first server published (secret)
    account_id: str = ""
    # ---- day 2: what runs, as far as this update knows (history.py, running.py)
    observed: Observed = Observed()
    version: VersionState | None = None
    etcd: EtcdState | None = None
    etcd_removed: tuple[dict, ...] = ()  # etcdMembersRemoved after this update
    version_confirmed: str | None = None  # kubernetesVersionConfirmed after this update
    snapshots: SnapshotTransition = SnapshotTransition(None, ())
    manifests: ManifestPlan | None = None
    in_cluster: tuple[str, ...] = ()  # what this update installs through the kubeconfig
    keep_ebs_credentials: bool = False  # the driver is being uninstalled from manifests: its key stays
    # Admin rules of a stack whose state still names them by list position: child name -> the name
    # the existing rule for that CIDR and port has in the state (admin_rule_aliases).
    admin_aliases: Mapping[str, str] = field(default_factory=dict)
    proxy: ProxyEnv | None = None  # `proxy`, with what always bypasses it (plan/proxy.py)
    ingress: ingress_plan.IngressPlan | None = None  # RKE2: the servers' ingress controller (plan/ingress.py)
    # Manifest mode with `rancher`: whether the registration manifest is known applied (then skipped)
    rancher_registration: rancher.RegistrationState | None = None

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
    """The resolved spec RkeCluster builds: the configuration, the plan, and what the stack's last outputs
    decide about the resources (history.py). Everything here is known before the first resource."""
    config: StackConfig
    plan: ClusterPlan
    previous: Previous | None = None

    @property
    def legacy_names(self) -> bool:
        """Last updated by a release that named some children by list position: they get aliases from those
        names (components/aws/security.py, endpoint.py, network.py)."""
        return self.previous is not None and not self.previous.keyed_children

    @property
    def legacy_subnet_keys(self) -> dict[str, str] | None:
        if not self.legacy_names or self.previous is None:
            return None
        return {v: k for k, v in self.previous.subnet_ids.items()}

    @property
    def snapshot_roles(self) -> tuple[str, ...]:
        """The roles whose nodes take snapshots: RKE2 servers; RKE1 etcd nodes (their pool's role)."""
        return tuple(sorted({n.iam_role for n in self.plan.nodes if n.pool.is_etcd} or {"controlplane"}))

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


def resolve(previous: Previous | None) -> ClusterSpec:
    """The configuration read and checked against the stack's last outputs, then everything planned."""
    cfg = load_config(previous)
    return ClusterSpec(cfg, build(cfg, previous), previous)


@dataclass(frozen=True)
class BackupPlan:
    bucket: str
    folder: str
    created: bool  # this program creates (and tags) the bucket
    etcd_s3: Any = None  # plan/snapshots.EtcdS3: what the snapshotting nodes are configured with
    notes: tuple[str, ...] = ()


# RKE2 manifest mode: the files the servers mirror (components/cluster/manifests.py), by base name, and the
# HelmChart each one creates (kube-system), which helm-controller uninstalls when it is deleted.
MANIFEST_HELMCHARTS = {"ccm": "aws-cloud-controller-manager", "ebs-csi": "aws-ebs-csi-driver"}


@dataclass(frozen=True)
class ManifestPlan:
    """Manifest files this update delivers (base names) and the ones it empties.

    RKE2's deploy controller never deletes what a manifest created when the file disappears (k3s
    pkg/deploy/controller.go lists only the files present); applying a file with fewer objects
    prunes the rest (it applies with the Addon as owner). So a manifest that is no longer wanted
    becomes an empty one under the same Addon name (manifests.tombstone_name), kept for good:
    rke2-server re-applies every file at each start, and an emptied file applies nothing. A deleted
    HelmChart is uninstalled by helm-controller (k3s-io/helm-controller pkg/controllers/chart OnRemove).
    """
    live: tuple[str, ...]  # base names delivered with content
    emptied: tuple[str, ...]  # base names delivered empty
    removing: tuple[str, ...]  # emptied ones whose removal is not known done (rke2ManifestsRemoving)
    statement: Statement | None = None


def _check_existing_network(cfg: StackConfig, subnets: list[PlannedSubnet], found: dict[str, Any],
                            nodes: list[PlannedNode], previous: Previous | None) -> list[str]:
    """What a bring-your-own VPC must offer the nodes and the CCM, checked with look-ups; each
    problem names the key, the subnet and the fix."""
    problems: list[str] = []
    vpc = _looked_up("rke-aws:network.vpcId", f"looking up '{cfg.network.vpc_id}'", "check the VPC ID",
                     lambda: aws.ec2.get_vpc(id=cfg.network.vpc_id))
    for flag, attribute in (("enable_dns_support", "enable-dns-support"), ("enable_dns_hostnames", "enable-dns-hostnames")):
        if not getattr(vpc, flag):
            problems.append(f"rke-aws:network.vpcId: '{cfg.network.vpc_id}' has {attribute} off; node names are EC2 "
                            f"private DNS names and need it: aws ec2 modify-vpc-attribute --vpc-id {cfg.network.vpc_id} "
                            f"--{attribute}")
    for plan in subnets:
        sid = found[plan.key].id
        key = f"rke-aws:network.{plan.tier}SubnetIds[{plan.az_index}]"
        route = _default_route(_route_table(cfg, key, sid))
        if plan.tier == "public" and not (route and (route.gateway_id or "").startswith("igw-")):
            problems.append(f"{key}: '{sid}' has no route to an internet gateway, so it is not public (the CCM puts "
                            "internet-facing load balancers there); list a public subnet or add 0.0.0.0/0 via an igw-")
        if plan.tier == "private" and not (route and (route.nat_gateway_id or route.transit_gateway_id or
                                                       route.network_interface_id or route.instance_id)):
            problems.append(f"{key}: '{sid}' has no default route (NAT gateway, transit gateway or appliance); its "
                            "nodes download RKE2/Docker at boot and call SSM: add 0.0.0.0/0 via a NAT gateway")
    # New nodes' planned addresses must be free (no reservation protects them in subnets not ours).
    running = {n.private_ip for n in previous.nodes} if previous else set()
    for plan in subnets:
        names = {n.private_ip: n.name for n in nodes if n.subnet.key == plan.key and n.private_ip not in running}
        wanted = sorted(names)
        if not wanted:
            continue
        sid = found[plan.key].id
        key = f"rke-aws:network.{plan.tier}SubnetIds[{plan.az_index}]"
        used = _interfaces(key, sid, wanted)
        if used.ids:
            # An update that failed after creating instances leaves the stack's outputs as they were
            # after the last successful one (pulumi/pulumi pkg/resource/deploy/step_executor.go keeps
            # the old outputs on error), while those instances run: an instance of this cluster named
            # as the planned node holds its address because it is that node.
            theirs = [ip for ip in wanted if not _own_node_holds(cfg, key, ip, names[ip])]
            used = _interfaces(key, sid, theirs) if theirs else None
        if used is not None and used.ids:
            problems.append(f"{key}: planned node addresses in '{sid}' ({', '.join(theirs)}) are taken by "
                            f"{', '.join(sorted(used.ids))}; give the pools there another ipBlock")
    return problems


# ---- what runs ---------------------------------------------------------------------------------

def observe(cfg: StackConfig, previous: Previous | None, kubeconfig: str | None) -> Observed:
    """The cluster as read through the kubeconfig this update has (running.py), or why not, and
    the user's confirmation codes. Nothing is read for a new stack."""
    codes = parse_codes(cfg.confirm_cluster_state)
    if previous is None or not previous.nodes:
        return Observed(codes=codes)
    if kubeconfig is None:
        return Observed(codes=codes)
    reading = running.read(kubeconfig, cfg.distribution == "rke2")
    if isinstance(reading, running.Unreadable):
        return Observed(unreadable=reading.reason, codes=codes)
    return Observed(live=reading, codes=codes)


def _observed_notes(observed: Observed, previous: Previous | None) -> tuple[str, ...]:
    if previous is None or not previous.nodes:
        return ()
    if observed.live is not None:
        live = observed.live
        return (f"read the running cluster ({live.server}, read-only): {len(live.nodes)} nodes, etcd members "
                f"{', '.join(live.etcd_members) or 'none'}; the day-2 guards judge against it",)
    why = observed.no_read()
    return (f"{why[0].upper() + why[1:]}; the day-2 guards judge against this stack's last outputs and your "
            "confirmations (confirmClusterState)",)


_CODE_RE = re.compile(r"confirmClusterState ([a-z]+-[0-9a-f]{10})\b", re.ASCII)


def with_combined_confirmation(problems: list[str], observed: Observed) -> list[str]:
    """Each refusal prints `pulumi config set confirmClusterState <its code>`, and each such
    command replaces the value: with more than one code pending (or one pending and others already
    set), running them in turn keeps only the last (review finding 10). One more line gives the
    value holding all of them, comma-separated (CONFIRM_CODES_PATTERN in settings/model.py)."""
    pending = list(dict.fromkeys(c for p in problems for c in _CODE_RE.findall(p)))
    if not pending:
        return problems
    codes = sorted(set(observed.codes) - set(pending)) + pending
    if len(codes) < 2:
        return problems
    return problems + [f"{CONFIRM_KEY}: to confirm {'these' if len(pending) > 1 else 'this'} together with "
                       f"{'each other' if len(codes) == len(pending) else 'what is already confirmed'}, set every "
                       f"code at once (each command above replaces the value): `pulumi config set {CONFIRM_CLI_KEY} "
                       f"{','.join(codes)}`, then `pulumi up` again"]


def build(cfg: StackConfig, previous: Previous | None = None) -> ClusterPlan:
    """Everything before the first resource; `previous`: the stack's last outputs (history.read())."""
    # A different cluster ID or region is a different cluster: nothing else compares.
    problems = cluster_id_problems(previous, cfg.cluster_id, cfg.stack) + region_problems(previous, cfg.region)
    if problems:
        raise ConfigError(problems)
    kubeconfig, more = _published_kubeconfig(cfg, previous)
    observed = observe(cfg, previous, cfg.kubeconfig.reveal() if cfg.kubeconfig is not None else kubeconfig)
    vstate = version_state(previous, observed, cfg.cluster_id)
    problems = version_problems(previous, cfg.distribution, cfg.kubernetes_version, vstate, observed)
    problems += role_problems(previous, cfg.node_pools)
    problems += market_problems(previous, cfg.node_pools)
    problems += rancher.version_problems(cfg, previous, observed) + rancher.switch_problems(cfg, previous, vstate, observed)
    problems += rancher.removal_problems(cfg, previous)
    problems += rancher.url_problems(cfg, previous, observed)
    if problems:
        raise ConfigError(with_combined_confirmation(problems, observed))
    found: dict[str, Any] = {}
    if cfg.network.bring_your_own:
        _available_zones(cfg, regular_only=False)
        subnets, found = _existing_subnets(cfg)
        azs = [s.az for s in subnets if s.tier == "private"]
    else:
        azs = _zones(cfg)
        assert cfg.network.vpc_cidr is not None  # unset only for a brought VPC (config.py)
        try:
            subnets = plan_subnets(cfg.network.vpc_cidr, azs, cfg.network.public_subnet_cidrs,
                                   cfg.network.private_subnet_cidrs, previous.subnet_zones if previous else None)
        except ValueError as err:
            raise ConfigError([f"rke-aws:network.availabilityZones: {err}"]) from None
    ebs_csi = _ebs_csi(cfg, previous)
    try:
        nodes = plan_nodes(cfg, subnets, previous)
    except CapacityError as exc:
        raise ConfigError(exc.problems) from None
    problems = _check_existing_network(cfg, subnets, found, nodes, previous) if found else []
    members = [n.member(cfg.access.ssh_key_name) for n in nodes]
    estate = etcd_state(previous, observed, cfg.cluster_id)
    problems += quorum_problems(previous, members, estate)
    problems += etcd_growth_problems(previous, members, split_server_pools(cfg.distribution, cfg.node_pools))
    available = kubeconfig is not None or cfg.kubeconfig is not None
    problems += upgrade_problems(cfg, previous, nodes, kubeconfig_published=kubeconfig is not None, state=vstate,
                                 observed=observed)
    manifests = manifest_plan(cfg, previous, ebs_csi, observed)
    registration = rancher.registration_state(cfg, previous, observed)
    in_cluster = planned_in_cluster(cfg, ebs_csi, available, manifests)
    problems += in_cluster_problems(cfg, previous, available)
    problems += allow_uninstall_problems(cfg, previous, in_cluster)
    problems += cluster_network_problems(cfg, subnets) if found else []
    image, notes = ccm_image(cfg, previous, vstate)
    proxy = proxy_env(cfg.proxy, vpc_cidrs(cfg), endpoint_name(cfg.cluster_id))
    problems += manifest_size_problems(cfg, image, proxy)
    archs, known_types = pool_architectures(cfg)
    problems += architecture_problems(cfg, archs)
    try:
        default_images = _default_images(cfg, archs)
    except ConfigError as err:  # reported with the rest
        problems, default_images = problems + err.problems, {}
    booting = booting_nodes(cfg, previous, nodes)
    ingress = ingress_plan.plan(cfg.distribution, cfg.ingress.controller, cfg.kubernetes_version, cfg.cluster_id,
                                previous, observed, [n.name for n in booting if n.pool.is_server])
    problems += list(ingress.problems if ingress else ())
    problems += ingress_removal_problems(cfg.kubernetes_version, ingress, previous.kubernetes_version if previous else None)
    keys, key_warnings = key_pair_problems(cfg, launching=bool(booting))
    problems += keys
    machine, machine_warnings = machine_problems(cfg, nodes, previous, default_images, booting, known_types)
    problems += machine
    machine_warnings = tuple(key_warnings) + machine_warnings
    if problems:
        raise ConfigError(with_combined_confirmation(problems, observed))
    admin_aliases = admin_rule_aliases(cfg, previous)
    account = _account(cfg)
    backup = _backup(cfg, account, previous)
    snapshots = snapshot_transition(previous, _configured_snapshots(cfg, backup), observed, cfg.cluster_id,
                                    cfg.distribution, _snapshot_steps(cfg, backup))
    return ClusterPlan(tuple(azs), tuple(subnets), tuple(nodes), {p: i.id for p, i in default_images.items()}, previous,
                       image, _observed_notes(observed, previous) + notes + more,
                       warnings=(_hardening_warnings(cfg, previous) + proxy_warnings(previous, proxy)
                                 + instance_type_warnings(cfg, previous, nodes)
                                 + spot_request_warnings(cfg, previous, nodes)
                                 + machine_warnings
                                 + ((snapshots.warning,) if snapshots.warning else ())
                                 + endpoint_warnings(cfg, previous, subnets, found)
                                 + removal_warnings(cfg, previous, ebs_csi, manifests, in_cluster)
                                 + rancher.warnings(cfg, previous)
                                 + rancher.psa_warnings(cfg, previous) + rancher.agent_env_warnings(cfg, previous, proxy)
                                 + rancher.arm64_warnings(cfg, archs)
                                 + (ingress.warnings if ingress else ())
                                 + ((registration.warning,) if registration and registration.warning else ())
                                 + stale_confirmation_warnings(cfg, observed, vstate, estate, snapshots, manifests,
                                                               ingress, registration)
                                 + (backup.notes if backup else ())),
                       backup=backup, account_id=account,
                       ebs_csi=ebs_csi,
                       published_kubeconfig=kubeconfig,
                       observed=observed, version=vstate, etcd=estate,
                       etcd_removed=tuple(etcd_removed_after(previous, members, estate, observed)),
                       version_confirmed=_version_confirmed(cfg, previous, vstate),
                       snapshots=snapshots, manifests=manifests, in_cluster=in_cluster,
                       keep_ebs_credentials=bool(manifests and "ebs-csi" in manifests.removing),
                       admin_aliases=admin_aliases,
                       proxy=proxy, ingress=ingress, rancher_registration=registration)



def admin_rule_aliases(cfg: StackConfig, previous: Previous | None) -> dict[str, str]:
    """Releases before the CIDR-keyed names numbered admin rules by list position, and their last
    outputs do not say which CIDR each position held. An alias from the list's current order would
    match a new CIDR to another CIDR's old rule when adminCidrs changes in the same update (review
    finding 3): the engine updates that rule's cidrIpv4 (ModifySecurityGroupRules) before it deletes
    the rule already holding the CIDR, and AWS refuses duplicate rules (InvalidPermission.Duplicate).
    So the existing rules are read (DescribeSecurityGroupRules: aws.vpc.get_security_group_rules,
    then get_security_group_rule for each) and each CIDR and port is aliased to the rule that holds
    it, by that rule's Name tag, which the old release set to the rule's resource name. A CIDR no
    rule holds gets no alias (a new rule); old rules for CIDRs no longer listed are deleted."""
    if previous is None or previous.keyed_children or not cfg.access.admin_cidrs:
        return {}
    name = cfg.cluster_id
    groups: list[tuple[str, str, tuple[int, ...], str]] = []  # (group ID, child prefix, ports, old-name pattern)
    fix = ("check your AWS credentials (ec2:DescribeSecurityGroupRules, ec2:DescribeSecurityGroups), or leave "
           "access.adminCidrs as it was for this update and change it in the next one")
    key = "rke-aws:access.adminCidrs"
    if previous.security_group_id:
        groups.append((previous.security_group_id, f"{name}-nodes-admin", ADMIN_PORTS,
                       rf"{re.escape(name)}-nodes-admin-\d+-(\d+)"))
    if cfg.endpoint == "nlb" and previous.endpoint_mode in (None, "nlb") and previous.vpc_id:
        found = _looked_up(key, f"looking up the control-plane load balancer's security group ({name}-endpoint)",
                           fix, lambda: aws.ec2.get_security_groups(filters=[
                               {"name": "vpc-id", "values": [previous.vpc_id]},
                               {"name": "tag:Name", "values": [f"{name}-endpoint"]}]))
        for gid in found.ids:
            groups.append((gid, f"{name}-endpoint-admin", (KUBE_API_PORT,), rf"{re.escape(name)}-endpoint-admin-\d+()"))
    aliases: dict[str, str] = {}
    problems: list[str] = []
    for gid, prefix, ports, pattern in groups:
        listed = _looked_up(key, f"looking up the rules of security group {gid}, whose admin rules this update "
                            "renames", fix,
                            partial(aws.vpc.get_security_group_rules, filters=[{"name": "group-id", "values": [gid]}]))
        for rid in listed.ids:
            rule = _looked_up(key, f"looking up security group rule {rid}", fix,
                              partial(aws.vpc.get_security_group_rule, security_group_rule_id=rid))
            if rule.is_egress or rule.cidr_ipv4 not in cfg.access.admin_cidrs or rule.from_port not in ports \
                    or rule.to_port != rule.from_port or rule.ip_protocol != "tcp":
                continue
            old = (rule.tags or {}).get("Name") or ""
            m = re.fullmatch(pattern, old, re.ASCII)
            new = f"{prefix}-{cidr_key(rule.cidr_ipv4)}" + (f"-{rule.from_port}" if len(ports) > 1 else "")
            if m is None or (m.group(1) and int(m.group(1)) != rule.from_port) or new in aliases:
                # Not a rule this program named: the new rule would duplicate it, which AWS refuses.
                problems.append(f"{key}: security group {gid} already has rule {rid} (Name '{old}') for "
                                f"{rule.cidr_ipv4} port {rule.from_port}, which is not one of this stack's admin "
                                "rules, so the rule this update creates would duplicate it "
                                "(InvalidPermission.Duplicate); remove that rule, or leave this CIDR out of "
                                "access.adminCidrs for this update")
                continue
            aliases[new] = old
    if problems:
        raise ConfigError(problems)
    return aliases


def _version_confirmed(cfg: StackConfig, previous: Previous | None, vstate: VersionState) -> str | None:
    """kubernetesVersionConfirmed after this update: the version every node is known to run. A new
    cluster boots the configured version everywhere; a change is confirmed by a later update."""
    if previous is None or not previous.nodes:
        return cfg.kubernetes_version
    return vstate.target if vstate.complete else vstate.confirmed


def stale_confirmation_warnings(cfg: StackConfig, observed: Observed, vstate: VersionState, estate: EtcdState,
                                snapshots: SnapshotTransition, manifests: ManifestPlan | None,
                                ingress: ingress_plan.IngressPlan | None = None,
                                registration: rancher.RegistrationState | None = None) -> tuple[str, ...]:
    """A code that confirms nothing this update needs: the state it confirmed has moved on."""
    current = {s.code for s in (vstate.statement, estate.statement, snapshots.statement,
                                manifests.statement if manifests else None,
                                ingress.statement if ingress else None,
                                registration.statement if registration else None) if s is not None}
    stale = sorted(observed.codes - current)
    if not stale:
        return ()
    return (f"rke-aws:confirmClusterState: {', '.join(stale)} confirms nothing this update needs (a confirmation "
            "names one exact state, and the cluster has moved on from it); remove it: `pulumi config rm "
            f"{CONFIRM_CLI_KEY}`",)


def _ebs_csi(cfg: StackConfig, previous: Previous | None) -> bool:
    """addons.ebsCsi; unset: on for a new stack, then whatever the stack last deployed; a cluster
    from before the option gains a storage driver only when asked."""
    if cfg.addons.ebs_csi is not None:
        return cfg.addons.ebs_csi
    if previous is None:
        return True
    return bool(previous.ebs_csi)


def _hardening_warnings(cfg: StackConfig, previous: Previous | None) -> tuple[str, ...]:
    """Node configuration is read at first boot only: a changed profile reaches new nodes only."""
    before = previous.hardening if previous else None
    if previous is None or before is None or before == cfg.hardening or not previous.nodes:
        return ()
    return (f"rke-aws:hardening: {before} -> {cfg.hardening} applies to nodes as they first boot; the running "
            f"{len(previous.nodes)} keep '{before}' until replaced (servers one at a time, then agents: README "
            "'Replacing nodes deliberately'); until then the cluster mixes both",)


def proxy_warnings(previous: Previous | None, proxy: ProxyEnv | None) -> tuple[str, ...]:
    """The proxy is in the user data, read at first boot only (nodes.IGNORED_ON_UPDATE): running nodes keep
    the one they booted with in RKE2's or Docker's environment and in their boot and manifest-sync
    scripts; the CCM and the EBS CSI driver take the new one with this update."""
    before = dict(previous.proxy or {}) if previous else {}
    now = proxy.variables() if proxy else {}
    if previous is None or before == now or not previous.nodes:
        return ()
    def shown(v: Mapping[str, str]) -> str:
        return f"{v.get('HTTPS_PROXY')} (NO_PROXY {v.get('NO_PROXY')})" if v else "no proxy"
    return (f"rke-aws:proxy: {shown(before)} -> {shown(now)} reaches nodes as they first boot; the running "
            f"{len(previous.nodes)} keep {shown(before)} in /etc/default/rke2-* (RKE2, containerd) or Docker's "
            "drop-in, and in the manifest sync, until replaced (servers one at a time, then agents: README "
            "'Replacing nodes deliberately'); keep the old proxy serving until then. The CCM and the EBS CSI "
            "driver use the new one after this update (manifest mode: once the servers' sync, still through the "
            "old proxy, has mirrored their manifests)",)


def instance_type_warnings(cfg: StackConfig, previous: Previous | None, nodes: Sequence[PlannedNode]) -> tuple[str, ...]:
    """Running nodes keep their instance type (nodes.IGNORED_ON_UPDATE): say which servers and spot workers
    differ from their pool, why a type never changes in place there, and how to roll them, on every update
    until they are replaced (every stale node, agents included, also gets a `stale:` note: plan/stale.py)."""
    if previous is None:
        return ()
    before = {n.key: n for n in previous.nodes}
    out = []
    for i, pool in enumerate(cfg.node_pools):
        if not (pool.is_server or pool.is_spot):
            continue
        running_nodes = [before.get((pool.name, n.index)) for n in nodes if n.pool.name == pool.name]
        stale = [(r.name, r.instance_type) for r in running_nodes
                 if r is not None and r.instance_type not in (None, pool.instance_type)]
        if stale:
            names = ", ".join(f"{name} ({old})" for name, old in stale)
            why = ("EC2 changes it by stopping the instance, and one update would stop every server of the pool "
                   "together (etcd quorum, the API)" if pool.is_server else
                   "EC2 cannot change a spot instance's type (a stopped spot instance keeps it), so the new type "
                   "would replace the node, and one update would replace every spot node of the pool at once")
            out.append(f"rke-aws:nodePools[{i}].instanceType: {pool.instance_type}, but the running {names} keep "
                       f"their type: {why}. Replace them one at a time: `python3 -m offline.tasks rotate <stack>` "
                       f"(README 'Patching nodes by rotation'; by hand `pulumi up --replace <urn>`, 'Replacing nodes "
                       f"deliberately'); nodes created from now on are {pool.instance_type}")
    return tuple(out)


def spot_request_warnings(cfg: StackConfig, previous: Previous | None, nodes: Sequence[PlannedNode]) -> tuple[str, ...]:
    """What EC2 does with running spot nodes' persistent requests that Pulumi does not see.

    - A request launches its instance again when the instance is terminated without the request being
      cancelled first (EC2 User Guide, "Cancel a Spot Instance request"; only deleting the node through
      Pulumi cancels it: terraform-provider-aws resourceInstanceDelete). The relaunch carries the node's
      launch specification (address, user data), and it is not in the state: found by the requests
      this stack's outputs record (DescribeInstances filter spot-instance-request-id) and by the node's
      Name and cluster tags, each instance not among the outputs' instance IDs.
    - A request with an end date (valid_until, read back by the provider) ends then, and EC2 never starts
      an interrupted node of an ended request again. This program sets none (nodes.SPOT_VALID_UNTIL)."""
    if previous is None:
        return ()
    planned = {(n.pool.name, n.index) for n in nodes if n.pool.is_spot}
    running = [r for r in previous.nodes if r.market == "spot" and r.key in planned]
    if not running:
        return ()
    known = {r.instance_id for r in previous.nodes if r.instance_id}
    out: list[str] = []
    found: dict[str, set[str]] = {}  # node name ("": not known) -> instances not in the outputs
    by_ip = {r.private_ip: r.name for r in running}
    states = ["pending", "running", "stopping", "stopped"]
    requests = sorted(r.spot_request_id for r in running if r.spot_request_id)
    searches = [("launched by this stack's spot requests",
                 [{"name": "spot-instance-request-id", "values": requests}])] if requests else []
    searches.append(("named like this stack's spot nodes",
                     [{"name": f"tag:{cfg.cluster_tag_key}", "values": ["owned"]},
                      {"name": "tag:Name", "values": sorted(r.name for r in running)}]))
    for what, filters in searches:
        try:
            listed = aws.ec2.get_instances(filters=filters, instance_state_names=states)
        except Exception as err:  # noqa: BLE001 - a look-up for a warning does not stop the update
            out.append(f"rke-aws:nodePools: looking up instances {what} failed ({' '.join(str(err).split())}), so "
                       "this update cannot tell whether a spot request launched a node again outside Pulumi "
                       "(README 'Spot worker pools')")
            continue
        ips = list(listed.private_ips or ())
        for k, iid in enumerate(listed.ids or ()):
            if iid not in known:
                found.setdefault(by_ip.get(ips[k] if k < len(ips) else "", ""), set()).add(iid)
    for name, ids in sorted(found.items()):
        request = next((r.spot_request_id for r in running if r.name == name and r.spot_request_id), None)
        which = f"node {name}" if name else "a spot node of this stack"
        cancel = (f"`aws ec2 cancel-spot-instance-requests --spot-instance-request-ids {request}`" if request else
                  "cancel the node's spot request (`aws ec2 describe-instances --instance-ids <id> --query "
                  "'Reservations[].Instances[].SpotInstanceRequestId'`, then `aws ec2 "
                  "cancel-spot-instance-requests`)")
        out.append(f"rke-aws:nodePools: instance(s) {', '.join(sorted(ids))} carry the name, address or spot request "
                   f"of {which} but are not among this stack's instances: EC2 launches a persistent spot request's instance again "
                   "when it is terminated without the request being cancelled first, with the same user data and "
                   "address, billed and not managed by Pulumi. If the last `pulumi up` failed after launching it, "
                   f"the next successful one records it and this goes away; otherwise: {cancel} first (cancelling "
                   f"terminates nothing), then `aws ec2 terminate-instances --instance-ids {' '.join(sorted(ids))}` and "
                   "wait until they are terminated (their address is the node's), then `pulumi up --refresh` (README "
                   "'Spot worker pools')")
    for r in running:
        if r.spot_valid_until:
            out.append(f"rke-aws:nodePools: the spot request of {r.name} ({r.spot_request_id or 'its request'}) ends "
                       f"at {r.spot_valid_until} (EC2's ValidUntil for it): from then on EC2 never starts the node again "
                       "once it is interrupted. Replace the node (`pulumi up --replace <urn>`, README 'Replacing nodes "
                       "deliberately'): this program asks for requests without an end date")
    return tuple(out)


def endpoint_warnings(cfg: StackConfig, previous: Previous | None, subnets: Sequence[PlannedSubnet],
                      found: Mapping[str, Any]) -> tuple[str, ...]:
    """A Network Load Balancer cannot lose a subnet: the provider replaces it (terraform-provider-aws
    internal/service/elbv2/load_balancer.go customizeDiffLoadBalancerNLB: ForceNew when subnets are
    removed or swapped, in place when only added). It keeps its fixed name, so it is replaced
    delete-first (endpoint.py); say what that means while it happens."""
    if cfg.endpoint != "nlb" or previous is None or not previous.nodes or previous.endpoint_mode == "dns":
        return ()
    private = [s for s in subnets if s.tier == "private"]
    if cfg.network.bring_your_own:
        before = {v for k, v in previous.subnet_ids.items() if k.startswith("private-")}
        now = {found[s.key].id for s in private if s.key in found}
    else:
        before = {k for k in previous.subnet_zones if k.startswith("private-")}
        now = {s.key for s in private}
    lost = sorted(before - now)
    if not before or not lost:
        return ()
    return (f"rke-aws:network: the control-plane load balancer leaves subnet(s) {', '.join(lost)}; AWS cannot remove "
            "a subnet from a Network Load Balancer, so it is replaced: deleted first and created again under its "
            "name, with new addresses behind the same endpoint name. For those few minutes the endpoint does not "
            "answer: kubectl and nodes joining wait, running nodes keep talking to the servers directly",)


# ---- etcd snapshots ----------------------------------------------------------------------------

def _backup(cfg: StackConfig, account: str, previous: Previous | None) -> BackupPlan | None:
    b = cfg.etcd_backup
    if not b.enabled:
        return None
    bucket = b.bucket or bucket_name(cfg.cluster_id, account, cfg.region)
    folder = b.folder or cfg.cluster_id
    created = not b.bucket
    notes: tuple[str, ...] = ()
    # etcdBucketManaged None: outputs of a release before it, which declared the bucket whenever it
    # was not set by the user and the last snapshot location was in it (5e0c40f^ components/plan.py
    # _backup, `ours`): its last update put the bucket and its settings in the state, so they stay
    # declared (same names, same URNs) rather than leave the state unseen (review finding 5).
    managed = previous is not None and previous.bucket_managed in (True, None) and \
        (previous.snapshot_location or "").startswith(f"s3://{bucket}/")
    if created and not managed and _bucket_exists(bucket):
        # Kept by an earlier `pulumi destroy` (retain_on_delete), snapshots turned off and on, or
        # created by a first update that failed: declaring it again fails in every region (the
        # provider checks first in us-east-1, where S3 itself would answer 200 for a bucket this
        # account owns: terraform-provider-aws internal/service/s3/bucket.go resourceBucketCreate).
        # Not declaring a bucket that is in the state only forgets it (retain_on_delete).
        if not _bucket_owned(bucket):
            # HeadBucket answers 200 for another account's bucket whose policy lets us list it; the
            # snapshots hold every Secret of the cluster.
            raise ConfigError([
                f"rke-aws:etcdBackup.bucket: not set, and the bucket this stack would create, {bucket}, exists but "
                "belongs to another account (ListBuckets of this account does not show it); etcd snapshots hold "
                "every Secret of the cluster and must not go there. Set etcdBackup.bucket to a bucket of this "
                "account"])
        created = False
        notes = (f"rke-aws:etcdBackup: the bucket {bucket} exists already in this account (kept when snapshots were "
                 "last removed from this stack, or created by an update that failed): snapshots go there, and this "
                 "stack does not declare it, so its settings stay as they are",)
    return BackupPlan(bucket, folder, created=created, notes=notes, etcd_s3=EtcdS3(
        bucket=bucket, region=cfg.region, folder=folder, endpoint=cfg.partition.endpoint("s3", cfg.region),
        interval_hours=b.interval_hours, retention=b.retention))


def _configured_snapshots(cfg: StackConfig, backup: BackupPlan | None) -> Snapshots | None:
    if backup is None:
        return None
    return Snapshots(backup.bucket, backup.folder, cfg.etcd_backup.interval_hours, cfg.etcd_backup.retention,
                     cfg.etcd_backup.kms_key_arn)


def _snapshot_steps(cfg: StackConfig, backup: BackupPlan | None) -> str:
    """RKE2: what to change in a running server's config.yaml for the configured snapshots."""
    if cfg.distribution != "rke2":
        return ""
    if backup is None:
        return "in /etc/rancher/rke2/config.yaml remove the etcd-s3* keys and etcd-snapshot-schedule-cron"
    keys = etcd_s3_keys(backup.etcd_s3, cfg.kubernetes_version)
    lines = "; ".join(f"{k}: {json.dumps(v)}" for k, v in keys.items())
    return f"in /etc/rancher/rke2/config.yaml set {lines}"


# ---- what is installed in the cluster ----------------------------------------------------------

def _published_kubeconfig(cfg: StackConfig, previous: Previous | None) -> tuple[str | None, tuple[str, ...]]:
    """RKE2: the admin kubeconfig the first server published, when no kubeconfig is configured.

    Readable only with kms:Decrypt on its key. Not published yet, or not readable with these
    credentials: the update goes on without the cluster, and says so (in_cluster_problems refuses
    it when that would uninstall what the last update installed). A published copy that is not
    what RKE2 writes (every server may overwrite the parameter) is refused outright.
    """
    if (cfg.distribution != "rke2" or cfg.kubeconfig is not None or previous is None
            or not previous.has_kubeconfig_parameter):
        return None, ()
    name = kubeconfig_parameter_name(cfg.cluster_id)
    try:
        value = aws.ssm.get_parameter(name=name, with_decryption=True).value
    except Exception as err:  # noqa: BLE001 - not published yet, or not readable by this user
        return None, (f"no kubeconfig: not set, and {name} could not be read ({' '.join(str(err).split())[:200]}); "
                      "things that need the cluster wait for the next `pulumi up`",)
    if not value or value == KUBECONFIG_PENDING:
        return None, (f"no kubeconfig yet: the first server has not published {name}; `pulumi up` again once it runs",)
    problem = published_kubeconfig_problem(value, f"https://{endpoint_name(cfg.cluster_id)}:{KUBE_API_PORT}")
    if problem:
        raise ConfigError([f"rke-aws:kubeconfig: not set, and the kubeconfig published in {name} is refused: "
                           f"{problem}. Someone with write access to it (a server's role) changed it; check the "
                           "servers, then set kubeconfig explicitly or delete the parameter's value"])
    return value, (f"using the admin kubeconfig the first server published ({name}); set kubeconfig to override it",)


# What uninstalling each one means for the running cluster.
UNINSTALLED = {
    "aws-cloud-controller-manager": "aws-cloud-controller-manager (nodes that join afterwards stay uninitialized and "
                                    "unschedulable, LoadBalancer Services are no longer reconciled; running nodes "
                                    "and load balancers stay)",
    "system-upgrade-controller": "system-upgrade-controller and its upgrade Plans (a version change no longer reaches "
                                 "running nodes; what they run stays)",
    "aws-ebs-csi-driver": "aws-ebs-csi-driver with its gp3 StorageClass (pods can no longer get, attach or detach "
                          "EBS volumes; the volumes and their PersistentVolumes stay, and volumes of reclaimPolicy "
                          "Delete are no longer deleted for you)",
}


def planned_in_cluster(cfg: StackConfig, ebs_csi: bool, available: bool,
                       manifests: ManifestPlan | None) -> tuple[str, ...]:
    """What this update installs through the kubeconfig (installedInCluster)."""
    if cfg.ccm.install != "helm" or not available or (manifests is not None and manifests.removing):
        return ()
    return ("aws-cloud-controller-manager",) + (("system-upgrade-controller",) if rancher.program_upgrades(cfg) else ()) \
        + (("aws-ebs-csi-driver",) if ebs_csi else ())


def in_cluster_problems(cfg: StackConfig, previous: Previous | None, available: bool) -> list[str]:
    """Pulumi deletes what a program stops declaring: an update that would leave out what the last
    one installed in the cluster (installedInCluster) is refused unless allowUninstall says so."""
    if previous is None or not previous.has_cluster_releases or cfg.allow_uninstall:
        return []
    what = ", ".join(previous.installed_in_cluster) or "the CCM"
    if cfg.ccm.install == "manifest":
        return [f"rke-aws:ccm.install: manifest on a cluster where the last update installed {what} as Helm "
                "releases: Pulumi would uninstall them while the servers' helm-controller installs the same charts. "
                "To hand them over, remove them from this stack's state without uninstalling (`pulumi state delete "
                "--target-dependents <URN>` for the rke-aws:ccm:CloudControllerManager, rke-aws:upgrades:SystemUpgrades "
                "and rke-aws:addons:EbsCsiDriver components; `pulumi stack --show-urns`), then run this update once "
                "with allowUninstall: true"]
    if available:
        return []
    how = ("let these credentials read the published kubeconfig (ssm:GetParameter on "
           f"/rke-aws/{cfg.cluster_id}/admin-kubeconfig and kms:Decrypt on its key) or set it"
           if cfg.distribution == "rke2" and previous.has_kubeconfig_parameter else "set it")
    return [f"rke-aws:kubeconfig: the last update installed {what} in the cluster through a kubeconfig, but none "
            f"is available now; without one this update would uninstall them from the running cluster. "
            f"{how[0].upper() + how[1:]} (`pulumi config set --secret kubeconfig < kubeconfig.yaml`); if the "
            "cluster is gone, `pulumi state delete` what was in it and set allowUninstall: true for one update"]


def allow_uninstall_problems(cfg: StackConfig, previous: Previous | None, in_cluster: Sequence[str]) -> list[str]:
    """allowUninstall is for one update: set while nothing is left to uninstall, it would let a later
    update without a kubeconfig uninstall everything without a word."""
    if not cfg.allow_uninstall:
        return []
    left = [x for x in (previous.installed_in_cluster if previous else ()) if x not in in_cluster]
    if previous is not None and previous.has_cluster_releases and (left or not previous.installed_in_cluster):
        return []
    return ["rke-aws:allowUninstall: true, but this update uninstalls nothing (the last update installed "
            + ("nothing in the cluster" if previous is None or not previous.has_cluster_releases else
               "only what this one installs again") +
            "); remove it (`pulumi config rm allowUninstall`): left set, a later update without a "
            "kubeconfig would uninstall the CCM and everything else from the running cluster"]


def manifest_plan(cfg: StackConfig, previous: Previous | None, ebs_csi: bool,
                  observed: Observed) -> ManifestPlan | None:
    """RKE2: which manifests the servers get, which are emptied, and which removals are not yet
    known done. None when the cluster never used manifests."""
    if cfg.distribution != "rke2":
        return None
    live: tuple[str, ...] = ()
    if cfg.ccm.install == "manifest":
        live = ("ccm",) + tuple(f.split(".")[0] for f in rancher.upgrade_files(
                    cfg, upgrade_manifests(cfg.kubernetes_version))) + \
            (("ebs-csi", "ebs-csi-credentials") if ebs_csi else ()) + \
            ((rancher.REGISTRATION_MANIFEST,) if cfg.rancher is not None else ())
    before = {f.split(".")[0] for f in (previous.manifest_files if previous else ())}
    if previous is not None and previous.manifest_mode and not previous.manifest_files:
        # outputs of releases before rke2Manifests: what manifest mode delivered then
        before |= {"ccm", "upgrade-plans", "system-upgrade-controller", "system-upgrade-controller-crd"} | \
            ({"ebs-csi", "ebs-csi-credentials"} if previous.ebs_csi else set())
    if not live and not before:
        return None
    dropped = before - set(live)
    if f"{rancher.REGISTRATION_MANIFEST}.removed.yaml" not in (previous.manifest_files if previous else ()):
        # Never newly emptied: that would prune Rancher's agent while Rancher's cleanup still needs it; the
        # file is dropped, and the deploy controller forgets it (plan/rancher.py). An emptied one an earlier
        # release wrote stays (it deletes nothing more).
        dropped.discard(rancher.REGISTRATION_MANIFEST)
    emptied = tuple(sorted(dropped))
    was_live = {f.split(".")[0] for f in (previous.manifest_files if previous else ()) if ".removed." not in f}
    if previous is not None and previous.manifest_mode and not previous.manifest_files:
        was_live = set(before)
    pending = (set(previous.manifests_removing if previous else ()) | (was_live - set(live))) - set(live)
    # Nothing waits for the Rancher agent to be gone (Rancher's own cleanup Job removes it too).
    pending.discard(rancher.REGISTRATION_MANIFEST)
    charts = sorted(MANIFEST_HELMCHARTS[b] for b in pending if b in MANIFEST_HELMCHARTS)
    statement = Statement("manifests", f"the servers of cluster {cfg.cluster_id} no longer run what their emptied "
                                       f"manifests installed ({', '.join(sorted(pending)) or 'nothing'}; HelmCharts "
                                       f"gone: {', '.join(charts) or 'none'})") if pending else None
    live_read = observed.live
    if pending and live_read is not None and live_read.helm_charts is not None:
        plans_left = "upgrade-plans" in pending and any(p.name in (SERVER_PLAN, ETCD_PLAN, AGENT_PLAN) for p in live_read.plans or ())
        if not (set(charts) & live_read.helm_charts) and not plans_left:
            pending = set()
    elif pending and statement is not None and observed.confirmed(statement):
        pending = set()
    return ManifestPlan(tuple(sorted(live)), emptied, tuple(sorted(pending)), statement)


def removal_warnings(cfg: StackConfig, previous: Previous | None, ebs_csi: bool, manifests: ManifestPlan | None,
                     in_cluster: Sequence[str]) -> tuple[str, ...]:
    """Say what an update uninstalls, and what stays."""
    if previous is None or not previous.nodes:
        return ()
    out = []
    gone = [x for x in previous.installed_in_cluster if x not in in_cluster]
    if gone and cfg.ccm.install == "helm" and not (manifests and manifests.removing):
        how = ("allowUninstall: true and no kubeconfig" if cfg.allow_uninstall else
               "rancher.upgrades: rancher" if cfg.rancher is not None and cfg.rancher.rancher_upgrades else "addons.ebsCsi: false")
        out.append(f"rke-aws: this update uninstalls from the cluster ({how}): "
                   + "; ".join(UNINSTALLED[x] for x in gone if x in UNINSTALLED)
                   + (". The driver's IAM user and key are deleted after it" if "aws-ebs-csi-driver" in gone else ""))
    if manifests is not None and manifests.removing:
        pending = set(manifests.removing)
        charts = [MANIFEST_HELMCHARTS[b] for b in sorted(pending) if b in MANIFEST_HELMCHARTS]
        what = "; ".join(UNINSTALLED[c] for c in charts)
        if "upgrade-plans" in pending:
            what += ("; " if what else "") + UNINSTALLED["system-upgrade-controller"]
        how = ("once the cluster can be read and shows them gone (`kubectl -n kube-system get helmcharts`), or "
               + manifests.statement.how()) if manifests.statement else ""
        if cfg.ccm.install == "helm":
            out.append(f"rke-aws:ccm.install: helm on a cluster whose servers installed the charts from manifests: "
                       "the servers now get those manifests emptied, so their deploy controller deletes the HelmCharts "
                       f"and helm-controller uninstalls: {what}. Helm releases with the same names can be installed "
                       f"only after that, so the CCM is not running until a later `pulumi up` installs it, {how}")
        elif not pending & {"ebs-csi", "ebs-csi-credentials"}:
            out.append("rke-aws:rancher.upgrades: rancher: the servers get this program's system-upgrade-controller "
                       "and Plan manifests emptied, so their deploy controller deletes them (the Plan CRD stays: "
                       f"Rancher's controller uses it too). Known done {how}")
        else:
            out.append(f"rke-aws:addons.ebsCsi: false: the servers get the driver's manifests emptied, so their deploy "
                       f"controller deletes its HelmChart and helm-controller uninstalls {what}. Its IAM user and key "
                       f"stay while it may still run, until a `pulumi up` knows it is gone: {how}")
    return tuple(out)


def booting_nodes(cfg: StackConfig, previous: Previous | None, nodes: Sequence[PlannedNode]) -> list[PlannedNode]:
    """The instances this update launches: new ones, and running ones replaced because their address,
    zone, tier or key pair changes (privateIp, subnetId, keyName force a new instance:
    terraform-provider-aws internal/service/ec2/ec2_instance.go, ForceNew on each). Only these call
    RunInstances, so only these need the key pair, the image and the zone's offering."""
    if previous is None:
        return list(nodes)
    member = {n.key: (n.private_ip, n.availability_zone, n.tier, n.key_name) for n in previous.nodes}
    return [n for n in nodes if (n.pool.name, n.index) not in member
            or member[(n.pool.name, n.index)] != (n.private_ip, n.az, n.subnet.tier, cfg.access.ssh_key_name)]


def upgrade_problems(cfg: StackConfig, previous: Previous | None, nodes: list[PlannedNode],
                     kubeconfig_published: bool = False, state: VersionState | None = None,
                     observed: Observed | None = None) -> list[str]:
    """A version change must have a way to the running nodes, and come alone; and no node boots the
    configured version while servers may still run an older minor (a kubelet must not be newer than
    its kube-apiserver)."""
    observed = observed if observed is not None else Observed()
    if previous is None or previous.kubernetes_version is None:
        return []
    problems = []
    booting = [n.name for n in booting_nodes(cfg, previous, nodes)]
    changed = previous.kubernetes_version != cfg.kubernetes_version
    if changed and booting:
        problems.append(f"rke-aws:kubernetesVersion: changed from {previous.kubernetes_version} together with new or "
                        f"replaced nodes ({', '.join(booting)}), which would boot {cfg.kubernetes_version} before the "
                        "servers are upgraded; change the version in an update of its own, wait until every node "
                        "runs it, then add nodes")
    elif booting and state is not None and not state.complete:
        old, new = parse_version(state.confirmed or ""), parse_version(cfg.kubernetes_version)
        if old is None or new is None or old[0] != new[0]:
            from .guards import _not_complete

            problems.append(
                f"rke-aws:nodePools: new or replaced nodes ({', '.join(booting)}) would boot {cfg.kubernetes_version}, "
                f"but the change to it is not known complete, so servers may still run an older minor (a kubelet "
                f"must not be newer than its kube-apiserver): {_not_complete(state, observed, cfg.distribution)}")
    if changed and cfg.distribution == "rke2" and cfg.ccm.install == "helm" and cfg.kubeconfig is None \
            and not kubeconfig_published:
        problems.append(f"rke-aws:kubernetesVersion: changed from {previous.kubernetes_version}, but the upgrade Plans "
                        "reach the cluster through its kubeconfig, which is neither set nor published by the first "
                        "server (or not readable with your credentials); set it (`pulumi config set --secret "
                        "kubeconfig < kubeconfig.yaml`) or use ccm.install: manifest")
    return problems


def ccm_image(cfg: StackConfig, previous: Previous | None,
              state: VersionState | None = None) -> tuple[str, tuple[str, ...]]:
    """The CCM image for this update: the cluster's minor once every server runs it. The CCM may
    be one minor older than kube-apiserver, never newer, so while servers may run the older minor
    (the change is not known complete) it stays on that minor."""
    if cfg.ccm.image:
        return cfg.ccm.image, ()
    minor = cfg.kubernetes_minor
    if state is None and previous is not None:
        old = parse_version(previous.kubernetes_version or "")
        held = old[0] if old else None
    else:
        held = state.servers_minor if state is not None else None
    if previous is not None and held == minor - 1 and held in versions.CCM_IMAGE_TAGS:
        image = cfg.ccm.image_for(held)
        return image, (f"Kubernetes 1.{held} -> 1.{minor}: the CCM stays on {image} until every server runs "
                       f"1.{minor}; the first `pulumi up` that knows it (read from the cluster through the "
                       f"kubeconfig, or confirmed with confirmClusterState) moves it to {cfg.ccm.image_for(minor)}",)
    return cfg.ccm.image_for(minor), ()


# EC2 CPU architecture (DescribeInstanceTypes' SupportedArchitectures) -> how images and RKE name it.
ARCH_NAMES = {"x86_64": "amd64", "arm64": "arm64"}


def pool_architectures(cfg: StackConfig) -> tuple[dict[str, str], dict[str, Any]]:
    """Pool name -> the CPU architecture its instance type runs (x86_64 or arm64), from EC2's own
    description of the type (DescribeInstanceTypes), not from its name; and the types looked up, for
    machine_problems to judge (one look-up per type). A type that cannot be looked up is left out:
    machine_problems looks it up again and reports it where it matters."""
    archs: dict[str, str] = {}
    infos: dict[str, Any] = {}
    for pool in cfg.node_pools:
        if not pool.count:
            continue
        if pool.instance_type not in infos:
            try:
                infos[pool.instance_type] = _looked_up(
                    "", "", "", partial(aws.ec2.get_instance_type, instance_type=pool.instance_type))
            except ConfigError:
                infos[pool.instance_type] = None
        supported = list(getattr(infos[pool.instance_type], "supported_architectures", None) or [])
        arch = next((a for a in ARCH_NAMES if a in supported), None)
        if arch:
            archs[pool.name] = arch
    return archs, {t: i for t, i in infos.items() if i is not None}


def architecture_problems(cfg: StackConfig, archs: Mapping[str, str]) -> list[str]:
    """arm64 (Graviton) where the distribution publishes it: RKE2 from RKE2_ARM64_SINCE; not RKE1,
    whose arm64 nodes Rancher calls experimental and not for production (Rancher manager docs,
    "Running on ARM64 Mixed Architecture (Experimental)"), and which is end of life."""
    problems = []
    for i, pool in enumerate(cfg.node_pools):
        if archs.get(pool.name) != "arm64":
            continue
        key = f"rke-aws:nodePools[{i}].instanceType"
        if cfg.distribution == "rke":
            problems.append(f"{key}: '{pool.instance_type}' is an arm64 (Graviton) type; RKE1 on arm64 is experimental "
                            "and not for production (Rancher's docs), and RKE1 is end of life: use an x86_64 type, or "
                            "RKE2")
        else:
            have, since = parse_version(cfg.kubernetes_version), parse_version(versions.RKE2_ARM64_SINCE)
            if have is not None and since is not None and have < since:
                problems.append(f"{key}: '{pool.instance_type}' is an arm64 (Graviton) type, and RKE2 "
                                f"{cfg.kubernetes_version} has no complete arm64 release (arm64 images from "
                                f"{versions.RKE2_ARM64_SINCE}): use an x86_64 type, or upgrade first")
    return problems


def _default_images(cfg: StackConfig, archs: Mapping[str, str]) -> dict[str, Any]:
    """Pool name -> the latest Canonical Ubuntu 24.04 LTS image for the pool's CPU architecture, for
    pools with nodes and no `ami` (one look-up per architecture); nodes ignore later image changes
    (see nodes.py)."""
    pools = [(i, p) for i, p in enumerate(cfg.node_pools) if p.ami is None and p.count]
    owner = cfg.partition.ubuntu_owner  # Canonical publishes from another account per partition
    images: dict[str, Any] = {}
    out: dict[str, Any] = {}
    for _i, pool in pools:
        arch = archs.get(pool.name, "x86_64")
        if arch not in images:
            name = versions.UBUNTU_AMI_NAMES[arch]
            users = ", ".join(f"nodePools[{j}]" for j, p in pools if archs.get(p.name, "x86_64") == arch)
            images[arch] = _looked_up(
                "rke-aws:nodePools[].ami", f"looking up the default image ({name} by owner {owner}) in {cfg.region}",
                f"set `ami` on {users} to an image that exists in {cfg.region}",
                partial(
                    aws.ec2.get_ami,
                    most_recent=True,
                    owners=[owner],
                    filters=[
                        {"name": "name", "values": [name]},
                        {"name": "state", "values": ["available"]},
                    ],
                ),
            )
        out[pool.name] = images[arch]
    return out


def cluster_network_problems(cfg: StackConfig, subnets: Sequence[PlannedSubnet]) -> list[str]:
    """Bring-your-own subnets (looked up) must stay clear of the cluster's pod and service networks,
    as network.vpcCidr and the subnet CIDRs this program creates must (config.py)."""
    import ipaddress

    from ..settings.model import CLUSTER_NETWORKS

    problems = []
    for plan in subnets:
        net = ipaddress.ip_network(plan.cidr)
        for cluster_net in map(ipaddress.ip_network, CLUSTER_NETWORKS):
            if net.overlaps(cluster_net):
                problems.append(f"rke-aws:network.{plan.tier}SubnetIds[{plan.az_index}]: the subnet's {plan.cidr} overlaps "
                                f"{cluster_net}, the cluster's pod or service network (RKE2 and RKE1 default): its nodes "
                                f"would send traffic for those addresses into the cluster; use subnets outside "
                                f"{' and '.join(CLUSTER_NETWORKS)}")
    return problems


def key_pair_problems(cfg: StackConfig, launching: bool = True) -> tuple[list[str], list[str]]:
    """access.sshKeyName must name a key pair of this region and account: EC2 refuses RunInstances
    for every node otherwise (InvalidKeyPair.NotFound), after the network and roles exist. Only
    RunInstances reads it: when this update launches no instance, a key pair deleted since is a
    warning (the next node added would be refused), not a refusal of every later update: renaming
    the key replaces every node, which the quorum guard refuses, so re-importing it would be the
    only way out."""
    name = cfg.access.ssh_key_name
    if not name:
        return [], []
    found: list[str] = []
    _collect(found, "rke-aws:access.sshKeyName", f"looking up the key pair '{name}' in {cfg.region}",
             f"create or import it in {cfg.region} (aws ec2 import-key-pair --key-name ...), or fix the name",
             lambda: aws.ec2.get_key_pair(key_name=name))
    if launching:
        return found, []
    return [], [f"{m}; no instance is launched by this update, so it goes ahead, but the next new or replaced node "
                "would be refused" for m in found]


# RKE2's documented minimum for a server (docs.rke2.io install/requirements, "Hardware": "RAM: 4GB
# Minimum (we recommend at least 8GB), CPU: 2 Minimum"), and its VM sizing guide: how many agents a
# server of that size carries.
RKE2_SERVER_MIN_VCPUS, RKE2_SERVER_MIN_MIB = 2, 4096
RKE2_SIZING_GUIDE = ((2, 4096, 225), (4, 8192, 450), (8, 16384, 1300))


def machine_problems(cfg: StackConfig, nodes: Sequence[PlannedNode], previous: Previous | None,
                     default_images: Mapping[str, Any], booting: Sequence[PlannedNode] | None = None,
                     known_types: Mapping[str, Any] | None = None) -> tuple[list[str], tuple[str, ...]]:
    """Every pool's instance type and image, checked with look-ups before RunInstances would refuse
    them: the type exists in the region, is offered in the zones the pool's new nodes go to, runs
    the image's architecture and virtualization. One look-up per distinct type and image, one for
    all offerings, whatever the node count. RKE2 servers below RKE2's minimum are warned about, not
    refused: the documented figures are minimum recommendations, and a running cluster's servers
    keep their type, so a refusal would stop every later update of a small test cluster.

    Refused only where EC2 is asked for it: pools with `booting` (new or replaced) instances, and agent
    pools whose running instances run another type than the pool's: running nodes keep their type
    (nodes.IGNORED_ON_UPDATE), and rotation launches each of them with the pool's type and image
    (components/ops/rotate.py; a targeted replacement creates from the program's inputs), so the type
    must be offered in their zones and run the pool's image before the first of them is replaced.
    Servers and spot workers that run another type are warned about (instance_type_warnings). The
    image is read by RunInstances only, so a deregistered image or a type since withdrawn on a pool that
    launches nothing is a warning."""
    problems: list[str] = []
    warnings: list[str] = []
    if booting is None:
        booting = booting_nodes(cfg, previous, nodes)
    pools = [(i, pool) for i, pool in enumerate(cfg.node_pools) if pool.count]
    launching = {n.pool.name for n in booting}
    running = {n.key: n for n in previous.nodes} if previous else {}
    retyped_nodes = [n for n in nodes if not n.pool.is_server and not n.pool.is_spot and n not in booting
                     and (n.pool.name, n.index) in running
                     and running[(n.pool.name, n.index)].instance_type not in (None, n.pool.instance_type)]
    strict = launching | {n.pool.name for n in retyped_nodes}

    def judged(pool: Any, found: list[str], reason: str) -> None:
        if pool.name in strict:
            problems.extend(found)
        else:
            warnings.extend(f"{m}; {reason}" for m in found)

    first_use: dict[str, tuple[int, Any]] = {}
    for i, pool in sorted(pools, key=lambda ip: ip[1].name not in strict):
        first_use.setdefault(pool.instance_type, (i, pool))
    types: dict[str, Any] = dict(known_types or {})
    for itype, (i, pool) in first_use.items():
        if itype in types:
            continue
        found: list[str] = []
        types[itype] = _collect(
            found, f"rke-aws:nodePools[{i}].instanceType", f"looking up instance type '{itype}' in {cfg.region}",
            f"use an instance type EC2 offers in {cfg.region} (aws ec2 describe-instance-types)",
            partial(aws.ec2.get_instance_type, instance_type=itype))
        judged(pool, found, "no instance of the pool is launched or changes type in this update, so it goes ahead")
    images: dict[str, Any] = {}
    for i, pool in sorted(pools, key=lambda ip: ip[1].name not in launching):
        if pool.ami and pool.ami not in images:
            found = []
            images[pool.ami] = _collect(
                found, f"rke-aws:nodePools[{i}].ami", f"looking up image '{pool.ami}' in {cfg.region}",
                f"use an image that exists in {cfg.region} and this account may launch",
                partial(aws.ec2.get_ami, filters=[{"name": "image-id", "values": [pool.ami]}], include_deprecated=True))
            if pool.name in launching:
                problems.extend(found)
            else:
                warnings.extend(f"{m}; running nodes ignore their image and this update launches none of the pool's, "
                                "so it goes ahead, but the pool's next new node would be refused" for m in found)
    new_zones: dict[str, set[str]] = {}
    for n in list(booting) + retyped_nodes:
        new_zones.setdefault(n.pool.name, set()).add(n.az)
    offered: set[tuple[str, str]] | None = None
    wanted_types = sorted({p.instance_type for _, p in pools if p.name in new_zones and types.get(p.instance_type)})
    zones = sorted(set().union(*new_zones.values())) if new_zones else []
    if wanted_types and zones:
        offerings = _collect(problems, "rke-aws:nodePools[].instanceType",
                         f"looking up where {', '.join(wanted_types)} are offered in {cfg.region}",
                         "check your AWS credentials (ec2:DescribeInstanceTypeOfferings)",
                         lambda: aws.ec2.get_instance_type_offerings(
                             location_type="availability-zone",
                             filters=[{"name": "instance-type", "values": wanted_types},
                                      {"name": "location", "values": zones}]))
        if offerings is not None:
            offered = set(zip(offerings.instance_types, offerings.locations, strict=False))
    for i, pool in pools:
        info = types.get(pool.instance_type)
        if info is None:
            continue
        key = f"rke-aws:nodePools[{i}].instanceType"
        missing = sorted(z for z in new_zones.get(pool.name, ()) if offered is not None
                         and (pool.instance_type, z) not in offered)
        if missing:
            problems.append(f"{key}: '{pool.instance_type}' is not offered in {', '.join(missing)}, where the pool's "
                            "new nodes go; use a type offered there, or other zones (aws ec2 "
                            "describe-instance-type-offerings --location-type availability-zone --filters "
                            f"Name=instance-type,Values={pool.instance_type})")
        image = images.get(pool.ami) if pool.ami else default_images.get(pool.name)
        if image is None:
            continue
        which = (f"image {pool.ami}" if pool.ami else
                 f"default image {image.id} (Ubuntu 24.04 {ARCH_NAMES.get(image.architecture, image.architecture)})")
        found = []
        archs = list(info.supported_architectures or [])
        if image.architecture not in archs:
            found.append(f"{key}: '{pool.instance_type}' runs {' or '.join(archs)}, but the pool's {which} is "
                         f"{image.architecture}; use an instance type for {image.architecture}, or set "
                         f"nodePools[{i}].ami to an image for {' or '.join(archs)}")
        virt = list(info.supported_virtualization_types or [])
        if image.virtualization_type not in virt:
            found.append(f"{key}: '{pool.instance_type}' supports {' or '.join(virt)} virtualization, but the "
                         f"pool's {which} is {image.virtualization_type}; use another type or image")
        judged(pool, found, "no instance of the pool is launched or changes type in this update, so it goes ahead, "
                            "but the pool's next new node would be refused")
        if cfg.distribution == "rke2" and pool.is_server:
            vcpus, mib = info.default_vcpus, info.memory_size
            agents = sum(p.count for p in cfg.node_pools if not p.is_server)
            warning = rke2_server_size_warning(key, pool.instance_type, vcpus, mib, agents)
            if warning:
                warnings.append(warning)
    return problems, tuple(warnings)


def rke2_server_size_warning(key: str, instance_type: str, vcpus: int, mib: int, agents: int) -> str | None:
    """What RKE2's requirements and VM sizing guide say about servers of this size carrying `agents`."""
    if vcpus < RKE2_SERVER_MIN_VCPUS or mib < RKE2_SERVER_MIN_MIB:
        return (f"{key}: '{instance_type}' has {vcpus} vCPU and {mib / 1024:g} GiB; RKE2 servers "
                f"need at least {RKE2_SERVER_MIN_VCPUS} vCPU and {RKE2_SERVER_MIN_MIB // 1024} GiB "
                "(docs.rke2.io install/requirements): etcd and the API server may not keep up")
    carried = max((n for v, m, n in RKE2_SIZING_GUIDE if vcpus >= v and mib >= m), default=0)
    if carried and agents > carried and carried != RKE2_SIZING_GUIDE[-1][2]:
        return (f"{key}: {agents} agents; RKE2's sizing guide gives servers of "
                f"'{instance_type}' ({vcpus} vCPU, {mib / 1024:g} GiB) up to {carried} "
                "(docs.rke2.io install/requirements, VM sizing guide): use larger servers")
    return None


# SSM parameters: 4 KB in the Standard tier, 8 KB in the Advanced tier (manifests.tier_for picks it).
ADVANCED_TIER_MAX = 8192


def manifest_size_problems(cfg: StackConfig, ccm_image: str, proxy: ProxyEnv | None = None) -> list[str]:
    """Manifest mode: the CCM's HelmChart manifest becomes one SSM parameter, 4 KB in the Standard
    tier and 8 KB in the Advanced tier (AWS Systems Manager quotas, "Parameter value size"); a larger
    one fails at apply, after the network and roles exist. Rendered here exactly as __main__.py
    renders it."""
    if cfg.ccm.install != "manifest":
        return []
    values = ccm_values.helm_values(cfg.distribution, cfg.node_pools, cfg.ccm.leader_migration, cfg.ccm.extra_args,
                                    ccm_image, proxy)
    text = cluster_documents.ccm(cfg.ccm.chart_version).manifest(values.merged_for_manifest(), bootstrap=True)
    size = len(text.encode())
    if size <= ADVANCED_TIER_MAX:
        return []
    extra = sum(len(a.encode()) + 8 for a in cfg.ccm.extra_args)
    return [f"rke-aws:ccm.extraArgs: the CCM manifest (ccm.install manifest) is {size:,} bytes, of which about "
            f"{extra:,} are ccm.extraArgs"
            + (f", {len(ccm_image)} ccm.image and about {sum(len(v) + 30 for v in proxy.variables().values()):,} the "
               "proxy (proxy.noProxy)" if proxy else f" and {len(ccm_image)} ccm.image")
            + f"; an SSM parameter holds at most "
            f"{ADVANCED_TIER_MAX:,} bytes (Advanced tier): use fewer or shorter extraArgs, or ccm.install helm"]


