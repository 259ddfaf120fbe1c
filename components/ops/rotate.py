"""`rke-aws rotate <stack>` (`python3 -m offline.tasks rotate <stack>`): replace every stale node (components/plan/stale.py), one etcd
member at a time, driven to the end through Pulumi's Automation API and the Kubernetes API.

Per step, like kops' rolling update (kubernetes/kops pkg/instancegroups/rollingupdate.go, instancegroups.go):
validate the cluster (every node Ready and on the configured version, every etcd member a voter), cordon,
drain, delete the Node, replace the instance, validate again. Agents go first, `rotation.maxUnavailableAgents`
at a time (kops rolls node groups after the control plane; here the servers, which hold etcd, go last so a
problem with the new image shows on agents first); servers one at a time, the initialising server last and
only while another server answers (it rejoins through them: components/node/scripts/rke2.sh).

- Drain (kubectl pkg/drain/drain.go, filters.go): evictions through the eviction subresource, so
  PodDisruptionBudgets hold; a 429 is retried every EVICTION_RETRY_SECONDS until DRAIN_SECONDS; a 500
  (a pod under two PDBs, which the eviction subresource does not support) stops at once; DaemonSet pods,
  mirror pods (RKE2's static control-plane pods: rancher/rke2 pkg/executor/staticpod) and finished pods
  are left alone.
- Node deletion: RKE2's etcd controller removes a server's etcd member when its Node is deleted, and holds
  the Node Terminating (finalizer) until the member is removed (k3s pkg/etcd/member_controller.go); the
  node-password Secret goes with the Node, so the replacement can register under the same name
  (rke2-docs docs/advanced.md). The member count is then read again: exactly one fewer, or stop.
- etcd membership is read from the Kubernetes API: the `EtcdIsVoter` condition the etcd leader keeps on
  each etcd Node (True/MemberNotLearner; False with MemberIsLearner, Unhealthy or NotAMember: k3s
  pkg/etcd/etcd.go manageLearners, setEtcdStatusCondition); no etcdctl, no supervisor port.
- Replacement: `pulumi up --target <urn> --replace <urn>` (Stack.up(target=, replace=)); a targeted
  replacement creates the instance from the program's inputs, so it takes the new image, type and user
  data that a plain update ignores (pulumi/pulumi pkg/resource/deploy/step_generator.go isTargetedReplace),
  at the same address and name (instances are deleteBeforeReplace: components/aws/nodes.py).
- Guards: before a server goes, the same quorum guard a plain `pulumi up` runs (components/plan/day2/etcd.py
  quorum_problems), judged against the membership read from the cluster; and, stricter, every member must
  be a healthy voter (etcd keeps quorum headroom while one is away).
- Resume: everything is read again from the stack (its outputs, what `pulumi preview` would still change)
  and the cluster (Nodes this rotation cordoned carry ROTATION_ANNOTATION; a stale node whose Node is gone
  was deleted by a rotation and is replaced next) at every step; nothing is kept in a local file. One
  rotation at a time per cluster: a Lease in kube-system (LEASE_NAME), and the stack's own update lock.

Importable without the offline tooling: the engine (Engine) is the Automation API here
(AutomationEngine) and the offline harness in tests.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..plan import releases, stale
from ..plan.day2 import etcd
from ..state import migrations
from . import kube as kubeapi

ROOT = Path(__file__).resolve().parents[2]  # the Pulumi project (Pulumi.yaml)
# On a Node this rotation cordoned: "<holder> <unix time>" (resume finds it; a new Node never has it).
ROTATION_ANNOTATION = "rke-aws/rotation"
LEASE_NAME = "rke-aws-rotation"
# A holder that stops renewing loses the lease after this; longer than one node's `pulumi up` (the lease is
# renewed between waits, not during the update), so a live rotation never loses it mid-step.
LEASE_SECONDS = 600
LEASE_RENEW_SECONDS = 60
# kops' defaults (cmd/kops/rolling-update_cluster.go; pkg/instancegroups): drain timeout 15 min, eviction
# retry 5 s, validation timeout 15 min; RKE2 removes an etcd member within its 1 min member-removal timeout
# (k3s pkg/etcd/etcd.go memberRemovalTimeout), retried by the controller.
DRAIN_SECONDS = 900.0
EVICTION_RETRY_SECONDS = 5.0
READY_SECONDS = 900.0
MEMBER_SECONDS = 300.0
HEALTH_SECONDS = 300.0
POLL_SECONDS = 10.0
PROGRESS_SECONDS = 60.0  # a progress line at least this often while waiting
ETCD_LABEL = "node-role.kubernetes.io/etcd"
VOTER_CONDITION = "EtcdIsVoter"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


# ---- what the rotation drives -----------------------------------------------------------------

class EngineBusy(Exception):
    """Another update holds the stack's lock (Automation API ConcurrentUpdateError)."""


class EngineFailed(Exception):
    """The update failed (the CLI's error text)."""


class Engine(Protocol):
    def outputs(self) -> Mapping[str, Any]:
        """The stack's outputs as the last update left them."""

    def pending(self) -> list[tuple[str, str]]:
        """(operation, URN) of every resource a plain `pulumi up` would change now (a preview)."""

    def replace(self, urns: Sequence[str]) -> None:
        """One update that replaces exactly these resources: `up(target=urns, replace=urns)`."""


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class RealClock:
    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@dataclass(frozen=True)
