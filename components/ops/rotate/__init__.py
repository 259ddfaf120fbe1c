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

# (The docstring above is `rke-aws rotate --help`.) The package by concern: nodes.py (what Nodes and Pods say),
# model.py (the engine interface, timing, Stop, the summary), lease.py (one rotation at a time), steps.py (one
# node's Kubernetes steps), rotation.py (the order and the checks), automation.py (the Automation API engine),
# main.py (the command). Its public names are importable from here; the readers of Nodes and Pods (is_ready,
# is_voter, left_alone, ...) from rotate.nodes.

from __future__ import annotations

from .automation import ROOT, AutomationEngine
from .lease import LEASE_NAME, LEASE_RENEW_SECONDS, LEASE_SECONDS
from .main import command, kubeconfig_text, plan_text, rotation_settings
from .model import (
    DRAIN_SECONDS,
    EVICTION_RETRY_SECONDS,
    HEALTH_SECONDS,
    MEMBER_SECONDS,
    POLL_SECONDS,
    PROGRESS_SECONDS,
    READY_SECONDS,
    Clock,
    Engine,
    EngineBusy,
    EngineFailed,
    RealClock,
    Step,
    Stop,
    Summary,
    Timing,
)
from .nodes import ETCD_LABEL, MIRROR_ANNOTATION, ROTATION_ANNOTATION, VOTER_CONDITION, NodeView
from .rotation import Rotation

__all__ = [
    "DRAIN_SECONDS", "ETCD_LABEL", "EVICTION_RETRY_SECONDS", "HEALTH_SECONDS", "LEASE_NAME", "LEASE_RENEW_SECONDS",
    "LEASE_SECONDS", "MEMBER_SECONDS", "MIRROR_ANNOTATION", "POLL_SECONDS", "PROGRESS_SECONDS", "READY_SECONDS",
    "ROOT", "ROTATION_ANNOTATION", "VOTER_CONDITION", "AutomationEngine", "Clock", "Engine", "EngineBusy",
    "EngineFailed", "NodeView", "RealClock", "Rotation", "Step", "Stop", "Summary", "Timing", "command",
    "kubeconfig_text", "plan_text", "rotation_settings",
]
