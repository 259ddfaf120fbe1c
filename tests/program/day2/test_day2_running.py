"""Day 2, judged against what runs: each case is base -> change (and sequences of two changes), the
previous run's outputs fed back as the stack's last outputs, with the cluster readable through a fake
API (components/plan/running.py's transport), unreadable, or vouched for with confirmClusterState.
Refusals come before any registration (tests.support.day2.refused asserts nothing was registered).
"""

# split: this module mixes levels (issue 33 §7.2); the pure tests -> tests/unit/plan.

from __future__ import annotations

import copy
import json
import re

import pulumi
import pytest

from rke_aws.plan import planner
from rke_aws.plan.day2 import versions as day2_versions
from rke_aws.plan.day2.confirmations import Observed
from rke_aws.settings import stackfile, versions
from rke_aws.state.migrations import UNKNOWN_PLACEHOLDER, from_outputs
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support import fake_cluster
from tests.support.configs import parse_config, set_key
from tests.support.day2 import (
    INSTANCE,
    by_name,
    changed_instances,
    code_in,
    pools,
    readable,
    refused,
    run,
    run_shared,
)

# v1.33.8 carries etcd 3.5.26, so 1.34 (etcd 3.6) follows it directly (plan/day2/versions.py etcd_stepping_stone_problems).
V33, V34, V35 = "v1.33.8+rke2r1", "v1.34.1+rke2r1", "v1.35.0+rke2r1"


@pytest.fixture
def prod() -> dict:
    cfg = set_key(harness.stack_config("rke2-prod"), "kubernetesVersion", V33)
    cfg.pop("rke-aws:kubeconfig", None)  # no way to the cluster unless a test sets one (whatever stacks/ holds)
    return cfg


# ---- the cluster ID ---------------------------------------------------------------------------

def test_a_new_cluster_id_is_refused_before_anything_is_registered(prod):
    before = run(prod, stack="rke2-prod")
    message = refused(set_key(copy.deepcopy(prod), "clusterId", "rke2-prod-2"), before, stack="rke2-prod")
    assert "rke-aws:clusterId: 'rke2-prod-2', but this stack runs cluster 'rke2-prod'" in message
    assert "pulumi config set clusterId rke2-prod" in message and "new stack" in message


def test_a_renamed_stack_whose_cluster_id_defaults_to_its_name_is_refused():
    cfg = harness.stack_config("rke2-dev")  # no clusterId: the stack name
    before = run(cfg, stack="rke2-dev")
    message = refused(cfg, before, stack="rke2-development")
    assert "runs cluster 'rke2-dev'" in message and "defaults to the stack name" in message
    assert "set it to 'rke2-dev'" in message
    # Setting it back is the way: the same cluster, nothing moves.
    after = run(set_key(copy.deepcopy(cfg), "clusterId", "rke2-dev"), before, stack="rke2-development")
    assert changed_instances(before, after) == {} and set(by_name(after, INSTANCE)) == set(by_name(before, INSTANCE))


def test_a_region_change_is_refused(prod):
    before = run(prod, stack="rke2-prod")
    message = refused(set_key(copy.deepcopy(prod), "aws:region", "us-east-2"), before, stack="rke2-prod")
    assert "aws:region: 'us-east-2', but this stack runs its cluster in us-west-2" in message


# ---- versions ---------------------------------------------------------------------------------

