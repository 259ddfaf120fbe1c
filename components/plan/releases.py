"""Kubernetes release names as RKE and RKE2 write them, ordered as the releases are; pure."""

from __future__ import annotations

import re

# v1.X.Y, v1.X.Y+rke2rN (RKE2), v1.X.Y-rancherN-M (RKE1: RKE builds M of Rancher's build N; a later
# M ships fixed system images, so -rancher1-2 after -rancher1-3 is a downgrade: review finding 8).
_VERSION_RE = re.compile(r"^v1\.(\d+)\.(\d+)(?:-rancher(\d+)(?:-(\d+))?|\+rke2r(\d+))?", re.ASCII)


def parse_version(version: str) -> tuple[int, int, int, int] | None:
    """(minor, patch, build, RKE1 sub-build): ordered as the releases are."""
    m = _VERSION_RE.match(version or "")
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or m.group(5) or 0), int(m.group(4) or 0))


def runs_version(kubelet: str, target: str) -> bool:
    """A kubelet's reported version is `target` (minor and patch; RKE2's build when reported:
    kubelets report v1.X.Y+rke2rN, RKE1 kubelets v1.X.Y without RKE's -rancherN-N)."""
    k, t = parse_version(kubelet), parse_version(target)
    if k is None or t is None:
        return False
    return k[:2] == t[:2] and ("+rke2r" not in kubelet or k[2] == t[2])


def image_minor(image: str | None) -> int | None:
    """The Kubernetes minor of an image tag (`...:v1.33.4` -> 33)."""
    m = re.search(r":v1\.(\d+)\.", image or "")
    return int(m.group(1)) if m else None
