"""The day-2 guards' arithmetic and rules, pinned at their boundaries (components/plan/day2/, cluster_id.py,
nodes.py, backups.py), independent of any stack file: each step called with a ClusterState, no Pulumi runtime.

Facts the rules encode, from their owners:
- etcd keeps quorum with floor(m/2)+1 of m members, so it tolerates (m-1)//2 failures (etcd docs,
  "Failure tolerance": 3 tolerate 1, 4 tolerate 1, 5 tolerate 2);
- Kubernetes upgrades one minor at a time and supports no downgrade (version-skew policy);
- a kubelet reports v1.X.Y+rke2rN on RKE2 and v1.X.Y on RKE1 (status.nodeInfo.kubeletVersion).
"""

from __future__ import annotations

import pytest

from rke_aws.diagnostics import Statement
from rke_aws.plan import backups, cluster_id, nodes, releases
from rke_aws.plan.backups import Snapshots
from rke_aws.plan.day2 import etcd, versions
from rke_aws.plan.day2.confirmations import Observed, parse_codes
from rke_aws.plan.day2.etcd import EtcdState
from rke_aws.plan.running import LiveCluster, LiveNode
from rke_aws.state.model import RemovedMember
from tests.support.states import CID, member, planned, state


def texts(found) -> list[str]:
    """Diagnostics as the user reads them."""
    return [d.render() for d in found]


def prev(nodes_, **kw):
    return state(nodes_, **kw)


def snap(bucket: str, folder: str, interval: int | None = None, retention: int | None = None,
         kms: str | None = None) -> Snapshots:
    return Snapshots(bucket=bucket, folder=folder, interval_hours=interval, retention=retention, kms_key_arn=kms)


def pool(name: str, roles: tuple[str, ...], count: int, block: int | None = None):
    from rke_aws.settings.resolve import PoolConfig

    return PoolConfig(name=name, roles=roles, count=count, instance_type="m6i.large", ip_block=block)


def stack_config(servers: int, agents: int, server_pool: str = "servers", server_block: int | None = None):
    import json

    from tests.support.stackconfig import parse_flat

    pools = [{"name": server_pool, "roles": ["controlplane", "etcd"], "count": servers},
             {"name": "agents", "roles": ["worker"], "count": agents}]
    if server_block is not None:
        pools[0]["ipBlock"] = server_block
    return parse_flat({"rke-aws:distribution": "rke2", "rke-aws:clusterId": CID, "rke-aws:nodePools": json.dumps(pools)},
                      project="rke-aws", stack=CID, region="us-west-2")


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
        refused = texts(etcd.quorum_problems(p, keep, exact))
        assert bool(refused) == (lost > tolerable), (members, lost, refused)
        if refused:
            assert f"{lost} of the {members} etcd members" in refused[0]
            assert f"only with {members // 2 + 1} of {members} running, so at most {tolerable} may go now" in refused[0]
        # Without an exact view of etcd, one member per update at most.
        guarded = texts(etcd.quorum_problems(p, keep, EtcdState(exact.listed, (), False, Statement("etcd", "x"))))
        assert bool(guarded) == (lost > min(tolerable, 1)), (members, lost, guarded)


def test_a_member_whose_pool_loses_the_etcd_role_counts_as_removed():
    servers = [member(i) for i in range(3)]
    p = prev(servers)
    deleted, replaced = etcd.etcd_changes(p, [planned(n, etcd=False) for n in servers[:1]] + [planned(n) for n in servers[1:]])
    assert deleted == [servers[0].name] and replaced == []
    assert texts(etcd.quorum_problems(p, [planned(n, etcd=False) for n in servers[:2]] + [planned(servers[2])]))


@pytest.mark.parametrize("change, reason", [({"ip": "10.0.9.9"}, "network.vpcCidr"), ({"key": "rotated"}, "sshKeyName")])
def test_replaced_members_count_and_the_message_names_the_cause_and_a_real_way(change, reason):
    servers = [member(i) for i in range(3)]
    keep = [planned(n, **change) for n in servers]
    deleted, replaced = etcd.etcd_changes(prev(servers), keep)
    assert deleted == [] and replaced == [n.name for n in servers]
    (message,) = texts(etcd.quorum_problems(prev(servers), keep))
    assert reason in message and "(replaced)" in message
    assert "lower the pool's count" not in message, "no count lowers a key or an address"