def test_two_minor_upgrades_in_consecutive_updates_wait_for_the_first_to_complete(prod, cluster):
    """deploy.yml runs `pulumi up` on every merge: 1.33 -> 1.34, then 1.34 -> 1.35 at once."""
    base = run(readable(prod))
    assert base.outputs["kubernetesVersionConfirmed"] == V33  # a new cluster boots it everywhere
    first = run(set_key(readable(prod), "kubernetesVersion", V34), base)
    assert first.outputs["kubernetesVersionConfirmed"] == V33, "nothing knows the rollout is done"
    assert first.outputs["ccmImage"].endswith(versions.CCM_IMAGE_TAGS[33])
    # The second merge, while the upgrade Plans still roll (the cluster shows an agent on 1.33):
    agent = next(n["name"] for n in first.outputs["nodes"] if "etcd" not in n["roles"])
    cluster(first, V34, versions_by_node={agent: V33})
    second = set_key(readable(prod), "kubernetesVersion", V35)
    message = refused(second, first)
    assert f"the last change from {V33} to {V34} is not known complete" in message
    assert f"{agent} ({V33})" in message
    # Every server on 1.34 already: the CCM may move, the next minor may not.
    moved = run(set_key(readable(prod), "kubernetesVersion", V34), first)
    assert moved.outputs["ccmImage"].endswith(versions.CCM_IMAGE_TAGS[34])
    assert moved.outputs["kubernetesVersionConfirmed"] == V33
    # Once every node runs 1.34 the cluster says so, and 1.35 goes through.
    cluster(moved, V34)
    third = run(second, moved)
    assert third.outputs["kubernetesVersionConfirmed"] == V34
    assert {p.inputs["spec"]["version"] for p in third.of_type("kubernetes:upgrade.cattle.io/v1:Plan")} == {V35}
    assert changed_instances(first, third) == {}


def test_legacy_outputs_do_not_vouch_for_the_etcd_stepping_stone(prod, cluster):
    """Review finding 7. Outputs from before kubernetesVersionConfirmed say v1.33.9 (etcd 3.5.26),
    but the release that wrote them did not hold anything on a patch change, so the servers may
    still run v1.33.5 (etcd 3.5.21). v1.34.10 (etcd 3.6.14) follows only 3.5.26 (rancher/rke2-docs
    docs/release-notes/v1.33.X.md, "RKE2 v1.34 Upgrade Warning"): refused without a read or a
    confirmation, accepted with either; an update without that change is not held up."""
    v339, v3410 = "v1.33.9+rke2r1", "v1.34.10+rke2r1"
    assert versions.RKE2_RELEASES[v339] == "3.5.26" and versions.RKE2_RELEASES[v3410].startswith("3.6.")
    prod = set_key(copy.deepcopy(prod), "ccm", {"install": "manifest"})  # no kubeconfig needed to upgrade
    base = run(set_key(copy.deepcopy(prod), "kubernetesVersion", v339))
    legacy = copy.copy(base)
    legacy.outputs = {k: v for k, v in base.outputs.items() if k != "kubernetesVersionConfirmed"}
    # An update without that change is not held up, and says in its outputs that it kept the assumption.
    kept = run(set_key(copy.deepcopy(prod), "kubernetesVersion", v339), legacy)
    assert kept.resources and kept.outputs.get("kubernetesVersionAssumed") is True
    upgrade = set_key(copy.deepcopy(prod), "kubernetesVersion", v3410)
    message = refused(upgrade, legacy)
    assert f"rke-aws:kubernetesVersion: {v3410} runs etcd" in message and f"every server runs {v339}" in message
    code = code_in(message, "version")
    confirmed = run(set_key(copy.deepcopy(upgrade), "confirmClusterState", code), legacy)
    assert confirmed.resources and confirmed.outputs["kubernetesVersion"] == v3410
    # Read from the cluster instead: a server still on v1.33.5 refuses, all on v1.33.9 accepts.
    server = next(n["name"] for n in base.outputs["nodes"] if "etcd" in n["roles"])
    cluster(base, v339, versions_by_node={server: "v1.33.5+rke2r1"})
    assert "rke-aws:kubernetesVersion" in refused(readable(upgrade), legacy)
    cluster(base, v339)
    assert run(readable(upgrade), legacy).resources
    # The update that kept the assumption (above) makes the next one still ask.
    assert f"every server runs {v339}" in refused(upgrade, kept)


