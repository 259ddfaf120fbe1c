"""Rotation (components/ops/rotate/) against a fake Kubernetes API (tests/support/fake_kube.py: Nodes,
Pods, PDB-checked evictions, RKE2's etcd member removal on Node deletion, Leases) and the offline harness
in place of the Pulumi engine (tests/support/offline_engine.py). Every scenario asserts, over the whole
run, that etcd never fell below quorum and that no two servers were down at once.

Sources of the rules encoded (re-read for this issue):
- kubernetes/kops pkg/instancegroups/rollingupdate.go, instancegroups.go: validate before each group,
  cordon, drain (kubectl's drain with DaemonSets ignored), then terminate; control plane never surges.
- kubectl pkg/drain/drain.go, filters.go: 429 from the eviction subresource is retried until the drain's
  timeout; DaemonSet and mirror pods are skipped; other failures end the drain.
- k3s pkg/etcd/etcd.go (manageLearners, setEtcdStatusCondition: EtcdIsVoter; RemovePeer),
  member_controller.go (member removed when an etcd Node is deleted, the Node held by a finalizer until then).
- pulumi/pulumi pkg/resource/deploy/step_generator.go (isTargetedReplace: `--replace` creates from the
  program's inputs); sdk/python/lib/pulumi/automation/errors.py (ConcurrentUpdateError).
"""

from __future__ import annotations

import pytest

from rke_aws.ops import rotate
from rke_aws.plan import stale
from rke_aws.plan.day2 import etcd
from tests.support import rotation as rot


@pytest.fixture
def make():
    made: list[rot.Scenario] = []

    def build(**kwargs) -> rot.Scenario:
        s = rot.scenario(**kwargs)
        made.append(s)
        return s
    yield build
    for s in made:
        s.cluster.shutdown()


def _stale(s: rot.Scenario) -> list[str]:
    return [n.name for n in stale.from_outputs(s.nodes)]


def _first_server(s: rot.Scenario) -> str:
    return next(n["name"] for n in s.nodes if n.get("firstServer"))


# ---- the whole run ------------------------------------------------------------------------------

def test_three_servers_and_two_agents_onto_a_new_image(make):
    s = make()
    before = {n["name"]: n["instanceId"] for n in s.nodes}
    assert len(_stale(s)) == 5
    summary = s.run()
    assert _stale(s) == [], "a node still runs the old image"
    after = {n["name"]: n for n in s.nodes}
    assert all(after[name]["instanceId"] != old for name, old in before.items()), "an instance was not replaced"
    assert all(n["image"] == rot.NEW_IMAGE for n in after.values())
    # Agents first, one at a time; then servers one at a time, the initialising server last.
    order = s.replaced_names()
    assert [len(b) for b in order] == [1] * 5
    roles = {n["name"]: n["roles"] for n in s.nodes}
    kinds = ["etcd" in roles[b[0]] for b in order]
    assert kinds == [False, False, True, True, True], order
    assert order[-1] == [_first_server(s)]
    s.assert_safe()
    assert max(len(h.servers_down) for h in s.cluster.history) == 1, "no server was ever replaced"
    assert len(summary.rotated) == 5 and "rotation complete: 5 node(s) replaced" in s.lines[-1]
    # Progress: a line per step naming the node, what it waits for and the elapsed time.
    assert any("waiting for the new Node to register" in line and "into this step" in line for line in s.lines)
    assert any("etcd voter (now learner)" in line for line in s.lines)
    assert any("etcd members 3 -> 2" in line for line in s.lines)
    # The lease is gone once the rotation ends; no Node is left cordoned.
    assert s.cluster.leases == {}
    assert not any(n["spec"].get("unschedulable") for n in s.cluster.nodes.values())


def test_agents_go_max_unavailable_at_a_time(make):
    s = make(servers=3, agents=3, stale_pools=("agents",), replicas=3, max_agents=2)
    s.run()
    assert [len(b) for b in s.replaced_names()] == [2, 1]
    s.assert_safe()


def test_drain_evicts_through_the_pdb_and_leaves_daemonset_and_mirror_pods(make):
    s = make(servers=3, agents=2, stale_pools=("agents",), replicas=2, min_available=1)
    s.run()
    evictions = [p for m, p in s.cluster.requests if m == "POST" and p.endswith("/eviction")]
    assert evictions and all("/namespaces/default/pods/web-" in p for p in evictions), evictions
    # The web replicas stayed available: at most one evicted at a time (the PDB), the rest moved.
    assert sum(1 for p in s.cluster.pods.values() if p["metadata"]["labels"].get("app") == "web") == 2


