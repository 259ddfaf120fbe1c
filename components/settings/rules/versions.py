"""kubernetesVersion: a canonical release name of the distribution, and a release components/settings/versions.py
knows (or the one the stack runs now); unset, what the stack runs (a new default never upgrades a running
cluster), or the default for a new stack."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...diagnostics import Diagnostic
from .. import versions
from ..fields import DEFAULT_KUBERNETES_VERSION, RKE2_VERSION_PATTERN, RKE_VERSION_PATTERN, json_text
from .base import Context, Keys, Running, error, warning

RKE_VERSION_RE = re.compile(RKE_VERSION_PATTERN)
RKE2_VERSION_RE = re.compile(RKE2_VERSION_PATTERN)


def kubernetes_minor(distribution: str | None, version: str | None) -> int | None:
    if distribution is None or version is None:
        return None
    pattern = RKE_VERSION_RE if distribution == "rke" else RKE2_VERSION_RE
    m = pattern.fullmatch(version)
    return int(m.group(1)) if m else None


def known_releases(distribution: str) -> Iterable[str]:
    """The releases components/settings/versions.py knows for a distribution."""
    return versions.RKE_RELEASES if distribution == "rke" else versions.RKE2_RELEASES


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"[0-9]+", release))


def _running(distribution: str, running: Running | None) -> str | None:
    version = running.kubernetes_version if running else None
    return version if version and kubernetes_minor(distribution, version) is not None else None


def effective(keys: Keys, running: Running | None) -> str | None:
    """The release the version-dependent rules judge: the one given or, once the running cluster is known, the
    resolved one; None when it is not a release this program may run (its problem is `check`'s)."""
    distribution, given = keys.valid.distribution, keys.valid.kubernetes_version
    if distribution is None:
        return None
    current = _running(distribution, running)
    if given is None and running is None:
        return None  # what the stack runs decides: settings/resolve.py
    kver = given if given is not None else (current or DEFAULT_KUBERNETES_VERSION[distribution])
    if kubernetes_minor(distribution, kver) is None:
        return None
    return kver if kver in known_releases(distribution) or kver == current else None


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    distribution, given = keys.valid.distribution, keys.valid.kubernetes_version
    if distribution is None:
        return []
    default = DEFAULT_KUBERNETES_VERSION[distribution]
    running = _running(distribution, ctx.running)
    found: list[Diagnostic] = []
    if given is None and ctx.running is None:
        return found
    kver = given if given is not None else (running or default)
    if given is None and running and running != default:
        found.append(warning("kubernetesVersion", f"not set, so this stack stays on {running}, which it runs (the "
                                                  f"default for new stacks is {default}); set kubernetesVersion to "
                                                  "upgrade", "versions.stays", running))
    minor = kubernetes_minor(distribution, kver)
    if minor is None:
        form = "v1.X.Y-rancherN-M" if distribution == "rke" else "v1.X.Y+rke2rN"
        found.append(error("kubernetesVersion", f"{json_text(kver)} is not an {distribution.upper()} release name; write "
                                                f"it like {default} ({form}, digits 0-9 without leading zeros)",
                           "versions.form", kver))
        return found
    known = known_releases(distribution)
    if kver in known or kver == running or ctx.running is None:
        return found  # an unknown release may be the running one: judged once the running cluster is known
    same = sorted((r for r in known if kubernetes_minor(distribution, r) == minor), key=_release_key)
    # Every known release parses (tests/unit/test_versions.py); the filter only tells the type checker.
    minors = sorted({m for m in (kubernetes_minor(distribution, r) for r in known) if m is not None})
    # A known release of a minor without a CCM image tag is refused unless ccm.image is set
    # (rules/ccm.py): the list says so rather than offer it plainly (review finding 9).
    needs = " (no CCM image of this program for 1.{m}: needs ccm.image)"
    listed = (f"known 1.{minor} releases: {', '.join(same)}"
              + (needs.format(m=minor) if minor not in versions.CCM_IMAGE_TAGS else "") if same else
              f"no 1.{minor} release is known; known minors: "
              + ", ".join(f"1.{m}" + (" (needs ccm.image)" if m not in versions.CCM_IMAGE_TAGS else "")
                          for m in minors))
    where = ("RKE_RELEASES, from the rke releases' own lists" if distribution == "rke" else
             "RKE2_RELEASES, from RKE2's release notes, with each release's etcd version")
    found.append(error("kubernetesVersion", f"{json_text(kver)} is not a release this program knows; {listed}. A newer "
                                            f"release goes into components/settings/versions.py {where}",
                       "versions.unknown", kver))
    return found
