"""What runs, as this update can know it: the kubeconfig it has (set, or the one the first RKE2 server
published), the cluster read through it (running.py, through the Environment's reader), and the user's
confirmation codes. Nothing is read for a new stack."""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import ConfigError, Diagnostic, Severity
from ..settings.resolve import ClusterConfig as StackConfig
from ..state.model import ClusterState
from . import running
from .day2.confirmations import Observed, parse_codes
from .environment import Environment
from .lookups import LookupFailed, published_kubeconfig_problem
from .names import KUBE_API_PORT, KUBECONFIG_PENDING, endpoint_name, kubeconfig_parameter_name


@dataclass(frozen=True)
class Seen:
    """The planner's view of the running cluster: `published` the admin kubeconfig the first server
    published (RKE2; secret), `observed` the cluster as read and the user's codes, `notes` what to say."""
    published: str | None
    observed: Observed
    read_notes: tuple[Diagnostic, ...] = ()  # what was read (or why not)
    kubeconfig_notes: tuple[Diagnostic, ...] = ()  # which kubeconfig (or why none)

    @property
    def kubeconfig_available(self) -> bool:
        return self.published is not None


def published_kubeconfig(cfg: StackConfig, previous: ClusterState | None,
                         env: Environment) -> tuple[str | None, tuple[Diagnostic, ...]]:
    """RKE2: the admin kubeconfig the first server published, when no kubeconfig is configured.

    Readable only with kms:Decrypt on its key. Not published yet, or not readable with these
    credentials: the update goes on without the cluster, and says so (addons.in_cluster_problems refuses
    it when that would uninstall what the last update installed). A published copy that is not
    what RKE2 writes (every server may overwrite the parameter) is refused outright.
    """
    if (cfg.distribution != "rke2" or cfg.kubeconfig is not None or previous is None
            or not previous.has_kubeconfig_parameter):
        return None, ()
    name = kubeconfig_parameter_name(cfg.cluster_id)
    try:
        value = env.lookups.parameter(name)
    except LookupFailed as err:  # not published yet, or not readable by this user
        return None, (Diagnostic("", f"no kubeconfig: not set, and {name} could not be read ({err.text[:200]}); "
                                 "things that need the cluster wait for the next `pulumi up`", "kubeconfig.unreadable",
                                 Severity.NOTE),)
    if not value or value == KUBECONFIG_PENDING:
        return None, (Diagnostic("", f"no kubeconfig yet: the first server has not published {name}; `pulumi up` "
                                 "again once it runs", "kubeconfig.pending", Severity.NOTE),)
    problem = published_kubeconfig_problem(value, f"https://{endpoint_name(cfg.cluster_id)}:{KUBE_API_PORT}")
    if problem:
        raise ConfigError([Diagnostic(
            "kubeconfig", f"not set, and the kubeconfig published in {name} is refused: {problem}. Someone with "
            "write access to it (a server's role) changed it; check the servers, then set kubeconfig explicitly or "
            "delete the parameter's value", "kubeconfig.published-refused")])
    return value, (Diagnostic("", f"using the admin kubeconfig the first server published ({name}); set kubeconfig "
                              "to override it", "kubeconfig.published", Severity.NOTE),)


def observe(cfg: StackConfig, previous: ClusterState | None, kubeconfig: str | None, env: Environment) -> Observed:
    """The cluster as read through the kubeconfig this update has, or why not, and the user's
    confirmation codes. Nothing is read for a new stack."""
    codes = parse_codes(cfg.confirm_cluster_state)
    if previous is None or not previous.nodes:
        return Observed(codes=codes)
    if kubeconfig is None:
        return Observed(codes=codes)
    reading = env.cluster_reader(kubeconfig, cfg.distribution == "rke2")
    if isinstance(reading, running.Unreadable):
        return Observed(unreadable=reading.reason, codes=codes)
    return Observed(live=reading, codes=codes)


def observed_notes(observed: Observed, previous: ClusterState | None) -> tuple[Diagnostic, ...]:
    if previous is None or not previous.nodes:
        return ()
    if observed.live is not None:
        live = observed.live
        return (Diagnostic("", f"read the running cluster ({live.server}, read-only): {len(live.nodes)} nodes, etcd "
                           f"members {', '.join(live.etcd_members) or 'none'}; the day-2 guards judge against it",
                           "cluster.read", Severity.NOTE),)
    why = observed.no_read()
    return (Diagnostic("", f"{why[0].upper() + why[1:]}; the day-2 guards judge against this stack's last outputs "
                       "and your confirmations (confirmClusterState)", "cluster.not-read", Severity.NOTE),)


def cluster(cfg: StackConfig, previous: ClusterState | None, env: Environment) -> Seen:
    """The planner's step: the kubeconfig, the cluster read through it, and what to say about both."""
    published, notes = published_kubeconfig(cfg, previous, env)
    kubeconfig = cfg.kubeconfig.get_secret_value() if cfg.kubeconfig is not None else published
    observed = observe(cfg, previous, kubeconfig, env)
    return Seen(published, observed, observed_notes(observed, previous), notes)
