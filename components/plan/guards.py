"""The day-2 guards that judge an update against the stack's history (history.py) and what runs: the
cluster's identity and region, version steps (one minor at a time, the etcd 3.5 -> 3.6 stepping stone),
etcd quorum, node roles and purchase options. Each returns the problems it finds; spec.py collects
them before anything is registered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..settings import versions
from . import ingress as ingress_plan
from .history import (
    EtcdState,
    Observed,
    PlannedMember,
    Previous,
    VersionState,
    etcd_changes,
    parse_version,
)


def _not_complete(vs: VersionState, observed: Observed, distribution: str) -> str:
    if vs.lagging:
        nodes = ", ".join(f"{n} ({v or 'no version'})" for n, v in sorted(vs.lagging.items())[:6])
        more = f" and {len(vs.lagging) - 6} more" if len(vs.lagging) > 6 else ""
        busy = f"; the upgrade Plans are applying on {', '.join(vs.applying)}" if vs.applying else ""
        return (f"the cluster reports nodes not on {vs.target} yet: {nodes}{more}{busy}. Wait until `kubectl get nodes` "
                f"shows every node on {vs.target}, then `pulumi up` again")
    check = ("`kubectl get nodes` shows every node on it (and `kubectl -n system-upgrade get plans` shows both Plans "
             "Complete)" if distribution == "rke2" else
             f"`rke up` ran with it and `kubectl get nodes` shows every node on {vs.target}")
    return (f"{observed.no_read()}, and no update since has recorded it complete. Check that {check}; then "
            + (vs.statement.how() if vs.statement else "`pulumi up` again")
            + ", or run `pulumi up` where the API server answers (inside the VPC)")


def version_problems(previous: Previous | None, distribution: str, version: str,
                     state: VersionState | None = None, observed: Observed | None = None) -> list[str]:
    """A distribution change, a downgrade, a skipped minor, or a change while the last one is
    still rolling out, compared with what runs now."""
    observed = observed if observed is not None else Observed()
    if previous is None or previous.kubernetes_version is None:
        return []
    if previous.distribution and previous.distribution != distribution:
        return [f"rke-aws:distribution: '{distribution}' but this stack runs {previous.distribution}; a running "
                "cluster cannot change distribution: create a new stack for the new cluster and move workloads"]
    old, new = parse_version(previous.kubernetes_version), parse_version(version)
    if old is None or new is None or new == old:
        return []
    running = f"the cluster runs {previous.kubernetes_version} (this stack's last outputs)"
    if new < old:
        return [f"rke-aws:kubernetesVersion: {version} is a downgrade: {running}, and Kubernetes does not "
                f"support downgrades; set kubernetesVersion back to {previous.kubernetes_version} or a later release"]
    if new[0] > old[0] + 1:
        return [f"rke-aws:kubernetesVersion: {version} skips a minor: {running}, and Kubernetes upgrades one minor "
                f"at a time; set v1.{old[0] + 1}.x first, `pulumi up`, wait until every node reports it "
                f"(`kubectl get nodes`), then v1.{new[0]}.x"]
    if state is not None and not state.complete and new[0] != old[0]:
        # A later patch of the minor being rolled out is fine: nodes still on the older minor go
        # straight to it, servers first. A new minor would reach nodes two minors behind.
        since = f" from {state.confirmed}" if state.confirmed else ""
        return [f"rke-aws:kubernetesVersion: {version}, but the last change{since} to {previous.kubernetes_version} "
                f"is not known complete: {_not_complete(state, observed, distribution)}. Kubernetes upgrades one "
                "minor at a time on every node"]
    if distribution == "rke2":
        problems = etcd_stepping_stone_problems(previous.kubernetes_version, version)
        if not problems and state is not None and state.assumed and _crosses_to_etcd_36(previous.kubernetes_version,
                                                                                        version):
            # The stepping stone is judged from what runs: an assumption is not that.
            problems = [f"rke-aws:kubernetesVersion: {version} runs etcd {versions.RKE2_RELEASES.get(version, 'unknown')}, "
                        f"and this stack's last outputs (from a release before kubernetesVersionConfirmed) do not say "
                        f"that every server runs {previous.kubernetes_version} (etcd "
                        f"{versions.RKE2_RELEASES.get(previous.kubernetes_version, 'unknown')}): an earlier change may "
                        "still be rolling out, and etcd goes from 3.5 to 3.6 safely only from 3.5.26. "
                        f"{_not_complete(state, observed, distribution)}"]
        if problems or state is None or state.complete:
            return problems
        # The last change is still rolling out: nodes may still run the release before it, so the
        # etcd rule is judged from what every node is known to run as well.
        if state.confirmed and state.confirmed != previous.kubernetes_version:
            return etcd_stepping_stone_problems(state.confirmed, version)
        target = _etcd(version)
        if not state.confirmed and (target is None or target[:2] >= (3, 6)):
            return [f"rke-aws:kubernetesVersion: {version} runs etcd {versions.RKE2_RELEASES.get(version, 'unknown')}, "
                    f"but the last change to {previous.kubernetes_version} is not known complete: "
                    f"{_not_complete(state, observed, distribution)}. etcd goes from 3.5 to 3.6 safely only from "
                    "3.5.26, so every server must be known to run the last release first"]
    return []


def ingress_removal_problems(version: str, ingress: ingress_plan.IngressPlan | None, previous_version: str | None) -> list[str]:
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
        return [f"{ingress_plan.KEY}: 'ingress-nginx' for a new cluster on {version}, but {removed}; use traefik (or none)"]
    if ingress.controller not in ("ingress-nginx", None):
        return []
    on = previous_version or "the running release"
    runs = ("runs ingress-nginx" if ingress.controller == "ingress-nginx" else
            "may run ingress-nginx: which controller it runs is not known")
    check = "" if ingress.controller == "ingress-nginx" else (
        " (if it runs Traefik or none already, set ingress.controller to it and confirm it as the next `pulumi up` "
        "asks)")
    return [f"rke-aws:kubernetesVersion: {version}, but {removed}, and the cluster {runs} ({ingress.running.how}): "
            f"upgraded, its servers would lose the controller that serves its Ingresses. Migrate to Traefik first, on "
            f"{on}: RKE2's Ingress NGINX to Traefik Migration Guide ({ingress_plan.MIGRATION_GUIDE}), then set ingress.controller "
            f"to traefik and confirm it as `pulumi up` asks{check}; then upgrade"]


def _crosses_to_etcd_36(running: str, version: str) -> bool:
    """The change from `running` to `version` takes etcd from 3.5 (or unknown) to 3.6 (or unknown)."""
    old, new = _etcd(running), _etcd(version)
    return (new is None or new[:2] >= (3, 6)) and (old is None or old[:2] < (3, 6))


def _etcd(release: str | None) -> tuple[int, ...] | None:
    """The etcd version an RKE2 release runs (versions.RKE2_RELEASES), or None for an unknown release."""
    etcd = versions.RKE2_RELEASES.get(release or "")
    return tuple(int(n) for n in etcd.split(".")) if etcd else None


def _etcd_text(release: str) -> str:
    return versions.RKE2_RELEASES[release]


def etcd_stepping_stone_problems(running: str, version: str) -> list[str]:
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
    via = (f"set kubernetesVersion to {first} (etcd {_etcd_text(first)}) first, `pulumi up`, wait "
           f"until every server runs it (`kubectl get nodes`), then {version}" if first else
           "no release this program knows leads there; go through an RKE2 release with etcd 3.5.26 or a later 3.5 first")
    what = (f"which runs etcd {_etcd_text(running)}" if old is not None else
            "whose etcd version this program does not know (add it to components/settings/versions.py RKE2_RELEASES from "
            "its release notes if it already runs etcd 3.5.26 or later)")
    return [f"rke-aws:kubernetesVersion: {version} runs etcd {_etcd_text(version)}, but the cluster runs "
            f"{running}, {what}; etcd goes from 3.5 to 3.6 safely only from 3.5.26 (RKE2's release notes: removed "
            f"members can come back and cost quorum): {via}"]


def _replace_reasons(previous: Previous, planned: Sequence[PlannedMember], replaced: list[str]) -> set[str]:
    by_key = {(p.pool, p.index): p for p in planned}
    reasons = set()
    for member in previous.etcd_members:
        p = by_key.get(member.key)
        if member.name in replaced and p is not None:
            reasons.add("key" if p.key_name != member.key_name else "address")
    return reasons


def quorum_problems(previous: Previous | None, planned: Sequence[PlannedMember],
                    state: EtcdState | None = None) -> list[str]:
    """Refuse an update that takes more than a minority of etcd's members away at once, or, when
    the membership is not known exactly, more than one.

    Instances are replaced delete-before-create (their fixed address cannot be held twice), so a
    replaced member is gone while its successor boots, exactly like a deleted one. Members etcd
    still lists but that do not run count for the quorum and cannot be lost again.
    """
    deleted, replaced = etcd_changes(previous, planned)
    if not (deleted or replaced):
        return []
    assert previous is not None
    if state is None:
        state = EtcdState(tuple(sorted(n.name for n in previous.etcd_members)), (), True)
    down = set(state.down)
    lost = [n for n in deleted + replaced if n not in down]
    if not lost:
        return []
    members = len(set(state.listed) | set(deleted) | set(replaced))
    quorum = members // 2 + 1
    alive_after = members - len(down) - len(lost)
    tolerable = max((members - 1) // 2 - len(down), 0)  # members that may go while the rest keep quorum
    what = ", ".join([f"{n} (deleted)" for n in deleted if n not in down] +
                     [f"{n} (replaced)" for n in replaced if n not in down])
    stale = ""
    if down:
        stale = (f"; etcd also still lists {', '.join(sorted(down))}, which no longer run ({state.how}: removed by "
                 "earlier updates, or not Ready)")
    if alive_after >= quorum and (len(lost) <= 1 or state.exact):
        return []
    reasons = _replace_reasons(previous, planned, replaced)
    if alive_after >= quorum:
        return [
            f"rke-aws:nodePools: this update would take {len(lost)} etcd members away at once ({what}); without a "
            f"view of the cluster ({state.how}) the program removes at most one per update, because etcd may list "
            "members it does not know about. Go one member per `pulumi up`, or check that "
            "`kubectl get nodes -l node-role.kubernetes.io/etcd=true` lists exactly the servers this stack runs, all "
            "Ready, and " + (state.statement.how() if state.statement else "`pulumi up` again")
        ]
    steps = []
    if down:
        steps.append(f"First remove the members that no longer run: `kubectl delete node {' '.join(sorted(down))}` "
                     "(RKE2 removes a server's etcd member with its Node; RKE1: `rke up` with rkeClusterYml), then "
                     "`pulumi up` again where the cluster can be read, or "
                     + (state.statement.how() if state.statement else "`pulumi up` again") + ".")
    if "key" in reasons:
        steps.append("access.sshKeyName applies to every node and EC2 cannot change the key pair of an instance, so "
                     "the new name replaces every node at once; there is no per-node way. Set it back (Session "
                     "Manager needs no key pair); to rotate SSH keys, change authorized_keys on the running nodes.")
    if "address" in reasons:
        steps.append("A node whose address, zone or subnet changes (network.vpcCidr, the subnet CIDRs or IDs) is a new "
                     "instance, and all servers would move at once; set the network back. A cluster moves to another "
                     "network as a new stack: restore an etcd snapshot there (README 'Restoring a snapshot onto new "
                     "servers').")
    if set(deleted) - down:
        steps.append("Take an etcd snapshot, then go one member per `pulumi up`: lower the pool's count by one, "
                     "`pulumi up`, delete the removed server's Node (`kubectl delete node <name>`, which removes its "
                     "etcd member) and wait until the remaining servers are Ready, then the next. Keep an odd number "
                     "of members.")
    if members == 1:
        steps.append("A single-member cluster cannot lose its only member: it holds all cluster state; add members first.")
    return [
        f"rke-aws:nodePools: this update would take {len(lost)} of the {members} etcd members away at once ({what})"
        f"{stale}; etcd keeps quorum only with {quorum} of {members} running, so at most {tolerable} may go now. "
        + " ".join(steps)
    ]


def cluster_id_problems(previous: Previous | None, cluster_id: str, stack: str) -> list[str]:
    """A new cluster ID renames every resource: a second cluster, the running one deleted."""
    if previous is None or previous.cluster_id in (None, cluster_id):
        return []
    old = previous.cluster_id
    servers = len(previous.etcd_members)
    defaulted = (" (clusterId is not set here and defaults to the stack name, so a renamed stack changes it: "
                 f"set it to '{old}')") if cluster_id == stack else ""
    return [
        f"rke-aws:clusterId: '{cluster_id}', but this stack runs cluster '{old}' ({len(previous.nodes)} nodes, "
        f"{servers} etcd members, endpoint api.{old}.rke-aws.internal){defaulted}. The cluster ID names every "
        "resource: this update would build a new VPC, new tokens and new servers under the new ID and delete every "
        f"running node, etcd members included. Set it back: `pulumi config set clusterId {old}`. To move a "
        "cluster to a new ID, create a new stack with it, restore an etcd snapshot there (README 'Restoring a "
        "snapshot onto new servers'), move the workloads, then `pulumi destroy` this stack"
    ]


def region_problems(previous: Previous | None, region: str) -> list[str]:
    if previous is None or previous.region in (None, region):
        return []
    return [f"aws:region: '{region}', but this stack runs its cluster in {previous.region}; a cluster does not move "
            f"between regions (every node, subnet and address would be new): set it back (`pulumi config set "
            f"aws:region {previous.region}`). For a cluster in {region}, create a new stack there and restore an etcd "
            "snapshot into it (README 'Restoring a snapshot onto new servers')"]


def role_problems(previous: Previous | None, pools: Sequence[Any]) -> list[str]:
    """A running node keeps the roles it booted with (user data is read at first boot only), so a
    pool whose roles change would be counted, routed and guarded by roles its nodes do not have."""
    if previous is None:
        return []
    problems = []
    for i, pool in enumerate(pools):
        kept = [n for j, n in previous.pool_nodes(pool.name).items() if j < pool.count]
        was = sorted({r for n in kept for r in n.roles})
        if kept and was != sorted(pool.roles):
            problems.append(
                f"rke-aws:nodePools[{i}].roles: {sorted(pool.roles)}, but pool '{pool.name}' runs {len(kept)} node(s) "
                f"as {was}, and a running node keeps the roles it booted with: set the roles back. Nodes with other "
                "roles are a new pool: add one, and lower this pool's count (one etcd member per update)"
            )
    return problems


def etcd_growth_problems(previous: Previous | None, planned: Sequence[PlannedMember],
                         split_pools: Sequence[str]) -> list[str]:
    """A running cluster takes new etcd-only members one per update: RKE2 boots every new server at
    once, etcd admits one learner at a time (etcd's --max-learners defaults to 1), and each new member
    counts for the quorum as soon as it is promoted; one at a time, a failed join costs nothing."""
    if previous is None or not previous.etcd_members:
        return []
    running = {m.key for m in previous.etcd_members}
    new = [p for p in planned if p.is_etcd and (p.pool, p.index) not in running]
    if len(new) <= 1 or not any(p.pool in split_pools for p in new):
        return []
    names = ", ".join(f"{p.pool}-{p.index}" for p in new)
    pools = sorted({p.pool for p in new})
    return [
        f"rke-aws:nodePools: this update would add {len(new)} etcd members at once ({names}) to the running "
        f"cluster's {len(running)}; add etcd-only servers one per `pulumi up`: raise the count of "
        f"{', '.join(pools)} by one, `pulumi up`, wait until the new server is Ready "
        "(`kubectl get nodes -l node-role.kubernetes.io/etcd=true`), then the next"
    ]


def market_problems(previous: Previous | None, pools: Sequence[Any]) -> list[str]:
    """Every instance_market_options field forces a new instance (terraform-provider-aws
    internal/service/ec2/ec2_instance.go, ForceNew on each), and Pulumi replaces a pool's instances
    together: switching a running pool's market would replace all its nodes at once."""
    if previous is None:
        return []
    problems = []
    for i, pool in enumerate(pools):
        kept = [n for j, n in previous.pool_nodes(pool.name).items() if j < pool.count]
        was = sorted({n.market for n in kept})
        if kept and was != [pool.market]:
            problems.append(
                f"rke-aws:nodePools[{i}].market: '{pool.market}', but pool '{pool.name}' runs {len(kept)} node(s) as "
                f"{'/'.join(was)}, and AWS cannot change an instance's market: the change would replace every node "
                "of the pool at once. Set it back; for the other market add a new pool, then lower this one's count"
            )
    return problems