def test_even_counts_warn_with_their_real_tolerance():
    from rke_aws.settings.rules.pools import topology

    for count, tolerates, like in ((2, 0, 1), (4, 1, 3), (6, 2, 5)):
        found = topology((pool("s", ("controlplane", "etcd", "worker"), count),), 0)
        (w,) = [d.message for d in found if "etcd members" in d.message]
        assert f"{count} etcd members tolerate {tolerates} failure(s), like {like}" in w, w


# ---- removed members etcd still lists --------------------------------------------------------

def test_five_to_three_then_three_to_two_counts_the_members_etcd_still_lists():
    """Servers 5 -> 3 (confirmed, two at once), then 3 -> 2 in the next update: etcd still lists the
    two removed members until their Nodes are deleted, so 2 of 5 would run."""
    five = [member(i) for i in range(5)]
    p1 = prev(five)
    s1 = etcd.etcd_state(p1, Observed(), CID)
    keep3 = [planned(n) for n in five[:3]]
    assert texts(etcd.quorum_problems(p1, keep3, s1)), "two at once without an exact view"
    confirmed = Observed(codes=frozenset({s1.statement.code}))
    s1c = etcd.etcd_state(p1, confirmed, CID)
    assert s1c.exact and texts(etcd.quorum_problems(p1, keep3, s1c)) == []
    removed = etcd.etcd_removed_after(p1, keep3, s1c, confirmed)
    assert [r.name for r in removed] == sorted(n.name for n in five[3:])
    # The next update: the outputs say 3 run and 2 are removed but maybe still listed.
    p2 = prev(five[:3], etcd_members_removed=removed)
    s2 = etcd.etcd_state(p2, Observed(codes=confirmed.codes), CID)  # the old code confirms nothing now
    assert not s2.exact and set(s2.down) == {n.name for n in five[3:]} and len(s2.listed) == 5
    (message,) = texts(etcd.quorum_problems(p2, [planned(n) for n in five[:2]], s2))
    assert "1 of the 5 etcd members" in message and "only with 3 of 5 running, so at most 0 may go now" in message
    assert f"etcd also still lists {', '.join(sorted(n.name for n in five[3:]))}, which no longer run" in message
    assert "kubectl delete node" in message and s2.statement.code in message
    # Once the Nodes are deleted: the cluster shows 3 members, or the user confirms exactly that.
    live = LiveCluster(tuple(LiveNode(n.name, "v1.33.5+rke2r1", True, True, True) for n in five[:3]))
    for observed in (Observed(live=live), Observed(codes=frozenset({s2.statement.code}))):
        s3 = etcd.etcd_state(p2, observed, CID)
        assert texts(etcd.quorum_problems(p2, [planned(n) for n in five[:2]], s3)) == []
        assert [r.name for r in etcd.etcd_removed_after(p2, [planned(n) for n in five[:2]], s3, observed)] == \
            [five[2].name]


def test_the_cluster_read_counts_registered_etcd_nodes_and_not_ready_ones_as_down():
    three = [member(i) for i in range(3)]
    p = prev(three)
    live = LiveCluster((LiveNode(three[0].name, "v", True, True, True), LiveNode(three[1].name, "v", True, True, False),
                        LiveNode(three[2].name, "v", True, True, True)))
    state = etcd.etcd_state(p, Observed(live=live), CID)
    assert state.exact and state.down == (three[1].name,)
    # One member is down: removing a healthy one leaves 1 of 3.
    assert texts(etcd.quorum_problems(p, [planned(three[0]), planned(three[1])], state))
    # Removing the one that is down loses nothing.
    assert texts(etcd.quorum_problems(p, [planned(three[0]), planned(three[2])], state)) == []