def test_pending_codes_are_printed_as_one_value_that_keeps_the_others(prod):
    """Review finding 10: every refusal prints `pulumi config set ... <its code>`, which replaces
    the value; with a code already set (or several pending) the last line gives them all at once,
    and the program accepts that comma-separated value (config_model.CONFIRM_CODES_PATTERN)."""
    v339, v3410 = "v1.33.9+rke2r1", "v1.34.10+rke2r1"
    prod = set_key(copy.deepcopy(prod), "ccm", {"install": "manifest"})
    base = run(set_key(copy.deepcopy(prod), "kubernetesVersion", v339))
    legacy = copy.copy(base)
    legacy.outputs = {k: v for k, v in base.outputs.items() if k != "kubernetesVersionConfirmed"}
    upgrade = set_key(copy.deepcopy(prod), "kubernetesVersion", v3410)
    alone = refused(upgrade, legacy)
    assert "confirm these together" not in alone and "confirm this together" not in alone  # one code, nothing set
    earlier = "etcd-0123456789"  # a code the user set for an earlier refusal
    message = refused(set_key(copy.deepcopy(upgrade), "confirmClusterState", earlier), legacy)
    code = code_in(message, "version")
    combined = re.search(r"`pulumi config set confirmClusterState ([a-z0-9,-]+)`", message.splitlines()[-1])
    assert combined and combined.group(1).split(",") == [earlier, code], message.splitlines()[-1]
    accepted = run(set_key(copy.deepcopy(upgrade), "confirmClusterState", combined.group(1)), legacy)
    assert accepted.outputs["kubernetesVersion"] == v3410


_ROLLED_OUT: dict[str, harness.ProgramRun] = {}


def rolled_out(cfg: dict) -> harness.ProgramRun:
    """The update of `cfg`'s new stack to V34 (no fake cluster: the program reads nothing from one), made once
    per session: the tests below read it and start their next update from it."""
    assert fake_cluster.main() is None, "a fake cluster is installed: its run cannot be shared"
    key = json.dumps(cfg, sort_keys=True)
    if key not in _ROLLED_OUT:
        _ROLLED_OUT[key] = run(set_key(copy.deepcopy(cfg), "kubernetesVersion", V34), run(cfg))
    return _ROLLED_OUT[key]


@pytest.mark.reads_stacks
def test_without_a_way_to_the_cluster_the_user_confirms_the_rollout(prod):
    cfg = set_key(copy.deepcopy(prod), "ccm", {"install": "manifest"})
    first = rolled_out(cfg)
    second = set_key(copy.deepcopy(cfg), "kubernetesVersion", V35)
    message = refused(second, first)
    assert "no kubeconfig reaches the cluster" in message and "kubectl -n system-upgrade get plans" in message
    code = code_in(message, "version")
    assert "every node of cluster rke2-prod runs Kubernetes v1.34.1+rke2r1" in message
    third = run(set_key(second, "confirmClusterState", code), first)
    assert third.outputs["kubernetesVersionConfirmed"] == V34
    # The code stays in the stack file, and confirms nothing about the next rollout.
    fourth = set_key(copy.deepcopy(second), "kubernetesVersion", "v1.36.1+rke2r1")
    message = refused(set_key(fourth, "confirmClusterState", code), third)
    assert "is not known complete" in message and code_in(message, "version") != code
    warned = run(set_key(copy.deepcopy(second), "confirmClusterState", code), third)
    assert any(code in m and "confirms nothing" in m for lvl, m in warned.logs if lvl == "warning")


def test_a_node_added_right_after_a_version_change_waits_for_it(prod):
    cfg = set_key(copy.deepcopy(prod), "ccm", {"install": "manifest"})
    upgraded = set_key(copy.deepcopy(cfg), "kubernetesVersion", V34)
    first = rolled_out(cfg)
    p = pools(upgraded)
    p[1]["count"] += 1
    grown = set_key(copy.deepcopy(upgraded), "nodePools", p)
    message = refused(grown, first)
    assert "rke-aws:nodePools: new or replaced nodes (ip-" in message and "would boot v1.34.1+rke2r1" in message
    code = code_in(message, "version")
    after = run(set_key(grown, "confirmClusterState", code), first)
    assert len(by_name(after, INSTANCE)) == len(by_name(first, INSTANCE)) + 1


