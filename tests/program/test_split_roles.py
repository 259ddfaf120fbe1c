"""Split RKE2 server roles: etcd-only and control-plane-only server pools (issue 26, feature 5).

Upstream facts encoded here (not derived from components/):
- rke2-docs docs/install/server_roles.md (13f732fb): an etcd-only server sets disable-apiserver,
  disable-controller-manager and disable-scheduler; a control-plane-only server sets disable-etcd and
  `server: https://<etcd node>:9345`; "A dedicated control-plane node cannot be the first server".
- rke2-docs docs/datastore/embedded.md: disable-etcd without `server` gives a single-node SQLite server.
- k3s pkg/server/server.go: node-role.kubernetes.io/control-plane (and master) only where the apiserver
  runs, node-role.kubernetes.io/etcd where etcd runs. RKE2 puts no role taints (rke2-docs install/ha.md).
- A Plan's nodeSelector is a LabelSelector: matchExpressions are ANDed.
"""

# split: this module mixes levels (issue 33 §7.2); the program runs (registrations, user data) -> tests/program.

from __future__ import annotations

import copy
import json

import pulumi
import pytest
import yaml

from rke_aws.node import rke2_config as rc
from rke_aws.plan import cluster_documents
from rke_aws.settings.rules import pools as pools_rules
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support.configs import config_problems as problems_of
from tests.support.configs import parse_config as parse
from tests.support.configs import set_key
from tests.support.rke2_keys import RKE2_SERVER_KEYS
from tests.support.runs import run_stack_cached
from tests.support.userdata import cloud_config, written_file

STACK = "rke2-split"
CP = "node-role.kubernetes.io/control-plane"
MASTER = "node-role.kubernetes.io/master"
ETCD = "node-role.kubernetes.io/etcd"
# Labels per node kind, from k3s pkg/server/server.go (master: before v1.34).
LABELS = {
    "all-in-one": {CP: "true", MASTER: "true", ETCD: "true"},
    "etcd-only": {ETCD: "true"},
    "control-plane-only": {CP: "true", MASTER: "true"},
    "agent": {},
}
ETCD_ONLY_FLAGS = {"disable-apiserver", "disable-controller-manager", "disable-scheduler"}


def split_config(pools: list[dict], endpoint: str = "nlb") -> dict:
    cfg = copy.deepcopy(harness.stack_config(STACK))
    cfg.pop("rke-aws:kubeconfig", None)
    set_key(cfg, "nodePools", pools)
    return set_key(cfg, "controlPlane", {"endpoint": endpoint})


def pool(name: str, roles: list[str], count: int) -> dict:
    return {"name": name, "roles": roles, "count": count, "instanceType": "m6i.large"}


# ---- configuration ------------------------------------------------------------------------------

@pytest.mark.parametrize("roles", [["etcd"], ["controlplane"], ["etcd", "worker"], ["controlplane", "worker"]])
def test_rke2_takes_every_split_server_pool_with_the_nlb(roles):
    other = ["controlplane"] if "etcd" in roles else ["etcd"]
    cfg = parse(split_config([pool("a", roles, 1), pool("b", other, 3), pool("w", ["worker"], 1)]))
    assert [p.roles for p in cfg.node_pools][0] == tuple(r for r in ("controlplane", "etcd", "worker") if r in roles)


@pytest.mark.parametrize("roles", [["etcd"], ["controlplane"]])
def test_split_roles_behind_one_dns_name_are_refused_naming_the_key(roles):
    other = ["controlplane"] if "etcd" in roles else ["etcd"]
    problems = problems_of(split_config([pool("a", roles, 1), pool("b", other, 1), pool("w", ["worker"], 1)], "dns"))
    assert len(problems) == 1 and problems[0].startswith("rke-aws:controlPlane.endpoint: 'dns' cannot serve split "
                                                         "RKE2 server roles (pools a, b)"), problems


def test_all_in_one_servers_keep_the_dns_endpoint():
    parse(split_config([pool("s", ["controlplane", "etcd"], 3), pool("w", ["worker"], 1)], "dns"))


def test_a_split_cluster_still_needs_etcd_and_a_control_plane():
    assert "rke-aws:nodePools: no node has the etcd role; add a pool with etcd and count >= 1" in \
        problems_of(split_config([pool("c", ["controlplane"], 2), pool("w", ["worker"], 1)]))
    assert "rke-aws:nodePools: no node has the controlplane role; add a pool with controlplane and count >= 1" in \
        problems_of(split_config([pool("e", ["etcd"], 3), pool("w", ["worker"], 1)]))