class Timing:
    drain: float = DRAIN_SECONDS
    eviction_retry: float = EVICTION_RETRY_SECONDS
    ready: float = READY_SECONDS
    member: float = MEMBER_SECONDS
    health: float = HEALTH_SECONDS
    poll: float = POLL_SECONDS
    progress: float = PROGRESS_SECONDS


class Stop(Exception):
    """Where the rotation stopped, why, and how to go on. The cluster keeps quorum and every old node
    runs or is cleanly replaced; rotate again resumes."""

    def __init__(self, where: str, why: str, how: str):
        self.where, self.why, self.how = where, why, how
        super().__init__(f"rotation stopped {where}: {why}.\n{how}")


# ---- reading the cluster ----------------------------------------------------------------------

def _conditions(node: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(c.get("type")): c for c in (node.get("status") or {}).get("conditions") or [] if isinstance(c, Mapping)}


def is_ready(node: Mapping[str, Any] | None) -> bool:
    return node is not None and (_conditions(node).get("Ready") or {}).get("status") == "True"


def kubelet_version(node: Mapping[str, Any] | None) -> str:
    return str(((node or {}).get("status") or {}).get("nodeInfo", {}).get("kubeletVersion") or "")


def is_etcd(node: Mapping[str, Any]) -> bool:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return str(labels.get(ETCD_LABEL, "")).lower() == "true"


def member_status(node: Mapping[str, Any]) -> str | None:
    """voter | learner | unhealthy | not-member from EtcdIsVoter; None without the condition (releases
    before it: then a Ready etcd Node counts as a voter)."""
    cond = _conditions(node).get(VOTER_CONDITION)
    if cond is None:
        return None
    if cond.get("status") == "True":
        return "voter"
    return {"MemberIsLearner": "learner", "Unhealthy": "unhealthy", "NotAMember": "not-member"}.get(
        str(cond.get("reason")), "unhealthy")


def is_member(node: Mapping[str, Any]) -> bool:
    return is_etcd(node) and member_status(node) != "not-member"


def is_voter(node: Mapping[str, Any]) -> bool:
    status = member_status(node)
    return status == "voter" or (status is None and is_ready(node))


def terminating(node: Mapping[str, Any] | None) -> bool:
    return bool(((node or {}).get("metadata") or {}).get("deletionTimestamp"))


def annotation(node: Mapping[str, Any] | None) -> str | None:
    return (((node or {}).get("metadata") or {}).get("annotations") or {}).get(ROTATION_ANNOTATION)


def _owner_kinds(pod: Mapping[str, Any]) -> set[str]:
    return {str(o.get("kind")) for o in (pod.get("metadata") or {}).get("ownerReferences") or [] if isinstance(o, Mapping)}