def guarded(cfg: dict, previous: harness.ProgramRun) -> tuple[list[str], str | None]:
    """The planner's day-2 guards and the version it records as confirmed (plan/planner.py day2_guards,
    plan/day2/versions.py version_state and version_confirmed), called with what the program gives them after
    `previous` when it has no way to the cluster and no code is set: the stack read as it reads it (with the
    running cluster's facts), the last outputs as the ClusterState it makes of them, nothing observed."""
    state = from_outputs(previous.outputs)
    assert state is not None
    stack = parse_config(cfg, "day2", running_version=state.kubernetes_version,
                       running_etcd_members=len(state.etcd_members))
    assert stack.kubeconfig is None and not stack.confirm_cluster_state, "the rows judge an unread, unconfirmed update"
    vstate = day2_versions.version_state(state, Observed(), stack.cluster_id)
    problems = [d.render() for d in planner.day2_guards(stack, state, vstate, Observed())]
    return problems, day2_versions.version_confirmed(stack, state, vstate)


# After V33 -> V34 (the update made, nothing yet says every node runs V34; no way to the cluster), the next update's
# version, judged on the planner's guards. Each outcome is also reached through the whole program, each run's
# outputs fed back, by the test named in AFTER_ROLLOUT_END_TO_END (a row whose outcome has none fails).
AFTER_ROLLOUT = [
    pytest.param(V34, None, id="unchanged"),
    pytest.param("v1.34.2+rke2r1", None, id="patch-of-the-minor-rolling-out"),  # not held back
    pytest.param("v1.34.10+rke2r1", None, id="latest-patch-of-the-minor-rolling-out"),
    pytest.param(V35, "is not known complete", id="next-minor"),
    pytest.param("v1.33.9+rke2r1", "is a downgrade", id="a-newer-patch-of-the-minor-left"),
    pytest.param(V33, "is a downgrade", id="back-to-the-running-minor"),
]
AFTER_ROLLOUT_END_TO_END = {
    None: ("test_day2_running", "test_two_minor_upgrades_in_consecutive_updates_wait_for_the_first_to_complete"),
    "is not known complete": ("test_day2_running", "test_without_a_way_to_the_cluster_the_user_confirms_the_rollout"),
    "is a downgrade": ("test_day2", "test_skipping_a_minor_and_downgrading_are_refused"),
}


@pytest.mark.parametrize("version, refusal", AFTER_ROLLOUT)
def test_the_update_after_a_minor_rollout(prod, version, refusal):
    import importlib

    module, test = AFTER_ROLLOUT_END_TO_END[refusal]
    assert callable(getattr(importlib.import_module(f"tests.program.day2.{module}"), test, None)), (module, test)
    cfg = set_key(copy.deepcopy(prod), "ccm", {"install": "manifest"})
    first = rolled_out(cfg)
    # The same step on the update the program made (V33 -> V34 from the new stack) gives what that update recorded.
    assert guarded(set_key(copy.deepcopy(cfg), "kubernetesVersion", V34), run(cfg)) == \
        ([], first.outputs["kubernetesVersionConfirmed"])
    problems, confirmed = guarded(set_key(copy.deepcopy(cfg), "kubernetesVersion", version), first)
    if refusal is None:
        assert problems == [] and confirmed == V33, (problems, confirmed)
    else:
        assert len(problems) == 1 and refusal in problems[0] and problems[0].startswith("rke-aws:kubernetesVersion"), \
            problems


# ---- etcd membership --------------------------------------------------------------------------

def five_servers(prod: dict) -> dict:
    p = pools(prod)
    p[0]["count"] = 5
    return set_key(copy.deepcopy(prod), "nodePools", p)


def servers(cfg: dict, count: int) -> dict:
    p = pools(cfg)
    p[0]["count"] = count
    return set_key(copy.deepcopy(cfg), "nodePools", p)