def test_rke1_etcd_only_pools_are_unchanged_by_the_rke2_rule():
    cfg = copy.deepcopy(harness.stack_config("rke-prod"))
    cfg.pop("rke-aws:kubeconfig", None)
    assert pools_rules.split_server_pools("rke", parse(cfg).node_pools) == []


# ---- the fixture stack: nodes, configs, endpoint, IAM ------------------------------------------

def nodes_by_kind(run: harness.ProgramRun) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {"etcd": [], "cp": [], "agent": []}
    for n in run.outputs["nodes"]:
        kind = "etcd" if n["roles"] == ["etcd"] else "cp" if n["roles"] == ["controlplane"] else "agent"
        out[kind].append(n)
    return out


def rke2_config_of(run: harness.ProgramRun, node: dict) -> dict:
    inst = next(i for i in run.of_type("aws:ec2/instance:Instance") if i.inputs["privateIp"] == node["privateIp"])
    return yaml.safe_load(written_file(cloud_config(inst), rc.RKE2_CONFIG_PATH))


def bootstrap_of(run: harness.ProgramRun, node: dict) -> str:
    from rke_aws.node import scripts
    inst = next(i for i in run.of_type("aws:ec2/instance:Instance") if i.inputs["privateIp"] == node["privateIp"])
    return written_file(cloud_config(inst), scripts.BOOTSTRAP_PATH)


def test_fixture_pools_list_the_control_plane_first():
    """So the test below shows the initialiser is chosen by role, not by position."""
    pools = json.loads(harness.stack_config(STACK)["rke-aws:nodePools"])
    assert pools[0]["roles"] == ["controlplane"] and pools[1]["roles"] == ["etcd"]


def test_the_initialiser_is_an_etcd_server_and_probes_only_etcd_servers():
    run = run_stack_cached(STACK)
    kinds = nodes_by_kind(run)
    init = [n for n in run.outputs["nodes"] if "INITIALISER='yes'" in bootstrap_of(run, n)]
    assert init == [kinds["etcd"][0]], [n["name"] for n in init]
    assert "server" not in rke2_config_of(run, init[0])
    peers = next(line for line in bootstrap_of(run, init[0]).splitlines() if line.startswith("PEER_IPS="))
    assert sorted(peers.split("=", 1)[1].strip("'").split()) == sorted(n["privateIp"] for n in kinds["etcd"][1:])


def test_etcd_only_and_control_plane_only_configs_follow_rke2s_server_roles():
    run = run_stack_cached(STACK)
    reg = run.outputs["rke2RegistrationAddress"]
    kinds = nodes_by_kind(run)
    for n in kinds["etcd"]:
        doc = rke2_config_of(run, n)
        assert set(doc) <= RKE2_SERVER_KEYS, n["name"]
        assert {k for k, v in doc.items() if k.startswith("disable-") and v} == ETCD_ONLY_FLAGS | {"disable-cloud-controller"}
        assert doc["etcd-s3"] is True, f"{n['name']}: etcd members take the snapshots"
    for n in kinds["cp"]:
        doc = rke2_config_of(run, n)
        assert set(doc) <= RKE2_SERVER_KEYS, n["name"]
        assert doc["disable-etcd"] is True and doc["server"] == reg, n["name"]
        assert not ETCD_ONLY_FLAGS & set(doc) and "etcd-s3" not in doc, n["name"]
        assert "KIND='server'" in bootstrap_of(run, n)


def test_a_control_plane_only_server_never_initialises():
    """disable-etcd without `server:` is a single-node SQLite server (rke2-docs datastore/embedded.md)."""
    from rke_aws.plan.network import PlannedSubnet
    from rke_aws.plan.nodes import PlannedNode

    cfg = parse(split_config([pool("c", ["controlplane"], 1), pool("e", ["etcd"], 1), pool("w", ["worker"], 1)]))
    node = PlannedNode(pool=cfg.node_pools[0], index=0, resource_name="c-0", private_ip="10.90.16.10",
                       name="ip-10-90-16-10.eu-west-1.compute.internal", az="eu-west-1a", az_index=0,
                       subnet=PlannedSubnet("private", 0, "eu-west-1a", "10.90.0.0/18"), is_first_server=True, rke2=True)
    boot = rc.Rke2Boot(region="eu-west-1", ssm_host="ssm.eu-west-1.amazonaws.com", install_version="v1.33.5+rke2r1",
                       endpoint="api.x.rke-aws.internal", server_ips=(), token_parameter="t", marker_parameter="m")
    with pytest.raises(ValueError, match="cannot initialise"):
        rc.rke2_config(node, boot)


