"""Kubernetes versions: only canonical names of releases components/settings/versions.py knows, a default that
never upgrades a running cluster, and the etcd 3.5 -> 3.6 stepping stone RKE2's release notes demand.

The release tables are checked against facts stated in prose elsewhere in the same release notes
(rancher/rke2-docs docs/release-notes/, 9477b7b1), not against a copy of themselves.
"""

# split: this module mixes levels (issue 33 §7.2); the program runs -> tests/program.

from __future__ import annotations

import copy
import json
import re

import pulumi
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rke_aws.plan import guards, history
from rke_aws.settings import config, stackfile, versions
from rke_aws.settings.config import ConfigError
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.fake_aws import AwsLikeMocks
from tests.support.configs import set_key

INSTANCE = "aws:ec2/instance:Instance"
KUBECONFIG = "apiVersion: v1\nkind: Config\n"


def key(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"[0-9]+", release))


def minor(release: str) -> int:
    return int(release.split(".")[1])


def etcd(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in versions.RKE2_RELEASES[release].split("."))


def parse(cfg: dict, **kw) -> config.StackConfig:
    """config.parse as the program calls it: the keys the CLI decrypted are secret (a `secure:`
    kubeconfig in stacks/ is refused as plain text otherwise)."""
    kw.setdefault("secret_keys", stackfile.secret_keys_of(cfg))
    return config.parse(cfg, project="rke-aws", stack="rke2-dev", region=cfg["aws:region"], **kw)


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
        assert config.kubernetes_minor("rke2", release) is not None, release
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
        assert config.kubernetes_minor("rke", release) is not None, release
    # RKE1's way up from the leader-migration minor: every minor from 1.26 to 1.32 is known
    assert {config.kubernetes_minor("rke", r) for r in versions.RKE_RELEASES} >= set(range(26, 33))


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
    parsed = config.parse(rke1_config, project="rke-aws", stack="rke-dev", region=rke1_config["aws:region"],
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
    # (guards.version_problems refuses the distribution change)
    assert parse(base_config, running_version="v1.32.5-rancher1-1").kubernetes_version == versions.RKE2_VERSION


@pytest.mark.reads_stacks
def test_a_new_default_leaves_a_running_stack_on_its_release():
    """Day 2 through the program: a stack deployed when the default was v1.33.5 keeps it. With a
    kubeconfig (set here, whatever stacks/ holds) the upgrade Plans exist, and stay on that release."""
    cfg = set_key(harness.stack_config("rke2-prod"), "kubeconfig", stackfile.secret("apiVersion: v1\nkind: Config\n"))
    pinned = set_key(copy.deepcopy(cfg), "kubernetesVersion", "v1.33.5+rke2r1")
    before = harness.run_program(pinned, stack="rke2-prod")  # what the old default deployed
    assert before.outputs["kubernetesVersion"] == "v1.33.5+rke2r1"
    after = harness.run_program(cfg, stack="rke2-prod", previous_outputs=before.outputs)  # kubernetesVersion unset
    assert after.outputs["kubernetesVersion"] == "v1.33.5+rke2r1"
    old = {i.urn: i.inputs for i in before.of_type(INSTANCE)}
    assert all(i.inputs == old[i.urn] for i in after.of_type(INSTANCE))
    plans = {r.name: r.inputs["spec"]["version"] for r in after.resources if r.type == "kubernetes:upgrade.cattle.io/v1:Plan"}
    assert plans and set(plans.values()) == {"v1.33.5+rke2r1"}, plans
    assert any("stays on v1.33.5+rke2r1" in m for _, m in after.logs), after.logs


# ---- the etcd stepping stone --------------------------------------------------------------------

@pytest.mark.parametrize("running, wanted, through", [
    ("v1.33.5+rke2r1", "v1.33.11+rke2r1", "v1.33.10+rke2r3"),  # a patch upgrade on 1.33 (3.5.21 -> 3.6.7)
    ("v1.33.7+rke2r1", "v1.33.13+rke2r2", "v1.33.10+rke2r3"),  # 3.5.25 is not enough
    ("v1.33.5+rke2r1", "v1.34.10+rke2r1", "v1.33.10+rke2r3"),  # a minor upgrade
    ("v1.32.5+rke2r1", "v1.33.11+rke2r1", "v1.32.13+rke2r1"),  # 1.32's own 3.5.26 first
])
def test_etcd_3_5_to_3_6_goes_through_3_5_26(running, wanted, through):
    (problem,) = guards.etcd_stepping_stone_problems(running, wanted)
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
    assert guards.etcd_stepping_stone_problems(running, wanted) == []


def test_an_unknown_running_release_is_not_assumed_safe():
    (problem,) = guards.etcd_stepping_stone_problems("v1.33.99+rke2r1", "v1.34.1+rke2r1")
    assert problem == (
        "rke-aws:kubernetesVersion: v1.34.1+rke2r1 runs etcd 3.6.4, but the cluster runs v1.33.99+rke2r1, whose etcd "
        "version this program does not know (add it to components/settings/versions.py RKE2_RELEASES from its release notes if it "
        "already runs etcd 3.5.26 or later); etcd goes from 3.5 to 3.6 safely only from 3.5.26 (RKE2's release notes: "
        "removed members can come back and cost quorum): no release this program knows leads there; go through an RKE2 "
        "release with etcd 3.5.26 or a later 3.5 first"), problem


UPGRADES = [(a, b) for a in versions.RKE2_RELEASES for b in versions.RKE2_RELEASES
            if key(a) < key(b) and minor(b) - minor(a) <= 1 and minor(a) >= 31]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(UPGRADES))