def test_removed_members_addresses_are_never_handed_to_new_nodes():
    from rke_aws.plan.network import PlannedSubnet
    from rke_aws.plan.nodes import plan_nodes

    cfg = stack_config(servers=1, agents=1)
    subnets = [PlannedSubnet("private", 0, "us-west-2a", "10.0.64.0/19"), PlannedSubnet("public", 0, "us-west-2a", "10.0.0.0/19")]
    first = plan_nodes(cfg, subnets)
    server = first[0]
    # The server pool was removed earlier and its member is still listed; a new server pool takes its block.
    agent = member(0, "agents", etcd=False, ip=first[1].private_ip, block=1)
    assert agent.name == first[1].name
    p = state([agent], etcd_members_removed=(RemovedMember(name=server.name, private_ip=server.private_ip),))
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
    problems = texts(versions.version_problems(prev([member(0)]), "rke2", new))
    assert (problems[0] if problems else None) is None if refused is None else refused in problems[0]


def test_the_two_merge_sequence_is_refused_until_the_first_is_known_complete():
    """1.33 -> 1.34 accepted; 1.34 -> 1.35 in the next update refused while nothing says every node
    runs 1.34; a later 1.34 patch is fine (it raises no minor). The cluster came from a release with
    etcd 3.5.26 (v1.33.8), so the etcd 3.6 of 1.34 is no stepping-stone problem."""
    nodes = [member(0), member(1, "agents", etcd=False)]
    p = prev(nodes, kubernetes_version="v1.34.1+rke2r1", kubernetes_version_confirmed="v1.33.8+rke2r1")
    state = versions.version_state(p, Observed(), CID)
    assert not state.complete and state.confirmed == "v1.33.8+rke2r1" and state.servers_minor == 33
    (message,) = texts(versions.version_problems(p, "rke2", "v1.35.0+rke2r1", state, Observed()))
    assert "the last change from v1.33.8+rke2r1 to v1.34.1+rke2r1 is not known complete" in message
    assert state.statement.code in message and "kubectl get nodes" in message and "get plans" in message
    assert texts(versions.version_problems(p, "rke2", "v1.34.2+rke2r1", state, Observed())) == []
    # The cluster says: one node is behind.
    live = LiveCluster((LiveNode(nodes[0].name, "v1.34.1+rke2r1", True, True, True),
                        LiveNode(nodes[1].name, "v1.33.8+rke2r1", False, False, True)))
    read = versions.version_state(p, Observed(live=live), CID)
    assert not read.complete and read.lagging == {nodes[1].name: "v1.33.8+rke2r1"} and read.servers_minor == 34
    assert nodes[1].name in texts(versions.version_problems(p, "rke2", "v1.35.0+rke2r1", read, Observed(live=live)))[0]
    # Every node on 1.34.1, read or confirmed: the next minor is accepted.
    done = LiveCluster(tuple(LiveNode(n.name, "v1.34.1+rke2r1", n.is_etcd, n.is_etcd, True) for n in nodes))
    for observed in (Observed(live=done), Observed(codes=frozenset({state.statement.code}))):
        ok = versions.version_state(p, observed, CID)
        assert ok.complete and texts(versions.version_problems(p, "rke2", "v1.35.0+rke2r1", ok, observed)) == []


def test_the_etcd_stepping_stone_is_judged_from_what_every_node_runs_while_a_change_rolls_out():
    """v1.33.5 (etcd 3.5.21) -> v1.33.10+rke2r3 (etcd 3.5.26), not yet complete, then the patch
    v1.33.11 (etcd 3.6): the last configured release carries 3.5.26, but nodes still on v1.33.5 would go
    straight to 3.6 (rancher/rke2-docs release-notes v1.33.X.md: no safe path from 3.5 to 3.6 but
    through 3.5.26). A patch of the minor being rolled out is otherwise accepted."""
    nodes = [member(0), member(1, "agents", etcd=False)]
    rolling = prev(nodes, kubernetes_version="v1.33.10+rke2r3", kubernetes_version_confirmed="v1.33.5+rke2r1")
    state = versions.version_state(rolling, Observed(), CID)
    assert not state.complete and state.confirmed == "v1.33.5+rke2r1"
    (message,) = texts(versions.version_problems(rolling, "rke2", "v1.33.11+rke2r1", state, Observed()))
    assert "the cluster runs v1.33.5+rke2r1" in message and "v1.33.10+rke2r3 (etcd 3.5.26) first" in message
    # Once every node is known to run v1.33.10+rke2r3, the etcd 3.6 patch follows it.
    done = versions.version_state(rolling, Observed(codes=frozenset({state.statement.code})), CID)
    assert done.complete and texts(versions.version_problems(rolling, "rke2", "v1.33.11+rke2r1", done, Observed())) == []
    # Nothing known about what runs: a move onto etcd 3.6 waits for the last change to complete.
    unknown = versions.VersionState("v1.33.10+rke2r3", False, None, None, state.statement)
    (wait,) = texts(versions.version_problems(rolling, "rke2", "v1.33.11+rke2r1", unknown, Observed()))
    assert "is not known complete" in wait and "only from 3.5.26" in wait


