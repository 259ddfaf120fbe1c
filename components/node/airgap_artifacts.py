"""What an air-gapped cluster reads from its artifacts bucket (`airgap.artifactsBucket` under
`airgap.artifactsPrefix`), and a check of a bucket listing that names exactly what is missing. Pure.

Layout, under the prefix:
    <release>/install.sh                          RKE2's install script (get.rke2.io), any recent one
    <release>/sha256sum-<arch>.txt                 the release's checksums
    <release>/rke2.linux-<arch>.tar.gz             the release's tarball
    <release>/rke2-images.linux-<arch>.tar.zst     the release's image archive (core + Canal)
    rpms/<dist>/*.rpm, *.key                       SELinux OSes: rke2-selinux for the OS (+ what it needs)
    system-upgrade-controller/<version>/crd.yaml, system-upgrade-controller.yaml   (automated upgrades)
<release> is the RKE2 release as named (v1.35.7+rke2r1), <arch> amd64 or arm64.

Sources: rancher/rke2-docs install/airgap.md (the three files plus install.sh in INSTALL_RKE2_ARTIFACT_PATH;
rke2-images.linux-<arch>.tar.zst is the Canal archive, -core plus one per-CNI archive the alternative);
rancher/rke2 install.sh (stage_local_checksums: sha256sum-<arch>.txt required and grepped for the tarball's
line; stage_local_tarball: rke2.linux-<arch>.tar.gz required; the image archive .tar.zst, else .tar.gz, is
optional for install.sh but this program requires it: without it nothing can run offline; arch names:
x86_64 -> amd64, aarch64 -> arm64); rancher/rke2 scripts/package-* and .github/workflows/release.yml (the
asset names, amd64 and arm64); rancher/rke2-selinux policy/*/rke2-selinux.spec (rke2-selinux-<v>-<r>.<dist>
.noarch.rpm, dist el8/el9/slemicro; Requires(post) container-selinux).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..settings import versions
from ..settings.os_images import OS_IMAGES

# EC2 architecture -> RKE2's artifact suffix (install.sh setup_arch)
RKE2_ARCH = {"x86_64": "amd64", "arm64": "arm64"}
INSTALL_SCRIPT = "install.sh"
SUC_FILES = ("crd.yaml", "system-upgrade-controller.yaml")  # versions.SUC_MANIFEST_URLS' assets


def release_files(arch: str) -> tuple[str, ...]:
    """The release's files install.sh reads from INSTALL_RKE2_ARTIFACT_PATH for an EC2 architecture, in
    the order a node fetches them (scripts/airgap.sh)."""
    a = RKE2_ARCH[arch]
    return (f"sha256sum-{a}.txt", f"rke2.linux-{a}.tar.gz", f"rke2-images.linux-{a}.tar.zst")


def _join(prefix: str, *parts: str) -> str:
    return "/".join(p for p in (prefix.strip("/"), *parts) if p)


def release_prefix(prefix: str, release: str) -> str:
    """`<prefix>/<release>/`, the key prefix a node fetches the release's files under."""
    return _join(prefix, release) + "/"


def install_script_key(prefix: str, release: str) -> str:
    return release_prefix(prefix, release) + INSTALL_SCRIPT


def rpm_prefix(prefix: str, os: str) -> str | None:
    """`<prefix>/rpms/<dist>/` for an SELinux OS (its rke2-selinux build), None otherwise."""
    dist = OS_IMAGES[os].selinux_dist
    return _join(prefix, "rpms", dist) + "/" if dist else None


def suc_keys(prefix: str, version: str = versions.SUC_VERSION) -> tuple[str, ...]:
    return tuple(_join(prefix, "system-upgrade-controller", version, f) for f in SUC_FILES)


@dataclass(frozen=True)
class Needed:
    """One thing the bucket must hold: a key, or a pattern of keys under a prefix."""
    what: str  # how a user finds it
    key: str | None = None
    under: str | None = None
    pattern: str | None = None  # fnmatch pattern of the file name under `under`

    def found(self, keys: set[str]) -> bool:
        if self.key is not None:
            return self.key in keys
        assert self.under is not None and self.pattern is not None
        return any(k.startswith(self.under) and fnmatch.fnmatchcase(k[len(self.under):], self.pattern) for k in keys)

    @property
    def where(self) -> str:
        return self.key if self.key is not None else f"{self.under}{self.pattern}"


