"""etcd snapshots to S3 as the servers' configuration states them (RKE2 config.yaml keys)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..settings.versions import rke2_patch_at_least


@dataclass(frozen=True)
class EtcdS3:
    bucket: str
    region: str
    folder: str
    endpoint: str  # s3.<region>.<partition DNS suffix>
    interval_hours: int
    retention: int

    @property
    def cron(self) -> str:
        return f"0 */{self.interval_hours} * * *" if self.interval_hours < 24 else "0 0 * * *"


def has_etcd_s3_retention(version: str) -> bool:
    """`etcd-s3-retention` (S3 pruning apart from local; default 5) exists from v1.31.12 / v1.32.8 /
    v1.33.4 / v1.34.1. Before, `etcd-snapshot-retention` prunes S3 too, and the key would only be
    skipped with a log line."""
    return rke2_patch_at_least(version, {31: 12, 32: 8, 33: 4, 34: 1}, 35)


def etcd_s3_keys(s3: EtcdS3, version: str) -> dict[str, Any]:
    """A server's config.yaml keys for snapshots to S3. No access keys: RKE2's S3 client falls
    back to the instance role (k3s pkg/etcd/s3)."""
    keys: dict[str, Any] = {"etcd-s3": True, "etcd-s3-bucket": s3.bucket, "etcd-s3-region": s3.region,
                            "etcd-s3-folder": s3.folder, "etcd-s3-endpoint": s3.endpoint,
                            "etcd-snapshot-schedule-cron": s3.cron, "etcd-snapshot-retention": s3.retention}
    if has_etcd_s3_retention(version):
        keys["etcd-s3-retention"] = s3.retention
    return keys