def test_kubelet_versions_as_each_distribution_reports_them():
    assert releases.runs_version("v1.34.1+rke2r1", "v1.34.1+rke2r1")
    assert not releases.runs_version("v1.34.1+rke2r1", "v1.34.1+rke2r2")
    assert not releases.runs_version("v1.34.0+rke2r1", "v1.34.1+rke2r1")
    assert releases.runs_version("v1.32.5", "v1.32.5-rancher1-1")  # RKE1 kubelets carry no -rancherN-N
    assert not releases.runs_version("v1.32.4", "v1.32.5-rancher1-1")
    assert not releases.runs_version("", "v1.32.5-rancher1-1")


def test_outputs_from_before_the_confirmation_are_judged_by_where_the_ccm_was_held():
    held = prev([member(0)], kubernetes_version="v1.34.1+rke2r1", kubernetes_version_confirmed=None, version_recorded=False,
                ccm_image="registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.4")
    assert not versions.version_state(held, Observed(), CID).complete
    moved = prev([member(0)], kubernetes_version="v1.34.1+rke2r1", kubernetes_version_confirmed=None, version_recorded=False,
                 ccm_image="registry.k8s.io/provider-aws/cloud-controller-manager:v1.34.3")
    assert versions.version_state(moved, Observed(), CID).complete


def test_a_confirmation_code_names_one_statement():
    a, b = Statement("version", "every node runs A"), Statement("version", "every node runs B")
    assert a.code != b.code and a.code.startswith("version-") and len(a.code) == len("version-") + 10
    assert parse_codes(f" {a.code},{b.code}  x") == {a.code, b.code, "x"}
    assert a.code in a.how() and "every node runs A" in a.how()


# ---- what a running stack must not change -----------------------------------------------------

def test_a_new_cluster_id_is_refused_naming_the_running_cluster():
    p = prev([member(0)])
    assert texts(cluster_id.cluster_id_problems(p, CID, "stack")) == []
    (message,) = texts(cluster_id.cluster_id_problems(p, "other", "stack"))
    assert "runs cluster 'c'" in message and "pulumi config set clusterId c" in message
    assert "defaults to the stack name" not in message
    (renamed,) = texts(cluster_id.cluster_id_problems(p, "renamed", "renamed"))
    assert "defaults to the stack name" in renamed
    assert texts(cluster_id.cluster_id_problems(None, "x", "x")) == [] and texts(cluster_id.cluster_id_problems(prev([]), CID, "s")) == []


def test_a_region_change_is_refused():
    p = state([member(0)], region="us-west-2")
    assert texts(cluster_id.region_problems(p, "us-west-2")) == []
    assert "runs its cluster in us-west-2" in texts(cluster_id.region_problems(p, "eu-west-1"))[0]


def test_role_changes_of_running_pools_are_refused_and_emptied_pools_are_free():
    p = prev([member(0), member(1), member(0, "agents", etcd=False, ip="10.0.4.10")])
    assert texts(nodes.role_problems(p, [pool("servers", ("controlplane", "etcd"), 2), pool("agents", ("worker",), 1)])) == []
    (message,) = texts(nodes.role_problems(p, [pool("servers", ("controlplane", "etcd"), 2),
                                           pool("agents", ("controlplane", "etcd", "worker"), 1)]))
    assert message.startswith("rke-aws:nodePools[agents].roles:") and "add one" in message
    # Order of roles does not matter; a pool whose running nodes all go may take new roles.
    assert texts(nodes.role_problems(p, [pool("servers", ("etcd", "controlplane"), 2), pool("agents", ("etcd",), 0)])) == []


# ---- snapshots --------------------------------------------------------------------------------

