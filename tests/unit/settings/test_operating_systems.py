"""nodePools[].os and fips (issue 35 items 3-4): the keys, the rules naming `nodePools[<name>].os`, the image each
pool looks up, the login user RKE1 writes, and what a running pool's OS change means. The facts behind each
refusal are the vendors' and RKE2's, cited in components/settings/os_images.py and below; the tests hold the
rules to them."""

from __future__ import annotations

import json

import pytest

from rke_aws.diagnostics import Severity
from rke_aws.node import rke1_cluster
from rke_aws.plan import machine_checks, network, nodes
from rke_aws.settings import fields, os_images
from rke_aws.settings.os_images import OS_IMAGES
from tests.support.diagnostics import assert_refused, refusal
from tests.support.fake_lookups import FakeLookups, environment
from tests.support.stackconfig import parse_flat

SERVERS = {"name": "servers", "roles": ["controlplane", "etcd"], "count": 3}
AGENTS = {"name": "agents", "roles": ["worker"], "count": 2}


def flat(pools: list[dict], region: str = "us-west-2", distribution: str = "rke2", **keys: object) -> dict[str, str]:
    return {"aws:region": region, "rke-aws:distribution": distribution, "rke-aws:nodePools": json.dumps(pools),
            **{f"rke-aws:{k}": v if isinstance(v, str) else json.dumps(v) for k, v in keys.items()}}


def test_the_keys_vocabulary_is_the_os_table():
    assert fields.OS_NAMES == tuple(OS_IMAGES)
    assert fields.DEFAULT_OS == os_images.DEFAULT_OS == "ubuntu-24.04"


def test_a_pool_without_os_runs_ubuntu_and_fips_is_off():
    cfg = parse_flat(flat([SERVERS, AGENTS]))
    assert [p.os for p in cfg.node_pools] == ["ubuntu-24.04", "ubuntu-24.04"] and cfg.fips is False


def test_a_misspelt_os_is_refused_by_pool_name_with_the_nearest_value():
    found = refusal(flat([SERVERS, {**AGENTS, "os": "rhel9"}]))
    assert_refused(found, ("nodePools[agents].os", "config.allowed-values"))
    (d,) = found
    assert "did you mean rhel-9?" in d.message and "al2023" in d.message and d.value == "rhel9"


def test_rke1_only_where_rke_runs_docker_every_pool_at_once():
    """rancher/rancher#31645 (RKE1 on Amazon Linux) is open, not validated; SLE Micro ships no Docker (research
    sheet §6); RKE1 on RHEL/Rocky 9.5 was validated (rancher/rancher#48550)."""
    pools = [{**SERVERS, "os": "rhel-9"}, {**AGENTS, "os": "al2023"},
             {"name": "micro", "roles": ["worker"], "count": 1, "os": "sle-micro-6"}]
    found = refusal(flat(pools, distribution="rke"))
    assert_refused(found, ("nodePools[agents].os", "pool.os"), ("nodePools[micro].os", "pool.os"))
    assert all("RKE1 pools may run ubuntu-24.04, rhel-9, rocky-9, sles-15" in d.message for d in found)


@pytest.mark.parametrize("os_name, region, refused", [
    ("rocky-9", "us-gov-west-1", True),  # no Rocky publisher in GovCloud (research sheet §5)
    ("sles-15", "cn-north-1", True),  # SUSE's China account only in third-party code: not trusted
    ("sle-micro-6", "us-gov-west-1", True),
    ("rhel-9", "cn-north-1", False),  # Red Hat publishes in China as 841258680906 (aws/eks-hybrid rhel.go)
    ("al2023", "us-gov-west-1", False),  # 045324592363 (awslabs/amazon-eks-ami Makefile)
    ("ubuntu-24.04", "cn-north-1", False),
])
def test_an_os_is_refused_where_its_vendor_publishes_no_image(os_name, region, refused):
    cfg = flat([SERVERS, {**AGENTS, "os": os_name}], region=region)
    if refused:
        found = refusal(cfg)
        assert_refused(found, ("nodePools[agents].os", "pool.os"))
        assert "set the pool's `ami`" in found[0].message
        # the user's own image is the way out
        parse_flat(flat([SERVERS, {**AGENTS, "os": os_name, "ami": "ami-0123456789abcdef0"}], region=region))
    else:
        parse_flat(cfg)


def test_fips_on_rke1_is_refused_once_at_the_key():
    found = refusal(flat([SERVERS, AGENTS], distribution="rke", fips=True))
    assert ("fips", "fips.rke1") in {(d.key, d.code) for d in found}
    assert [d.key for d in found if d.code == "fips.rke1"] == ["fips"]