# ---- refusals -----------------------------------------------------------------------------------

def test_five_servers_with_one_already_down_are_refused(make):
    s = make(servers=5, agents=1, stale_pools=("server",), replicas=0)
    down = s.name("server", 3)
    s.cluster.stop(down)
    stop = s.stopped()
    assert "is not Ready" in stop.why and down in stop.why, stop
    assert "quorum headroom" in stop.how and stop.where.startswith("before ")
    assert s.engine.replaced == [], "an instance was replaced"
    assert not [p for m, p in s.cluster.requests if m in ("PATCH", "DELETE") and "/nodes/" in p], "a Node was touched"
    s.assert_safe()


def test_one_server_is_refused_by_the_same_quorum_guard_as_pulumi_up(make, monkeypatch):
    calls = []
    real = etcd.quorum_problems

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)
    monkeypatch.setattr(etcd, "quorum_problems", spy)
    s = make(servers=1, agents=1, stale_pools=("server",), replicas=0)
    stop = s.stopped()
    # The program's own runs (the harness) ask it too; rotation's call judges the membership the cluster shows.
    ours = [c for c in calls if c[2].how == "the cluster"]
    assert ours, "rotation did not ask etcd.quorum_problems"
    assert "quorum guard" in stop.why and "single-member cluster cannot lose its only member" in stop.why
    assert real(*ours[0]) and real(*ours[0])[0].render() in stop.why
    assert s.engine.replaced == []


def test_pending_changes_are_left_to_pulumi_up(make):
    s = make(stale_pools=())
    cfg = dict(s.engine.config)
    cfg["rke-aws:tags"] = '{"environment":"dev","team":"infra"}'
    s.engine.config = cfg
    stop = s.stopped()
    assert "a plain `pulumi up` would still change the stack" in stop.why and "update" in stop.why
    assert s.engine.replaced == []


def test_nothing_stale_changes_nothing(make):
    s = make(stale_pools=())
    summary = s.run()
    assert summary.rotated == [] and s.engine.replaced == [] and "nothing was stale" in s.lines[-1]


# ---- faults: each stops with where and how, keeps quorum, and a rerun finishes ------------------

def _resume(s: rot.Scenario) -> None:
    s.lines.clear()
    s.run()
    assert _stale(s) == [], "\n".join(s.lines)
    s.assert_safe()


def test_an_unreachable_api_server_stops_before_anything_changes(make):
    s = make()
    s.cluster.shutdown()
    stop = s.stopped()
    assert stop.where == "before anything changed" and "did not answer" in stop.why
    assert "inside the cluster's VPC" in stop.how
    assert s.engine.replaced == [] and s.engine.previews == 0


def test_a_failed_cordon_stops_with_nothing_replaced(make):
    s = make(stale_pools=("agents",))
    s.cluster.fail["PATCH /api/v1/nodes"] = 500
    stop = s.stopped()
    assert "cordoning" in stop.where and "rotate again" in stop.how
    assert s.engine.replaced == []
    del s.cluster.fail["PATCH /api/v1/nodes"]
    _resume(s)


def test_the_api_server_going_away_mid_drain_leaves_the_node_cordoned(make):
    s = make(stale_pools=("agents",))
    s.cluster.down_after["GET /api/v1/pods"] = 1
    stop = s.stopped()
    assert "draining" in stop.where and "stopped answering" in stop.why, stop
    cordoned = [n for n, node in s.cluster.nodes.items() if node["spec"].get("unschedulable")]
    assert len(cordoned) == 1 and s.engine.replaced == []
    del s.cluster.down_after["GET /api/v1/pods"]
    _resume(s)
    assert s.replaced_names()[0] == cordoned, "the cordoned node was not the first one finished"


def test_a_pdb_that_never_allows_eviction_stops_the_drain(make):
    s = make(stale_pools=("agents",), replicas=2, min_available=2)
    stop = s.stopped()
    assert "draining" in stop.where and "after 15m00s" in stop.why and "disruption budget" in stop.why, stop
    assert "PodDisruptionBudget" in stop.how and "kubectl uncordon" in stop.how
    assert s.engine.replaced == [] and len(s.cluster.nodes) == 5
    assert any("eviction refused for 1 (PodDisruptionBudget)" in line for line in s.lines)
    s.assert_safe()
    s.cluster.pdbs[0]["spec"]["minAvailable"] = 1  # the budget relaxed
    _resume(s)


