"""etcd snapshots to S3: a bucket per cluster (or one you bring), and who may use it.

The nodes that take snapshots (RKE2 servers; RKE1 etcd nodes) write them with their instance
role, no static keys: RKE2's etcd S3 client (k3s pkg/etcd/s3) and RKE's backup container fall back
to the instance profile when no access key is configured. The role may list, read, write and
delete only under the cluster's folder of that bucket.

The bucket this program creates: versioned, encrypted (SSE-S3, or SSE-KMS with `kmsKeyArn`), public
access blocked, TLS-only bucket policy, old versions expiring after `expireDays`, tagged with the
cluster tag, and left in the account by `pulumi destroy`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from ..plan.names import RESERVED_BUCKET_PREFIXES, bucket_name  # noqa: F401 - part of this module's interface
from ..settings import tags


def bucket_arn(partition: str, bucket: str) -> str:
    return f"arn:{partition}:s3:::{bucket}"


def node_policy(partition: str, bucket: str, folder: str, kms_key_arn: str | None,
                also: Sequence[tuple[str, str, str | None]] = ()) -> str:
    """What a snapshotting node may do: objects under its folder of the bucket, nothing else.

    ListBucket is not narrowed by `s3:prefix`: k3s checks the bucket with minio-go's BucketExists
    (HeadBucket, authorised as s3:ListBucket with no prefix) before every snapshot and refuses to
    upload when that fails; a prefix condition would make every snapshot fail. Listing shows object
    names only; reading, writing and deleting stay inside the folder.

    `also`: (bucket, folder, key) where running servers still write while a change of the
    snapshot settings has not reached them (history.snapshot_transition)."""
    places = [(bucket, folder, kms_key_arn)] + [p for p in also if p != (bucket, folder, kms_key_arn)]
    arns = list(dict.fromkeys(bucket_arn(partition, b) for b, _, _ in places))
    objects = list(dict.fromkeys(f"{bucket_arn(partition, b)}/{f}/*" for b, f, _ in places))
    keys = list(dict.fromkeys(k for _, _, k in places if k))

    def one(items: list[str]) -> Any:
        return items[0] if len(items) == 1 else items
    statements = [
        {"Sid": "FindBucketAndSnapshots", "Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": one(arns)},
        {"Sid": "LocateBucket", "Effect": "Allow", "Action": ["s3:GetBucketLocation"], "Resource": one(arns)},
        {"Sid": "Snapshots", "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
         "Resource": one(objects)},
    ]
    if keys:
        statements.append({"Sid": "SnapshotKey", "Effect": "Allow", "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
                           "Resource": one(keys)})
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, indent=2, sort_keys=True)


def tls_only_policy(partition: str, bucket: str) -> str:
    arn = bucket_arn(partition, bucket)
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "DenyPlainHttp", "Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": [arn, f"{arn}/*"],
         "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}, indent=2, sort_keys=True)


@dataclass(frozen=True)
class EtcdBackupBucketArgs:
    cluster_id: str
    bucket: str
    partition: str
    expire_days: int
    kms_key_arn: str | None = None
    extra_tags: Mapping[str, str] = field(default_factory=dict)


class EtcdBackupBucket(pulumi.ComponentResource):
    def __init__(self, name: str, args: EtcdBackupBucketArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:backups:EtcdBackupBucket", name, None, opts)
        bname = f"{name}-etcd-snapshots"
        # Snapshots are the way back after losing the control plane: `pulumi destroy` leaves the
        # bucket and its settings in the account (retain_on_delete) instead of failing on a bucket
        # that is not empty. S3 refuses concurrent changes to one bucket's configuration
        # (409 OperationAborted), so each setting waits for the one before.
        previous: list[pulumi.Resource] = []

        def then() -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, retain_on_delete=True, depends_on=list(previous))

        bucket = aws.s3.Bucket(
            bname,
            bucket=args.bucket,
            force_destroy=False,
            tags=tags.cluster_owned(args.cluster_id, bname, args.extra_tags),
            opts=then(),
        )
        self.bucket = bucket
        previous.append(bucket)
        previous.append(aws.s3.BucketPublicAccessBlock(
            f"{bname}-public-access", bucket=bucket.id, block_public_acls=True, block_public_policy=True,
            ignore_public_acls=True, restrict_public_buckets=True, opts=then()))
        previous.append(aws.s3.BucketVersioning(
            f"{bname}-versioning", bucket=bucket.id,
            versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"), opts=then()))
        sse = (aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
            sse_algorithm="aws:kms", kms_master_key_id=args.kms_key_arn) if args.kms_key_arn else
            aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(sse_algorithm="AES256"))
        previous.append(aws.s3.BucketServerSideEncryptionConfiguration(
            f"{bname}-encryption", bucket=bucket.id,
            rules=[aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_default=sse, bucket_key_enabled=bool(args.kms_key_arn))],
            opts=then()))
        previous.append(aws.s3.BucketPolicy(
            f"{bname}-tls-only", bucket=bucket.id, policy=tls_only_policy(args.partition, args.bucket), opts=then()))
        # Current snapshots are pruned by count by RKE2 / RKE (etcdBackup.retention), never by age:
        # a cluster that stops snapshotting keeps its last ones. What they prune or replace stays
        # as an old version for expireDays.
        aws.s3.BucketLifecycleConfiguration(
            f"{bname}-expiry", bucket=bucket.id,
            rules=[aws.s3.BucketLifecycleConfigurationRuleArgs(
                id="expire-old-versions", status="Enabled",
                filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(expired_object_delete_marker=True),
                noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                    noncurrent_days=args.expire_days),
                abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                    days_after_initiation=1),
            )],
            opts=then())
        self.register_outputs({"bucket": args.bucket})
