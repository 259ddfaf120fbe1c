"""The day-2 guards' arithmetic and rules, pinned at their boundaries (components/history.py,
components/node_plan.py), independent of any stack file.

Facts the rules encode, from their owners:
- etcd keeps quorum with floor(m/2)+1 of m members, so it tolerates (m-1)//2 failures (etcd docs,
  "Failure tolerance": 3 tolerate 1, 4 tolerate 1, 5 tolerate 2);
- Kubernetes upgrades one minor at a time and supports no downgrade (version-skew policy);
- a kubelet reports v1.X.Y+rke2rN on RKE2 and v1.X.Y on RKE1 (status.nodeInfo.kubeletVersion).
"""

from __future__ import annotations

import pytest

from components import history
from components.history import (EtcdState, Observed, PlannedMember, Previous, PreviousNode, RemovedMember, Snapshots,
                                Statement)
from components.running import LiveCluster, LiveNode

CID = "c"


def pool(name: str, roles: tuple[str, ...], count: int, block: int | None = None):
    from components.config import NodePool

    return NodePool(name, roles, count, "m6i.large", "private", 50, None, block)


def stack_config(servers: int, agents: int, server_pool: str = "servers", server_block: int | None = None):
    import json

    from components import config

    pools = [{"name": server_pool, "roles": ["controlplane", "etcd"], "count": servers},
             {"name": "agents", "roles": ["worker"], "count": agents}]
    if server_block is not None:
        pools[0]["ipBlock"] = server_block
    return config.parse({"rke-aws:distribution": "rke2", "rke-aws:clusterId": CID, "rke-aws:nodePools": json.dumps(pools)},
                        project="rke-aws", stack=CID, region="us-west-2")


def member(i: int, pool: str = "servers", *, etcd: bool = True, ip: str | None = None, key: str | None = None,
           az: str = "us-west-2a") -> PreviousNode:
    ip = ip or f"10.0.1.{10 + i}"
    return PreviousNode(pool, i, f"ip-{ip.replace('.', '-')}.us-west-2.compute.internal",
                        ("controlplane", "etcd") if etcd else ("worker",), ip, az, "private", 0, key)


def planned(n: PreviousNode, *, etcd: bool | None = None, ip: str | None = None, key: str | None = None) -> PlannedMember:
    return PlannedMember(n.pool, n.index, ip or n.private_ip, n.availability_zone, n.tier,
                         n.key_name if key is None else key, n.is_etcd if etcd is None else etcd, n.name)


def prev(nodes, **kw) -> Previous:
    kw.setdefault("kubernetes_version", "v1.33.5+rke2r1")
    kw.setdefault("version_confirmed", kw["kubernetes_version"])
    return Previous(distribution="rke2", nodes=tuple(nodes), cluster_id=CID, **kw)


# ---- quorum -----------------------------------------------------------------------------------

@pytest.mark.parametrize("members", range(1, 8))
def test_failure_tolerance_and_quorum_at_every_member_count(members):
    servers = [member(i) for i in range(members)]
    p = prev(servers)
    tolerable = (members - 1) // 2
    assert tolerable == {1: 0, 2: 0, 3: 1, 4: 1, 5: 2, 6: 2, 7: 3}[members]
    exact = EtcdState(tuple(n.name for n in servers), (), True)
    for lost in range(1, members + 1):
        keep = [planned(n) for n in servers[:members - lost]]
        refused = history.quorum_problems(p, keep, exact)
        assert bool(refused) == (lost > tolerable), (members, lost, refused)
        if refused:
            assert f"{lost} of the {members} etcd members" in refused[0]
            assert f"only with {members // 2 + 1} of {members} running, so at most {tolerable} may go now" in refused[0]
        # Without an exact view of etcd, one member per update at most.
        guarded = history.quorum_problems(p, keep, EtcdState(exact.listed, (), False, Statement("etcd", "x")))
        assert bool(guarded) == (lost > min(tolerable, 1)), (members, lost, guarded)


def test_a_member_whose_pool_loses_the_etcd_role_counts_as_removed():
    servers = [member(i) for i in range(3)]
    p = prev(servers)
    deleted, replaced = history.etcd_changes(p, [planned(n, etcd=False) for n in servers[:1]] + [planned(n) for n in servers[1:]])
    assert deleted == [servers[0].name] and replaced == []
    assert history.quorum_problems(p, [planned(n, etcd=False) for n in servers[:2]] + [planned(servers[2])])