def test_fips_needs_an_os_in_fips_mode():
    """RHEL 9 and AL2023 switch with fips-mode-setup at first boot (Red Hat "Security hardening" ch. 2; AWS
    "Enable FIPS Mode on AL2023"); Ubuntu's FIPS modules come with Ubuntu Pro images only (Canonical), SUSE's
    fips-mode-setup refuses on SLE Micro's read-only root (research sheet §4): those need the user's FIPS `ami`."""
    found = refusal(flat([{**SERVERS, "os": "rhel-9"}, AGENTS], fips=True))
    assert_refused(found, ("nodePools[agents].os", "pool.os"))
    cfg = parse_flat(flat([{**SERVERS, "os": "rhel-9"}, {**AGENTS, "os": "al2023"}], fips=True))
    assert cfg.fips is True
    assert [d.code for d in cfg.diagnostics if d.severity == Severity.WARNING] == ["fips.ccm-not-validated",
                                                                                   "fips.ingress"]
    # rke2-docs security/fips_support.md "Ingress": NGINX is RKE2's FIPS-compliant ingress
    nginx = parse_flat(flat([{**SERVERS, "os": "rhel-9"}, {**AGENTS, "os": "rhel-9"}], fips=True,
                            ingress={"controller": "ingress-nginx"}))
    assert "fips.ingress" not in [d.code for d in nginx.diagnostics]
    own = "ami-0123456789abcdef0"  # the user's FIPS image (Ubuntu Pro FIPS, say)
    parse_flat(flat([{**SERVERS, "ami": own}, {**AGENTS, "ami": own}], fips=True))


def test_fips_on_graviton_is_refused_at_plan_time_naming_the_pool():
    """rke2-docs security/about_hardened_images.md: only linux/amd64 hardened images are FIPS-compliant."""
    cfg = parse_flat(flat([{**SERVERS, "os": "rhel-9"}, {**AGENTS, "os": "al2023", "instanceType": "m7g.large"}],
                          fips=True))
    problems = machine_checks.os_architecture_problems(cfg, {"servers": "x86_64", "agents": "arm64"})
    assert [(d.key, d.code) for d in problems] == [("nodePools[agents].os", "pool.os-arm64")]
    assert "linux/amd64" in problems[0].message
    assert machine_checks.os_architecture_problems(cfg, {"servers": "x86_64", "agents": "x86_64"}) == []


@pytest.mark.parametrize("region", ["us-west-2", "us-gov-west-1", "cn-north-1"])
def test_each_pool_looks_up_its_vendors_image_by_owner_and_name_for_its_architecture(region):
    pools = [{**SERVERS, "os": "rhel-9"}, AGENTS, {"name": "arm", "roles": ["worker"], "count": 1, "os": "al2023",
                                                   "instanceType": "m7g.large"}]
    cfg = parse_flat(flat(pools, region=region))
    lookups = FakeLookups()
    machine_checks.default_images(cfg, {"servers": "x86_64", "agents": "x86_64", "arm": "arm64"},
                                  environment(lookups))
    partition = cfg.partition.name
    asked = [args for method, args in lookups.calls if method == "latest_image"]  # (owners, name)
    rhel = OS_IMAGES["rhel-9"].image(partition, "x86_64")
    al2023 = OS_IMAGES["al2023"].image(partition, "arm64")
    assert rhel and al2023
    # Ubuntu is asked exactly as before `os` (one owner, as a string): the default stacks' plans stay the same
    assert sorted(map(str, asked)) == sorted(map(str, [rhel, (cfg.partition.ubuntu_owner, OS_IMAGES["ubuntu-24.04"].images[
        partition].names["x86_64"]), al2023]))


def test_rke1_logs_in_as_each_oss_user():
    """cluster.yml `user` per node: Ubuntu's access.sshUser; ec2-user on RHEL (rancher/terraform-aws-server
    types.tf rhel-9), rocky on Rocky's images (rancher/rancher#48550), ec2-user on SLES 15."""
    pools = [{**SERVERS, "os": "rhel-9"}, {**AGENTS, "os": "rocky-9"},
             {"name": "sles", "roles": ["worker"], "count": 1, "os": "sles-15"},
             {"name": "ubuntu", "roles": ["worker"], "count": 1}]
    cfg = parse_flat(flat(pools, distribution="rke"))
    topology = network.plan(cfg, None, environment())
    planned = nodes.plan(cfg, None, topology).nodes
    doc = rke1_cluster.rke_cluster_config(planned, {}, cluster_id="c", kubernetes_version="v1.32.7-rancher1-1",
                                          ssh_user=cfg.access.ssh_user, ssh_key_path=None, leader_migration=False)
    users = {n["hostname_override"]: n["user"] for n in doc["nodes"]}
    by_pool = {n.pool.name: users[n.name] for n in planned}
    assert by_pool == {"servers": "ec2-user", "agents": "rocky", "sles": "ec2-user", "ubuntu": "ubuntu"}