def left_alone(pod: Mapping[str, Any]) -> bool:
    """Pods a drain does not evict (kubectl pkg/drain/filters.go): DaemonSet pods (their controller puts
    them back at once), mirror pods (the kubelet's static pods: RKE2's control plane) and finished pods."""
    meta = pod.get("metadata") or {}
    return ("DaemonSet" in _owner_kinds(pod) or MIRROR_ANNOTATION in (meta.get("annotations") or {})
            or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"))


def _pod_name(pod: Mapping[str, Any]) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return str(meta.get("namespace") or "default"), str(meta.get("name"))


@dataclass
class NodeView:
    """One node as the stack's outputs and the cluster show it."""
    out: Mapping[str, Any]
    live: Mapping[str, Any] | None
    stale: stale.StaleNode | None

    @property
    def name(self) -> str:
        return str(self.out.get("name"))

    @property
    def label(self) -> str:
        return f"{self.name} ({self.out.get('pool')}-{self.out.get('index')})"

    @property
    def urn(self) -> str | None:
        urn = self.out.get("urn")
        return str(urn) if urn else None

    @property
    def is_server(self) -> bool:
        return "etcd" in (self.out.get("roles") or ()) or "controlplane" in (self.out.get("roles") or ())

    @property
    def is_etcd(self) -> bool:
        return "etcd" in (self.out.get("roles") or ())

    @property
    def first_server(self) -> bool:
        return bool(self.out.get("firstServer"))

    @property
    def cordoned_by_rotation(self) -> bool:
        return annotation(self.live) is not None


@dataclass
class Step:
    nodes: list[NodeView]
    started: float
    phase: str = "starting"


@dataclass
class Summary:
    rotated: list[tuple[str, float]] = field(default_factory=list)  # node label, seconds
    seconds: float = 0.0

    def text(self) -> str:
        if not self.rotated:
            return "rotation: nothing was stale; nothing was replaced"
        per = ", ".join(f"{n} {_duration(s)}" for n, s in self.rotated)
        return (f"rotation complete: {len(self.rotated)} node(s) replaced in {_duration(self.seconds)} "
                f"({per}); every node now runs what the configuration asks")


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


# ---- the rotation -----------------------------------------------------------------------------

class Rotation:
    def __init__(self, engine: Engine, kube: kubeapi.Kube, *, max_unavailable_agents: int = 1,
                 timing: Timing = Timing(), clock: Clock | None = None, say: Callable[[str], None] = print,
                 holder: str | None = None, stack: str = "<stack>"):
        self.engine, self.kube = engine, kube
        self.max_agents = max(1, int(max_unavailable_agents))
        self.timing = timing
        self.clock = clock or RealClock()
        self._say = say
        self.holder = holder or f"{socket.gethostname()}-{os.getpid()}"
        self.stack = stack
        self.step: Step | None = None
        self.started = 0.0
        self._lease_renewed = 0.0
        self._last_line: tuple[str, float] = ("", 0.0)
        # Node instances a stopped rotation's update deleted and did not create again (from the preview)
        self.resuming: set[str] = set()

    # ---- output ----
    def say(self, text: str) -> None:
        self._say(f"[{_duration(self.clock.now() - self.started):>8}] {text}")

    def progress(self, node: str, what: str) -> None:
        """A line per step: the node, what it waits for, the step's elapsed time (again when it changes, or
        every `timing.progress` seconds)."""
        now = self.clock.now()
        elapsed = now - (self.step.started if self.step else self.started)
        key = f"{node}: {what}"
        if key != self._last_line[0] or now - self._last_line[1] >= self.timing.progress:
            self._last_line = (key, now)
            self.say(f"{key} ({_duration(elapsed)} into this step)")

    def sleep(self, seconds: float) -> None:
        self.clock.sleep(seconds)
        if self.clock.now() - self._lease_renewed >= LEASE_RENEW_SECONDS:
            self._take_lease()

    # ---- the whole run ----
    def run(self) -> Summary:
        self.started = self.clock.now()
        summary = Summary()
        outputs = self._outputs("before anything changed")
        try:
            self.kube.nodes()
        except (kubeapi.Unreachable, kubeapi.KubeError) as err:
            raise Stop("before anything changed", f"the cluster's API server cannot be used ({err})",
                       "Nothing was changed. Run rotate where the API server answers (inside the cluster's VPC: "
                       "a bastion, a VPN, a runner in the VPC) with an admin kubeconfig (`make kubeconfig "
                       f"STACK={self.stack}`, or --kubeconfig)") from None
        self._check_outputs(outputs)
        self._take_lease()
        try:
            self._check_pending(outputs)
            while True:
                outputs = self._outputs("between steps")
                views = self.views(outputs)
                self._uncordon_leftovers(views)
                batch = self.next_batch(views)
                if not batch:
                    break
                self.step = Step(batch, self.clock.now(), "checking the cluster")
                self.wait_healthy(outputs, batch)
                if any(v.is_etcd for v in batch):
                    self.check_quorum(outputs, batch[0])
                self.check_api(outputs, batch)
                self.rotate(batch, outputs)
                took = self.clock.now() - self.step.started
                summary.rotated += [(v.label, took) for v in batch]
                self.step = None
        except KeyboardInterrupt:
            raise self._interrupted() from None
        finally:
            self._release_lease()
        summary.seconds = self.clock.now() - self.started
        self.say(summary.text())
        return summary

    # ---- reading ----
    def _outputs(self, where: str) -> Mapping[str, Any]:
        try:
            return self.engine.outputs()
        except EngineBusy as err:
            raise self._busy(where, err) from None
        except EngineFailed as err:
            raise Stop(where, f"the stack's outputs could not be read ({err})",
                       "Nothing more was changed; check `pulumi stack output` and rotate again") from None

    def _check_outputs(self, outputs: Mapping[str, Any]) -> None:
        if outputs.get("distribution") != "rke2":
            raise Stop("before anything changed", f"the stack runs {outputs.get('distribution') or 'nothing yet'}",
                       "rotate replaces RKE2 nodes; RKE1 nodes join through `rke up` with cluster.yml: replace them "
                       "by hand (docs/operations/replace-node.md), then `rke up`")
        missing = [str(n.get("name")) for n in outputs.get("nodes") or () if not n.get("urn") or not n.get(stale.WANTED)]
        if missing:
            raise Stop("before anything changed", f"the stack's outputs do not record each node's URN and wanted "
                       f"settings ({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''})",
                       "Run `pulumi up` once with this release (it records them and changes no running node), "
                       "then rotate again")

    def _check_pending(self, outputs: Mapping[str, Any]) -> None:
        try:
            pending = self.engine.pending()
        except EngineBusy as err:
            raise self._busy("before anything changed", err) from None
        except EngineFailed as err:
            raise Stop("before anything changed", f"`pulumi preview` failed ({_last_lines(str(err))})",
                       "Nothing was changed; fix what the preview reports, then rotate again") from None
        # An instance a rotation deleted and could not create again (an interrupted or failed update) is
        # what this rotation finishes first; anything else is a change to review with `pulumi up` first.
        nodes = {str(n.get("urn")) for n in outputs.get("nodes") or ()}
        other = [(op, urn) for op, urn in pending if urn not in nodes]
        if other:
            shown = "; ".join(f"{op} {urn.rsplit('::', 1)[-1]}" for op, urn in other[:8])
            more = f" and {len(other) - 8} more" if len(other) > 8 else ""
            raise Stop("before anything changed", f"a plain `pulumi up` would still change the stack ({shown}{more})",
                       "Run `pulumi preview`, then `pulumi up` (it records what the configuration asks and "
                       "replaces no running node), then rotate again: rotation changes nodes only")
        self.resuming = {urn for op, urn in pending if urn in nodes}

    def views(self, outputs: Mapping[str, Any]) -> list[NodeView]:
        try:
            live = {str((n.get("metadata") or {}).get("name")): n for n in self.kube.nodes()}
        except (kubeapi.Unreachable, kubeapi.KubeError) as err:
            raise self._lost(err) from None
        out = []
        for n in outputs.get("nodes") or ():
            out.append(NodeView(n, live.get(str(n.get("name"))), stale.stale_node(n)))
        return out

    def in_progress(self, v: NodeView) -> bool:
        """A node an earlier (or this) rotation started on: cordoned by it, or deleted from the cluster while
        its instance is still the old one, or its instance deleted by an update that did not finish."""
        if v.urn in self.resuming:
            return True
        return v.stale is not None and (v.cordoned_by_rotation or v.live is None)

    def _uncordon_leftovers(self, views: Sequence[NodeView]) -> None:
        for v in views:
            if v.live is not None and v.cordoned_by_rotation and v.stale is None and v.urn not in self.resuming:
                self.say(f"{v.label}: cordoned by an earlier rotation but no longer stale: uncordoned")
                self._patch(v, {"spec": {"unschedulable": False}, "metadata": {"annotations": {ROTATION_ANNOTATION: None}}})

    def next_batch(self, views: Sequence[NodeView]) -> list[NodeView]:
        """What goes next: unfinished work first, then agents (maxUnavailableAgents at a time), then servers
        one at a time, the initialising server last."""
        busy = [v for v in views if self.in_progress(v)]
        agents = [v for v in busy if not v.is_server]
        if agents:
            return agents[:self.max_agents]
        if busy:
            return busy[:1]
        agents = [v for v in views if v.stale is not None and not v.is_server]
        if agents:
            return agents[:self.max_agents]
        servers = sorted((v for v in views if v.stale is not None and v.is_server), key=lambda v: v.first_server)
        return servers[:1]

    # ---- checks before a step ----
    def health_problems(self, outputs: Mapping[str, Any], batch: Sequence[NodeView]) -> list[str]:
        target = str(outputs.get("kubernetesVersion") or "")
        views = self.views(outputs)
        skip = {v.name for v in batch}
        problems = []
        for v in views:
            if v.name in skip or self.in_progress(v):
                continue  # this step's, or one an earlier rotation started (finished in a later step)
            if v.live is None:
                problems.append(f"{v.label} has no Node (not registered, or deleted)")
            elif terminating(v.live):
                problems.append(f"{v.label} is being deleted (Terminating)")
            elif not is_ready(v.live):
                problems.append(f"{v.label} is not Ready")
            elif target and not releases.runs_version(kubelet_version(v.live), target):
                problems.append(f"{v.label} runs {kubelet_version(v.live) or 'no version'}, not {target} (an upgrade "
                                "is still rolling out)")
            elif v.is_etcd and not is_voter(v.live):
                problems.append(f"{v.label} is not a voting etcd member ({member_status(v.live)})")
        names = {v.name for v in views}
        strangers = sorted(str((n.get("metadata") or {}).get("name")) for n in self._live_members()
                           if str((n.get("metadata") or {}).get("name")) not in names)
        if strangers:
            problems.append(f"etcd lists members this stack does not run: {', '.join(strangers)} (servers removed "
                            "earlier: `kubectl delete node` them once they are gone for good)")
        return problems

    def _live_members(self) -> list[Mapping[str, Any]]:
        try:
            return [n for n in self.kube.nodes() if is_member(n)]
        except (kubeapi.Unreachable, kubeapi.KubeError) as err:
            raise self._lost(err) from None

    def wait_healthy(self, outputs: Mapping[str, Any], batch: Sequence[NodeView]) -> None:
        """Every other node Ready, on the configured version, every etcd member a voter: kops validates the
        cluster before each group (pkg/instancegroups/instancegroups.go); here before each step. A server
        goes only with every member healthy, so etcd keeps quorum headroom while it is away."""
        deadline = self.clock.now() + self.timing.health
        label = ", ".join(v.label for v in batch)
        while True:
            problems = self.health_problems(outputs, batch)
            if not problems:
                return
            if self.clock.now() >= deadline:
                raise Stop(f"before {label}", "the cluster is not healthy: " + "; ".join(problems),
                           "Nothing was changed in this step (earlier steps are complete). A node is replaced only "
                           "while every other node is Ready and every etcd member is a voting member, so that etcd "
                           "keeps quorum headroom while one is away. Bring the cluster back (`kubectl get nodes`, "
                           "the node's boot log /var/log/cloud-init-output.log), then rotate again")
            self.progress(label, "waiting for the cluster to be healthy: " + "; ".join(problems))
            self.sleep(self.timing.poll)

    def check_quorum(self, outputs: Mapping[str, Any], server: NodeView) -> None:
        """The quorum guard of every `pulumi up` (plan/day2/etcd.py quorum_problems), for this server going
        away, against the membership the cluster shows."""
        previous = migrations.from_outputs(dict(outputs))
        assert previous is not None
        planned = [etcd.PlannedMember(n.pool, n.index, n.private_ip, n.availability_zone, n.tier, n.key_name,
                                      n.is_etcd, n.name) for n in previous.nodes if n.name != server.name]
        members = self._live_members()
        listed = tuple(sorted(str((n.get("metadata") or {}).get("name")) for n in members))
        down = tuple(sorted(str((n.get("metadata") or {}).get("name")) for n in members if not is_voter(n)))
        state = etcd.EtcdState(listed, down, True, how="the cluster")
        problems = etcd.quorum_problems(previous, planned, state)
        if problems:
            raise Stop(f"before {server.label}", "the quorum guard refuses to take this etcd member away: "
                       + " ".join(d.render() for d in problems),
                       "Nothing was changed in this step. A cluster with fewer than three servers cannot lose one "
                       "without losing etcd quorum: add servers first, or replace it by hand accepting the outage "
                       "(docs/operations/replace-node.md)")

    def check_api(self, outputs: Mapping[str, Any], batch: Sequence[NodeView]) -> None:
        """A control-plane server goes only while another one serves the API (and answers joins)."""
        if not any("controlplane" in (v.out.get("roles") or ()) for v in batch):
            return
        names = {v.name for v in batch}
        others = [v for v in self.views(outputs) if v.name not in names and "controlplane" in (v.out.get("roles") or ())
                  and is_ready(v.live)]
        if not others:
            label = ", ".join(v.label for v in batch)
            raise Stop(f"before {label}", "no other control-plane server is Ready: the API server and the joins of "
                       "the new node would have no one to answer them",
                       "Nothing was changed in this step. Add a control-plane server first (or replace this one by hand "
                       "accepting the outage: docs/operations/replace-node.md)")

    # ---- one step ----
    def rotate(self, batch: list[NodeView], outputs: Mapping[str, Any]) -> None:
        assert self.step is not None
        label = ", ".join(v.label for v in batch)
        what = "; ".join(f"{v.label}: {v.stale.what}" for v in batch if v.stale) or "finishing an interrupted replacement"
        self.say(f"next: {what}")
        for v in batch:
            if v.live is not None:
                self.cordon(v)
        for v in batch:
            if v.live is not None:
                self.drain(v)
        for v in batch:
            if v.live is not None:
                self.delete_node(v)
        self.step.phase = "replacing"
        urns = [v.urn for v in batch if v.urn]
        self.say(f"{label}: `pulumi up --target --replace` of {len(urns)} instance(s) (same address and name)")
        try:
            self.engine.replace(urns)
        except EngineBusy as err:
            raise self._busy(f"before replacing {label} (drained, Node deleted, instance still the old one)", err) from None
        except EngineFailed as err:
            raise Stop(f"replacing {label}", f"`pulumi up` failed: {_last_lines(str(err))}",
                       "The node is drained and its Node deleted (a server: its etcd member removed; the others keep "
                       "quorum). Its old instance still runs or was deleted by the update. Fix what the update reports "
                       "(`pulumi stack` for pending operations; `pulumi refresh --clear-pending-creates` clears an "
                       "interrupted create), then rotate again: it replaces this node first") from None
        self.resuming -= set(urns)
        self.wait_replaced(batch, outputs)

    def _patch(self, v: NodeView, patch: Mapping[str, Any]) -> None:
        try:
            self.kube.patch_node(v.name, patch)
        except (kubeapi.Unreachable, kubeapi.KubeError) as err:
            raise self._lost(err) from None

    def cordon(self, v: NodeView) -> None:
        assert self.step is not None
        self.step.phase = f"cordoning {v.label}"
        if v.cordoned_by_rotation:
            self.say(f"{v.label}: resuming (cordoned by a rotation: {annotation(v.live)})")
            return
        self.say(f"{v.label}: cordon")
        self._patch(v, {"spec": {"unschedulable": True},
                        "metadata": {"annotations": {ROTATION_ANNOTATION: f"{self.holder} {int(self.clock.now())}"}}})

    def drain(self, v: NodeView) -> None:
        """Evict every pod but the ones a drain leaves alone; PDBs answer 429, retried until the bound."""
        assert self.step is not None
        self.step.phase = f"draining {v.label}"
        deadline = self.clock.now() + self.timing.drain
        refused: dict[tuple[str, str], str] = {}
        while True:
            try:
                pods = [p for p in self.kube.pods_on(v.name) if not left_alone(p)]
            except (kubeapi.Unreachable, kubeapi.KubeError) as err:
                raise self._lost(err) from None
            if not pods:
                self.say(f"{v.label}: drained")
                return
            for pod in pods:
                if (pod.get("metadata") or {}).get("deletionTimestamp"):
                    continue  # evicted, terminating
                ns, name = _pod_name(pod)
                try:
                    answer = self.kube.evict(ns, name)
                except kubeapi.Unreachable as err:
                    raise self._lost(err) from None
                if answer.code in (200, 201, 404):
                    refused.pop((ns, name), None)
                elif answer.code == 429:
                    refused[(ns, name)] = answer.message or "too many requests"
                else:
                    raise Stop(f"draining {v.label}", f"the eviction of {ns}/{name} was refused (HTTP {answer.code}: "
                               f"{answer.message or 'no message'})",
                               "The node stays cordoned and runs; nothing was replaced. "
                               + ("A pod covered by more than one PodDisruptionBudget cannot be evicted: leave one "
                                  "PDB per pod. " if answer.code == 500 else "")
                               + f"Then rotate again (it resumes with this node), or `kubectl uncordon {v.name}` to "
                               "give up")
            if self.clock.now() >= deadline:
                blocked = "; ".join(f"{ns}/{name}: {msg}" for (ns, name), msg in sorted(refused.items())) or \
                    ", ".join("/".join(_pod_name(p)) for p in pods)
                raise Stop(f"draining {v.label}", f"{len(pods)} pod(s) still on it after {_duration(self.timing.drain)} "
                           f"({blocked})",
                           "The node stays cordoned and runs; nothing was replaced. A PodDisruptionBudget that never "
                           "allows a disruption blocks every drain: scale the workload up or relax the budget "
                           f"(`kubectl get pdb -A`), then rotate again (it resumes with this node), or `kubectl "
                           f"uncordon {v.name}` to give up")
            waiting = f"{len(pods)} pod(s) left" + (f"; eviction refused for {len(refused)} (PodDisruptionBudget): "
                                                    + "; ".join(f"{ns}/{name}" for ns, name in sorted(refused))
                                                    if refused else "")
            self.progress(v.label, f"draining: {waiting}")
            self.sleep(self.timing.eviction_retry)

    def delete_node(self, v: NodeView) -> None:
        """Delete the Node (a server: RKE2 removes its etcd member first) and confirm the membership went
        down by exactly one."""
        assert self.step is not None
        self.step.phase = f"deleting the Node of {v.label}"
        before = len(self._live_members()) if v.is_etcd else 0
        self.say(f"{v.label}: delete the Node" + (" (RKE2 removes its etcd member)" if v.is_etcd else ""))
        try:
            self.kube.delete_node(v.name)
        except (kubeapi.Unreachable, kubeapi.KubeError) as err:
            raise self._lost(err) from None
        deadline = self.clock.now() + self.timing.member
        while True:
            try:
                gone = self.kube.node(v.name) is None
            except (kubeapi.Unreachable, kubeapi.KubeError) as err:
                raise self._lost(err) from None
            if gone:
                break
            if self.clock.now() >= deadline:
                raise Stop(f"deleting the Node of {v.label}", f"the Node is still there after "
                           f"{_duration(self.timing.member)} (Terminating: RKE2's etcd controller has not removed its "
                           "member; it refuses to remove a member while etcd lacks quorum)",
                           f"Its instance still runs; nothing was replaced. Look at `kubectl get node {v.name} -o yaml` "
                           "(finalizer wrangler.cattle.io/managed-etcd-controller) and rke2-server's log on another "
                           "server; rotate again once the Node is gone")
            self.progress(v.label, "waiting for the Node to go" + (" (etcd member removal)" if v.is_etcd else ""))
            self.sleep(self.timing.poll)
        if v.is_etcd:
            after = len(self._live_members())
            if after != before - 1:
                raise Stop(f"after deleting the Node of {v.label}", f"etcd went from {before} to {after} members, "
                           f"not {before - 1}",
                           "Nothing was replaced. Check the servers (`kubectl get nodes -l "
                           "node-role.kubernetes.io/etcd=true`) before going on; rotate again once every member is "
                           "a voter")
            self.say(f"{v.label}: etcd members {before} -> {after}")

    def wait_replaced(self, batch: Sequence[NodeView], outputs: Mapping[str, Any]) -> None:
        """Each new Node registered, Ready, on the configured version, and (servers) a voting member, with
        etcd back to its full count."""
        assert self.step is not None
        self.step.phase = "waiting for the new node(s)"
        target = str(outputs.get("kubernetesVersion") or "")
        expected = sum(1 for n in outputs.get("nodes") or () if "etcd" in (n.get("roles") or ()))
        deadline = self.clock.now() + self.timing.ready
        while True:
            try:
                live = {str((n.get("metadata") or {}).get("name")): n for n in self.kube.nodes()}
            except (kubeapi.Unreachable, kubeapi.KubeError) as err:
                raise self._lost(err) from None
            waiting = []
            for v in batch:
                node = live.get(v.name)
                who = f"{v.label} " if len(batch) > 1 else ""
                if node is None:
                    waiting.append(f"{who}the new Node to register")
                elif not is_ready(node):
                    waiting.append(f"{who}Ready")
                elif target and not releases.runs_version(kubelet_version(node), target):
                    waiting.append(f"{who}kubelet {target} (runs {kubelet_version(node) or 'nothing yet'})")
                elif v.is_etcd and not is_voter(node):
                    waiting.append(f"{who}etcd voter (now {member_status(node)})")
            members = sum(1 for n in live.values() if is_member(n) and is_voter(n))
            if any(v.is_etcd for v in batch) and members < expected:
                waiting.append(f"etcd: {members} of {expected} voting members")
            if not waiting:
                for v in batch:
                    self.say(f"{v.label}: replaced, Ready on {target or 'its version'}"
                             + (f", etcd {members}/{expected} voters" if v.is_etcd else ""))
                return
            if self.clock.now() >= deadline:
                raise Stop(f"after replacing {', '.join(v.label for v in batch)}",
                           f"still waiting after {_duration(self.timing.ready)} for " + "; ".join(waiting),
                           "The new instance exists; the other nodes are untouched and etcd keeps quorum. Look at its "
                           "boot log (/var/log/cloud-init-output.log and `journalctl -u rke2-server` or rke2-agent, "
                           "through Session Manager); rotate again to wait again and go on")
            self.progress(", ".join(v.label for v in batch), "waiting for " + "; ".join(waiting))
            self.sleep(self.timing.poll)

    # ---- one rotation at a time ----
    def _lease_body(self, current: Mapping[str, Any] | None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": LEASE_NAME, "namespace": "kube-system"}
        if current is not None and (current.get("metadata") or {}).get("resourceVersion"):
            meta["resourceVersion"] = current["metadata"]["resourceVersion"]
        now = self.clock.now()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(now))
        spec = (current or {}).get("spec") or {}
        acquired = spec.get("acquireTime") if spec.get("holderIdentity") == self.holder else None
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
                "spec": {"holderIdentity": self.holder, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": stamp,
                         "acquireTime": acquired or stamp}}

    def _take_lease(self) -> None:
        try:
            current = self.kube.lease(LEASE_NAME)
            if current is not None:
                spec = current.get("spec") or {}
                holder = spec.get("holderIdentity")
                renewed = _parse_time(spec.get("renewTime"))
                alive = renewed is not None and self.clock.now() - renewed < float(spec.get("leaseDurationSeconds")
                                                                                   or LEASE_SECONDS)
                if holder and holder != self.holder and alive:
                    raise Stop("before anything changed" if not self.step else "between steps",
                               f"another rotation runs on this cluster ({holder}, lease kube-system/{LEASE_NAME} "
                               f"renewed {_duration(self.clock.now() - (renewed or 0))} ago)",
                               f"Let it finish; if it died, its lease expires {LEASE_SECONDS} s after its last renewal, "
                               "then rotate again (it resumes where that one stopped)")
                answer = self.kube.replace_lease(LEASE_NAME, self._lease_body(current))
            else:
                answer = self.kube.create_lease(self._lease_body(None))
        except (kubeapi.Unreachable, kubeapi.KubeError) as err:
            raise self._lost(err) from None
        if answer.code == 409:
            raise Stop("before anything changed" if not self.step else "between steps",
                       f"another rotation took the lease kube-system/{LEASE_NAME} at the same moment",
                       "Let it finish, then rotate again")
        if answer.code not in (200, 201):
            raise Stop("before anything changed" if not self.step else "between steps",
                       f"the lease kube-system/{LEASE_NAME} could not be written (HTTP {answer.code}: {answer.message})",
                       "rotate needs an admin kubeconfig (it cordons, evicts and deletes Nodes); rotate again with one")
        self._lease_renewed = self.clock.now()

    def _release_lease(self) -> None:
        try:
            current = self.kube.lease(LEASE_NAME)
            if current is not None and (current.get("spec") or {}).get("holderIdentity") == self.holder:
                self.kube.delete_lease(LEASE_NAME)
        except (kubeapi.Unreachable, kubeapi.KubeError):
            pass  # it expires by itself

    # ---- how it stops ----
    def _where(self) -> str:
        if self.step is None:
            return "between steps (every earlier step is complete)"
        return f"while {self.step.phase}"

    def _lost(self, err: Exception) -> Stop:
        return Stop(self._where(), f"the cluster's API server stopped answering ({err})",
                    "No further change was made. The node being worked on is cordoned (drain), or its Node deleted "
                    "(then it is replaced next); rotate again where the API server answers: it resumes")

    def _busy(self, where: str, err: Exception) -> Stop:
        return Stop(where, f"another update of this stack is running (the stack's lock: {_last_lines(str(err), 1)})",
                    "Let it finish (`pulumi stack` shows it), then rotate again; it resumes. If no update runs, the "
                    "lock is a leftover: `pulumi cancel` (Pulumi Cloud) clears it; on a self-managed backend remove "
                    "the stack's lock file only when sure")

    def _interrupted(self) -> Stop:
        if self.step is not None and self.step.phase == "replacing":
            return Stop(self._where(), "interrupted (Ctrl-C) during `pulumi up`",
                        "The Pulumi CLI received the interrupt too: it lets the operations in flight finish and "
                        "exits (a second Ctrl-C stops it at once and may leave pending operations: `pulumi refresh "
                        "--clear-pending-creates`). The node was drained and its Node deleted; the others keep "
                        "quorum. Rotate again: it replaces this node first")
        return Stop(self._where(), "interrupted (Ctrl-C)",
                    "Nothing is half-done in the cluster: the node being worked on is at most cordoned or drained "
                    "(or its Node deleted, then it is replaced next), every other node runs. Rotate again: it resumes "
                    "where it stopped")