@pytest.mark.parametrize("change, reason", [({"ip": "10.0.9.9"}, "network.vpcCidr"), ({"key": "rotated"}, "sshKeyName")])
def test_replaced_members_count_and_the_message_names_the_cause_and_a_real_way(change, reason):
    servers = [member(i) for i in range(3)]
    keep = [planned(n, **change) for n in servers]
    deleted, replaced = history.etcd_changes(prev(servers), keep)
    assert deleted == [] and replaced == [n.name for n in servers]
    (message,) = history.quorum_problems(prev(servers), keep)
    assert reason in message and "(replaced)" in message
    assert "lower the pool's count" not in message, "no count lowers a key or an address"


def test_even_counts_warn_with_their_real_tolerance():
    from components.config import _check_topology, _Problems
    from components.config import NodePool

    for count, tolerates, like in ((2, 0, 1), (4, 1, 3), (6, 2, 5)):
        warnings: list[str] = []
        _check_topology(_Problems(), (NodePool("s", ("controlplane", "etcd", "worker"), count, "m", "private", 50, None, None),),
                        warnings)
        (w,) = [w for w in warnings if "etcd members" in w]
        assert f"{count} etcd members tolerate {tolerates} failure(s), like {like}" in w, w


# ---- removed members etcd still lists --------------------------------------------------------

def test_five_to_three_then_three_to_two_counts_the_members_etcd_still_lists():
    """Servers 5 -> 3 (confirmed, two at once), then 3 -> 2 in the next update: etcd still lists the
    two removed members until their Nodes are deleted, so 2 of 5 would run."""
    five = [member(i) for i in range(5)]
    p1 = prev(five)
    s1 = history.etcd_state(p1, Observed(), CID)
    keep3 = [planned(n) for n in five[:3]]
    assert history.quorum_problems(p1, keep3, s1), "two at once without an exact view"
    confirmed = Observed(codes=frozenset({s1.statement.code}))
    s1c = history.etcd_state(p1, confirmed, CID)
    assert s1c.exact and history.quorum_problems(p1, keep3, s1c) == []
    removed = history.etcd_removed_after(p1, keep3, s1c, confirmed)
    assert [r["name"] for r in removed] == sorted(n.name for n in five[3:])
    # The next update: the outputs say 3 run and 2 are removed but maybe still listed.
    p2 = prev(five[:3], etcd_removed=tuple(RemovedMember(r["name"], r["privateIp"]) for r in removed))
    s2 = history.etcd_state(p2, Observed(codes=confirmed.codes), CID)  # the old code confirms nothing now
    assert not s2.exact and set(s2.down) == {n.name for n in five[3:]} and len(s2.listed) == 5
    (message,) = history.quorum_problems(p2, [planned(n) for n in five[:2]], s2)
    assert "1 of the 5 etcd members" in message and "only with 3 of 5 running, so at most 0 may go now" in message
    assert "kubectl delete node" in message and s2.statement.code in message
    # Once the Nodes are deleted: the cluster shows 3 members, or the user confirms exactly that.
    live = LiveCluster(tuple(LiveNode(n.name, "v1.33.5+rke2r1", True, True, True) for n in five[:3]))
    for observed in (Observed(live=live), Observed(codes=frozenset({s2.statement.code}))):
        s3 = history.etcd_state(p2, observed, CID)
        assert history.quorum_problems(p2, [planned(n) for n in five[:2]], s3) == []
        assert [r["name"] for r in history.etcd_removed_after(p2, [planned(n) for n in five[:2]], s3, observed)] == \
            [five[2].name]


def test_the_cluster_read_counts_registered_etcd_nodes_and_not_ready_ones_as_down():
    three = [member(i) for i in range(3)]
    p = prev(three)
    live = LiveCluster((LiveNode(three[0].name, "v", True, True, True), LiveNode(three[1].name, "v", True, True, False),
                        LiveNode(three[2].name, "v", True, True, True)))
    state = history.etcd_state(p, Observed(live=live), CID)
    assert state.exact and state.down == (three[1].name,)
    # One member is down: removing a healthy one leaves 1 of 3.
    assert history.quorum_problems(p, [planned(three[0]), planned(three[1])], state)
    # Removing the one that is down loses nothing.
    assert history.quorum_problems(p, [planned(three[0]), planned(three[2])], state) == []