def test_snapshot_settings_reach_running_servers_only_by_hand_and_keep_their_grant():
    running = snap("b", "c", 6, 28)
    p = prev([member(0)], etcd_snapshots_running=running)
    same = backups.snapshot_transition(p, snap("b", "c", 6, 28), Observed(), CID, "rke2")
    assert same.warning is None and same.running == running and same.grant == (running,)
    moved = snap("b", "elsewhere", 6, 28)
    t = backups.snapshot_transition(p, moved, Observed(), CID, "rke2", "in /etc/rancher/rke2/config.yaml set x")
    assert t.running == running and set(t.grant) == {running, moved}
    assert "s3://b/c" in t.warning.render() and "now configures snapshots to s3://b/elsewhere" in t.warning.render()
    assert t.statement.code in t.warning.render()
    assert "one at a time" in t.warning.render() and "set x" in t.warning.render()
    done = backups.snapshot_transition(p, moved, Observed(codes=frozenset({t.statement.code})), CID, "rke2")
    assert done.running == moved and done.grant == (moved,) and done.warning is None
    off = backups.snapshot_transition(p, None, Observed(), CID, "rke2")
    assert off.running == running and off.grant == (running,) and "no S3 snapshots" in off.warning.render()
    interval = backups.snapshot_transition(p, snap("b", "c", 12, 28), Observed(), CID, "rke")
    assert interval.warning and "`rke up`" in interval.warning.render()
    # Outputs from before the interval and retention were exported: a location match is the same.
    legacy = prev([member(0)], etcd_snapshots_running=snap("b", "c"))
    assert backups.snapshot_transition(legacy, snap("b", "c", 6, 28), Observed(), CID, "rke2").warning is None


def test_a_removed_nodes_address_is_not_handed_to_a_new_node_in_the_same_update():
    """EC2 frees an address only once its instance is gone, after the new ones were created."""
    from rke_aws.plan.network import PlannedSubnet
    from rke_aws.plan.nodes import plan_nodes

    subnets = [PlannedSubnet("private", 0, "us-west-2a", "10.0.64.0/19"), PlannedSubnet("public", 0, "us-west-2a", "10.0.0.0/19")]
    first = {n.index: n for n in plan_nodes(stack_config(servers=1, agents=2), subnets) if n.pool.name == "agents"}
    # Agents 0 and 5 run, 5 at the pool's second slot (1-4 went earlier). This update: count 2, so
    # 5 goes and 1 comes, and the lowest free slot is the one 5 still holds.
    p = state([member(i, "agents", etcd=False, ip=n.private_ip, block=n.ip_block) for i, n in ((0, first[0]), (5, first[1]))])
    again = {n.index: n for n in plan_nodes(stack_config(servers=1, agents=2), subnets, p) if n.pool.name == "agents"}
    assert again[0].private_ip == first[0].private_ip
    assert again[1].private_ip not in {first[0].private_ip, first[1].private_ip}, "the leaving node's address"


# ---- what each state says, field by field -----------------------------------------------------