def needed_artifacts(prefix: str, release: str, archs: Iterable[str], oses: Iterable[str] = (), *,
                     preinstalled: bool = False, upgrades: bool = False) -> list[Needed]:
    """Everything the nodes of a cluster read from the bucket: the release for each architecture a
    pool runs (none with `preinstalled`), the SELinux policy for each SELinux OS a pool runs (none
    with `preinstalled`: the image holds it), and system-upgrade-controller's manifests when the
    program manages upgrades."""
    out: list[Needed] = []
    if not preinstalled:
        out.append(Needed(f"RKE2's install script for {release}", key=install_script_key(prefix, release)))
        for arch in sorted(set(archs)):
            for file in release_files(arch):
                out.append(Needed(f"RKE2 {release} release asset {file}", key=release_prefix(prefix, release) + file))
        for os in sorted(set(oses)):
            image = OS_IMAGES[os]
            under = rpm_prefix(prefix, os)
            if under is None:
                continue
            out.append(Needed(f"rke2-selinux for {image.title} (rancher/rke2-selinux release asset, .{image.selinux_dist})",
                              under=under, pattern=f"rke2-selinux-*.{image.selinux_dist}.noarch.rpm"))
            if image.offline_container_selinux:
                out.append(Needed(f"container-selinux for {image.title} (rke2-selinux requires it; the OS's "
                                  f"repositories are out of reach)", under=under, pattern="container-selinux-*.rpm"))
            if image.package_manager in ("zypper", "transactional-update"):
                out.append(Needed("Rancher's rpm signing key (https://rpm.rancher.io/public.key), for zypper",
                                  under=under, pattern="*.key"))
    if upgrades:
        for key in suc_keys(prefix):
            out.append(Needed(f"system-upgrade-controller {versions.SUC_VERSION} manifest", key=key))
    return out


def missing_artifacts(listing: Iterable[str], bucket: str, needed: Iterable[Needed]) -> list[str]:
    """What the bucket's listing (every key under the prefix) lacks, one line each, naming the key:
    [] when nothing is missing."""
    keys = set(listing)
    return [f"s3://{bucket}/{n.where}: {n.what}" for n in needed if not n.found(keys)]


def artifacts_policy_document(partition: str, bucket: str, prefix: str) -> dict[str, Any]:
    """What a node may do in the artifacts bucket: read the objects under the prefix and list that prefix
    (the boot script lists the rpm folder), nothing else."""
    arn = f"arn:{partition}:s3:::{bucket}"
    under = prefix.strip("/")
    objects = f"{arn}/{under}/*" if under else f"{arn}/*"
    statements: list[dict[str, Any]] = [
        {"Sid": "ReadArtifacts", "Effect": "Allow", "Action": ["s3:GetObject"], "Resource": objects},
        {"Sid": "ListArtifacts", "Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": arn},
    ]
    if under:
        statements[1]["Condition"] = {"StringLike": {"s3:prefix": [f"{under}/*"]}}
    return {"Version": "2012-10-17", "Statement": statements}


def readme_commands(release: str, archs: Iterable[str], bucket: str, prefix: str) -> str:
    """The commands that fill the bucket from RKE2's GitHub release (for the README and error messages),
    checksums verified before the upload."""
    base = f"https://github.com/rancher/rke2/releases/download/{release.replace('+', '%2B')}"
    target = f"s3://{bucket}/{release_prefix(prefix, release)}"
    lines = ["curl -sfL https://get.rke2.io -o install.sh"]
    for arch in sorted(set(archs)):
        for file in release_files(arch):
            lines.append(f"curl -sfLO {base}/{file}")
    for arch in sorted(set(archs)):
        a = RKE2_ARCH[arch]
        lines.append(f"grep -E ' (rke2.linux-{a}.tar.gz|rke2-images.linux-{a}.tar.zst)$' sha256sum-{a}.txt | sha256sum -c -")
    lines.append(f"aws s3 cp install.sh {target}")
    for arch in sorted(set(archs)):
        for file in release_files(arch):
            lines.append(f"aws s3 cp {file} {target}")
    return "\n".join(lines)


def bucket_problems(bucket_region: str | None, region: str, bucket_partition: str | None = None,
                    partition: str | None = None) -> list[str]:
    """A bucket in another region (or partition) cannot be read through this VPC's S3 gateway endpoint:
    "cross-region requests are not supported" through VPC endpoints (AWS Systems Manager User Guide,
    setup-create-vpc.md; Amazon VPC "Gateway endpoints for Amazon S3": same Region only)."""
    out: list[str] = []
    if bucket_partition and partition and bucket_partition != partition:
        out.append(f"the bucket is in partition {bucket_partition}, the cluster in {partition}")
    elif bucket_region and bucket_region != region:
        out.append(f"the bucket is in {bucket_region}, the cluster in {region}: the S3 gateway endpoint reaches "
                   f"buckets of its own region only")
    return out