def test_the_guard_refuses_exactly_the_unsafe_moves_and_its_advice_is_safe(pair):
    running, wanted = pair
    refused = guards.etcd_stepping_stone_problems(running, wanted)
    unsafe = etcd(running) < (3, 5, 26) and etcd(wanted) >= (3, 6, 0)
    assert bool(refused) == unsafe, (running, wanted, refused)
    if refused:
        via = re.search(r"set kubernetesVersion to (\S+) ", refused[0]).group(1)
        assert key(running) < key(via) < key(wanted) and minor(via) in (minor(running), minor(running) + 1)
        assert (3, 5, 26) <= etcd(via) < (3, 6, 0)
        assert guards.etcd_stepping_stone_problems(running, via) == []
        assert guards.etcd_stepping_stone_problems(via, wanted) == []


def test_the_guard_is_part_of_the_version_check_for_rke2_only():
    prev = history.Previous(distribution="rke2", kubernetes_version="v1.33.5+rke2r1")
    (problem,) = guards.version_problems(prev, "rke2", "v1.33.11+rke2r1")
    assert "v1.33.10+rke2r3" in problem
    prev1 = history.Previous(distribution="rke", kubernetes_version="v1.32.4-rancher1-1")
    assert guards.version_problems(prev1, "rke", "v1.32.5-rancher1-1") == []


def test_an_unsafe_upgrade_is_refused_before_anything_is_registered():
    cfg = set_key(harness.stack_config("rke2-prod"), "kubeconfig", stackfile.secret(KUBECONFIG))
    cfg = set_key(cfg, "kubernetesVersion", "v1.33.5+rke2r1")
    before = harness.run_program(cfg, stack="rke2-prod")
    mocks = AwsLikeMocks(cfg["aws:region"])
    with pytest.raises(pulumi.RunError, match=r"set kubernetesVersion to v1.33.10\+rke2r3 \(etcd 3.5.26\) first"):
        harness.run_program(set_key(copy.deepcopy(cfg), "kubernetesVersion", "v1.33.11+rke2r1"), stack="rke2-prod",
                            mocks=mocks, previous_outputs=before.outputs)
    assert mocks.resources == [], "registered before refusing"


# ---- RKE1 builds (review finding 8) -----------------------------------------------------------

def rke1_release(minor_: int, patch: int, build: int, sub: int) -> str:
    return f"v1.{minor_}.{patch}-rancher{build}-{sub}"


@given(st.tuples(*[st.integers(1, 40)] * 4), st.tuples(*[st.integers(1, 40)] * 4))
def test_rke1_releases_order_by_every_number_of_their_name(a, b):
    """v1.X.Y-rancherN-M: rancher/rke publishes a later M of the same N as a new release (fixed
    system images, e.g. v1.25.16-rancher2-3 in versions.RKE_RELEASES), so the order is the order of
    all four numbers; a change in M alone is a change, and a lower M a downgrade."""
    pa, pb = history.parse_version(rke1_release(*a)), history.parse_version(rke1_release(*b))
    assert (pa < pb) == (a < b) and (pa == pb) == (a == b), (a, b, pa, pb)
    old = history.Previous("rke", rke1_release(*a), (), cluster_id="c")
    state = history.VersionState(rke1_release(*a), True, rke1_release(*a), a[0])
    problems = guards.version_problems(old, "rke", rke1_release(*b), state, history.Observed())
    if b < a:
        assert problems and "is a downgrade" in problems[0], (a, b, problems)
    elif b == a:
        assert problems == []


def test_an_rke1_build_downgrade_is_refused():
    old = history.Previous("rke", "v1.32.13-rancher1-3", (), cluster_id="c")
    state = history.VersionState("v1.32.13-rancher1-3", True, "v1.32.13-rancher1-3", 32)
    (problem,) = guards.version_problems(old, "rke", "v1.32.13-rancher1-2", state, history.Observed())
    assert problem.startswith("rke-aws:kubernetesVersion: v1.32.13-rancher1-2 is a downgrade")
    assert history.parse_version("v1.34.10+rke2r2") == (34, 10, 2, 0)
