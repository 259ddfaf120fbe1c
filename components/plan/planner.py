"""Everything decided before the first resource is registered, as a sequence of named steps.

Each step is a function of the resolved configuration, the cluster's last state (components/state) and
what came before; the account and the running cluster are reached only through the Environment (look-ups,
the cluster reader). Checks return Diagnostics. The planner refuses in three stages, each with every
problem found so far: the cluster's identity (another cluster ID or region: nothing else compares), the
day-2 guards that need no look-up, then everything the look-ups judge; warnings and notes go with the plan.

Look-ups are plain invokes, so their answers are ordinary values at preview time and every node name is
known in `pulumi preview`; the order of the steps is the order of the look-ups (the golden plans record it).

Adding a planner step (a new config section's checks): a module of plan/ with a pure function of
(cfg, previous[, what earlier steps found][, env]) returning Diagnostics (errors refuse; warnings and notes
are logged), called below in the stage its look-ups belong to, its result carried in ClusterPlan if the
assembly needs it; its tests call the function with a ClusterState and tests/support/fakes.py's lookups.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..diagnostics import ConfigError, Diagnostic, Severity
from ..settings import registry_hosts
from ..settings.resolve import ClusterConfig as StackConfig
from ..settings.rules.pools import split_server_pools
from ..state.model import ClusterState
from . import addons, backups, cluster_id, machine_checks, network, nodes, observe, rancher, security, spot
from . import identity as identity_plan
from . import ingress as ingress_plan
from .day2 import etcd, versions
from .day2.confirmations import Observed, stale_confirmations, with_combined_confirmation
from .environment import Environment
from .lookups import looked_up
from .model import ClusterPlan
from .names import endpoint_name
from .proxy import proxy_env, proxy_warnings


def refuse(problems: Sequence[Diagnostic], cfg: StackConfig, observed: Observed | None = None) -> None:
    """Raise every problem at once (with the combined confirmation, when several are asked for)."""
    if problems:
        raise ConfigError(with_combined_confirmation(problems, observed) if observed else list(problems),
                          prefix=f"{cfg.project}:")


def build(cfg: StackConfig, previous: ClusterState | None, env: Environment) -> ClusterPlan:
    """Everything before the first resource; `previous`: the cluster's last state (None: a new cluster).
    Raises ConfigError (every problem of the stage, keys in the project's namespace)."""
    try:
        return _build(cfg, previous, env)
    except ConfigError as err:
        if err.prefix == f"{cfg.project}:":
            raise
        raise ConfigError(err.diagnostics, prefix=f"{cfg.project}:") from None


def _build(cfg: StackConfig, previous: ClusterState | None, env: Environment) -> ClusterPlan:
    refuse(cluster_id.check(cfg, previous) + identity_plan.config_problems(cfg)
           + identity_plan.key_generation_problems(cfg, previous)
           + identity_plan.rke1_running_problems(cfg, previous), cfg)
    seen = observe.cluster(cfg, previous, env)
    observed = seen.observed
    vstate = versions.version_state(previous, observed, cfg.cluster_id)
    refuse(day2_guards(cfg, previous, vstate, observed), cfg, observed)

    topology = network.plan(cfg, previous, env)
    ebs_csi = addons.ebs_csi_wanted(cfg, previous)
    machines = nodes.plan(cfg, previous, topology)
    problems = network.check_brought(cfg, topology, machines.nodes, previous, env)
    members = machines.members(cfg.access.ssh_key_name)
    estate = etcd.etcd_state(previous, observed, cfg.cluster_id)
    problems += etcd.quorum_problems(previous, members, estate)
    problems += etcd.etcd_growth_problems(previous, members, split_server_pools(cfg.distribution, cfg.node_pools))
    available = seen.published is not None or cfg.kubeconfig is not None
    problems += versions.upgrade_problems(cfg, previous, [n.name for n in machines.booting],
                                          kubeconfig_published=seen.published is not None, state=vstate,
                                          observed=observed)
    manifests = addons.manifest_plan(cfg, previous, ebs_csi, observed)
    registration = rancher.registration_state(cfg, previous, observed)
    in_cluster = addons.planned_in_cluster(cfg, ebs_csi, available, manifests)
    problems += addons.in_cluster_problems(cfg, previous, available)
    problems += addons.allow_uninstall_problems(cfg, previous, in_cluster)
    problems += network.cluster_network_problems(cfg, topology)
    problems += network.airgap_change_problems(cfg, previous)
    image, image_notes = versions.ccm_image(cfg, previous, vstate)
    if cfg.distribution == "rke" and cfg.registry is not None and cfg.registry.mirrors and not cfg.ccm.image:
        # RKE1's Docker has no per-registry mirrors (rancher/rke types PrivateRegistry): the image names the mirror.
        image = registry_hosts.rewrite_image(image, cfg.registry.mirrors)
    proxy = proxy_env(cfg.proxy, network.vpc_cidrs(cfg, env), endpoint_name(cfg.cluster_id))
    problems += addons.manifest_size_problems(cfg, image, proxy)
    archs, found, images = machine_checks.architectures_and_images(cfg, env)
    problems += found
    ingress = ingress_plan.plan(cfg.distribution, cfg.ingress.controller, cfg.kubernetes_version, cfg.cluster_id,
                                previous, observed, [n.name for n in machines.booting if n.pool.is_server])
    problems += list(ingress.problems if ingress else ())
    problems += ingress_plan.removal_problems(cfg.kubernetes_version, ingress,
                                              previous.kubernetes_version if previous else None)
    machine = machine_checks.judge(cfg, previous, machines, archs, images, env)
    problems += machine.problems
    refuse(problems, cfg, observed)

    admin_aliases = security.admin_rule_aliases(cfg, previous, env)
    account = looked_up("aws:region", "looking up the AWS account (for names that must be unique, key policies)",
                        "check aws:region", env.lookups.account, env.offline)
    backup = backups.plan(cfg, previous, observed, account, env)
    identity, identity_found = identity_plan.plan(cfg, previous, account, ebs_csi, observed)
    refuse([d for d in identity_found if d.severity == Severity.ERROR], cfg, observed)
    snapshots = backup.snapshots
    warnings = (nodes.hardening_warnings(cfg, previous) + proxy_warnings(previous, proxy)
                + nodes.instance_type_warnings(cfg, previous, machines.nodes)
                + spot.spot_request_warnings(cfg, previous, machines.nodes, env)
                + machine.warnings
                + ((snapshots.warning,) if snapshots.warning else ())
                + network.endpoint_warnings(cfg, previous, topology)
                + addons.removal_warnings(cfg, previous, manifests, in_cluster)
                + rancher.warnings(cfg, previous)
                + rancher.psa_warnings(cfg, previous) + rancher.agent_env_warnings(cfg, previous, proxy)
                + rancher.arm64_warnings(cfg, archs.by_pool)
                + (ingress.warnings if ingress else ())
                + ((registration.warning,) if registration and registration.warning else ())
                + stale_confirmations(observed, (vstate.statement, estate.statement, snapshots.statement,
                                                 manifests.statement if manifests else None,
                                                 ingress.statement if ingress else None,
                                                 registration.statement if registration else None,
                                                 identity_plan.published_statement(cfg.identity.issuer_url, previous)
                                                 if identity is not None and cfg.identity.issuer_url else None))
                + (backup.plan.notes if backup.plan else ())
                + tuple(d for d in identity_found if d.severity != Severity.ERROR))
    return ClusterPlan(
        topology.azs, topology.subnets, machines.nodes, {p: i.id for p, i in images.items()}, previous, image,
        seen.read_notes + image_notes + seen.kubeconfig_notes, warnings,
        backup=backup.plan, account_id=account, ebs_csi=ebs_csi, published_kubeconfig=seen.published,
        observed=observed, version=vstate, etcd=estate,
        etcd_removed=etcd.etcd_removed_after(previous, members, estate, observed),
        version_confirmed=versions.version_confirmed(cfg, previous, vstate),
        snapshots=snapshots, manifests=manifests, in_cluster=in_cluster,
        keep_ebs_credentials=bool(manifests and "ebs-csi" in manifests.removing),
        admin_aliases=admin_aliases, proxy=proxy, ingress=ingress, rancher_registration=registration,
        pool_archs=dict(archs.by_pool),
        identity=identity)


def day2_guards(cfg: StackConfig, previous: ClusterState | None, vstate: versions.VersionState,
                observed: Observed) -> list[Diagnostic]:
    """What a running cluster must not be asked, judged before any look-up: the version step, the pools'
    roles and markets, and Rancher's ownership of upgrades, its address and its removal."""
    return (versions.version_problems(previous, cfg.distribution, cfg.kubernetes_version, vstate, observed)
            + nodes.role_problems(previous, cfg.node_pools)
            + nodes.market_problems(previous, cfg.node_pools)
            + nodes.os_problems(previous, cfg.distribution, cfg.node_pools)
            + rancher.version_problems(cfg, previous, observed)
            + rancher.switch_problems(cfg, previous, vstate, observed)
            + rancher.removal_problems(cfg, previous)
            + rancher.url_problems(cfg, previous, observed))