def test_a_pod_under_two_pdbs_stops_at_once(make):
    s = make(stale_pools=("agents",), replicas=2, min_available=1, pdbs=2)
    stop = s.stopped()
    assert "HTTP 500" in stop.why and "more than one PodDisruptionBudget" in stop.how
    assert s.engine.replaced == []


def test_a_server_whose_member_is_not_removed_keeps_running(make):
    s = make(stale_pools=("server",), replicas=0)
    s.cluster.stuck_removal = True
    stop = s.stopped()
    assert "deleting the Node" in stop.where and "Terminating" in stop.why
    assert s.engine.replaced == [] and len(s.cluster.members) == 3
    s.assert_safe()
    s.cluster.stuck_removal = False
    _resume(s)


def test_an_update_failing_at_apply_resumes_with_that_node(make):
    s = make(stale_pools=("server",), replicas=0)
    s.engine.fail_apply = True
    stop = s.stopped()
    assert stop.where.startswith("replacing ") and "InsufficientInstanceCapacity" in stop.why, stop
    assert "replaces this node first" in stop.how
    failed = s.replaced_names()[0]
    assert len(s.cluster.members) == 2, "the member was not removed before the instance went"
    s.assert_safe()
    s.engine.fail_apply = False
    _resume(s)
    assert s.replaced_names()[1] == failed, "the failed node was not replaced first"


def test_another_update_holding_the_stack_lock(make):
    s = make(stale_pools=("agents",))
    s.engine.busy = True
    stop = s.stopped()
    assert stop.where == "before anything changed" and "the stack's lock" in stop.why
    assert s.cluster.leases == {}, "the lease was not released"
    s.engine.busy = False
    real = s.engine.replace

    def busy_once(urns):
        s.engine.replace = real
        s.engine.busy = True
        try:
            real(urns)
        finally:
            s.engine.busy = False
    s.engine.replace = busy_once
    stop = s.stopped()
    assert stop.where.startswith("before replacing") and "Node deleted, instance still the old one" in stop.where
    _resume(s)


def test_a_second_rotation_while_one_runs(make):
    s = make(stale_pools=("agents",))
    s.cluster.leases["rke-aws-rotation"] = {
        "metadata": {"name": "rke-aws-rotation", "namespace": "kube-system", "resourceVersion": "7"},
        "spec": {"holderIdentity": "laptop-4242", "leaseDurationSeconds": 120,
                 "renewTime": _stamp(s.clock.now() - 30)}}
    stop = s.stopped()
    assert "another rotation runs on this cluster (laptop-4242" in stop.why and s.engine.replaced == []
    s.clock.sleep(rotate.LEASE_SECONDS)  # its holder died: the lease expires
    _resume(s)


def test_a_node_that_never_becomes_ready(make):
    s = make(stale_pools=("agents",))
    victim = s.name("agents", 0)
    s.cluster.never_ready.add(victim)
    stop = s.stopped()
    assert stop.where.startswith(f"after replacing {victim}") and "Ready" in stop.why, stop
    assert "boot log" in stop.how
    assert len(s.engine.replaced) == 1, "went on to the next node"
    s.assert_safe()
    s.cluster.machines[victim].ready = True  # fixed by hand
    _resume(s)


@pytest.mark.parametrize("after_sleeps", [1, 4, 12, 30])
def test_ctrl_c_anywhere_then_resume(make, after_sleeps):
    # The stack of the whole run above (3 servers, 2 agents, all stale): an interrupted rotation, resumed, replaces
    # the same nodes in the same order, so its updates are that run's shared steps (offline_engine._run_once).
    s = make(replicas=0)
    count = {"n": 0}

    def interrupt():
        count["n"] += 1
        if count["n"] == after_sleeps:
            raise KeyboardInterrupt
    s.clock.on_sleep.append(interrupt)
    stop = s.stopped()
    assert "interrupted (Ctrl-C)" in stop.why and "Rotate again" in stop.how
    s.clock.on_sleep.remove(interrupt)
    s.assert_safe()
    assert s.cluster.leases == {}
    _resume(s)
    names = [n for batch in s.replaced_names() for n in batch]
    assert sorted(names) == sorted({n["name"] for n in s.nodes}), "a node was replaced twice or not at all"


def _stamp(t: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(t))