def test_version_state_fields_on_every_path():
    nodes = [member(0), member(1, "agents", etcd=False)]
    none = versions.version_state(None, Observed(), CID)
    assert (none.target, none.complete, none.confirmed, none.servers_minor) == (None, True, None, None)
    done = versions.version_state(prev(nodes), Observed(), CID)
    assert (done.target, done.complete, done.confirmed, done.servers_minor) == ("v1.33.5+rke2r1", True, "v1.33.5+rke2r1", 33)
    assert done.how == "recorded by an earlier update" and done.statement.topic == "version"
    assert nodes[0].name in done.statement.text and nodes[1].name in done.statement.text
    rolling = prev(nodes, kubernetes_version="v1.34.1+rke2r1", kubernetes_version_confirmed="v1.33.5+rke2r1")
    unknown = versions.version_state(rolling, Observed(), CID)
    assert (unknown.complete, unknown.confirmed, unknown.servers_minor, unknown.how) == (False, "v1.33.5+rke2r1", 33, "")
    blind = versions.version_state(prev(nodes, kubernetes_version="v1.34.1+rke2r1", kubernetes_version_confirmed=None), Observed(), CID)
    assert (blind.complete, blind.confirmed, blind.servers_minor) == (False, None, 33)  # one minor back at most
    vouched = versions.version_state(rolling, Observed(codes=frozenset({unknown.statement.code})), CID)
    assert (vouched.target, vouched.complete, vouched.confirmed, vouched.servers_minor, vouched.how) == \
        ("v1.34.1+rke2r1", True, "v1.34.1+rke2r1", 34, "confirmed by you")
    # RKE1: a controlplane-only node is a server; a worker that lags does not hold the CCM back.
    live = LiveCluster((LiveNode("cp", "v1.34.1", False, True, True), LiveNode("etcd", "v1.34.1", True, False, True),
                        LiveNode("w", "v1.33.9", False, False, True)),
                       plans=(history_plan("rke2-agent", ("w",)),))
    read = versions.version_state(rolling, Observed(live=live), CID)
    assert (read.complete, read.confirmed, read.servers_minor, read.lagging, read.applying, read.how) == \
        (False, "v1.33.5+rke2r1", 34, {"w": "v1.33.9"}, ("w",), "read from the cluster")
    slow = LiveCluster((LiveNode("cp", "v1.33.9", False, True, True), LiveNode("etcd", "v1.34.1", True, False, True)))
    assert versions.version_state(rolling, Observed(live=slow), CID).servers_minor == 33
    full = LiveCluster((LiveNode("cp", "v1.34.1+rke2r1", False, True, True),))
    assert versions.version_state(rolling, Observed(live=full), CID).confirmed == "v1.34.1+rke2r1"
    assert read.target == "v1.34.1+rke2r1" and read.statement == unknown.statement
    agents_only = LiveCluster((LiveNode("w", "v1.34.1+rke2r1", False, False, True),))
    assert versions.version_state(rolling, Observed(live=agents_only), CID).servers_minor is None
    assert vouched.statement == unknown.statement and unknown.target == "v1.34.1+rke2r1"
    patch = versions.version_state(prev(nodes, kubernetes_version="v1.33.9+rke2r1", kubernetes_version_confirmed="v1.33.5+rke2r1"),
                                  Observed(), CID)
    assert patch.servers_minor == 33 and not patch.complete


def history_plan(name: str, applying: tuple[str, ...]):
    from rke_aws.plan.running import LivePlan

    return LivePlan(name, "v1.34.1+rke2r1", "v1.34.1-rke2r1", False, applying)


def test_not_complete_says_what_lags_and_how_to_go_on():
    rolling = prev([member(0)], kubernetes_version="v1.34.1+rke2r1", kubernetes_version_confirmed="v1.33.5+rke2r1")
    lagging = {f"n{i}": "v1.33.5+rke2r1" for i in range(8)}
    state = versions.VersionState("v1.34.1+rke2r1", False, "v1.33.5+rke2r1", 33, Statement("version", "x"),
                                 lagging=lagging, applying=("n0",))
    text = versions.not_complete(state, Observed(), "rke2").text
    assert "n0 (v1.33.5+rke2r1)" in text and "and 2 more" in text and "applying on n0" in text
    assert "n5 (" in text and "n6 (" not in text and "n7" not in text
    seven = versions.VersionState("v1.34.1+rke2r1", False, None, 33, None, lagging=dict(list(lagging.items())[:7]))
    assert "and 1 more" in versions.not_complete(seven, Observed(), "rke2").text
    six = versions.VersionState("v1.34.1+rke2r1", False, None, 33, None, lagging=dict(list(lagging.items())[:6]))
    text6 = versions.not_complete(six, Observed(), "rke2").text
    assert "more" not in text6 and "applying" not in text6
    assert versions.not_complete(versions.VersionState("v", False, None, 33), Observed(), "rke2").text.count("`pulumi up` again") == 1
    blind = versions.version_state(rolling, Observed(unreadable="timed out"), CID)
    rke2 = versions.not_complete(blind, Observed(unreadable="timed out"), "rke2").text
    assert "could not be read (timed out)" in rke2 and "get plans" in rke2 and blind.statement.code in rke2
    rke1 = versions.not_complete(blind, Observed(), "rke").text
    assert "`rke up` ran with it" in rke1 and "get plans" not in rke1 and "no kubeconfig reaches the cluster" in rke1
    assert Observed().no_read() == "no kubeconfig reaches the cluster"


