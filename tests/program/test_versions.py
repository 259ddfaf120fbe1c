"""Kubernetes versions in the configuration: only canonical names of releases components/settings/versions.py
knows, and a default that never upgrades a running cluster (the etcd stepping stone and RKE1 builds:
tests/unit/plan/test_releases.py; through the program: tests/program/day2/test_versions.py).

The release tables are checked against facts stated in prose elsewhere in the same release notes
(rancher/rke2-docs docs/release-notes/, 9477b7b1), not against a copy of themselves.
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws.diagnostics import ConfigError
from rke_aws.settings import resolve, stackfile, versions
from rke_aws.settings.rules import versions as versions_rules
from rke_aws_offline.engine import harness
from tests.support.releases import etcd, key, minor
from tests.support.stackconfig import parse_flat

INSTANCE = "aws:ec2/instance:Instance"
KUBECONFIG = "apiVersion: v1\nkind: Config\n"


def parse(cfg: dict, **kw) -> resolve.ClusterConfig:
    """parse_flat as the program calls it: the keys the CLI decrypted are secret (a `secure:`
    kubeconfig in stacks/ is refused as plain text otherwise)."""
    kw.setdefault("secret_keys", stackfile.secret_keys_of(cfg))
    return parse_flat(cfg, project="rke-aws", stack="rke2-dev", region=cfg["aws:region"], **kw)


def problems(cfg: dict, **kw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse(cfg, **kw)
    return info.value.problems


@pytest.fixture
def rke1_config() -> dict[str, str]:
    return copy.deepcopy(harness.stack_config("rke-dev"))


# ---- the tables, against the release notes' own statements --------------------------------------

def test_rke2_from_1_34_runs_etcd_3_6():
    """v1.33.X.md, "RKE2 v1.34 Upgrade Warning": "RKE2 v1.34 and higher include etcd 3.6"."""
    for release in versions.RKE2_RELEASES:
        if minor(release) >= 34:
            assert etcd(release)[:2] == (3, 6), release


def test_rke2_1_32_and_1_33_have_releases_with_etcd_3_5_26():
    """Same section: "The January releases of RKE2 v1.32 and v1.33 will include etcd v3.5.26"; the
    v1.33 changes list "Bump etcd to v3.5.26 (#9580)" under v1.33.7+rke2r3, v1.32 "(#9581)"."""
    for m in (32, 33):
        assert any(minor(r) == m and etcd(r) == (3, 5, 26) for r in versions.RKE2_RELEASES), m
    assert versions.RKE2_RELEASES["v1.33.7+rke2r3"] == "3.5.26"
    assert versions.ETCD_SAFE_BEFORE_3_6 == (3, 5, 26)


def test_rke2_table_holds_community_releases_in_canonical_form():
    for release, etcd_version in versions.RKE2_RELEASES.items():
        assert versions_rules.kubernetes_minor("rke2", release) is not None, release
        assert re.fullmatch(r"3\.[56]\.[0-9]+", etcd_version), (release, etcd_version)
    # Prime-only (their notes: "is a Prime-only release"): get.rke2.io cannot install them
    assert "v1.31.14+rke2r2" not in versions.RKE2_RELEASES and "v1.32.13+rke2r2" not in versions.RKE2_RELEASES
    # RKE2 supports 1.33-1.36; each supported minor has releases and a CCM line
    for m in (33, 34, 35, 36):
        assert any(minor(r) == m for r in versions.RKE2_RELEASES) and m in versions.CCM_IMAGE_TAGS, m


def test_defaults_are_known_current_releases():
    assert versions.RKE2_VERSION in versions.RKE2_RELEASES and minor(versions.RKE2_VERSION) == 35  # stable channel
    newest_35 = max((r for r in versions.RKE2_RELEASES if minor(r) == 35), key=key)
    assert versions.RKE2_VERSION == newest_35
    assert versions.RKE_KUBERNETES_VERSION in versions.RKE_RELEASES
    for release in versions.RKE_RELEASES:
        assert versions_rules.kubernetes_minor("rke", release) is not None, release
    # RKE1's way up from the leader-migration minor: every minor from 1.26 to 1.32 is known
    assert {versions_rules.kubernetes_minor("rke", r) for r in versions.RKE_RELEASES} >= set(range(26, 33))


# ---- accepted forms ------------------------------------------------------------------------------

NOT_CANONICAL = [
    "v1.033.5+rke2r1", "v1.33.05+rke2r1", "v1.33.5+rke2r01", "v1.33.5+rke2r0", "v01.33.5+rke2r1",
    "v1.٣٣.5+rke2r1", "v1.３３.5+rke2r1", "v1.33.5+rke2r1\n", " v1.33.5+rke2r1", "v1.33.5+RKE2r1", "V1.33.5+rke2r1",
    "v1.33.5", "1.33.5+rke2r1", "v1.33.5+rke2r1+x", "v1.33.5-rancher1-1",
]


@pytest.mark.parametrize("given_version", NOT_CANONICAL)
def test_non_canonical_rke2_versions_are_refused(base_config, given_version):
    base_config["rke-aws:kubernetesVersion"] = given_version
    (problem,) = problems(base_config)
    assert problem.startswith(f"rke-aws:kubernetesVersion: {json.dumps(given_version)} is not an RKE2 release name; "
                              f"write it like {versions.RKE2_VERSION}"), problem


@pytest.mark.parametrize("given_version", [
    "v1.032.5-rancher1-1", "v1.32.05-rancher1-1", "v1.32.5-rancher01-1", "v1.32.5-rancher1-01", "v1.٣٢.5-rancher1-1",
    "v1.32.5-rancher1", "v1.32.5+rke2r1",
])
def test_non_canonical_rke_versions_are_refused(rke1_config, given_version):
    rke1_config["rke-aws:kubernetesVersion"] = given_version
    expected = (f"rke-aws:kubernetesVersion: {json.dumps(given_version)} is not an RKE release name; write it like "
                f"{versions.RKE_KUBERNETES_VERSION} (v1.X.Y-rancherN-M, digits 0-9 without leading zeros)")
    assert expected in problems(rke1_config), problems(rke1_config)


@pytest.mark.reads_stacks
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="v1.0123456789+-rkeanch٣３", max_size=24))
def test_only_known_canonical_releases_pass(text):
    cfg = copy.deepcopy(harness.stack_config("rke2-dev"))
    cfg["rke-aws:kubernetesVersion"] = text
    try:
        parsed = parse(cfg)
    except ConfigError as err:
        assert all(p.startswith("rke-aws:kubernetesVersion: ") for p in err.problems) or text == "", err.problems
        return
    assert parsed.kubernetes_version in versions.RKE2_RELEASES or text == ""


def test_an_unknown_release_lists_the_known_ones_of_its_minor(base_config):
    base_config["rke-aws:kubernetesVersion"] = "v1.33.99+rke2r1"
    (problem,) = problems(base_config)
    assert problem.startswith('rke-aws:kubernetesVersion: "v1.33.99+rke2r1" is not a release this program knows; '), problem
    known_33 = sorted((r for r in versions.RKE2_RELEASES if minor(r) == 33), key=key)
    assert f"known 1.33 releases: {', '.join(known_33)}" in problem, problem
    assert "components/settings/versions.py RKE2_RELEASES" in problem and "etcd version" in problem, problem
    base_config["rke-aws:kubernetesVersion"] = "v1.99.1+rke2r1"
    (problem,) = problems(base_config)
    assert "no 1.99 release is known; known minors: 1.24 (needs ccm.image), 1.25 (needs ccm.image)" in problem
    assert "1.30, 1.31" in problem and "1.36" in problem, problem


def test_an_unknown_rke1_release_lists_the_known_ones(rke1_config):
    rke1_config["rke-aws:kubernetesVersion"] = "v1.32.99-rancher1-1"
    (problem,) = [p for p in problems(rke1_config) if p.startswith("rke-aws:kubernetesVersion")]
    known_32 = sorted((r for r in versions.RKE_RELEASES if minor(r) == 32), key=key)
    assert problem == ('rke-aws:kubernetesVersion: "v1.32.99-rancher1-1" is not a release this program knows; known 1.32 '
                       f"releases: {', '.join(known_32)}. A newer release goes into components/settings/versions.py "
                       "RKE_RELEASES, from the rke releases' own lists"), problem
    rke1_config["rke-aws:kubernetesVersion"] = "v1.20.1-rancher1-1"
    (problem,) = [p for p in problems(rke1_config) if p.startswith("rke-aws:kubernetesVersion")]
    assert ("no 1.20 release is known; known minors: 1.25 (needs ccm.image), 1.26 (needs ccm.image), 1.27 (needs "
            "ccm.image), 1.28 (needs ccm.image), 1.29 (needs ccm.image), 1.30, 1.31, 1.32.") in problem, problem


def test_the_known_releases_offered_plainly_are_the_ones_accepted_without_ccm_image(rke1_config):
    """Review finding 9: RKE_RELEASES knows 1.25-1.29, CCM_IMAGE_TAGS starts at 1.30 (no tag is
    added here without a verified source), so the message says which minors need ccm.image, and
    that note matches what the program refuses."""
    rke1_config["rke-aws:kubernetesVersion"] = "v1.20.1-rancher1-1"
    (problem,) = [p for p in problems(rke1_config) if p.startswith("rke-aws:kubernetesVersion")]
    listed = re.search(r"known minors: (.*)\. A newer", problem).group(1).split(", ")
    for entry in listed:
        m = int(entry.split()[0].split(".")[1])
        release = max((r for r in versions.RKE_RELEASES if minor(r) == m), key=key)
        rke1_config["rke-aws:kubernetesVersion"] = release
        try:
            parse(rke1_config)
            refused = []
        except ConfigError as err:
            refused = [p for p in err.problems if "no aws-cloud-controller-manager release is known" in p]
        assert bool(refused) == entry.endswith("(needs ccm.image)"), (entry, refused)
    rke1_config["rke-aws:kubernetesVersion"] = "v1.28.99-rancher1-1"
    (problem,) = [p for p in problems(rke1_config) if p.startswith("rke-aws:kubernetesVersion")]
    assert "known 1.28 releases: " in problem and "(no CCM image of this program for 1.28: needs ccm.image)" in problem


@pytest.mark.reads_stacks
def test_a_running_rke1_stack_stays_on_its_release(rke1_config):
    parsed = parse_flat(rke1_config, project="rke-aws", stack="rke-dev", region=rke1_config["aws:region"],
                          running_version="v1.31.9-rancher1-1", secret_keys=stackfile.secret_keys_of(rke1_config))
    assert parsed.kubernetes_version == "v1.31.9-rancher1-1"


def test_the_release_a_stack_runs_is_accepted_even_when_unknown(base_config):
    base_config["rke-aws:kubernetesVersion"] = "v1.33.99+rke2r1"
    assert parse(base_config, running_version="v1.33.99+rke2r1").kubernetes_version == "v1.33.99+rke2r1"


# ---- the default never upgrades a running cluster -----------------------------------------------

@pytest.mark.reads_stacks
def test_an_unset_version_is_the_default_for_a_new_stack_and_what_runs_for_a_running_one(base_config):
    assert "rke-aws:kubernetesVersion" not in base_config
    assert parse(base_config).kubernetes_version == versions.RKE2_VERSION
    running = parse(base_config, running_version="v1.33.5+rke2r1")
    assert running.kubernetes_version == "v1.33.5+rke2r1"
    assert any("stays on v1.33.5+rke2r1, which it runs" in w for w in running.warnings), running.warnings
    # an RKE1 version in the outputs of a stack now configured as RKE2 is no RKE2 release: ignored here
    # (plan/day2/versions.py version_problems refuses the distribution change)
    assert parse(base_config, running_version="v1.32.5-rancher1-1").kubernetes_version == versions.RKE2_VERSION


