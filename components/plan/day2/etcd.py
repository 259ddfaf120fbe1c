"""etcd's membership on a running cluster: what it lists as far as this update knows (EtcdState), the
members an update deletes or replaces, the quorum it must keep, how fast it may grow, and the members
removed from the stack that etcd may still list (etcdMembersRemoved)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...diagnostics import Diagnostic, Statement
from ...state.migrations import address_in_name
from ...state.model import ClusterState, RemovedMember
from .confirmations import Observed


@dataclass(frozen=True)
class PlannedMember:
    """What the guard needs of a planned node: identity and the inputs whose change replaces it."""
    pool: str
    index: int
    private_ip: str
    availability_zone: str
    tier: str
    key_name: str | None
    is_etcd: bool
    name: str = ""


@dataclass(frozen=True)
class EtcdState:
    """etcd's membership as far as this update knows it."""
    listed: tuple[str, ...]  # members etcd lists
    down: tuple[str, ...]  # listed members that do not run (removed instances, Nodes not Ready)
    exact: bool  # read from the cluster or confirmed: more than one member may go in one update
    statement: Statement | None = None
    how: str = "this stack's last outputs"


def etcd_state(previous: ClusterState | None, observed: Observed, cluster_id: str) -> EtcdState:
    if previous is None:
        return EtcdState((), (), True)
    running = sorted(n.name for n in previous.etcd_members)
    statement = Statement("etcd", f"etcd of cluster {cluster_id} lists exactly these members, all healthy: "
                                  f"{', '.join(running) or 'none'}")
    live = observed.live
    if live is not None:
        listed = live.etcd_members
        # A removed server's Node stays NotReady until it is deleted (then etcd drops the member).
        gone = set(live.not_ready) | {m.name for m in previous.etcd_members_removed}
        down = tuple(n for n in listed if n in gone)
        return EtcdState(listed, down, True, statement, "the cluster")
    if observed.confirmed(statement):
        return EtcdState(tuple(running), (), True, statement, "your confirmation")
    pending = sorted({m.name for m in previous.etcd_members_removed} - set(running))
    return EtcdState(tuple(sorted(set(running) | set(pending))), tuple(pending), False, statement)


def etcd_changes(previous: ClusterState | None, planned: Iterable[PlannedMember]) -> tuple[list[str], list[str]]:
    """(deleted, replaced) etcd members, by node name."""
    if previous is None:
        return [], []
    by_key = {(p.pool, p.index): p for p in planned}
    deleted, replaced = [], []
    for member in previous.etcd_members:
        p = by_key.get(member.key)
        if p is None or not p.is_etcd:
            deleted.append(member.name)
        elif (p.private_ip, p.availability_zone, p.tier, p.key_name) != (
                member.private_ip, member.availability_zone, member.tier, member.key_name):
            replaced.append(member.name)
    return deleted, replaced


def etcd_removed_after(previous: ClusterState | None, planned: Sequence[PlannedMember], state: EtcdState,
                       observed: Observed) -> tuple[RemovedMember, ...]:
    """etcdMembersRemoved for this update's outputs: members etcd may still list that the stack no
    longer runs (the next update counts them, and never gives their address to a new node)."""
    if previous is None:
        return ()
    planned_etcd = {p.name for p in planned if p.is_etcd}
    deleted, _ = etcd_changes(previous, planned)
    if observed.live is not None:
        still = set(observed.live.etcd_members) - planned_etcd
    elif state.exact:
        still = set()
    else:
        still = {m.name for m in previous.etcd_members_removed}
    names = sorted((still | set(deleted)) - planned_etcd)
    known = ({m.name: m.private_ip for m in previous.etcd_members_removed}
             | {n.name: n.private_ip for n in previous.nodes})
    out = []
    for name in names:
        ip = known.get(name) or address_in_name(name)
        if ip:
            out.append(RemovedMember(name=name, private_ip=ip))
    return tuple(out)


def _replace_reasons(previous: ClusterState, planned: Sequence[PlannedMember], replaced: list[str]) -> set[str]:
    by_key = {(p.pool, p.index): p for p in planned}
    reasons = set()
    for member in previous.etcd_members:
        p = by_key.get(member.key)
        if member.name in replaced and p is not None:
            reasons.add("key" if p.key_name != member.key_name else "address")
    return reasons


def quorum_problems(previous: ClusterState | None, planned: Sequence[PlannedMember],
                    state: EtcdState | None = None) -> list[Diagnostic]:
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
    confirm = state.statement
    how = confirm.how() if confirm else "`pulumi up` again"
    if alive_after >= quorum:
        return [Diagnostic(
            "nodePools", f"this update would take {len(lost)} etcd members away at once ({what}); without a view of "
            f"the cluster ({state.how}) the program removes at most one per update, because etcd may list members it "
            "does not know about. Go one member per `pulumi up`, or check that `kubectl get nodes -l "
            "node-role.kubernetes.io/etcd=true` lists exactly the servers this stack runs, all Ready, and " + how,
            "etcd.one-per-update", confirm=confirm)]
    steps = []
    if down:
        steps.append(f"First remove the members that no longer run: `kubectl delete node {' '.join(sorted(down))}` "
                     "(RKE2 removes a server's etcd member with its Node; RKE1: `rke up` with rkeClusterYml), then "
                     f"`pulumi up` again where the cluster can be read, or {how}.")
    if "key" in reasons:
        steps.append("access.sshKeyName applies to every node and EC2 cannot change the key pair of an instance, so "
                     "the new name replaces every node at once; there is no per-node way. Set it back (Session "
                     "Manager needs no key pair); to rotate SSH keys, change authorized_keys on the running nodes.")
    if "address" in reasons:
        steps.append("A node whose address, zone or subnet changes (network.vpcCidr, the subnet CIDRs or IDs) is a new "
                     "instance, and all servers would move at once; set the network back. A cluster moves to another "
                     "network as a new stack: restore an etcd snapshot there ("
                     "docs/operations/restore-snapshot.md, 'Restoring a snapshot onto new servers').")
    if set(deleted) - down:
        steps.append("Take an etcd snapshot, then go one member per `pulumi up`: lower the pool's count by one, "
                     "`pulumi up`, delete the removed server's Node (`kubectl delete node <name>`, which removes its "
                     "etcd member) and wait until the remaining servers are Ready, then the next. Keep an odd number "
                     "of members.")
    if members == 1:
        steps.append("A single-member cluster cannot lose its only member: it holds all cluster state; add members first.")
    return [Diagnostic(
        "nodePools", f"this update would take {len(lost)} of the {members} etcd members away at once ({what}){stale}; "
        f"etcd keeps quorum only with {quorum} of {members} running, so at most {tolerable} may go now. "
        + " ".join(steps), "etcd.quorum", confirm=confirm if down else None)]


def etcd_growth_problems(previous: ClusterState | None, planned: Sequence[PlannedMember],
                         split_pools: Sequence[str]) -> list[Diagnostic]:
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
    return [Diagnostic(
        "nodePools", f"this update would add {len(new)} etcd members at once ({names}) to the running cluster's "
        f"{len(running)}; add etcd-only servers one per `pulumi up`: raise the count of {', '.join(pools)} by one, "
        "`pulumi up`, wait until the new server is Ready (`kubectl get nodes -l node-role.kubernetes.io/etcd=true`), "
        "then the next", "etcd.growth")]
