"""etcdBackup: expiry only on the bucket this program creates, a KMS key of the cluster's region."""

from __future__ import annotations

from ...diagnostics import Diagnostic
from .. import partitions
from .base import Context, Keys, error
from .network import REGION_RE


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    b, region = keys.valid.etcd_backup, ctx.region
    found: list[Diagnostic] = []
    if b.bucket is not None and keys.gave("etcdBackup", "expireDays"):
        found.append(error("etcdBackup.expireDays", f"applies to the bucket this program creates, but etcdBackup.bucket "
                                                    f"names '{b.bucket}'; set expiry on that bucket, or remove one of "
                                                    "the keys", "backups.expiry-foreign-bucket"))
    kms = b.kms_key_arn
    if kms and region and REGION_RE.fullmatch(region) and kms.split(":")[3] != region:
        # SSE-KMS takes a key of the bucket's region (the cluster's), in its partition.
        theirs, ours = kms.split(":")[1], partitions.of_region(region).name
        where = f"{kms.split(':')[3]} (partition {theirs}, not {ours})" if theirs != ours else kms.split(":")[3]
        found.append(error("etcdBackup.kmsKeyArn", f"'{kms}' is a key in {where}, but the cluster and its snapshot "
                                                   f"bucket are in {region}; use a key of {region}", "backups.kms-region",
                           kms))
    return found
