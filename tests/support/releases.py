"""Orderings the release tests judge by, written from the release names themselves (not the program's
plan/releases.py): every number of a name in order, the minor, and the etcd a pinned RKE2 release carries."""

from __future__ import annotations

import functools
import re

from rke_aws.settings import versions


# Cached: test_releases orders every pair of the ~200 pinned releases when its module is imported.
@functools.cache
def key(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"[0-9]+", release))


def minor(release: str) -> int:
    return int(release.split(".")[1])


def etcd(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in versions.RKE2_RELEASES[release].split("."))