def test_the_nlb_sends_the_api_to_api_servers_and_joins_to_etcd_supervisors():
    run = run_stack_cached(STACK)
    kinds = nodes_by_kind(run)
    groups = {tg.state["arn"]: int(tg.inputs["port"]) for tg in run.of_type("aws:lb/targetGroup:TargetGroup")}
    targets: dict[int, list[str]] = {}
    for a in run.of_type("aws:lb/targetGroupAttachment:TargetGroupAttachment"):
        targets.setdefault(groups[a.inputs["targetGroupArn"]], []).append(a.inputs["targetId"])
    assert sorted(targets[6443]) == sorted(n["privateIp"] for n in kinds["cp"])
    assert sorted(targets[9345]) == sorted(n["privateIp"] for n in kinds["etcd"])


def role_policies(run: harness.ProgramRun, kind: str) -> dict[str, str]:
    cid = run.outputs["clusterId"]
    return {r.name[len(f"{cid}-{kind}-"):]: r.inputs["policy"] for r in run.of_type("aws:iam/rolePolicy:RolePolicy")
            if r.name.startswith(f"{cid}-{kind}-")}


def test_etcd_only_servers_get_their_own_role_with_snapshots_and_no_ccm_permissions():
    from rke_aws.aws import iam_policies

    run = run_stack_cached(STACK)
    cid = run.outputs["clusterId"]
    profiles = {r.name: r.state["name"] for r in run.of_type("aws:iam/instanceProfile:InstanceProfile")}
    for n in nodes_by_kind(run)["etcd"]:
        inst = next(i for i in run.of_type("aws:ec2/instance:Instance") if i.inputs["privateIp"] == n["privateIp"])
        assert inst.inputs["iamInstanceProfile"] == profiles[f"{cid}-etcd"], inst.urn
    etcd, worker = role_policies(run, "etcd"), role_policies(run, "worker")
    assert "etcd-snapshots" in etcd and "etcd-snapshots" not in role_policies(run, "controlplane")
    assert "etcd-snapshots" not in worker, "every agent could read the etcd snapshots"
    # The cloud-provider policy is the worker's read-only one: none of the CCM's write calls.
    actions = set(iam_policies.document_actions(json.loads(etcd["cloud-provider"])))
    assert actions == set(iam_policies.worker_actions())
    assert not actions & {"ec2:CreateSecurityGroup", "elasticloadbalancing:CreateLoadBalancer", "ec2:CreateTags"}
    assert json.loads(etcd["join-token"]) == json.loads(role_policies(run, "controlplane")["join-token"])


def test_clusters_without_etcd_only_servers_declare_no_etcd_role():
    run = run_stack_cached("rke2-govcloud")
    assert not [r for r in run.of_type("aws:iam/role:Role") if r.name.endswith("-etcd")]


# ---- placement of the CCM and the EBS CSI controller, upgrade Plans ------------------------------

def selects(selector: dict, labels: dict) -> bool:
    """A LabelSelector (matchLabels / matchExpressions, ANDed) against a node's labels."""
    ok = all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        ok = ok and {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values,
                     "Exists": key in labels, "DoesNotExist": key not in labels}[op]
    return ok


def test_ccm_and_ebs_csi_controller_land_only_where_the_control_plane_runs():
    from rke_aws.cluster import ebs_csi
    from rke_aws.plan import ccm_values

    cfg = parse(split_config(json.loads(harness.stack_config(STACK)["rke-aws:nodePools"])))
    ccm = ccm_values.helm_values("rke2", cfg.node_pools, False, (), "img:v1").values["nodeSelector"]
    ebs = ebs_csi.values("rke2", cfg.node_pools, "c", "eu-west-1")["controller"]["nodeSelector"]
    for selector in (ccm, ebs):
        assert selects({"matchLabels": selector}, LABELS["control-plane-only"])
        assert selects({"matchLabels": selector}, LABELS["all-in-one"])
        assert not selects({"matchLabels": selector}, LABELS["etcd-only"])
        assert not selects({"matchLabels": selector}, LABELS["agent"])


