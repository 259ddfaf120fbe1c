"""The rotation: which nodes go next (unfinished work, then agents maxUnavailableAgents at a time, then servers
one at a time, the initialising server last), the checks before each step (the cluster healthy, etcd's quorum
guard, another control-plane server serving), and one step (cordon, drain, delete the Node, `pulumi up
--target --replace`, wait: steps.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...plan import releases, stale
from ...plan.day2 import etcd
from ...state import migrations
from .. import kube as kubeapi
from .model import EngineBusy, EngineFailed, Step, Stop, Summary, last_lines
from .nodes import (
    ROTATION_ANNOTATION,
    NodeView,
    is_ready,
    is_voter,
    kubelet_version,
    member_status,
    terminating,
)
from .steps import NodeSteps


class Rotation(NodeSteps):
    """Every stale node replaced, in order, each step checked first; Stop says where and how to go on."""

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
            self.lease.release()
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
            raise Stop("before anything changed", f"`pulumi preview` failed ({last_lines(str(err))})",
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
            raise Stop(f"replacing {label}", f"`pulumi up` failed: {last_lines(str(err))}",
                       "The node is drained and its Node deleted (a server: its etcd member removed; the others keep "
                       "quorum). Its old instance still runs or was deleted by the update. Fix what the update reports "
                       "(`pulumi stack` for pending operations; `pulumi refresh --clear-pending-creates` clears an "
                       "interrupted create), then rotate again: it replaces this node first") from None
        self.resuming -= set(urns)
        self.wait_replaced(batch, outputs)
