"""Day 2 for etcd snapshots: changes never stop backups silently, and the kept bucket is never
declared twice nor taken from another account.

Servers read their snapshot settings only when they start (RKE2 config.yaml; RKE1 `rke up`), so a
change on a running cluster is accepted for new servers, said on every update with the steps for
the running ones, and their role keeps its grant where they still write until the user confirms.
"""

from __future__ import annotations

import copy
import json

import pytest

from rke_aws.plan import backups
from rke_aws.plan.day2.confirmations import Observed
from rke_aws.state.migrations import from_outputs
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated.provider_checks import ACCOUNT_ID
from rke_aws_offline.engine.emulated_account import MotoMocks
from tests.support.configs import parse_config, set_key
from tests.support.day2 import code_in, run

BUCKET = "aws:s3/bucket:Bucket"


def snapshot_policy(r: harness.ProgramRun) -> dict | None:
    """The controlplane role's etcd-snapshots policy document, or None."""
    docs = [json.loads(p.inputs["policy"]) for p in r.of_type("aws:iam/rolePolicy:RolePolicy")
            if "etcd-snapshots" in p.name and "controlplane" in p.name]
    return docs[0] if docs else None


def writable(doc: dict | None) -> set[str]:
    if doc is None:
        return set()
    (st,) = [s for s in doc["Statement"] if s["Sid"] == "Snapshots"]
    res = st["Resource"]
    return set(res if isinstance(res, list) else [res])


def warnings(r: harness.ProgramRun, prefix: str = "rke-aws:etcdBackup") -> list[str]:
    return [m for lvl, m in r.logs if lvl == "warning" and m.startswith(prefix)]


@pytest.fixture
def prod() -> dict:
    return harness.stack_config("rke2-prod")


def backup(cfg: dict, **keys) -> dict:
    current = json.loads(cfg.get("rke-aws:etcdBackup", "{}"))
    return set_key(copy.deepcopy(cfg), "etcdBackup", {**current, **keys})


def test_a_new_folder_keeps_the_old_grant_until_the_servers_are_moved(prod):
    base = run(prod)
    bucket = base.outputs["etcdSnapshotLocation"].split("/")[2]
    arn = f"arn:aws:s3:::{bucket}"
    assert writable(snapshot_policy(base)) == {f"{arn}/rke2-prod/*"}
    moved = backup(prod, folder="snapshots/rke2-prod")
    after = run(moved, base)
    assert writable(snapshot_policy(after)) == {f"{arn}/rke2-prod/*", f"{arn}/snapshots/rke2-prod/*"}
    assert after.outputs["etcdSnapshotLocation"] == f"s3://{bucket}/snapshots/rke2-prod"  # new servers
    assert after.outputs["etcdSnapshotsRunning"]["folder"] == "rke2-prod"  # where the running ones write
    (w,) = warnings(after)
    assert 'etcd-s3-folder: "snapshots/rke2-prod"' in w and "systemctl restart rke2-server" in w and "one at a time" in w
    # Every later update says it again, until the user confirms the servers moved.
    again = run(moved, after)
    assert warnings(again) == [w] and writable(snapshot_policy(again)) == writable(snapshot_policy(after))
    done = run(set_key(copy.deepcopy(moved), "confirmClusterState", code_in(w, "snapshots")), again)
    assert writable(snapshot_policy(done)) == {f"{arn}/snapshots/rke2-prod/*"} and not warnings(done)
    assert done.outputs["etcdSnapshotsRunning"]["folder"] == "snapshots/rke2-prod"


