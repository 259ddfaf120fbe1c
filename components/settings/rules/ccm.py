"""ccm: flags that are flags and not this program's own, an image pinned to a release, a CCM release for the
cluster's minor, manifest mode on RKE2 only, leader migration only where the in-tree provider still exists."""

from __future__ import annotations

import re

from ...diagnostics import Diagnostic
from .. import versions
from ..fields import FLAG_PATTERN, PROGRAM_FLAGS, shown
from .base import Context, Keys, error, warning
from .versions import kubernetes_minor

FLAG_RE = re.compile(FLAG_PATTERN)
# The in-tree AWS provider was removed in Kubernetes 1.27.
IN_TREE_REMOVED_MINOR = 27
# A release tag (v1.33.4, 1.33.4-eks-1); anything else (stable, main, dev) is a moving tag.
VERSION_TAG_RE = re.compile(r":v?[0-9]+\.[0-9]+(?:\.[0-9]+)?(?:[-+._][A-Za-z0-9.-]*)?\Z")


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    ccm, distribution, kver = keys.valid.ccm, keys.valid.distribution, ctx.kubernetes_version
    found: list[Diagnostic] = []
    for i, a in enumerate(ccm.extra_args):
        key = f"ccm.extraArgs[{i}]"
        if not FLAG_RE.fullmatch(a):
            found.append(error(key, f"{shown(a)} is not a flag; write each flag as one --name=value entry (ASCII, no "
                                    "spaces or invisible characters: each entry is one argument)", "ccm.flag", a))
        elif a.split("=")[0] in PROGRAM_FLAGS:
            found.append(error(key, f"'{a}' is set by this program; remove it", "ccm.program-flag", a))
        elif a.split("=")[0] == "--enable-leader-migration" and ccm.leader_migration:
            found.append(error(key, f"'{a}' is already set by ccm.leaderMigration; remove it", "ccm.flag-twice", a))
    if ccm.image and "@sha256:" not in ccm.image and not VERSION_TAG_RE.search(ccm.image):
        found.append(warning("ccm.image", f"'{ccm.image}' is pinned by a tag that does not look like a release "
                                          "(vX.Y.Z); a registry may move it: pin the digest too (image:tag@sha256:...)",
                             "ccm.image-tag", ccm.image))
    minor = kubernetes_minor(distribution, kver)
    if minor is not None and ccm.image is None and minor not in versions.CCM_IMAGE_TAGS:
        known = ", ".join(f"1.{m}" for m in sorted(versions.CCM_IMAGE_TAGS))
        found.append(error("kubernetesVersion", f"{kver}: no aws-cloud-controller-manager release is known for "
                                                f"Kubernetes 1.{minor} (a CCM must not be newer than the cluster); use a "
                                                f"minor with one ({known}) or set ccm.image to a cloud-controller-manager "
                                                f"image for 1.{minor}", "ccm.no-image-for-minor", kver))
    if ccm.install == "manifest" and distribution == "rke":
        found.append(error("ccm.install", "'manifest' needs RKE2's manifests directory; with rke use helm",
                           "ccm.manifest-rke1", ccm.install))
    if ccm.leader_migration and minor is not None and minor >= IN_TREE_REMOVED_MINOR:
        found.append(error("ccm.leaderMigration", f"true needs the in-tree aws provider, which Kubernetes {kver} (>= "
                                                  f"1.{IN_TREE_REMOVED_MINOR}) no longer has; migrate on 1.26 or earlier, "
                                                  "or set leaderMigration false", "ccm.leader-migration", True))
    return found
