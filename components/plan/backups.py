"""etcd snapshots to S3: the bucket (this stack's, or the user's), where the snapshotting nodes write, and
what a change of the settings means for servers that read them only when they start."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..diagnostics import ConfigError, Diagnostic, Severity, Statement
from ..settings.fields import number
from ..settings.resolve import ClusterConfig as StackConfig
from ..state.model import ClusterState, SnapshotsState
from .day2.confirmations import Observed
from .environment import Environment
from .lookups import LookupFailed, looked_up
from .names import bucket_name
from .snapshots import EtcdS3, etcd_s3_keys

Snapshots = SnapshotsState  # where and how servers take snapshots (the state's own type)


@dataclass(frozen=True)
class BackupPlan:
    bucket: str
    folder: str
    created: bool  # this program creates (and tags) the bucket
    etcd_s3: Any = None  # plan/snapshots.EtcdS3: what the snapshotting nodes are configured with
    notes: tuple[Diagnostic, ...] = ()


def backup(cfg: StackConfig, account: str, previous: ClusterState | None, env: Environment) -> BackupPlan | None:
    b = cfg.etcd_backup
    if not b.enabled:
        return None
    bucket = b.bucket or bucket_name(cfg.cluster_id, account, cfg.region)
    folder = b.folder or cfg.cluster_id
    created = not b.bucket
    notes: tuple[Diagnostic, ...] = ()
    # etcdBucketManaged None: outputs of a release before it, which declared the bucket whenever it
    # was not set by the user and the last snapshot location was in it (5e0c40f^ components/plan.py
    # _backup, `ours`): its last update put the bucket and its settings in the state, so they stay
    # declared (same names, same URNs) rather than leave the state unseen (review finding 5).
    managed = previous is not None and previous.etcd_bucket_managed in (True, None) and \
        (previous.etcd_snapshot_location or "").startswith(f"s3://{bucket}/")
    if created and not managed and _bucket_exists(env, bucket):
        # Kept by an earlier `pulumi destroy` (retain_on_delete), snapshots turned off and on, or
        # created by a first update that failed: declaring it again fails in every region (the
        # provider checks first in us-east-1, where S3 itself would answer 200 for a bucket this
        # account owns: terraform-provider-aws internal/service/s3/bucket.go resourceBucketCreate).
        # Not declaring a bucket that is in the state only forgets it (retain_on_delete).
        if not _bucket_owned(env, bucket):
            # HeadBucket answers 200 for another account's bucket whose policy lets us list it; the
            # snapshots hold every Secret of the cluster.
            raise ConfigError([Diagnostic(
                "etcdBackup.bucket", f"not set, and the bucket this stack would create, {bucket}, exists but belongs "
                "to another account (ListBuckets of this account does not show it); etcd snapshots hold every Secret "
                "of the cluster and must not go there. Set etcdBackup.bucket to a bucket of this account",
                "backup.bucket-foreign")])
        created = False
        notes = (Diagnostic("etcdBackup", f"the bucket {bucket} exists already in this account (kept when snapshots "
                            "were last removed from this stack, or created by an update that failed): snapshots go "
                            "there, and this stack does not declare it, so its settings stay as they are",
                            "backup.bucket-exists", Severity.WARNING),)
    return BackupPlan(bucket, folder, created=created, notes=notes, etcd_s3=EtcdS3(
        bucket=bucket, region=cfg.region, folder=folder, endpoint=cfg.partition.endpoint("s3", cfg.region),
        interval_hours=b.interval_hours, retention=b.retention))


def _bucket_exists(env: Environment, bucket: str) -> bool:
    try:
        env.lookups.bucket(bucket)
    except LookupFailed:  # not found (or not ours to see): it is created, and S3 says why if not
        return False
    return True


def _bucket_owned(env: Environment, bucket: str) -> bool:
    """ListBuckets shows only the caller's account's buckets (unlike HeadBucket)."""
    names = looked_up("etcdBackup", f"listing this account's buckets named {bucket}",
                      "a bucket of another name (etcdBackup.bucket)", lambda: env.lookups.bucket_names(bucket),
                      env.offline)
    return bucket in names


def configured_snapshots(cfg: StackConfig, plan: BackupPlan | None) -> Snapshots | None:
    if plan is None:
        return None
    return Snapshots(bucket=plan.bucket, folder=plan.folder, interval_hours=cfg.etcd_backup.interval_hours,
                     retention=cfg.etcd_backup.retention, kms_key_arn=cfg.etcd_backup.kms_key_arn)


def snapshot_steps(cfg: StackConfig, plan: BackupPlan | None) -> str:
    """RKE2: what to change in a running server's config.yaml for the configured snapshots."""
    if cfg.distribution != "rke2":
        return ""
    if plan is None:
        return "in /etc/rancher/rke2/config.yaml remove the etcd-s3* keys and etcd-snapshot-schedule-cron"
    keys = etcd_s3_keys(plan.etcd_s3, cfg.kubernetes_version)
    lines = "; ".join(f"{k}: {json.dumps(v)}" for k, v in keys.items())
    return f"in /etc/rancher/rke2/config.yaml set {lines}"