def test_five_to_three_then_three_to_two_confirmed_then_read_from_the_cluster(prod, cluster):
    """One whole-program sequence of the etcd membership guard over three updates, each run's outputs fed back: two
    servers at once only once confirmed (no view of the cluster), then 3 -> 2 refused while etcd may still list the
    two removed, then accepted once the cluster, read through its kubeconfig, shows three members. The variants of
    the rule (confirmed or read at each step, the cluster still listing the removed Nodes) are judged on
    plan/day2/etcd.py's functions: tests/unit/plan/test_day2_guards.py test_five_to_three_then_three_to_two_counts_
    the_members_etcd_still_lists and test_the_cluster_read_counts_registered_etcd_nodes_and_not_ready_ones_as_down."""
    base = run(five_servers(prod))
    message = refused(servers(prod, 3), base)
    assert "takes" not in message and "at most one per update" in message
    code = code_in(message, "etcd")
    three = run(set_key(servers(prod, 3), "confirmClusterState", code), base)
    removed = {n["name"] for n in base.outputs["nodes"]} - {n["name"] for n in three.outputs["nodes"]}
    assert {m["name"] for m in three.outputs["etcdMembersRemoved"]} == removed and len(removed) == 2
    # 3 -> 2 in the next update: etcd may still list 5, and 2 of 5 is no quorum.
    message = refused(set_key(servers(prod, 2), "confirmClusterState", code), three)
    assert "1 of the 5 etcd members" in message and "at most 0 may go now" in message
    assert "kubectl delete node " + " ".join(sorted(removed)) in message
    # `kubectl delete node` them: the cluster, read this time, shows three members; one may go.
    cluster(three)
    two = run(readable(servers(prod, 2)), three)
    assert [m["name"] for m in two.outputs["etcdMembersRemoved"]] == \
        sorted({n["name"] for n in three.outputs["nodes"]} - {n["name"] for n in two.outputs["nodes"]})
    assert len([n for n in two.outputs["nodes"] if "etcd" in n["roles"]]) == 2


def test_a_removed_members_address_is_not_reused_while_etcd_may_list_it(prod):
    base = run(prod)
    smaller = run(servers(prod, 2), base)
    (gone,) = smaller.outputs["etcdMembersRemoved"]
    p = pools(prod)
    p[0]["count"] = 2
    p.append({"name": "more-servers", "roles": ["controlplane", "etcd"], "count": 1,
              "ipBlock": next(n["ipBlock"] for n in base.outputs["nodes"] if n["pool"] == "servers")})
    refusal = refused(set_key(copy.deepcopy(prod), "nodePools", p), smaller)
    block = p[-1]["ipBlock"]  # a running pool's block is never handed to another
    assert f"rke-aws:nodePools[more-servers].ipBlock: {block} holds pool 'servers' (running)" in refusal, refusal
    del p[-1]["ipBlock"]
    grown = run(set_key(copy.deepcopy(prod), "nodePools", p), smaller)
    assert gone["privateIp"] not in {n["privateIp"] for n in grown.outputs["nodes"]}


# ---- roles ------------------------------------------------------------------------------------

def test_a_running_pool_cannot_change_roles(prod):
    before = run(prod)
    p = pools(prod)
    p[1]["roles"] = ["controlplane", "etcd", "worker"]
    message = refused(set_key(copy.deepcopy(prod), "nodePools", p), before)
    assert "rke-aws:nodePools[agents].roles: ['controlplane', 'etcd', 'worker'], but pool 'agents' runs 3 node(s) as ['worker']" in message
    # Running servers turned control-plane-only (split roles, otherwise a valid configuration: an etcd pool
    # beside them, the NLB): still refused, they keep the etcd members they booted with.
    p = pools(prod)
    p[0]["roles"] = ["controlplane"]
    p.append({"name": "etcd", "roles": ["etcd"], "count": 1, "instanceType": "m6i.large"})
    split = set_key(set_key(copy.deepcopy(prod), "nodePools", p), "controlPlane", {"endpoint": "nlb"})
    message = refused(split, before)
    assert f"rke-aws:nodePools[{p[0]['name']}].roles: ['controlplane'], but pool '{p[0]['name']}' runs" in message