def test_removed_members_addresses_are_never_handed_to_new_nodes():
    from components.config import NetworkConfig
    from components.network_plan import SubnetPlan
    from components.node_plan import plan_nodes

    cfg = stack_config(servers=1, agents=1)
    subnets = [SubnetPlan("private", 0, "us-west-2a", "10.0.64.0/19"), SubnetPlan("public", 0, "us-west-2a", "10.0.0.0/19")]
    first = plan_nodes(cfg, subnets)
    server = first[0]
    # The server pool was removed earlier and its member is still listed; a new server pool takes its block.
    p = Previous("rke2", "v1.33.5+rke2r1", (history.PreviousNode("agents", 0, first[1].name, ("worker",), first[1].private_ip,
                                                                  "us-west-2a", "private", 1, None),),
                 etcd_removed=(RemovedMember(server.name, server.private_ip),), cluster_id=CID)
    again = plan_nodes(stack_config(servers=1, agents=1, server_pool="servers2", server_block=0), subnets, p)
    assert server.private_ip not in {n.private_ip for n in again}


# ---- versions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("new, refused", [
    ("v1.33.5+rke2r1", None),
    ("v1.33.6+rke2r1", None),
    ("v1.33.5+rke2r2", None),
    ("v1.34.0+rke2r1", None),
    ("v1.33.4+rke2r1", "is a downgrade"),  # a patch downgrade
    ("v1.33.5+rke2r0", "is a downgrade"),  # an RKE2 build downgrade
    ("v1.32.9+rke2r1", "is a downgrade"),
    ("v1.35.0+rke2r1", "skips a minor"),
])
def test_version_changes_against_a_complete_rollout(new, refused):
    problems = history.version_problems(prev([member(0)]), "rke2", new)
    assert (problems[0] if problems else None) is None if refused is None else refused in problems[0]


def test_the_two_merge_sequence_is_refused_until_the_first_is_known_complete():
    """1.33 -> 1.34 accepted; 1.34 -> 1.35 in the next update refused while nothing says every node
    runs 1.34; a later 1.34 patch is fine (it raises no minor)."""
    nodes = [member(0), member(1, "agents", etcd=False)]
    p = prev(nodes, kubernetes_version="v1.34.1+rke2r1", version_confirmed="v1.33.5+rke2r1")
    state = history.version_state(p, Observed(), CID)
    assert not state.complete and state.confirmed == "v1.33.5+rke2r1" and state.servers_minor == 33
    (message,) = history.version_problems(p, "rke2", "v1.35.0+rke2r1", state, Observed())
    assert "the last change from v1.33.5+rke2r1 to v1.34.1+rke2r1 is not known complete" in message
    assert state.statement.code in message and "kubectl get nodes" in message
    assert history.version_problems(p, "rke2", "v1.34.2+rke2r1", state, Observed()) == []
    # The cluster says: one node is behind.
    live = LiveCluster((LiveNode(nodes[0].name, "v1.34.1+rke2r1", True, True, True),
                        LiveNode(nodes[1].name, "v1.33.5+rke2r1", False, False, True)))
    read = history.version_state(p, Observed(live=live), CID)
    assert not read.complete and read.lagging == {nodes[1].name: "v1.33.5+rke2r1"} and read.servers_minor == 34
    assert nodes[1].name in history.version_problems(p, "rke2", "v1.35.0+rke2r1", read, Observed(live=live))[0]
    # Every node on 1.34.1, read or confirmed: the next minor is accepted.
    done = LiveCluster(tuple(LiveNode(n.name, "v1.34.1+rke2r1", n.is_etcd, n.is_etcd, True) for n in nodes))
    for observed in (Observed(live=done), Observed(codes=frozenset({state.statement.code}))):
        ok = history.version_state(p, observed, CID)
        assert ok.complete and history.version_problems(p, "rke2", "v1.35.0+rke2r1", ok, observed) == []