@dataclass(frozen=True)
class SnapshotTransition:
    """What the running servers snapshot with after this update, and what their role must reach."""
    running: Snapshots | None  # etcdSnapshotsRunning after this update
    grant: tuple[Snapshots, ...]  # locations the snapshotting role may write (running ones included)
    warning: Diagnostic | None = None
    statement: Statement | None = None


def _settings(s: Snapshots | None) -> str:
    if s is None:
        return "no S3 snapshots"
    every = f" every {number(s.interval_hours)} h" if s.interval_hours else ""
    keep = f", {number(s.retention)} kept" if s.retention else ""
    return f"snapshots to {s.location}{every}{keep}"


def snapshot_transition(previous: ClusterState | None, configured: Snapshots | None, observed: Observed,
                        cluster_id: str, distribution: str, steps: str = "") -> SnapshotTransition:
    """Servers read their snapshot settings at start (RKE2 config.yaml; RKE1 `rke up`), so a change
    on a running cluster reaches them only by hand. Until the user confirms they run the new
    settings, their role keeps its grant on where they still write, and every update says so."""
    if previous is None or not previous.nodes:
        return SnapshotTransition(configured, (configured,) if configured else ())
    running = previous.etcd_snapshots_running
    if running is None and configured is None:
        return SnapshotTransition(None, ())
    if running is not None and configured is not None and running.same_as(configured):
        return SnapshotTransition(configured, (configured,))
    statement = Statement("snapshots", f"every server of cluster {cluster_id} runs {_settings(configured)}")
    if observed.confirmed(statement):
        return SnapshotTransition(configured, (configured,) if configured else (), statement=statement)
    grant = tuple(s for s in (running, configured) if s is not None)
    where = ("`rke up` with the new rkeClusterYml reconfigures every etcd node" if distribution == "rke" else
             f"on each server, one at a time: {steps or 'edit /etc/rancher/rke2/config.yaml'}, then "
             "`systemctl restart rke2-server` and wait until the node is Ready before the next")
    keep = (f"; until then their role keeps its grant on {running.location}, where they still write, and "
            "`etcdSnapshotsRunning` names it (snapshots to restore from are there)" if running is not None else "")
    warning = Diagnostic("etcdBackup", f"the running servers take {_settings(running)}, and this stack now configures "
                         f"{_settings(configured)}; servers read these settings only when they start, so only servers "
                         f"booted from now on have them. To move the running ones: {where}. Then {statement.how()}"
                         f"{keep}", "backup.settings-changed", Severity.WARNING, confirm=statement)
    return SnapshotTransition(running, grant, warning, statement)


@dataclass(frozen=True)
class Backups:
    """The planner's backups step: the bucket and the snapshot transition."""
    plan: BackupPlan | None
    snapshots: SnapshotTransition


def plan(cfg: StackConfig, previous: ClusterState | None, observed: Observed, account: str,
         env: Environment) -> Backups:
    found = backup(cfg, account, previous, env)
    return Backups(found, snapshot_transition(previous, configured_snapshots(cfg, found), observed, cfg.cluster_id,
                                              cfg.distribution, snapshot_steps(cfg, found)))
