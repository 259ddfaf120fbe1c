"""The Kubernetes steps of one node's replacement (kubectl pkg/drain, kops pkg/instancegroups): cordon, drain
through the eviction subresource, delete the Node (a server: RKE2 removes its etcd member), wait for the new
Node; and what every part of a rotation shares: its output, its waits (renewing the lease), how it stops.
The order of the nodes and the checks before each step are rotation.py's (Rotation extends NodeSteps)."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...plan import releases
from .. import kube as kubeapi
from .lease import LEASE_RENEW_SECONDS, Lease
from .model import Clock, Engine, RealClock, Step, Stop, Timing, duration, last_lines
from .nodes import (
    ROTATION_ANNOTATION,
    NodeView,
    annotation,
    is_member,
    is_ready,
    is_voter,
    kubelet_version,
    left_alone,
    member_status,
    pod_name,
)

# The waits as kops sets them (model.py); tests pass shorter ones.
DEFAULT_TIMING = Timing()


class NodeSteps:
    """A rotation's state, output and waits, and the steps that act on one node (Rotation adds the order)."""

    def __init__(self, engine: Engine, kube: kubeapi.Kube, *, max_unavailable_agents: int = 1,
                 timing: Timing = DEFAULT_TIMING, clock: Clock | None = None, say: Callable[[str], None] = print,
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
        self.lease = Lease(kube, self.clock, self.holder)
        self._last_line: tuple[str, float] = ("", 0.0)
        # Node instances a stopped rotation's update deleted and did not create again (from the preview)
        self.resuming: set[str] = set()

    # ---- output ----
    def say(self, text: str) -> None:
        self._say(f"[{duration(self.clock.now() - self.started):>8}] {text}")

    def progress(self, node: str, what: str) -> None:
        """A line per step: the node, what it waits for, the step's elapsed time (again when it changes, or
        every `timing.progress` seconds)."""
        now = self.clock.now()
        elapsed = now - (self.step.started if self.step else self.started)
        key = f"{node}: {what}"
        if key != self._last_line[0] or now - self._last_line[1] >= self.timing.progress:
            self._last_line = (key, now)
            self.say(f"{key} ({duration(elapsed)} into this step)")

    def sleep(self, seconds: float) -> None:
        self.clock.sleep(seconds)
        if self.clock.now() - self.lease.renewed >= LEASE_RENEW_SECONDS:
            self._take_lease()

    # ---- the lease, etcd's members ----
    def _take_lease(self) -> None:
        self.lease.take("before anything changed" if not self.step else "between steps", self._lost)

    def _live_members(self) -> list[Mapping[str, Any]]:
        try:
            return [n for n in self.kube.nodes() if is_member(n)]
        except (kubeapi.Unreachable, kubeapi.KubeError) as err:
            raise self._lost(err) from None

    # ---- one node's steps ----
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
                ns, name = pod_name(pod)
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
                    ", ".join("/".join(pod_name(p)) for p in pods)
                raise Stop(f"draining {v.label}", f"{len(pods)} pod(s) still on it after {duration(self.timing.drain)} "
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
                           f"{duration(self.timing.member)} (Terminating: RKE2's etcd controller has not removed its "
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
                           f"still waiting after {duration(self.timing.ready)} for " + "; ".join(waiting),
                           "The new instance exists; the other nodes are untouched and etcd keeps quorum. Look at its "
                           "boot log (/var/log/cloud-init-output.log and `journalctl -u rke2-server` or rke2-agent, "
                           "through Session Manager); rotate again to wait again and go on")
            self.progress(", ".join(v.label for v in batch), "waiting for " + "; ".join(waiting))
            self.sleep(self.timing.poll)

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
        return Stop(where, f"another update of this stack is running (the stack's lock: {last_lines(str(err), 1)})",
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