def test_kubelet_versions_as_each_distribution_reports_them():
    assert history.runs_version("v1.34.1+rke2r1", "v1.34.1+rke2r1")
    assert not history.runs_version("v1.34.1+rke2r1", "v1.34.1+rke2r2")
    assert not history.runs_version("v1.34.0+rke2r1", "v1.34.1+rke2r1")
    assert history.runs_version("v1.32.5", "v1.32.5-rancher1-1")  # RKE1 kubelets carry no -rancherN-N
    assert not history.runs_version("v1.32.4", "v1.32.5-rancher1-1")
    assert not history.runs_version("", "v1.32.5-rancher1-1")


def test_outputs_from_before_the_confirmation_are_judged_by_where_the_ccm_was_held():
    held = prev([member(0)], kubernetes_version="v1.34.1+rke2r1", version_confirmed=None, legacy_version=True,
                ccm_image="registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.4")
    assert not history.version_state(held, Observed(), CID).complete
    moved = prev([member(0)], kubernetes_version="v1.34.1+rke2r1", version_confirmed=None, legacy_version=True,
                 ccm_image="registry.k8s.io/provider-aws/cloud-controller-manager:v1.34.3")
    assert history.version_state(moved, Observed(), CID).complete


def test_a_confirmation_code_names_one_statement():
    a, b = Statement("version", "every node runs A"), Statement("version", "every node runs B")
    assert a.code != b.code and a.code.startswith("version-") and len(a.code) == len("version-") + 10
    assert history.parse_codes(f" {a.code},{b.code}  x") == {a.code, b.code, "x"}
    assert a.code in a.how() and "every node runs A" in a.how()


# ---- what a running stack must not change -----------------------------------------------------

def test_a_new_cluster_id_is_refused_naming_the_running_cluster():
    p = prev([member(0)])
    assert history.cluster_id_problems(p, CID, "stack") == []
    (message,) = history.cluster_id_problems(p, "other", "stack")
    assert "runs cluster 'c'" in message and "pulumi config set rke-aws:clusterId c" in message
    assert "defaults to the stack name" not in message
    (renamed,) = history.cluster_id_problems(p, "renamed", "renamed")
    assert "defaults to the stack name" in renamed
    assert history.cluster_id_problems(None, "x", "x") == [] and history.cluster_id_problems(prev([]), CID, "s") == []


def test_a_region_change_is_refused():
    p = Previous("rke2", "v1.33.5+rke2r1", (member(0),), cluster_id=CID, region="us-west-2")
    assert history.region_problems(p, "us-west-2") == []
    assert "runs its cluster in us-west-2" in history.region_problems(p, "eu-west-1")[0]


def test_role_changes_of_running_pools_are_refused_and_emptied_pools_are_free():
    p = prev([member(0), member(1), member(0, "agents", etcd=False, ip="10.0.4.10")])
    assert history.role_problems(p, [pool("servers", ("controlplane", "etcd"), 2), pool("agents", ("worker",), 1)]) == []
    (message,) = history.role_problems(p, [pool("servers", ("controlplane", "etcd"), 2),
                                           pool("agents", ("controlplane", "etcd", "worker"), 1)])
    assert message.startswith("rke-aws:nodePools[1].roles:") and "add one" in message
    # Order of roles does not matter; a pool whose running nodes all go may take new roles.
    assert history.role_problems(p, [pool("servers", ("etcd", "controlplane"), 2), pool("agents", ("etcd",), 0)]) == []


# ---- snapshots --------------------------------------------------------------------------------