def test_version_problems_edges():
    assert texts(versions.version_problems(prev([member(0)], kubernetes_version="nonsense"), "rke2", "v1.34.0+rke2r1")) == []
    assert texts(versions.version_problems(prev([member(0)]), "rke2", "garbage")) == []
    assert texts(versions.version_problems(prev([member(0)], kubernetes_version=None), "rke", "v1.32.5-rancher1-1")) == []
    (skip,) = texts(versions.version_problems(prev([member(0)]), "rke2", "v1.35.0+rke2r1"))
    assert "set v1.34.x first" in skip and "then v1.35.x" in skip and "runs v1.33.5+rke2r1" in skip
    (down,) = texts(versions.version_problems(prev([member(0)]), "rke2", "v1.33.4+rke2r1"))
    assert "set kubernetesVersion back to v1.33.5+rke2r1" in down
    rke1 = state([member(0)], distribution="rke", kubernetes_version="v1.34.1-rancher1-1", kubernetes_version_confirmed=None)
    unknown = versions.version_state(rke1, Observed(), CID)
    (msg,) = texts(versions.version_problems(rke1, "rke", "v1.35.0-rancher1-1", unknown, Observed()))
    assert "the last change to v1.34.1-rancher1-1 is not known complete" in msg and "`rke up` ran with it" in msg
    assert releases.parse_version("v1.33.5") == (33, 5, 0, 0) and releases.parse_version("x") is None
    assert releases.image_minor(None) is None and releases.image_minor("repo:v1.34.3") == 34


def test_etcd_state_fields_on_every_path():
    assert etcd.etcd_state(None, Observed(), CID) == EtcdState((), (), True)
    three = [member(i) for i in range(3)]
    gone = RemovedMember(name=member(7).name, private_ip=member(7).private_ip)
    p = prev(three, etcd_members_removed=(gone,))
    blind = etcd.etcd_state(p, Observed(), CID)
    assert (blind.listed, blind.down, blind.exact, blind.how) == (
        tuple(sorted([n.name for n in three] + [gone.name])), (gone.name,), False, "this stack's last outputs")
    assert blind.statement.topic == "etcd" and all(n.name in blind.statement.text for n in three)
    vouched = etcd.etcd_state(p, Observed(codes=frozenset({blind.statement.code})), CID)
    assert (vouched.listed, vouched.down, vouched.exact, vouched.how) == (
        tuple(n.name for n in three), (), True, "your confirmation") and vouched.statement == blind.statement
    live = LiveCluster(tuple(LiveNode(n.name, "v", True, True, True) for n in three) +
                       (LiveNode(gone.name, "v", True, True, True),))  # still Ready for a moment after termination
    read = etcd.etcd_state(p, Observed(live=live), CID)
    assert (read.down, read.exact, read.how, read.statement) == ((gone.name,), True, "the cluster", blind.statement)
    # Pending members stay pending until known gone.
    assert [r.name for r in etcd.etcd_removed_after(p, [planned(n) for n in three], blind, Observed())] == [gone.name]
    assert [r.private_ip for r in etcd.etcd_removed_after(p, [planned(n) for n in three], blind, Observed())] == \
        [gone.private_ip]


def test_quorum_messages_name_what_goes_and_the_way():
    five = [member(i) for i in range(5)]
    p = prev(five)
    # No state given: the last outputs, taken as exact (two of five may go).
    assert texts(etcd.quorum_problems(p, [planned(n) for n in five[:3]])) == []
    (one,) = texts(etcd.quorum_problems(p, [planned(n) for n in five[:3]],
                                     EtcdState(tuple(n.name for n in five), (), False, Statement("etcd", "x"))))
    assert "at most one per update" in one and five[3].name in one and five[4].name in one and five[0].name not in one
    assert "None" not in one and Statement("etcd", "x").code in one
    (lost,) = texts(etcd.quorum_problems(p, [planned(n) for n in five[:2]]))
    assert "None" not in lost and "single-member" not in lost and "one member per `pulumi up`" in lost
    assert "network" not in lost and "sshKeyName" not in lost
    (single,) = texts(etcd.quorum_problems(prev(five[:1]), []))
    assert "single-member cluster" in single
    (moved,) = texts(etcd.quorum_problems(prev(five[:3]), [planned(n, ip=f"10.9.0.{i}") for i, n in enumerate(five[:3])]))
    assert "network" in moved and "sshKeyName" not in moved and "lower the pool's count" not in moved