@pytest.mark.parametrize("etcd_only", [False, True])
def test_every_node_kind_is_upgraded_by_exactly_one_plan(etcd_only):
    plans = {p["metadata"]["name"]: p["spec"] for p in cluster_documents.plans("v1.33.5+rke2r1", etcd_only)}
    kinds = LABELS if etcd_only else {k: v for k, v in LABELS.items() if k != "etcd-only"}
    for kind, labels in kinds.items():
        chosen = [name for name, spec in plans.items() if selects(spec["nodeSelector"], labels)]
        assert len(chosen) == 1, f"{kind}: {chosen}"
        if kind != "agent":
            assert chosen != ["rke2-agent"], f"{kind} servers upgraded as agents"


def test_etcd_only_servers_go_after_the_api_servers_and_before_agents():
    plans = {p["metadata"]["name"]: p["spec"] for p in cluster_documents.plans("v1.33.5+rke2r1", True)}
    assert list(plans) == ["rke2-server", "rke2-etcd", "rke2-agent"]
    assert plans["rke2-etcd"]["prepare"]["args"] == ["prepare", "rke2-server"]
    assert plans["rke2-agent"]["prepare"]["args"] == ["prepare", "rke2-etcd"]
    assert plans["rke2-etcd"]["concurrency"] == 1 and plans["rke2-etcd"]["cordon"] is True


def test_plans_without_split_roles_are_those_of_before():
    """Running clusters without etcd-only servers see no Plan change."""
    plans = cluster_documents.plans("v1.33.5+rke2r1")
    assert [p["metadata"]["name"] for p in plans] == ["rke2-server", "rke2-agent"]
    assert plans[1]["spec"]["nodeSelector"] == {"matchExpressions": [{"key": CP, "operator": "DoesNotExist"}]}


def test_the_fixture_delivers_the_etcd_plan_through_manifests():
    run = run_stack_cached(STACK)
    plans = next(r for r in run.of_type("aws:ssm/parameter:Parameter") if r.inputs["name"].endswith("upgrade-plans.yaml"))
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(plans.inputs["insecureValue"])] == \
        ["rke2-server", "rke2-etcd", "rke2-agent"]


# ---- day 2 ----------------------------------------------------------------------------------------

def run(cfg: dict, previous: harness.ProgramRun | None = None) -> harness.ProgramRun:
    return harness.run_program(cfg, stack="split", previous_outputs=previous.outputs if previous else None)


def refused(cfg: dict, previous: harness.ProgramRun) -> str:
    mocks = MotoMocks(cfg["aws:region"])
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(cfg, stack="split", mocks=mocks, previous_outputs=previous.outputs)
    assert mocks.resources == [], "registered before refusing"
    return str(info.value)


@pytest.fixture(scope="module")
def running() -> tuple[dict, harness.ProgramRun]:
    cfg = split_config([pool("servers", ["controlplane", "etcd"], 1), pool("w", ["worker"], 1)])
    return cfg, run(cfg)


def test_a_running_pool_cannot_become_etcd_only(running):
    cfg, before = running
    cfg = set_key(copy.deepcopy(cfg), "nodePools", [pool("servers", ["etcd"], 1), pool("cp", ["controlplane"], 1),
                                                     pool("w", ["worker"], 1)])
    assert "rke-aws:nodePools[servers].roles: ['etcd'], but pool 'servers' runs 1 node(s) as ['controlplane', 'etcd']" \
        in refused(cfg, before)


def test_etcd_only_servers_join_a_running_cluster_one_per_update(running):
    cfg, before = running
    three = set_key(copy.deepcopy(cfg), "nodePools", json.loads(cfg["rke-aws:nodePools"]) + [pool("etcd", ["etcd"], 2)])
    assert "this update would add 2 etcd members at once (etcd-0, etcd-1)" in refused(three, before)
    one = set_key(copy.deepcopy(cfg), "nodePools", json.loads(cfg["rke-aws:nodePools"]) + [pool("etcd", ["etcd"], 1)])
    after = run(one, before)
    assert len(after.outputs["nodes"]) == 3
    # ... and control-plane-only servers, which are no etcd members, several at once.
    cps = set_key(copy.deepcopy(one), "nodePools", json.loads(one["rke-aws:nodePools"]) + [pool("cp", ["controlplane"], 2)])
    run(cps, after)


def test_all_in_one_servers_still_grow_as_before(running):
    """The one-member-per-update rule is for etcd-only pools: growing [controlplane, etcd] pools is as before."""
    cfg, before = running
    grown = set_key(copy.deepcopy(cfg), "nodePools", [pool("servers", ["controlplane", "etcd"], 3), pool("w", ["worker"], 1)])
    set_key(grown, "controlPlane", {"endpoint": "dns"})
    assert len(run(grown, before).outputs["nodes"]) == 4
