"""RKE2's ingress controller: what new servers' config.yaml names (`ingress.controller`), what the running
cluster runs, and what changing it takes. Pure: tests call `plan` with a ClusterState and an Observed.

What RKE2 does (rancher/rke2 at its release tags, rke2-docs at 9477b7b1; the versions in versions.py):
- `ingress-controller` is a server option, read each time rke2-server starts; releases before it skip
  the key (RKE2_INGRESS_OPTION_SINCE), and `traefik` is one of its values from v1.30.3 (RKE2_TRAEFIK_SINCE).
- A server whose config.yaml names no controller deploys ingress-nginx before v1.36, and from v1.36 the
  one whose HelmChart (rke2-ingress-nginx, rke2-traefik) already runs, else Traefik
  (RKE2_TRAEFIK_DEFAULT_FROM_MINOR). Releases of this program before `ingress.controller` named none.
- Every server writes the bundled charts into its manifests from its own configuration: a controller it
  does not select is written as an empty manifest (pkg/bootstrap/bootstrap.go updateManifests, "disabled
  by configuration"), and an emptied manifest prunes what it had created, for the whole cluster (k3s
  pkg/deploy applies each file as one Addon). So all servers must name the same controller: a new server
  naming another one removes the running controller while the others put it back.
- Servers read their config.yaml from their user data at first boot only (nodes.IGNORED_ON_UPDATE): a
  running cluster changes controller on its servers by hand (rke2-docs reference/ingress_migration.md,
  "Ingress NGINX to Traefik Migration Guide"), then the user confirms it here and new servers follow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Severity, Statement
from ..settings import versions
from ..settings.fields import DEFAULT_INGRESS_CONTROLLER
from ..state.model import ClusterState
from .day2.confirmations import Observed
from .releases import parse_version

CONTROLLERS = ("traefik", "ingress-nginx", "none")
CHARTS = {"ingress-nginx": "rke2-ingress-nginx", "traefik": "rke2-traefik"}
BOTH = "ingress-nginx and traefik"  # the migration guide's dual setup (its phases 1 and 2)
MIGRATION_GUIDE = "https://docs.rke2.io/reference/ingress_migration"
KEY = "ingress.controller"
CONFIG_PATH = "/etc/rancher/rke2/config.yaml"  # node/rke2_config.RKE2_CONFIG_PATH (plan does not import node)


INFERRED = ("RKE2's choice before v1.36 for servers whose config.yaml names no controller, as this program's "
            "releases before ingress.controller wrote it")


@dataclass(frozen=True)
class Running:
    """What the running cluster deploys: a controller, BOTH, or None (not known), and how that is known."""
    controller: str | None
    how: str


@dataclass(frozen=True)
class IngressPlan:
    """controller: what new servers' `ingress-controller` names, and what the stack records
    (ingressController); None: no key, RKE2 decides as it did on the running servers."""
    controller: str | None
    running: Running | None = None  # None: a new cluster
    statement: Statement | None = None  # the confirmation this update used or asks for
    problems: tuple[Diagnostic, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()


def default_controller(version: str) -> str:
    """For a new cluster: Traefik where the release bundles it, else ingress-nginx, the only one it has."""
    return DEFAULT_INGRESS_CONTROLLER if versions.rke2_patch_at_least(version, *versions.RKE2_TRAEFIK_SINCE) \
        else "ingress-nginx"


def has_option(version: str) -> bool:
    """The release knows the `ingress-controller` option (older ones skip it, with a warning)."""
    return versions.rke2_patch_at_least(version, *versions.RKE2_INGRESS_OPTION_SINCE)


def running(previous: ClusterState | None, observed: Observed) -> Running | None:
    """What the cluster deploys, from the cluster's HelmCharts when it can be read, else the last outputs,
    else what RKE2 chose for servers that named no controller. None for a new cluster."""
    if previous is None or not previous.nodes:
        return None
    charts = observed.live.helm_charts if observed.live is not None else None
    found = [c for c, chart in CHARTS.items() if charts and chart in charts]
    if len(found) == 2:
        return Running(BOTH, "the cluster's HelmCharts list rke2-ingress-nginx and rke2-traefik")
    if found:
        return Running(found[0], f"the cluster's HelmCharts list {CHARTS[found[0]]}")
    # Neither chart: `none`, or a young cluster whose servers have not deployed it yet; not decisive.
    if previous.ingress_controller in CONTROLLERS:
        return Running(previous.ingress_controller, "this stack's last outputs, ingressController")
    # Outputs of releases that wrote no ingress-controller: what RKE2 chose. A cluster known to have run a
    # release before 1.36 got ingress-nginx, and 1.36 keeps what runs.
    minors = [v[0] for v in (parse_version(previous.kubernetes_version or ""),
                             parse_version(previous.kubernetes_version_confirmed or "")) if v is not None]
    if minors and min(minors) < versions.RKE2_TRAEFIK_DEFAULT_FROM_MINOR:
        return Running("ingress-nginx", INFERRED)
    return Running(None, "this stack's servers were booted by a release of this program that named no controller, "
                         "on RKE2 v1.36 or later, where a new cluster gets Traefik and an upgraded one keeps "
                         f"ingress-nginx; and {observed.no_read()}")


def statement(cluster_id: str, controller: str) -> Statement:
    chart = CHARTS.get(controller)
    listed = (f"lists {chart} and not {CHARTS['traefik' if controller == 'ingress-nginx' else 'ingress-nginx']}"
              if chart else "lists neither rke2-ingress-nginx nor rke2-traefik")
    return Statement("ingress", f"every server of cluster {cluster_id} deploys the {controller} ingress controller: "
                                f"`kubectl -n kube-system get helmcharts` {listed}, and each server's {CONFIG_PATH} "
                                f"names `ingress-controller: {controller}` (or, on RKE2 v1.36 and later, no controller)")


def _steps(old: str, new: str) -> str:
    if (old, new) == ("ingress-nginx", "traefik"):
        return (f"follow RKE2's Ingress NGINX to Traefik Migration Guide ({MIGRATION_GUIDE}) on the running servers; "
                f"it ends with `ingress-controller: [traefik]` in every server's {CONFIG_PATH} and rke2-server "
                "restarted on each, one at a time")
    what = {"none": "its Ingresses are no longer served", "traefik": "Traefik serves the Ingresses of class traefik",
            "ingress-nginx": "ingress-nginx serves the Ingresses of class nginx"}[new]
    return (f"on every server, one at a time, set `ingress-controller: {new}` in {CONFIG_PATH} and `systemctl "
            f"restart rke2-server` ({what}; RKE2's migration guide, {MIGRATION_GUIDE}, shows how Ingresses move "
            "between the two controllers)")


def plan(distribution: str, want: str | None, version: str, cluster_id: str, previous: ClusterState | None,
         observed: Observed, booting_servers: Sequence[str] = ()) -> IngressPlan | None:
    """`want`: ingress.controller as set (None: not set). None for RKE1 (cluster.yml carries it)."""
    if distribution != "rke2":
        return None
    run = running(previous, observed)
    if run is None:
        return IngressPlan(want or default_controller(version))
    assert previous is not None  # `run` is None without it
    if run.controller == BOTH:
        # Mid-migration: the servers name both; a new server naming one would remove the other.
        if not booting_servers:
            return IngressPlan(previous.ingress_controller, run)
        return IngressPlan(previous.ingress_controller, run, problems=(Diagnostic(
            KEY, f"the cluster runs both ingress-nginx and Traefik ({run.how}: the dual setup of RKE2's migration "
            f"guide, {MIGRATION_GUIDE}), but this update boots servers ({', '.join(booting_servers)}), and a server "
            "names one controller and would remove the other from the whole cluster. Finish the migration first (its "
            "phase 3 leaves `ingress-controller: [traefik]` on every server), set ingress.controller to traefik and "
            "`pulumi up`; or boot no server in this update", "ingress.mid-migration", value=want),))
    if want is None or want == run.controller:
        inferred = () if want is not None or run.how != INFERRED else (Diagnostic(
            KEY, "not set, and this stack's last outputs predate it: the cluster is taken to run ingress-nginx "
            f"({run.how}), and new servers name it. If its servers were changed by hand, set ingress.controller to "
            "what they run and confirm it as the refusal says", "ingress.inferred", Severity.WARNING),)
        return IngressPlan(run.controller, run, warnings=inferred)
    st = statement(cluster_id, want)
    if observed.confirmed(st):
        return IngressPlan(want, run, st)
    if run.controller is None:
        return IngressPlan(None, run, st, (Diagnostic(
            KEY, f"'{want}', but which ingress controller the cluster runs is not known ({run.how}), and a server "
            f"booting with another controller than the running ones removes theirs from the whole cluster. Check "
            "what runs (`kubectl -n kube-system get helmcharts rke2-ingress-nginx rke2-traefik`): if it is "
            f"{want}, {st.how()}; otherwise set ingress.controller to what runs, or remove it (new servers then "
            "name no controller and RKE2 keeps what runs)", "ingress.running-unknown", value=want, confirm=st),))
    running_chart = CHARTS.get(run.controller)
    effect = (f"empty its {running_chart} manifest and remove {run.controller} from the whole cluster while the "
              "other servers deploy it again" if running_chart else f"deploy {want} while the other servers remove it")
    return IngressPlan(run.controller, run, st, (Diagnostic(
        KEY, f"'{want}', but the cluster runs {run.controller} ({run.how}), and running servers keep the "
        f"config.yaml they booted with (user data is read at first boot only): a new server with "
        f"`ingress-controller: {want}` would {effect}. Change the running servers first: {_steps(run.controller, want)}; "
        f"then {st.how()}. Or remove ingress.controller: the cluster keeps {run.controller}", "ingress.changed",
        value=want, confirm=st),))


def removal_problems(version: str, ingress: IngressPlan | None, previous_version: str | None) -> list[Diagnostic]:
    """RKE2 v1.37 and later refuse ingress-nginx alone (versions.RKE2_INGRESS_NGINX_ALONE_REMOVED_MINOR):
    refuse that release for a new cluster that would run it, and for a running cluster that runs it
    (or may run it: not known), naming the migration. Every release from that minor on is judged,
    whether RKE2_RELEASES lists it yet or not."""
    target = parse_version(version)
    if ingress is None or target is None or target[0] < versions.RKE2_INGRESS_NGINX_ALONE_REMOVED_MINOR:
        return []
    removed = (f"RKE2 v1.{versions.RKE2_INGRESS_NGINX_ALONE_REMOVED_MINOR} and later refuse `ingress-controller: "
               "ingress-nginx` alone (rancher/rke2 PR #11156; ingress-nginx is retired upstream and its chart gets "
               "no more updates: rke2-docs release-notes/v1.36.X.md)")
    if ingress.running is None:
        if ingress.controller != "ingress-nginx":
            return []
        return [Diagnostic(KEY, f"'ingress-nginx' for a new cluster on {version}, but {removed}; use traefik (or none)",
                           "ingress.nginx-removed", value="ingress-nginx")]
    if ingress.controller not in ("ingress-nginx", None):
        return []
    on = previous_version or "the running release"
    runs = ("runs ingress-nginx" if ingress.controller == "ingress-nginx" else
            "may run ingress-nginx: which controller it runs is not known")
    check = "" if ingress.controller == "ingress-nginx" else (
        " (if it runs Traefik or none already, set ingress.controller to it and confirm it as the next `pulumi up` "
        "asks)")
    return [Diagnostic(
        "kubernetesVersion", f"{version}, but {removed}, and the cluster {runs} ({ingress.running.how}): upgraded, its "
        "servers would lose the controller that serves its Ingresses. Migrate to Traefik first, on "
        f"{on}: RKE2's Ingress NGINX to Traefik Migration Guide ({MIGRATION_GUIDE}), then set ingress.controller "
        f"to traefik and confirm it as `pulumi up` asks{check}; then upgrade", "ingress.nginx-removed-running",
        value=version)]