# ---- the init marker --------------------------------------------------------------------------

def test_a_running_clusters_init_marker_is_never_written_as_pending(prod):
    from rke_aws.aws.join_secrets import MARKER_EXISTING, MARKER_PENDING

    def marker(r):
        (m,) = [p for p in r.of_type("aws:ssm/parameter:Parameter") if p.inputs["name"].endswith("rke2-initialized")]
        return m

    base = run(prod)
    assert marker(base).inputs["insecureValue"] == MARKER_PENDING
    later = run_shared(prod, base)  # read only; a step that repeats one (same config, same last outputs) is made once
    assert marker(later).inputs["insecureValue"] == MARKER_EXISTING and "insecureValue" in marker(later).ignore_changes
    # A stack deployed before the marker existed (its outputs name none) runs a cluster all the same: the marker this
    # update creates says so (components/aws/join_secrets.py MARKER_EXISTING), else a replaced first server would read
    # `pending` and initialise a second cluster.
    before_marker = copy.copy(base)
    before_marker.outputs = {k: v for k, v in base.outputs.items() if k != "rke2InitMarkerParameter"}
    again = run(prod, before_marker)
    assert marker(again).inputs["insecureValue"] == MARKER_EXISTING
    assert again.outputs["rke2InitMarkerParameter"] == base.outputs["rke2InitMarkerParameter"]


# ---- outputs saved unknown --------------------------------------------------------------------

def test_outputs_of_a_continue_on_error_update_plan_on_or_refuse_clearly(prod):
    base = run(prod)
    failed = copy.deepcopy(base.outputs)
    failed["nodes"][-1].update(privateIp=UNKNOWN_PLACEHOLDER, instanceId=UNKNOWN_PLACEHOLDER,
                               privateDns=UNKNOWN_PLACEHOLDER, instanceType=UNKNOWN_PLACEHOLDER)
    after = harness.run_program(prod, stack="day2", previous_outputs=failed)
    assert changed_instances(base, after) == {}
    failed["nodes"][0]["pool"] = UNKNOWN_PLACEHOLDER
    mocks = MotoMocks("us-west-2")
    with pytest.raises(pulumi.RunError) as info:
        harness.run_program(prod, stack="day2", mocks=mocks, previous_outputs=failed)
    assert "saved as unknown (nodes[0].pool)" in str(info.value) and "AddressValueError" not in str(info.value)
    assert mocks.resources == []


def test_what_the_update_read_is_said(prod, cluster):
    base = run(readable(prod))
    cluster(base)
    later = run(readable(prod), base)
    assert any("read the running cluster (https://api.rke2-prod.rke-aws.internal:6443, read-only)" in m
               for _, m in later.logs), later.logs
    unread = run(set_key(copy.deepcopy(prod), "kubeconfig", stackfile.secret("apiVersion: v1\nkind: Config\n")), base)
    assert any("could not be read (the kubeconfig names no cluster server)" in m for _, m in unread.logs)


def test_nodes_may_join_during_a_patch_rollout_and_replaced_nodes_count_as_booting(prod):
    """A kubelet one patch newer than its kube-apiserver is within the skew policy; a replaced node
    boots the configured version exactly like a new one."""
    cfg = set_key(copy.deepcopy(prod), "ccm", {"install": "manifest"})
    patched = set_key(copy.deepcopy(cfg), "kubernetesVersion", "v1.33.9+rke2r1")
    first = run(patched, run(cfg))
    assert first.outputs["kubernetesVersionConfirmed"] == V33
    p = pools(patched)
    p[1]["count"] += 1
    grown = run(set_key(copy.deepcopy(patched), "nodePools", p), first)
    assert len(by_name(grown, INSTANCE)) == len(by_name(first, INSTANCE)) + 1
    rekeyed = set_key(set_key(copy.deepcopy(cfg), "kubernetesVersion", V34), "access",
                      {**json.loads(cfg["rke-aws:access"]), "sshKeyName": "rotated"})
    message = refused(rekeyed, run(cfg))
    assert "together with new or replaced nodes" in message