def test_snapshot_settings_reach_running_servers_only_by_hand_and_keep_their_grant():
    running = Snapshots("b", "c", 6, 28)
    p = prev([member(0)], snapshots_running=running)
    same = history.snapshot_transition(p, Snapshots("b", "c", 6, 28), Observed(), CID, "rke2")
    assert same.warning is None and same.running == running and same.grant == (running,)
    moved = Snapshots("b", "elsewhere", 6, 28)
    t = history.snapshot_transition(p, moved, Observed(), CID, "rke2", "in /etc/rancher/rke2/config.yaml set x")
    assert t.running == running and set(t.grant) == {running, moved}
    assert "s3://b/c" in t.warning and "s3://b/elsewhere" in t.warning and t.statement.code in t.warning
    assert "one at a time" in t.warning and "set x" in t.warning
    done = history.snapshot_transition(p, moved, Observed(codes=frozenset({t.statement.code})), CID, "rke2")
    assert done.running == moved and done.grant == (moved,) and done.warning is None
    off = history.snapshot_transition(p, None, Observed(), CID, "rke2")
    assert off.running == running and off.grant == (running,) and "no S3 snapshots" in off.warning
    interval = history.snapshot_transition(p, Snapshots("b", "c", 12, 28), Observed(), CID, "rke")
    assert interval.warning and "`rke up`" in interval.warning
    # Outputs from before the interval and retention were exported: a location match is the same.
    legacy = prev([member(0)], snapshots_running=Snapshots("b", "c"))
    assert history.snapshot_transition(legacy, Snapshots("b", "c", 6, 28), Observed(), CID, "rke2").warning is None


# ---- outputs the engine saved unknown ----------------------------------------------------------

def outputs_with(node: dict) -> dict:
    return {"nodes": [node], "kubernetesVersion": "v1.33.5+rke2r1", "distribution": "rke2", "clusterId": CID}


NODE = {"name": "ip-10-0-1-10.us-west-2.compute.internal", "pool": "servers", "index": 0,
        "roles": ["controlplane", "etcd"], "privateIp": "10.0.1.10", "availabilityZone": "us-west-2a",
        "subnet": "private-0", "ipBlock": 0, "instanceType": "m6i.large"}


@pytest.mark.parametrize("unknown", [history.UNKNOWN_PLACEHOLDER, None, type("Unknown", (), {})()])
def test_a_failed_instances_unknown_address_is_the_one_its_name_encodes(unknown):
    p = Previous.from_outputs(outputs_with({**NODE, "privateIp": unknown, "instanceType": unknown, "instanceId": unknown}))
    (n,) = p.nodes
    assert n.private_ip == "10.0.1.10" and n.instance_type is None


@pytest.mark.parametrize("key", ["pool", "roles", "name", "availabilityZone"])
def test_unknown_values_the_program_cannot_recover_give_one_clear_refusal(key):
    with pytest.raises(history.HistoryError, match=rf"saved as unknown \(nodes\[0\]\.{key}"):
        Previous.from_outputs(outputs_with({**NODE, key: history.UNKNOWN_PLACEHOLDER}))
    with pytest.raises(history.HistoryError, match="saved as unknown"):
        Previous.from_outputs({**outputs_with(NODE), "kubernetesVersion": history.UNKNOWN_PLACEHOLDER})


def test_unknown_address_with_a_name_that_encodes_none_is_refused():
    with pytest.raises(history.HistoryError, match=r"nodes\[0\]\.privateIp"):
        Previous.from_outputs(outputs_with({**NODE, "name": "i-0abc.us-west-2.compute.internal",
                                            "privateIp": history.UNKNOWN_PLACEHOLDER}))


def test_a_removed_nodes_address_is_not_handed_to_a_new_node_in_the_same_update():
    """EC2 frees an address only once its instance is gone, after the new ones were created."""
    from components.network_plan import SubnetPlan
    from components.node_plan import plan_nodes

    subnets = [SubnetPlan("private", 0, "us-west-2a", "10.0.64.0/19"), SubnetPlan("public", 0, "us-west-2a", "10.0.0.0/19")]
    first = {n.index: n for n in plan_nodes(stack_config(servers=1, agents=2), subnets) if n.pool.name == "agents"}
    # Agents 0 and 5 run, 5 at the pool's second slot (1-4 went earlier). This update: count 2, so
    # 5 goes and 1 comes, and the lowest free slot is the one 5 still holds.
    p = Previous("rke2", "v1.33.5+rke2r1", tuple(
        PreviousNode("agents", i, n.name, ("worker",), n.private_ip, "us-west-2a", "private", n.ip_block, None)
        for i, n in ((0, first[0]), (5, first[1]))), cluster_id=CID)
    again = {n.index: n for n in plan_nodes(stack_config(servers=1, agents=2), subnets, p) if n.pool.name == "agents"}
    assert again[0].private_ip == first[0].private_ip
    assert again[1].private_ip not in {first[0].private_ip, first[1].private_ip}, "the leaving node's address"
