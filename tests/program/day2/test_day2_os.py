"""Day 2 for a pool's `os` (issue 35 item 3) over base -> change -> next change, each run's outputs fed back as
the next one's previous outputs:

- RKE2: a running pool's new OS replaces nothing in the update (the instance ignores `ami` and
  `userDataBase64`: components/aws/nodes.py IGNORED_ON_UPDATE, as the AWS provider replaces an instance for
  either, terraform-provider-aws internal/service/ec2/ec2_instance.go ForceNew on ami, user_data_base64
  replace-on-change); its nodes are stale by their image and boot configuration (plan/stale.py), and
  `rke-aws rotate` replaces them one at a time, like a new image. So it is not refused.
- RKE1: refused. `rke up` logs in to each node as cluster.yml's `user`, which is the OS's login user, while
  the running instances keep their old OS; and rotation replaces RKE2 nodes only (components/ops/rotate/).
"""

from __future__ import annotations

import copy
import json

from rke_aws.ops import rotate
from rke_aws.plan import stale
from rke_aws_offline.engine import harness
from tests.support import rotation as rot
from tests.support.day2 import refused, run, with_pool_key
from tests.support.offline_engine import HarnessEngine


def test_rke2_pool_changing_os_goes_stale_and_rotation_replaces_it():
    cfg = rot.config(servers=1, agents=2)
    engine = HarnessEngine(cfg, "day2os")
    base = engine.outputs()
    agents = sorted(n["name"] for n in base["nodes"] if "etcd" not in n["roles"])
    assert stale.from_outputs(base["nodes"]) == []

    # Change: the agents move to RHEL 9. Nothing is replaced by the update itself.
    engine.up(with_pool_key(cfg, "agents", "os", "rhel-9"))
    now = engine.outputs()
    assert {n["name"]: n["instanceId"] for n in now["nodes"]} == {n["name"]: n["instanceId"] for n in base["nodes"]}
    found = {s.name: s.what for s in stale.from_outputs(now["nodes"])}
    assert sorted(found) == agents, found
    assert all("image" in found[a] and "boot configuration" in found[a] for a in agents), found
    assert all("os" not in n for n in now["nodes"]), "RKE2 nodes record no os: their image and digest say what runs"
    # rotate's plan: the two stale agents, one at a time (rotation.maxUnavailableAgents: 1).
    plan = rotate.plan_text(now, 1)
    assert all(a in plan for a in agents) and len(plan.splitlines()) == 3, plan

    # Next change: back to Ubuntu before rotating: nothing is stale any more.
    engine.up(cfg)
    assert stale.from_outputs(engine.outputs()["nodes"]) == []


def test_rke1_running_pool_keeps_its_os():
    cfg = harness.stack_config("rke-dev")
    cfg.pop("rke-aws:kubeconfig", None)
    base = run(cfg, stack="day2os1")
    pools = json.loads(cfg["rke-aws:nodePools"])
    worker = next(i for i, p in enumerate(pools) if p["roles"] == ["worker"])
    changed = copy.deepcopy(cfg)
    pools[worker]["os"] = "rhel-9"
    changed["rke-aws:nodePools"] = json.dumps(pools)
    message = refused(changed, base, stack="day2os1")
    assert f"nodePools[{worker}].os" in message and "'rhel-9'" in message and "ubuntu-24.04" in message, message
    # A new pool on RHEL 9 beside it is the way (RKE1 records the OS of non-Ubuntu nodes for the next run).
    pools[worker]["os"] = "ubuntu-24.04"
    pools.append({"name": "rhel", "roles": ["worker"], "count": 1, "os": "rhel-9", "subnet": "public"})
    added = dict(cfg, **{"rke-aws:nodePools": json.dumps(pools)})
    after = run(added, base, stack="day2os1")
    recorded = {n["pool"]: n.get("os") for n in after.outputs["nodes"]}
    assert recorded["rhel"] == "rhel-9" and recorded[pools[worker]["name"]] is None
    # ... and the next update keeps it: changing the new pool's OS is refused in turn.
    pools[-1]["os"] = "rocky-9"
    message = refused(dict(cfg, **{"rke-aws:nodePools": json.dumps(pools)}), after, stack="day2os1")
    assert f"nodePools[{len(pools) - 1}].os" in message and "rhel-9" in message, message
