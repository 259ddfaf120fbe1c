"""Look-ups answered from a small table, for the planner's steps without a Pulumi runtime or an emulated
account (components/plan/environment.py Lookups). Answers have the attribute names of the aws provider's
invoke results; `fail` makes a call fail with the provider's text (LookupFailed), `calls` records them."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from rke_aws.plan import running
from rke_aws.plan.environment import Environment
from rke_aws.plan.lookups import LookupFailed

# name -> (vCPUs, MiB, architectures): EC2's figures for these types (DescribeInstanceTypes)
INSTANCE_TYPES = {
    "t3.medium": (2, 4096, ("x86_64",)), "t3.large": (2, 8192, ("x86_64",)), "t3.xlarge": (4, 16384, ("x86_64",)),
    "m5.large": (2, 8192, ("x86_64",)), "m5.xlarge": (4, 16384, ("x86_64",)),
    "m6i.large": (2, 8192, ("x86_64",)), "m6i.xlarge": (4, 16384, ("x86_64",)), "m6i.2xlarge": (8, 32768, ("x86_64",)),
    "m7g.large": (2, 8192, ("arm64",)), "m7g.xlarge": (4, 16384, ("arm64",)),
}
TOKENS = {
    "zones": "aws:index/getAvailabilityZones:getAvailabilityZones", "instance_type": "aws:ec2/getInstanceType:getInstanceType",
    "instance_types": "aws:ec2/getInstanceTypes:getInstanceTypes", "key_pair": "aws:ec2/getKeyPair:getKeyPair",
    "latest_image": "aws:ec2/getAmi:getAmi", "image": "aws:ec2/getAmi:getAmi", "account": "aws:index/getCallerIdentity:getCallerIdentity",
    "offerings": "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings", "bucket": "aws:s3/getBucket:getBucket",
    "bucket_names": "aws:s3/getBuckets:getBuckets", "parameter": "aws:ssm/getParameter:getParameter",
    "instances": "aws:ec2/getInstances:getInstances",
}


@dataclass
class FakeLookups:
    region: str = "us-west-2"
    account_id: str = "123456789012"
    instance_type_table: dict[str, tuple[int, int, tuple[str, ...]]] = field(default_factory=lambda: dict(INSTANCE_TYPES))
    key_pairs: set[str] = field(default_factory=set)
    buckets: set[str] = field(default_factory=set)
    parameters: dict[str, str] = field(default_factory=dict)
    fail: dict[str, str] = field(default_factory=dict)  # method -> the provider's error text
    calls: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)

    def _call(self, method: str, *args: Any) -> None:
        self.calls.append((method, args))
        if method in self.fail:
            raise LookupFailed(TOKENS.get(method, method), self.fail[method])

    def zones(self, regular_only: bool) -> list[str]:
        self._call("zones", regular_only)
        return [f"{self.region}{z}" for z in "abc"]

    def instance_type(self, instance_type: str) -> Any:
        self._call("instance_type", instance_type)
        if instance_type not in self.instance_type_table:
            raise LookupFailed(TOKENS["instance_type"], f"invoke of {TOKENS['instance_type']} failed: InvalidInstanceType: "
                               f"The following supplied instance types do not exist: [{instance_type}]")
        vcpus, mib, archs = self.instance_type_table[instance_type]
        return SimpleNamespace(id=instance_type, instance_type=instance_type, default_vcpus=vcpus, memory_size=mib,
                               supported_architectures=list(archs), supported_virtualization_types=["hvm"])

    def instance_types(self, pattern: str) -> list[str]:
        self._call("instance_types", pattern)
        return sorted(t for t in self.instance_type_table if fnmatch.fnmatchcase(t, pattern))

    def offerings(self, instance_types: Sequence[str], zones: Sequence[str]) -> set[tuple[str, str]]:
        self._call("offerings", tuple(instance_types), tuple(zones))
        return {(t, z) for t in instance_types for z in zones}

    def latest_image(self, owner: str | Sequence[str], name: str) -> Any:
        self._call("latest_image", owner if isinstance(owner, str) else tuple(owner), name)
        # every vendor's arm64 pattern (settings/os_images.py) names arm64 or aarch64
        arch = "arm64" if ("arm64" in name or "aarch64" in name) else "x86_64"
        return SimpleNamespace(id=f"ami-{arch}", architecture=arch, virtualization_type="hvm")

    def image(self, image_id: str) -> Any:
        self._call("image", image_id)
        return SimpleNamespace(id=image_id, architecture="x86_64", virtualization_type="hvm")

    def key_pair(self, name: str) -> Any:
        self._call("key_pair", name)
        if name not in self.key_pairs:
            raise LookupFailed(TOKENS["key_pair"], f"InvalidKeyPair.NotFound: The key pair '{name}' does not exist")
        return SimpleNamespace(key_name=name)

    def account(self) -> str:
        self._call("account")
        return self.account_id

    def bucket(self, bucket: str) -> Any:
        self._call("bucket", bucket)
        if bucket not in self.buckets:
            raise LookupFailed(TOKENS["bucket"], f"NotFound: bucket {bucket} does not exist")
        return SimpleNamespace(bucket=bucket)

    def bucket_names(self, prefix: str) -> list[str]:
        self._call("bucket_names", prefix)
        return sorted(b for b in self.buckets if b.startswith(prefix))

    def parameter(self, name: str) -> str:
        self._call("parameter", name)
        if name not in self.parameters:
            raise LookupFailed(TOKENS["parameter"], f"ParameterNotFound: {name}")
        return self.parameters[name]

    def instances(self, filters: list[Any], states: Sequence[str]) -> Any:
        self._call("instances", tuple(states))
        return SimpleNamespace(ids=[], private_ips=[])

    def __getattr__(self, name: str) -> Any:  # the brought-network look-ups: not in these tests
        raise AttributeError(f"FakeLookups has no {name}: use the emulated account for a brought network")


def environment(lookups: FakeLookups | None = None, cluster: running.Reading | None = None,
                offline: bool = True) -> Environment:
    """An Environment of fakes: the look-ups, and a cluster that answers `cluster` (None: unreadable)."""
    def read(kubeconfig: str | None, rke2: bool) -> running.Reading:
        return cluster if cluster is not None else running.Unreadable("no cluster in this test")
    return Environment(lookups or FakeLookups(), read, offline)
