"""Kubernetes releases on a running cluster, pure: the etcd 3.5 -> 3.6 stepping stone RKE2's release notes demand
(rancher/rke2-docs docs/release-notes/v1.33.X.md, "RKE2 v1.34 Upgrade Warning": no safe path from etcd 3.5 to
3.6 but through 3.5.26), and RKE1 builds ordered by every number of their name (review finding 8)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws.plan import releases
from rke_aws.plan.day2 import versions as day2
from rke_aws.plan.day2.confirmations import Observed
from rke_aws.settings import versions
from tests.support.properties import examples
from tests.support.releases import etcd, key, minor
from tests.support.states import state


def texts(found) -> list[str]:
    return [d.render() for d in found]


# ---- the etcd stepping stone --------------------------------------------------------------------

@pytest.mark.parametrize("running, wanted, through", [
    ("v1.33.5+rke2r1", "v1.33.11+rke2r1", "v1.33.10+rke2r3"),  # a patch upgrade on 1.33 (3.5.21 -> 3.6.7)
    ("v1.33.7+rke2r1", "v1.33.13+rke2r2", "v1.33.10+rke2r3"),  # 3.5.25 is not enough
    ("v1.33.5+rke2r1", "v1.34.10+rke2r1", "v1.33.10+rke2r3"),  # a minor upgrade
    ("v1.32.5+rke2r1", "v1.33.11+rke2r1", "v1.32.13+rke2r1"),  # 1.32's own 3.5.26 first
])
def test_etcd_3_5_to_3_6_goes_through_3_5_26(running, wanted, through):
    (problem,) = texts(day2.etcd_stepping_stone_problems(running, wanted))
    assert problem.startswith(f"rke-aws:kubernetesVersion: {wanted} runs etcd {versions.RKE2_RELEASES[wanted]}, but "
                              f"the cluster runs {running}, which runs etcd {versions.RKE2_RELEASES[running]}"), problem
    assert problem.endswith(f"etcd goes from 3.5 to 3.6 safely only from 3.5.26 (RKE2's release notes: removed members "
                            f"can come back and cost quorum): set kubernetesVersion to {through} (etcd "
                            f"{versions.RKE2_RELEASES[through]}) first, `pulumi up`, wait until every server runs it "
                            f"(`kubectl get nodes`), then {wanted}"), problem


@pytest.mark.parametrize("running, wanted", [
    ("v1.33.10+rke2r3", "v1.33.11+rke2r1"), ("v1.33.8+rke2r1", "v1.34.1+rke2r1"), ("v1.32.13+rke2r1", "v1.33.11+rke2r1"),
    ("v1.33.5+rke2r1", "v1.33.9+rke2r1"), ("v1.33.11+rke2r1", "v1.34.10+rke2r1"), ("v1.31.5+rke2r1", "v1.32.13+rke2r1"),
])
def test_other_version_changes_pass_the_etcd_guard(running, wanted):
    assert day2.etcd_stepping_stone_problems(running, wanted) == []


def test_an_unknown_running_release_is_not_assumed_safe():
    (problem,) = texts(day2.etcd_stepping_stone_problems("v1.33.99+rke2r1", "v1.34.1+rke2r1"))
    assert problem == (
        "rke-aws:kubernetesVersion: v1.34.1+rke2r1 runs etcd 3.6.4, but the cluster runs v1.33.99+rke2r1, whose etcd "
        "version this program does not know (add it to components/settings/versions.py RKE2_RELEASES from its release notes if it "
        "already runs etcd 3.5.26 or later); etcd goes from 3.5 to 3.6 safely only from 3.5.26 (RKE2's release notes: "
        "removed members can come back and cost quorum): no release this program knows leads there; go through an RKE2 "
        "release with etcd 3.5.26 or a later 3.5 first"), problem


UPGRADES = [(a, b) for a in versions.RKE2_RELEASES for b in versions.RKE2_RELEASES
            if key(a) < key(b) and minor(b) - minor(a) <= 1 and minor(a) >= 31]


@settings(max_examples=examples(400), deadline=None)
@given(st.sampled_from(UPGRADES))
def test_the_guard_refuses_exactly_the_unsafe_moves_and_its_advice_is_safe(pair):
    running, wanted = pair
    refused = texts(day2.etcd_stepping_stone_problems(running, wanted))
    unsafe = etcd(running) < (3, 5, 26) and etcd(wanted) >= (3, 6, 0)
    assert bool(refused) == unsafe, (running, wanted, refused)
    if refused:
        via = re.search(r"set kubernetesVersion to (\S+) ", refused[0]).group(1)
        assert key(running) < key(via) < key(wanted) and minor(via) in (minor(running), minor(running) + 1)
        assert (3, 5, 26) <= etcd(via) < (3, 6, 0)
        assert day2.etcd_stepping_stone_problems(running, via) == []
        assert day2.etcd_stepping_stone_problems(via, wanted) == []


def test_the_guard_is_part_of_the_version_check_for_rke2_only():
    prev = state(kubernetes_version="v1.33.5+rke2r1")
    (problem,) = day2.version_problems(prev, "rke2", "v1.33.11+rke2r1")
    assert (problem.key, problem.code) == ("kubernetesVersion", "etcd.stepping-stone")
    assert "v1.33.10+rke2r3" in problem.message
    prev1 = state(distribution="rke", kubernetes_version="v1.32.4-rancher1-1")
    assert day2.version_problems(prev1, "rke", "v1.32.5-rancher1-1") == []


# ---- RKE1 builds (review finding 8) -----------------------------------------------------------

def rke1_release(minor_: int, patch: int, build: int, sub: int) -> str:
    return f"v1.{minor_}.{patch}-rancher{build}-{sub}"


@given(st.tuples(*[st.integers(1, 40)] * 4), st.tuples(*[st.integers(1, 40)] * 4))
def test_rke1_releases_order_by_every_number_of_their_name(a, b):
    """v1.X.Y-rancherN-M: rancher/rke publishes a later M of the same N as a new release (fixed
    system images, e.g. v1.25.16-rancher2-3 in versions.RKE_RELEASES), so the order is the order of
    all four numbers; a change in M alone is a change, and a lower M a downgrade."""
    pa, pb = releases.parse_version(rke1_release(*a)), releases.parse_version(rke1_release(*b))
    assert (pa < pb) == (a < b) and (pa == pb) == (a == b), (a, b, pa, pb)
    old = state(distribution="rke", kubernetes_version=rke1_release(*a))
    complete = day2.VersionState(rke1_release(*a), True, rke1_release(*a), a[0])
    problems = day2.version_problems(old, "rke", rke1_release(*b), complete, Observed())
    if b < a:
        assert problems and problems[0].code == "version.downgrade", (a, b, problems)
    elif b == a:
        assert problems == []


def test_an_rke1_build_downgrade_is_refused():
    old = state(distribution="rke", kubernetes_version="v1.32.13-rancher1-3")
    complete = day2.VersionState("v1.32.13-rancher1-3", True, "v1.32.13-rancher1-3", 32)
    (problem,) = texts(day2.version_problems(old, "rke", "v1.32.13-rancher1-2", complete, Observed()))
    assert problem.startswith("rke-aws:kubernetesVersion: v1.32.13-rancher1-2 is a downgrade")
    assert releases.parse_version("v1.34.10+rke2r2") == (34, 10, 2, 0)