def test_turning_snapshots_off_keeps_the_grant_while_servers_still_upload(prod):
    base = run(prod)
    off = backup(prod, enabled=False)
    after = run(off, base)
    assert snapshot_policy(after) is not None and writable(snapshot_policy(after)) == writable(snapshot_policy(base))
    assert not after.of_type(BUCKET), "the bucket leaves the state (retainOnDelete keeps it in AWS)"
    (w,) = warnings(after)
    assert "no S3 snapshots" in w and "remove the etcd-s3* keys" in w
    done = run(set_key(copy.deepcopy(off), "confirmClusterState", code_in(w, "snapshots")), after)
    assert snapshot_policy(done) is None and done.outputs["etcdSnapshotsRunning"] is None


def planned_warning(cfg: dict, base: harness.ProgramRun) -> str | None:
    """The planner's backups step (plan/backups.py plan: the bucket, then snapshot_transition) with what the program
    gives it after `base`: the stack read as it reads it, the last outputs as the ClusterState it makes of them,
    nothing confirmed, the emulated account. The bucket is the one the last outputs name, so no AWS look-up is made
    (backup(): a managed bucket is not looked up), and no Environment is needed."""
    state = from_outputs(base.outputs)
    found = backups.plan(parse_config(cfg, "day2"), state, Observed(), ACCOUNT_ID, None)  # type: ignore[arg-type]
    w = found.snapshots.warning
    return w.render() if w is not None else None


# A change of the interval or retention on a running cluster is said, never silent, on every update until confirmed.
# Each row is judged on the planner's step; the rows marked end to end also through the whole program (base ->
# change, outputs fed back), where the step's warning must be the one the update logs: one per distribution (RKE2
# reaches its servers through config.yaml, RKE1 through `rke up`).
SETTINGS_CHANGES = [
    pytest.param("rke2-prod", "intervalHours", 12, ('"0 */12 * * *"', "confirmClusterState", "systemctl restart"), True,
                 id="rke2-interval"),
    pytest.param("rke2-prod", "retention", 10, ("etcd-s3-retention: 10", "confirmClusterState"), False,
                 id="rke2-retention"),
    pytest.param("rke-prod", "intervalHours", 12, ("`rke up` with the new rkeClusterYml", "confirmClusterState"), True,
                 id="rke1-interval"),
    pytest.param("rke-prod", "retention", 10, ("`rke up` with the new rkeClusterYml", "10 kept"), False,
                 id="rke1-retention"),
]


@pytest.mark.parametrize("stack, key, value, expected, end_to_end", SETTINGS_CHANGES)
def test_interval_and_retention_changes_are_said_never_silent(stack, key, value, expected, end_to_end):
    cfg = harness.stack_config(stack)
    base = run(cfg)
    changed = backup(cfg, **{key: value})
    w = planned_warning(changed, base)
    assert w is not None and all(e in w for e in expected), w
    assert planned_warning(cfg, base) is None, "an unchanged stack is warned"
    if end_to_end:
        assert warnings(run(changed, base)) == [w]


def test_every_distribution_has_an_end_to_end_settings_change():
    """The guard of the table above: a distribution whose rows are all judged on the planner's step alone fails."""
    rows = [p.values for p in SETTINGS_CHANGES]
    assert {r[0] for r in rows} == {r[0] for r in rows if r[4]}


def test_snapshots_turned_on_for_a_running_cluster_say_what_to_add(prod):
    off = backup(prod, enabled=False)
    base = run(off)
    after = run(prod, base)
    (w,) = warnings(after)
    assert "the running servers take no S3 snapshots" in w and "etcd-s3: true" in w
    assert writable(snapshot_policy(after)), "new servers snapshot from the start"


# ---- the kept bucket --------------------------------------------------------------------------