def test_small_pieces():
    s = snap("b", "c", 6, 28)
    assert s.same_as(snap("b", "c", None, None)) and not s.same_as(snap("b", "c", 6, 10))
    assert not s.same_as(snap("b", "c", 12, 28)) and not snap("b", "c", 6, None).same_as(snap("b", "d", 6, 28))
    assert Snapshots.from_location("s3://bucket/a/b") == snap("bucket", "a/b")
    assert Snapshots.from_location("https://x") is None and Snapshots.from_location(None) is None
    assert Snapshots.model_validate(s.output()) == s and Snapshots.model_validate({"bucket": "b"}) == snap("b", "")
    assert s.output() == {"bucket": "b", "folder": "c", "intervalHours": 6, "retention": 28, "kmsKeyArn": None}
    assert backups._settings(None) == "no S3 snapshots"
    assert backups._settings(s) == "snapshots to s3://b/c every 6 h, 28 kept"
    assert backups._settings(snap("b", "c")) == "snapshots to s3://b/c"
    (msg,) = texts(cluster_id.cluster_id_problems(prev([member(0), member(1)]), "x", "s"))
    assert "2 nodes, 2 etcd members" in msg


def test_snapshot_transition_edges():
    s = snap("b", "c", 6, 28)
    assert backups.snapshot_transition(None, s, Observed(), CID, "rke2") == backups.SnapshotTransition(s, (s,))
    assert backups.snapshot_transition(prev([]), None, Observed(), CID, "rke2") == backups.SnapshotTransition(None, ())
    off = prev([member(0)], etcd_snapshots_running=None)
    assert backups.snapshot_transition(off, None, Observed(), CID, "rke2") == backups.SnapshotTransition(None, ())
    on = backups.snapshot_transition(off, s, Observed(), CID, "rke2", "set keys")
    assert on.running is None and on.grant == (s,) and "etcdSnapshotsRunning" not in on.warning.render()
    assert "runs snapshots to s3://b/c every 6 h, 28 kept" in on.statement.text and on.statement.topic == "snapshots"
    done = backups.snapshot_transition(off, s, Observed(codes=frozenset({on.statement.code})), CID, "rke2")
    assert done == backups.SnapshotTransition(s, (s,), statement=on.statement)
    stopping = backups.snapshot_transition(prev([member(0)], etcd_snapshots_running=s), None, Observed(), CID, "rke2")
    assert "etcdSnapshotsRunning" in stopping.warning.render() and "take snapshots to s3://b/c" in stopping.warning.render()
    assert "now configures no S3 snapshots" in stopping.warning.render()
    stopped = backups.snapshot_transition(prev([member(0)], etcd_snapshots_running=s), None,
                                          Observed(codes=frozenset({stopping.statement.code})), CID, "rke2")
    assert stopped.running is None and stopped.grant == ()


def test_a_running_node_outside_its_zones_new_subnet_is_placed_again():
    """A changed subnet CIDR (network.vpcCidr or the subnet CIDRs): the old address is not in it, so
    the node is planned anew (a new instance), which the quorum guard then counts."""
    from rke_aws.plan.network import PlannedSubnet
    from rke_aws.plan.nodes import plan_nodes

    old = [PlannedSubnet("private", 0, "us-west-2a", "10.0.64.0/19"), PlannedSubnet("public", 0, "us-west-2a", "10.0.0.0/19")]
    new = [PlannedSubnet("private", 0, "us-west-2a", "10.1.64.0/19"), PlannedSubnet("public", 0, "us-west-2a", "10.1.0.0/19")]
    cfg = stack_config(servers=1, agents=1)
    first = plan_nodes(cfg, old)
    p = state([member(n.index, n.pool.name, etcd=n.pool.is_etcd, ip=n.private_ip, block=n.ip_block) for n in first])
    again = plan_nodes(cfg, new, p)
    assert all(n.private_ip.startswith("10.1.") for n in again)
    assert etcd.etcd_changes(p, [n.member(None) for n in again]) == ([], [first[0].name])