def _parse_time(text: Any) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    import calendar

    try:
        return float(calendar.timegm(time.strptime(text.split(".")[0].rstrip("Z"), "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return None


def _last_lines(text: str, n: int = 3) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-n:]) if lines else text.strip()


# ---- the real engine: Pulumi's Automation API --------------------------------------------------

class AutomationEngine:
    """The stack through `pulumi.automation` (the CLI underneath): a local program in ROOT, the stack
    selected (never created), the real backend and the real AWS credentials of the environment."""

    def __init__(self, stack: str, work_dir: Path = ROOT, say: Callable[[str], None] = print,
                 opts: Any = None, select: Callable[..., Any] | None = None):
        from pulumi import automation as auto

        self._auto = auto
        self.say = say
        try:
            self.stack = (select or auto.select_stack)(stack_name=stack, work_dir=str(work_dir), opts=opts)
        except auto.errors.StackNotFoundError:
            raise Stop("before anything changed", f"no stack named {stack} in the selected backend",
                       "`pulumi login` to the backend that holds it (and `pulumi stack ls`), then rotate again") from None
        except auto.errors.CommandError as err:
            raise Stop("before anything changed", f"the stack could not be selected ({_last_lines(str(err))})",
                       "Check `pulumi whoami` and `pulumi stack ls`, then rotate again") from None

    def _run(self, what: Callable[[], Any]) -> Any:
        errors = self._auto.errors
        try:
            return what()
        except errors.ConcurrentUpdateError as err:
            raise EngineBusy(str(err)) from None
        except errors.CommandError as err:
            raise EngineFailed(str(err)) from None

    def outputs(self) -> Mapping[str, Any]:
        return {k: v.value for k, v in self._run(self.stack.outputs).items()}

    def config(self) -> dict[str, str]:
        """The stack's configuration as the CLI gives it (secrets decrypted: the kubeconfig)."""
        return {k: v.value for k, v in self._run(self.stack.get_all_config).items()}

    def pending(self) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []

        def on_event(event: Any) -> None:
            pre = getattr(event, "resource_pre_event", None)
            meta = getattr(pre, "metadata", None)
            if meta is None or meta.type == "pulumi:pulumi:Stack":
                return
            op = getattr(meta.op, "value", str(meta.op))
            if op not in ("same", "read", "refresh"):
                found.append((op, meta.urn))

        self._run(lambda: self.stack.preview(on_event=on_event, color="never"))
        return found

    def replace(self, urns: Sequence[str]) -> None:
        names = ", ".join(u.rsplit("::", 1)[-1] for u in urns)
        # `protectServers: true` protects server instances; a protected resource cannot be replaced. Clear
        # the bit in the state (`pulumi state unprotect`, pulumi/pulumi pkg/cmd/pulumi/state/state_unprotect.go;
        # harmless when it is not set); the update registers the new instance protected again.
        ws = self.stack.workspace
        self._run(lambda: ws.pulumi_command.run(["state", "unprotect", "--stack", self.stack.name, "--yes", *urns],
                                                ws.work_dir, ws.env_vars))
        self._run(lambda: self.stack.up(target=list(urns), replace=list(urns), color="never",
                                        message=f"rke-aws rotate: replace {names}", on_output=self.say,
                                        suppress_progress=True))


# ---- the command ------------------------------------------------------------------------------

def rotation_settings(config: Mapping[str, str]) -> int:
    """rotation.maxUnavailableAgents from the stack's configuration (the model decides, as `pulumi up`)."""
    from pydantic import ValidationError

    from ..settings import messages, sections

    key, raw = next(((k, v) for k, v in config.items() if k.split(":", 1)[-1] == "rotation" and not k.startswith("aws:")),
                    ("rke-aws:rotation", None))
    value: Any = None
    if raw:
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
    try:
        with messages.pydantic_errors():
            section = sections.Rotation.model_validate(value if value is not None else {})
    except ValidationError as exc:
        found = messages.from_pydantic(sections.Rotation, exc, value)
        raise Stop("before anything changed", "; ".join(d.render(f"{key}.") for d in found),
                   "Fix the stack's configuration, then rotate again") from None
    return int(section.max_unavailable_agents)


def kubeconfig_text(stack: str, given: str | None, config: Mapping[str, str]) -> str:
    """--kubeconfig, else the stack's `kubeconfig`, else kubeconfig-<stack>.yaml (`make kubeconfig`)."""
    if given:
        return Path(given).read_text()
    stored = next((v for k, v in config.items() if k.split(":", 1)[-1] == "kubeconfig" and not k.startswith("aws:")), None)
    if stored:
        return stored
    default = Path(f"kubeconfig-{stack}.yaml")
    if default.exists():
        return default.read_text()
    raise Stop("before anything changed", "no kubeconfig",
               f"`make kubeconfig STACK={stack}` writes the admin kubeconfig (RKE2), or pass --kubeconfig FILE")


def plan_text(outputs: Mapping[str, Any], max_agents: int) -> str:
    """--dry-run: the stale nodes and the order rotate takes them in."""
    found = stale.from_outputs(outputs.get("nodes"))
    if not found:
        return "nothing is stale"
    agents = [s for s in found if not s.is_server]
    first = {str(n.get("name")) for n in outputs.get("nodes") or () if n.get("firstServer")}
    servers = sorted((s for s in found if s.is_server), key=lambda s: s.name in first)
    lines = [f"{len(found)} stale node(s); rotate replaces them in this order (agents {max_agents} at a time, "
             "then servers one at a time, the initialising server last):"]
    for i in range(0, len(agents), max_agents):
        lines.append(f"  {i // max_agents + 1}. " + "; ".join(s.line()[len("stale: "):] for s in agents[i:i + max_agents]))
    start = (len(agents) + max_agents - 1) // max_agents
    lines += [f"  {start + j + 1}. {s.line()[len('stale: '):]}" for j, s in enumerate(servers)]
    return "\n".join(lines)


def command(stack: str, kubeconfig: str | None, dry_run: bool, work_dir: Path = ROOT) -> int:
    """`rke-aws rotate <stack>` (its command line: rke_aws_offline/cli.py): 0 when done, 1 where it stopped."""
    try:
        engine = AutomationEngine(stack, work_dir=work_dir)
        config = engine.config()
        max_agents = rotation_settings(config)
        if dry_run:
            print(plan_text(engine.outputs(), max_agents))
            return 0
        try:
            kube = kubeapi.Kube.from_kubeconfig(kubeconfig_text(stack, kubeconfig, config))
        except kubeapi.Unreachable as err:
            raise Stop("before anything changed", str(err), "Nothing was changed; pass a usable --kubeconfig") from None
        Rotation(engine, kube, max_unavailable_agents=max_agents, stack=stack).run()
    except Stop as stop:
        print(f"error: {stop}", file=sys.stderr)
        return 1
    except (EngineBusy, EngineFailed) as err:
        print(f"error: {_last_lines(str(err))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted before the rotation started: nothing was changed", file=sys.stderr)
        return 130
    return 0
