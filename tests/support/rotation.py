"""A rotation scenario: an RKE2 stack run by the offline harness (HarnessEngine), a FakeCluster serving its
nodes over HTTP, a configuration change that makes nodes stale, and the Rotation wired to both."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from rke_aws.ops import kube as kubeapi
from rke_aws.ops import rotate
from rke_aws.plan import running
from rke_aws_offline.engine import harness

from .fake_kube import FakeClock, FakeCluster
from .offline_engine import HarnessEngine

NEW_IMAGE = "ami-0123456789abcdef0"


def config(servers: int = 3, agents: int = 2, control_plane: int = 0) -> dict:
    """rke2-dev with `servers` (pool `server`) and `agents`; `control_plane` > 0 splits the roles (rke2-docs
    install/server_roles.md): the `server` pool keeps etcd only, a `control-plane` pool of that many
    controlplane-only servers follows it (the initialising server stays an etcd node)."""
    cfg = harness.stack_config("rke2-dev")
    cfg.pop("rke-aws:kubeconfig", None)
    pools = json.loads(cfg["rke-aws:nodePools"])
    pools[0]["count"], pools[1]["count"] = servers, agents
    if control_plane:
        pools[0]["roles"] = ["etcd"]
        pools.insert(1, dict(pools[0], name="control-plane", roles=["controlplane"], count=control_plane))
        # One DNS name cannot send 6443 to controlplane nodes and 9345 to etcd nodes (plan/guards.py).
        cfg["rke-aws:controlPlane"] = json.dumps({"endpoint": "nlb"})
    cfg["rke-aws:nodePools"] = json.dumps(pools)
    return cfg


def with_image(cfg: dict, pools: tuple[str, ...] = ("server", "control-plane", "agents"), image: str = NEW_IMAGE) -> dict:
    out = dict(cfg)
    p = json.loads(cfg["rke-aws:nodePools"])
    for pool in p:
        if pool["name"] in pools:
            pool["ami"] = image
    out["rke-aws:nodePools"] = json.dumps(p)
    return out


@dataclass
class Scenario:
    engine: HarnessEngine
    cluster: FakeCluster
    clock: FakeClock
    url: str
    max_agents: int = 1
    lines: list[str] = field(default_factory=list)
    holder: str = "test-rotation"

    def kube(self) -> kubeapi.Kube:
        return kubeapi.Kube(kubeapi.https_transport(running.Access(self.url, token="admin")), self.url)

    def rotation(self, **kwargs) -> rotate.Rotation:
        return rotate.Rotation(self.engine, self.kube(), clock=self.clock, max_unavailable_agents=self.max_agents,
                               say=self.lines.append, holder=self.holder, stack="rotation", **kwargs)

    def run(self) -> rotate.Summary:
        return self.rotation().run()

    def stopped(self) -> rotate.Stop:
        try:
            self.run()
        except rotate.Stop as stop:
            return stop
        raise AssertionError("the rotation did not stop:\n" + "\n".join(self.lines[-20:]))

    @property
    def nodes(self) -> list[dict]:
        return self.engine.outputs()["nodes"]

    def name(self, pool: str, index: int) -> str:
        return next(n["name"] for n in self.nodes if n["pool"] == pool and n["index"] == index)

    def urn(self, pool: str, index: int) -> str:
        return next(n["urn"] for n in self.nodes if n["pool"] == pool and n["index"] == index)

    def replaced_names(self) -> list[list[str]]:
        by_urn = {n["urn"]: n["name"] for n in self.nodes}
        return [[by_urn[u] for u in urns] for urns in self.engine.replaced]

    def assert_safe(self) -> None:
        """etcd never below quorum, never two servers down at once, over the whole history."""
        assert self.cluster.history, "no history recorded"
        for snap in self.cluster.history:
            assert snap.healthy_voters >= snap.quorum, f"etcd lost quorum: {snap}"
            assert len(snap.servers_down) <= 1, f"two servers down at once: {snap}"


_RUNS: dict[tuple, tuple] = {}  # (servers, agents, stale pools) -> the base run and the run after the change


def scenario(servers: int = 3, agents: int = 2, stale_pools: tuple[str, ...] = ("server", "control-plane", "agents"),
             replicas: int = 2, min_available: int | None = 1, pdbs: int = 1, max_agents: int = 1,
             control_plane: int = 0) -> Scenario:
    cfg = config(servers, agents, control_plane)
    clock = FakeClock()
    key = (servers, agents, stale_pools, control_plane)
    base, changed = _RUNS.get(key, (None, None))
    engine = HarnessEngine(cfg, "rotation", run=base, shared=True)
    base = engine._run
    out = engine.outputs()
    cluster = FakeCluster(clock, out["kubernetesVersion"])
    engine.cluster = cluster
    for n in out["nodes"]:
        cluster.add_node(n["name"], "etcd" in n["roles"])
    workers = [n["name"] for n in out["nodes"] if "etcd" not in n["roles"]]
    if replicas and workers:
        cluster.add_workload("default", "web", replicas, workers, min_available=min_available, pdbs=pdbs)
    url = cluster.start()
    if stale_pools:
        changed = engine.up(with_image(cfg, stale_pools), run=changed)
    _RUNS[key] = (base, changed)
    return Scenario(engine, cluster, clock, url, max_agents)
