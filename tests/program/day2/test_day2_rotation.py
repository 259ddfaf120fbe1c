"""Day 2 for rotation (issue 37): base -> a change that makes nodes stale -> what `rke-aws rotate` does next,
over runs that feed each run's outputs back as the next one's previous outputs (tests/support/offline_engine.py
HarnessEngine: running instances keep their ignored inputs, a targeted `--replace` creates from the program's
inputs: pulumi/pulumi pkg/resource/deploy/step_generator.go processIgnoreChanges, isTargetedReplace), and the
order rules against the fake Kubernetes API (tests/support/fake_kube.py):

- agents go `rotation.maxUnavailableAgents` at a time, servers always one at a time, whatever that key says
  (kops pkg/instancegroups/rollingupdate.go: the control plane never surges; one etcd member away at a time
  keeps quorum headroom);
- a control-plane server goes only while another control-plane server is Ready: RKE2's API server runs on
  the controlplane nodes only, and a new server joins through a running supervisor (rke2-docs
  install/server_roles.md; components/node/scripts/rke2.sh).
"""

from __future__ import annotations

import json

import pytest

from rke_aws.ops import rotate
from rke_aws.plan import stale
from tests.support import rotation as rot
from tests.support.day2 import with_pool_key
from tests.support.offline_engine import HarnessEngine


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


def _steps(text: str, names: list[str]) -> list[list[str]]:
    """The node names on each numbered line of `rotate --dry-run`'s plan."""
    return [[n for n in names if n in line] for line in text.splitlines()[1:]]


def test_base_then_a_new_image_and_type_then_the_rotation_plan():
    cfg = rot.config(servers=3, agents=3)
    cfg["rke-aws:rotation"] = json.dumps({"maxUnavailableAgents": 2})
    engine = HarnessEngine(cfg, "day2rot")
    base = engine.outputs()
    names = [n["name"] for n in base["nodes"]]
    servers = [n["name"] for n in base["nodes"] if "etcd" in n["roles"]]
    agents = [n for n in names if n not in servers]
    first = next(n["name"] for n in base["nodes"] if n.get("firstServer"))
    assert stale.from_outputs(base["nodes"]) == [] and rotate.plan_text(base, 2) == "nothing is stale"

    # Change: a new image everywhere and a new type on the agents. The update replaces nothing.
    changed = with_pool_key(rot.with_image(cfg), "agents", "instanceType", "m6i.xlarge")
    engine.up(changed)
    now = engine.outputs()
    assert {n["name"]: n["instanceId"] for n in now["nodes"]} == {n["name"]: n["instanceId"] for n in base["nodes"]}
    found = {s.name: s.what for s in stale.from_outputs(now["nodes"])}
    assert sorted(found) == sorted(names)
    assert all("instance type" in found[a] for a in agents) and not any("instance type" in found[s] for s in servers)

    # The plan rotate follows: agents two at a time (the stack's key), then each server alone, the first last.
    max_agents = rotate.rotation_settings(changed)
    assert max_agents == 2
    steps = _steps(rotate.plan_text(now, max_agents), names)
    assert [len(s) for s in steps] == [2, 1, 1, 1, 1], steps
    assert sorted(steps[0] + steps[1]) == sorted(agents)
    assert [s[0] for s in steps[2:]][-1] == first and sorted(s[0] for s in steps[2:]) == sorted(servers)

    # Next run, nothing edited: still stale (what runs comes from the previous outputs, not the inputs).
    engine.up()
    assert sorted(s.name for s in stale.from_outputs(engine.outputs()["nodes"])) == sorted(names)

    # One server replaced by a targeted update: it leaves the plan; the first server is still last.
    second = next(n for n in engine.outputs()["nodes"] if n["name"] in servers and n["name"] != first)
    engine.replace([second["urn"]])
    now = engine.outputs()
    steps = _steps(rotate.plan_text(now, max_agents), names)
    assert second["name"] not in sum(steps, []) and steps[-1] == [first] and [len(s) for s in steps] == [2, 1, 1, 1]
    assert len(stale.from_outputs(now["nodes"])) == 5


def test_servers_go_one_at_a_time_whatever_max_unavailable_agents_says(make):
    s = make(servers=3, agents=2, replicas=0, max_agents=3)
    s.run()
    roles = {n["name"]: n["roles"] for n in s.nodes}
    batches = s.replaced_names()
    assert [len(b) for b in batches] == [2, 1, 1, 1], batches
    assert not any("etcd" in roles[n] for n in batches[0]) and all("etcd" in roles[b[0]] for b in batches[1:])
    s.assert_safe()


def test_split_roles_rotate_each_server_alone_while_another_control_plane_answers(make):
    s = make(servers=3, agents=1, control_plane=2, replicas=0)
    assert len(stale.from_outputs(s.nodes)) == 6
    s.run()
    assert stale.from_outputs(s.nodes) == []
    roles = {n["name"]: n["roles"] for n in s.nodes}
    batches = s.replaced_names()
    assert [len(b) for b in batches] == [1] * 6 and roles[batches[0][0]] == ["worker"], batches
    assert sorted(b[0] for b in batches if roles[b[0]] == ["controlplane"]) == sorted(
        n for n, r in roles.items() if r == ["controlplane"])
    s.assert_safe()


def test_the_only_control_plane_server_is_refused(make):
    s = make(servers=3, agents=1, control_plane=1, stale_pools=("control-plane",), replicas=0)
    stop = s.stopped()
    assert "no other control-plane server is Ready" in stop.why and stop.where.startswith("before "), stop
    assert s.engine.replaced == [], "an instance was replaced"
    assert not [p for m, p in s.cluster.requests if m in ("PATCH", "DELETE") and "/nodes/" in p], "a Node was touched"
