"""Kubernetes versions on a running cluster: whether the last change is known complete on every node
(VersionState), and what a version change may do: no distribution change, no downgrade, one minor at a
time, not while the last one rolls out, the etcd 3.5 -> 3.6 stepping stone (RKE2), alone and with a way to
the nodes; the CCM image held one minor back while servers may run the older one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...diagnostics import Diagnostic, Severity, Statement
from ...settings import versions
from ...settings.resolve import ClusterConfig as StackConfig
from ...state.model import ClusterState
from ..releases import image_minor, parse_version, runs_version
from .confirmations import Observed


@dataclass(frozen=True)
class VersionState:
    """Whether the last version change (to `target`) is known complete on every node."""
    target: str | None
    complete: bool
    confirmed: str | None  # the version every node is known to run (None: not known)
    servers_minor: int | None  # the lowest minor any server is known to run
    statement: Statement | None = None
    lagging: Mapping[str, str] = field(default_factory=dict)  # node -> version, as read from the cluster
    applying: tuple[str, ...] = ()
    how: str = ""  # how completeness is known
    # Complete only by assumption: outputs from before kubernetesVersionConfirmed (or an update that
    # kept that assumption, kubernetesVersionAssumed) say nothing about what the nodes run.
    assumed: bool = False


def version_state(previous: ClusterState | None, observed: Observed, cluster_id: str) -> VersionState:
    if previous is None or previous.kubernetes_version is None:
        return VersionState(None, True, None, None)
    target = previous.kubernetes_version
    tv = parse_version(target)
    recorded = previous.kubernetes_version_confirmed
    assumed = False
    if not previous.version_recorded:
        # Releases before kubernetesVersionConfirmed held the CCM one minor back in the update that
        # raised the minor (and moved it on the next): a held CCM means the rollout just started.
        # They did not hold it on a patch change, so otherwise the version is only assumed to run
        # (review finding 7): fine for what tolerates a patch skew, not for the etcd 3.6 rule.
        held = image_minor(previous.ccm_image)
        recorded = None if (held is not None and tv and held < tv[0]) else target
        assumed = recorded == target
    elif previous.kubernetes_version_assumed and recorded == target:
        assumed = True
    names = ", ".join(sorted(n.name for n in previous.nodes)) or "none"
    statement = Statement("version", f"every node of cluster {cluster_id} runs Kubernetes {target} ({names})")
    live = observed.live
    if recorded == target and not (assumed and live is not None and live.nodes):
        if not assumed:
            return VersionState(target, True, target, tv[0] if tv else None, statement,
                                how="recorded by an earlier update")
        if observed.confirmed(statement):
            return VersionState(target, True, target, tv[0] if tv else None, statement, how="confirmed by you")
        return VersionState(target, True, target, tv[0] if tv else None, statement, assumed=True,
                            how="assumed from outputs that predate kubernetesVersionConfirmed")
    if live is not None and live.nodes:
        lagging = {n.name: n.kubelet_version for n in live.nodes if not runs_version(n.kubelet_version, target)}
        server_minors = [v[0] for v in (parse_version(n.kubelet_version) for n in live.nodes
                                        if n.control_plane or n.etcd) if v]
        servers_minor = min(server_minors) if server_minors else None
        complete = not lagging
        return VersionState(target, complete, target if complete else recorded, servers_minor, statement,
                            lagging=lagging, applying=live.applying, how="read from the cluster")
    if observed.confirmed(statement):
        return VersionState(target, True, target, tv[0] if tv else None, statement, how="confirmed by you")
    known = parse_version(recorded or "")
    servers_minor = known[0] if known else (tv[0] - 1 if tv else None)
    return VersionState(target, False, recorded, servers_minor, statement)


@dataclass(frozen=True)
class Incomplete:
    """Why the last version change is not known complete, and the confirmation that would settle it
    (None when the cluster itself says which nodes lag)."""
    text: str
    confirm: Statement | None


def not_complete(vs: VersionState, observed: Observed, distribution: str) -> Incomplete:
    if vs.lagging:
        nodes = ", ".join(f"{n} ({v or 'no version'})" for n, v in sorted(vs.lagging.items())[:6])
        more = f" and {len(vs.lagging) - 6} more" if len(vs.lagging) > 6 else ""
        busy = f"; the upgrade Plans are applying on {', '.join(vs.applying)}" if vs.applying else ""
        return Incomplete(f"the cluster reports nodes not on {vs.target} yet: {nodes}{more}{busy}. Wait until "
                          f"`kubectl get nodes` shows every node on {vs.target}, then `pulumi up` again", None)
    check = ("`kubectl get nodes` shows every node on it (and `kubectl -n system-upgrade get plans` shows both Plans "
             "Complete)" if distribution == "rke2" else
             f"`rke up` ran with it and `kubectl get nodes` shows every node on {vs.target}")
    return Incomplete(f"{observed.no_read()}, and no update since has recorded it complete. Check that {check}; then "
                      + (vs.statement.how() if vs.statement else "`pulumi up` again")
                      + ", or run `pulumi up` where the API server answers (inside the VPC)", vs.statement)


KEY = "kubernetesVersion"


def version_problems(previous: ClusterState | None, distribution: str, version: str,
                     state: VersionState | None = None, observed: Observed | None = None) -> list[Diagnostic]:
    """A distribution change, a downgrade, a skipped minor, or a change while the last one is
    still rolling out, compared with what runs now."""
    observed = observed if observed is not None else Observed()
    if previous is None or previous.kubernetes_version is None:
        return []
    if previous.distribution and previous.distribution != distribution:
        return [Diagnostic("distribution", f"'{distribution}' but this stack runs {previous.distribution}; a running "
                           "cluster cannot change distribution: create a new stack for the new cluster and move "
                           "workloads", "version.distribution-changed", value=distribution)]
    old, new = parse_version(previous.kubernetes_version), parse_version(version)
    if old is None or new is None or new == old:
        return []
    running = f"the cluster runs {previous.kubernetes_version} (this stack's last outputs)"
    if new < old:
        return [Diagnostic(KEY, f"{version} is a downgrade: {running}, and Kubernetes does not support downgrades; "
                           f"set kubernetesVersion back to {previous.kubernetes_version} or a later release",
                           "version.downgrade", value=version)]
    if new[0] > old[0] + 1:
        return [Diagnostic(KEY, f"{version} skips a minor: {running}, and Kubernetes upgrades one minor at a time; set "
                           f"v1.{old[0] + 1}.x first, `pulumi up`, wait until every node reports it (`kubectl get "
                           f"nodes`), then v1.{new[0]}.x", "version.skips-minor", value=version)]
    if state is not None and not state.complete and new[0] != old[0]:
        # A later patch of the minor being rolled out is fine: nodes still on the older minor go
        # straight to it, servers first. A new minor would reach nodes two minors behind.
        since = f" from {state.confirmed}" if state.confirmed else ""
        why = not_complete(state, observed, distribution)
        return [Diagnostic(KEY, f"{version}, but the last change{since} to {previous.kubernetes_version} is not known "
                           f"complete: {why.text}. Kubernetes upgrades one minor at a time on every node",
                           "version.rollout-incomplete", value=version, confirm=why.confirm)]
    if distribution == "rke2":
        problems = etcd_stepping_stone_problems(previous.kubernetes_version, version)
        if not problems and state is not None and state.assumed and _crosses_to_etcd_36(previous.kubernetes_version,
                                                                                        version):
            # The stepping stone is judged from what runs: an assumption is not that.
            why = not_complete(state, observed, distribution)
            problems = [Diagnostic(
                KEY, f"{version} runs etcd {versions.RKE2_RELEASES.get(version, 'unknown')}, and this stack's last "
                f"outputs (from a release before kubernetesVersionConfirmed) do not say that every server runs "
                f"{previous.kubernetes_version} (etcd {versions.RKE2_RELEASES.get(previous.kubernetes_version, 'unknown')}"
                "): an earlier change may still be rolling out, and etcd goes from 3.5 to 3.6 safely only from 3.5.26. "
                f"{why.text}", "etcd.stepping-stone-assumed", value=version, confirm=why.confirm)]
        if problems or state is None or state.complete:
            return problems
        # The last change is still rolling out: nodes may still run the release before it, so the
        # etcd rule is judged from what every node is known to run as well.
        if state.confirmed and state.confirmed != previous.kubernetes_version:
            return etcd_stepping_stone_problems(state.confirmed, version)
        target = _etcd(version)
        if not state.confirmed and (target is None or target[:2] >= (3, 6)):
            why = not_complete(state, observed, distribution)
            return [Diagnostic(
                KEY, f"{version} runs etcd {versions.RKE2_RELEASES.get(version, 'unknown')}, but the last change to "
                f"{previous.kubernetes_version} is not known complete: {why.text}. etcd goes from 3.5 to 3.6 safely "
                "only from 3.5.26, so every server must be known to run the last release first",
                "etcd.stepping-stone-rollout", value=version, confirm=why.confirm)]
    return []


def _crosses_to_etcd_36(running: str, version: str) -> bool:
    """The change from `running` to `version` takes etcd from 3.5 (or unknown) to 3.6 (or unknown)."""
    old, new = _etcd(running), _etcd(version)
    return (new is None or new[:2] >= (3, 6)) and (old is None or old[:2] < (3, 6))


def _etcd(release: str | None) -> tuple[int, ...] | None:
    """The etcd version an RKE2 release runs (versions.RKE2_RELEASES), or None for an unknown release."""
    etcd = versions.RKE2_RELEASES.get(release or "")
    return tuple(int(n) for n in etcd.split(".")) if etcd else None


def etcd_stepping_stone_problems(running: str, version: str) -> list[Diagnostic]:
    """RKE2 releases carrying etcd 3.6 must not follow one carrying etcd older than 3.5.26 (rancher/rke2-docs
    docs/release-notes/v1.33.X.md, "RKE2 v1.34 Upgrade Warning" under v1.33.7+rke2r3: "there is NO safe path
    from etcd 3.5 to 3.6 except by upgrading to v3.5.26 first", or removed members come back as zombies and
    the cluster loses quorum). Names the release to go through first: the newest one carrying 3.5.26 or a
    later 3.5 on the running minor, else on the next one."""
    old, new = _etcd(running), _etcd(version)
    if new is None or new[:2] < (3, 6) or (old is not None and old >= versions.ETCD_SAFE_BEFORE_3_6):
        return []
    # Every known release parses and names its etcd (tests/unit/test_versions.py); `version` is one (`new` is set).
    known = {r: (at, etcd) for r in versions.RKE2_RELEASES
             if (at := parse_version(r)) is not None and (etcd := _etcd(r)) is not None}
    start, target = parse_version(running) or (0, 0, 0, 0), known[version][0]

    def stone(release: str) -> bool:  # reachable from what runs, leads to the target, carries 3.5.26+
        at, etcd = known[release]
        return (versions.ETCD_SAFE_BEFORE_3_6 <= etcd < (3, 6) and at[0] in (start[0], start[0] + 1)
                and start < at < target)

    # the newest on the running minor (a patch upgrade), else the newest on the next minor
    stones = sorted(filter(stone, known),
                    key=lambda r: (known[r][0][0] != start[0], tuple(-n for n in known[r][0])))
    first = next(iter(stones), None)
    via = (f"set kubernetesVersion to {first} (etcd {versions.RKE2_RELEASES[first]}) first, `pulumi up`, wait "
           f"until every server runs it (`kubectl get nodes`), then {version}" if first else
           "no release this program knows leads there; go through an RKE2 release with etcd 3.5.26 or a later 3.5 first")
    what = (f"which runs etcd {versions.RKE2_RELEASES[running]}" if old is not None else
            "whose etcd version this program does not know (add it to components/settings/versions.py RKE2_RELEASES from "
            "its release notes if it already runs etcd 3.5.26 or later)")
    return [Diagnostic(KEY, f"{version} runs etcd {versions.RKE2_RELEASES[version]}, but the cluster runs {running}, "
                       f"{what}; etcd goes from 3.5 to 3.6 safely only from 3.5.26 (RKE2's release notes: removed "
                       f"members can come back and cost quorum): {via}", "etcd.stepping-stone", value=version)]


def upgrade_problems(cfg: StackConfig, previous: ClusterState | None, booting: Sequence[str],
                     kubeconfig_published: bool = False, state: VersionState | None = None,
                     observed: Observed | None = None) -> list[Diagnostic]:
    """A version change must have a way to the running nodes, and come alone; and no node boots the
    configured version while servers may still run an older minor (a kubelet must not be newer than
    its kube-apiserver). `booting`: the names of the nodes this update launches."""
    observed = observed if observed is not None else Observed()
    if previous is None or previous.kubernetes_version is None:
        return []
    problems = []
    changed = previous.kubernetes_version != cfg.kubernetes_version
    if changed and booting:
        problems.append(Diagnostic(
            KEY, f"changed from {previous.kubernetes_version} together with new or replaced nodes "
            f"({', '.join(booting)}), which would boot {cfg.kubernetes_version} before the servers are upgraded; "
            "change the version in an update of its own, wait until every node runs it, then add nodes",
            "version.with-new-nodes", value=cfg.kubernetes_version))
    elif booting and state is not None and not state.complete:
        old, new = parse_version(state.confirmed or ""), parse_version(cfg.kubernetes_version)
        if old is None or new is None or old[0] != new[0]:
            why = not_complete(state, observed, cfg.distribution)
            problems.append(Diagnostic(
                "nodePools", f"new or replaced nodes ({', '.join(booting)}) would boot {cfg.kubernetes_version}, "
                "but the change to it is not known complete, so servers may still run an older minor (a kubelet "
                f"must not be newer than its kube-apiserver): {why.text}", "version.nodes-before-rollout",
                confirm=why.confirm))
    if changed and cfg.distribution == "rke2" and cfg.ccm.install == "helm" and cfg.kubeconfig is None \
            and not kubeconfig_published:
        problems.append(Diagnostic(
            KEY, f"changed from {previous.kubernetes_version}, but the upgrade Plans reach the cluster through its "
            "kubeconfig, which is neither set nor published by the first server (or not readable with your "
            "credentials); set it (`pulumi config set --secret kubeconfig < kubeconfig.yaml`) or use ccm.install: "
            "manifest", "version.no-way-to-nodes", value=cfg.kubernetes_version))
    return problems


def ccm_image(cfg: StackConfig, previous: ClusterState | None,
              state: VersionState | None = None) -> tuple[str, tuple[Diagnostic, ...]]:
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
        return image, (Diagnostic("", f"Kubernetes 1.{held} -> 1.{minor}: the CCM stays on {image} until every server "
                                  f"runs 1.{minor}; the first `pulumi up` that knows it (read from the cluster through "
                                  "the kubeconfig, or confirmed with confirmClusterState) moves it to "
                                  f"{cfg.ccm.image_for(minor)}", "ccm.image-held", Severity.NOTE),)
    return cfg.ccm.image_for(minor), ()


def version_confirmed(cfg: StackConfig, previous: ClusterState | None, vstate: VersionState) -> str | None:
    """kubernetesVersionConfirmed after this update: the version every node is known to run. A new
    cluster boots the configured version everywhere; a change is confirmed by a later update."""
    if previous is None or not previous.nodes:
        return cfg.kubernetes_version
    return vstate.target if vstate.complete else vstate.confirmed