def test_destroy_then_up_then_up_never_declares_the_kept_bucket():
    cfg = harness.stack_config("rke2-prod")
    first = run(cfg)
    bucket = first.outputs["etcdSnapshotLocation"].split("/")[2]
    assert first.outputs["etcdBucketManaged"] is True
    # `pulumi destroy` keeps the bucket (retainOnDelete); the stack has no outputs any more.
    mocks = MotoMocks("us-west-2")
    mocks.buckets.add(bucket)
    adopted = harness.run_program(cfg, stack="day2", mocks=mocks)
    assert not adopted.of_type(BUCKET) and adopted.outputs["etcdBucketManaged"] is False
    mocks = MotoMocks("us-west-2")
    mocks.buckets.add(bucket)
    later = harness.run_program(cfg, stack="day2", mocks=mocks, previous_outputs=adopted.outputs)
    assert not later.of_type(BUCKET), "the update after the adopting one declared the bucket again"
    assert writable(snapshot_policy(later)) == writable(snapshot_policy(first))


def test_a_first_update_that_created_the_bucket_and_failed_does_not_declare_it_twice():
    cfg = harness.stack_config("rke2-dev")  # us-east-1: S3 answers 200, the provider refuses
    first = run(cfg, stack="rke2-dev")
    bucket = first.outputs["etcdSnapshotLocation"].split("/")[2]
    mocks = MotoMocks("us-east-1")
    mocks.buckets.add(bucket)  # created; the update failed later, so the stack has no outputs
    again = harness.run_program(cfg, stack="rke2-dev", mocks=mocks)
    assert not again.of_type(BUCKET)


def test_a_bucket_of_another_account_is_never_adopted():
    """HeadBucket answers 200 for another account's bucket whose policy lets us list it."""
    cfg = harness.stack_config("rke2-prod")
    first = run(cfg)
    bucket = first.outputs["etcdSnapshotLocation"].split("/")[2]
    mocks = MotoMocks("us-west-2")
    mocks.foreign_buckets.add(bucket)
    with pytest.raises(Exception) as info:
        harness.run_program(cfg, stack="day2", mocks=mocks)
    assert f"{bucket}, exists but belongs to another account" in str(info.value)
    assert "etcdBackup.bucket" in str(info.value) and mocks.resources == []


def bucket_children(r: harness.ProgramRun) -> dict[str, dict]:
    """The bucket and its settings resources (children of the EtcdBackupBucket component)."""
    (component,) = [x for x in r.resources if x.type == "rke-aws:backups:EtcdBackupBucket"] or [None]
    if component is None:
        return {}
    return {x.urn: x.inputs for x in r.resources if x.parent == component.urn}


def test_outputs_from_before_etcd_bucket_managed_keep_the_bucket_this_program_created():
    """Review finding 5. The release before etcdBucketManaged declared the bucket whenever
    etcdBackup.bucket was not set and its last snapshot location was in it (5e0c40f^
    components/plan/backups.py backup, `ours`), so the bucket and its settings are in the state: they stay
    declared under the same URNs. Not declaring them would drop them from the state (retainOnDelete:
    unseen in AWS), and later expireDays / kmsKeyArn changes would never reach the bucket."""
    cfg = harness.stack_config("rke2-prod")
    first = run(cfg)
    legacy = {k: v for k, v in first.outputs.items() if k != "etcdBucketManaged"}
    # The state holds the bucket the earlier release created: this update updates it.
    mocks = MotoMocks("us-west-2", created_before=[r.name for r in first.of_type(BUCKET)])
    mocks.buckets.add(first.outputs["etcdSnapshotLocation"].split("/")[2])
    after = harness.run_program(cfg, stack="day2", mocks=mocks, previous_outputs=legacy)
    before_children, after_children = bucket_children(first), bucket_children(after)
    assert len(before_children) >= 2 and after.of_type(BUCKET), sorted(after_children)
    assert after_children == before_children, "the bucket or its settings changed name or inputs"
    assert after.outputs["etcdBucketManaged"] is True
    # The user's own bucket was never declared, by either release.
    own = harness.run_program(backup(cfg, bucket="my-own-etcd-bucket"), stack="day2", previous_outputs={
        **legacy, "etcdSnapshotLocation": "s3://my-own-etcd-bucket/" + legacy["etcdSnapshotLocation"].split("/", 3)[3]})
    assert not own.of_type(BUCKET)
