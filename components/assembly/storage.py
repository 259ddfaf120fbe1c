"""etcd snapshots: the bucket this stack creates, and the snapshotting roles' grants on where they write."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pulumi

from ..aws import backups
from ..aws.backups import EtcdBackupBucket, EtcdBackupBucketArgs
from ..node import airgap_artifacts
from ..plan.model import ClusterSpec


@dataclass(frozen=True)
class Storage:
    boot_dependencies: list[pulumi.Resource] = field(default_factory=list)  # exists before a node boots
    extra_policies: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # role -> (name, policy)
    etcd_s3: Any = None  # plan/snapshots.EtcdS3: what the snapshotting nodes are configured with


def build(name: str, spec: ClusterSpec, child: pulumi.ResourceOptions) -> Storage:
    cfg, cluster = spec.config, spec.plan
    out = Storage()
    etcd_s3 = None
    if cluster.backup:
        if cluster.backup.created:
            bucket = EtcdBackupBucket(name, EtcdBackupBucketArgs(
                cluster_id=cfg.cluster_id, bucket=cluster.backup.bucket, partition=cfg.partition.name,
                expire_days=cfg.etcd_backup.expire_days, kms_key_arn=cfg.etcd_backup.kms_key_arn,
                extra_tags=cfg.tags), child)
            out.boot_dependencies.append(bucket.bucket)
        etcd_s3 = cluster.backup.etcd_s3
    if cluster.snapshots.grant:
        # Where running servers still write while new settings have not reached them keeps its grant
        # (plan/backups.py snapshot_transition).
        first, *others = cluster.snapshots.grant
        policy = backups.node_policy(cfg.partition.name, first.bucket, first.folder, first.kms_key_arn,
                                     also=[(s.bucket, s.folder, s.kms_key_arn) for s in others])
        for role in spec.snapshot_roles:
            out.extra_policies.setdefault(role, []).append(("etcd-snapshots", policy))
    airgap = cfg.airgap
    if airgap is not None and airgap.artifacts_bucket and not airgap.preinstalled:
        # Every node installs RKE2 from the artifacts bucket (issue 35): read under the prefix, nothing else.
        policy = json.dumps(airgap_artifacts.artifacts_policy_document(
            cfg.partition.name, airgap.artifacts_bucket, airgap.artifacts_prefix or ""), indent=2, sort_keys=True)
        for role in spec.node_roles:
            out.extra_policies.setdefault(role, []).append(("airgap-artifacts", policy))
    return Storage(out.boot_dependencies, out.extra_policies, etcd_s3)
