"""The OS table (components/node/os_images.py) and which combinations it refuses. Each expectation is a
vendor's or RKE2's fact, cited here from its source (read offline), not from the module."""

from __future__ import annotations

import pytest

from rke_aws.settings import os_images, partitions, versions
from rke_aws.settings.os_images import OS_IMAGES, os_problems

OSES = sorted(OS_IMAGES)


def test_the_issue_s_operating_systems_and_today_s_default():
    assert set(OS_IMAGES) == {"ubuntu-24.04", "rhel-9", "rocky-9", "sles-15", "sle-micro-6", "al2023"}
    assert os_images.DEFAULT_OS == "ubuntu-24.04"


def test_ubuntu_row_is_what_the_program_looks_up_today():
    """The table must not change today's look-up: Canonical's owner per partition (partitions.py) and the
    name patterns of versions.UBUNTU_AMI_NAMES."""
    for p in (partitions.COMMERCIAL, partitions.GOVCLOUD, partitions.CHINA):
        for arch in os_images.ARCHITECTURES:
            assert os_images.UBUNTU.image(p.name, arch) == ((p.ubuntu_owner,), versions.UBUNTU_AMI_NAMES[arch])


@pytest.mark.parametrize("os_name, partition, owner", [
    ("rhel-9", "aws", "309956199498"),         # kops aws_cloud.go WellKnownAccountRedhat
    ("rhel-9", "aws-us-gov", "219670896067"),  # Red Hat KB 15356
    ("rhel-9", "aws-cn", "841258680906"),      # Red Hat cloudigrade RHEL_IMAGES_AWS_ACCOUNTS "china"
    ("rocky-9", "aws", "792107900819"),        # kops WellKnownAccountRockyLinux
    ("al2023", "aws", "137112412989"),         # kops WellKnownAccountAmazonLinux2023
    ("al2023", "aws-us-gov", "045324592363"),  # awslabs/amazon-eks-ami Makefile (us-gov-west-1)
    ("al2023", "aws-cn", "141808717104"),      # awslabs/amazon-eks-ami Makefile (cn-northwest-1)
    ("sles-15", "aws", "013907871322"),        # rancher/terraform-aws-server types.tf sles-15
    ("sle-micro-6", "aws", "013907871322"),    # rancher/terraform-aws-server types.tf sle-micro-61
])
def test_publisher_accounts(os_name, partition, owner):
    for arch in os_images.ARCHITECTURES:
        found = OS_IMAGES[os_name].image(partition, arch)
        assert found is not None and found[0] == (owner,), (os_name, partition, arch)


@pytest.mark.parametrize("os_name, partition", [
    ("rocky-9", "aws-us-gov"), ("rocky-9", "aws-cn"), ("sles-15", "aws-us-gov"), ("sles-15", "aws-cn"),
    ("sle-micro-6", "aws-us-gov"), ("sle-micro-6", "aws-cn"),
])
def test_no_known_publisher_is_refused_unless_the_pool_brings_its_image(os_name, partition):
    problems = os_problems(os_name, "rke2", partition, "x86_64", False, False)
    assert len(problems) == 1 and partition in problems[0] and "`ami`" in problems[0], problems
    assert os_problems(os_name, "rke2", partition, "x86_64", False, False, custom_image=True) == []


def test_name_patterns_match_names_the_vendors_publish():
    """Image names as the sources show them (tf-server types.tf comments for RHEL; kops docs for Rocky; the
    AL2023 name in terraform examples of GovCloud); the SUSE dates are made up in the published form."""
    import fnmatch
    seen = {
        ("rhel-9", "x86_64"): "RHEL-9.5.0_HVM-20241211-x86_64-0-Hourly2-GP3",
        ("rocky-9", "x86_64"): "Rocky-9-EC2-Base-9.5-20241118.0.x86_64",
        ("sles-15", "x86_64"): "suse-sles-15-sp7-v20250609-hvm-ssd-x86_64",
        ("sle-micro-6", "x86_64"): "suse-sle-micro-6-1-byos-v20250210-hvm-ssd-x86_64",
        ("al2023", "x86_64"): "al2023-ami-2023.6.20250218.2-kernel-6.1-x86_64",
        ("al2023", "arm64"): "al2023-ami-2023.6.20250218.2-kernel-6.1-arm64",
    }
    for (os_name, arch), name in seen.items():
        pattern = OS_IMAGES[os_name].image("aws", arch)[1]
        assert fnmatch.fnmatchcase(name, pattern), (os_name, pattern, name)
    # the minimal AL2023 image is not the standard one (kops supports the standard AMI only)
    assert not fnmatch.fnmatchcase("al2023-ami-minimal-2023.6.20250218.2-kernel-6.1-x86_64",
                                   OS_IMAGES["al2023"].image("aws", "x86_64")[1])


def test_rke2_install_method_and_selinux():
    """install.sh picks rpm online where `yum` exists (RHEL, Rocky, AL2023), tar elsewhere (Ubuntu; SLES 15 and
    SLE Micro: zypper picks rpm only on SLES 16 server); rke2-selinux's build per OS (el9; el8 for AL2023,
    which install.sh maps to centos/8; slemicro)."""
    assert {o: OS_IMAGES[o].online_install for o in OSES} == {
        "al2023": "rpm", "rhel-9": "rpm", "rocky-9": "rpm", "sle-micro-6": "tar", "sles-15": "tar", "ubuntu-24.04": "tar"}
    assert {o: OS_IMAGES[o].selinux_dist for o in OSES} == {
        "al2023": "el8", "rhel-9": "el9", "rocky-9": "el9", "sle-micro-6": "slemicro", "sles-15": None, "ubuntu-24.04": None}


@pytest.mark.parametrize("os_name, airgap, preinstalled, keys", [
    ("rhel-9", False, False, {}),                  # the rpm's rke2-server.env sets RKE2_SELINUX=true
    ("rhel-9", True, False, {"selinux": True}),    # tarball (ARTIFACT_PATH): selinux.md "not enabled without"
    ("sle-micro-6", False, False, {"selinux": True}),
    ("al2023", True, False, {"selinux": True}),
    ("rocky-9", True, True, {"selinux": True}),
    ("ubuntu-24.04", True, False, {}),
    ("sles-15", True, False, {}),
])
def test_selinux_key_wherever_rke2_is_not_the_rpm(os_name, airgap, preinstalled, keys):
    assert os_images.rke2_config_keys(os_name, airgap, preinstalled) == keys


def test_transactional_systems_and_fips_switches_reboot():
    assert os_images.may_reboot_at_first_boot("sle-micro-6", False)
    assert os_images.may_reboot_at_first_boot("rhel-9", True) and not os_images.may_reboot_at_first_boot("rhel-9", False)
    assert not os_images.may_reboot_at_first_boot("ubuntu-24.04", True)  # a FIPS image is checked, not switched


def test_rke1_only_where_rke_runs_on_docker():
    """rancher/rancher#48550 (RHEL/Rocky 9.5), #46249 (SLES 15 SP6); no Docker on SLE Micro; Amazon Linux not
    validated (#31645 open)."""
    assert {o for o in OSES if OS_IMAGES[o].rke1} == {"ubuntu-24.04", "rhel-9", "rocky-9", "sles-15"}
    for o in ("sle-micro-6", "al2023"):
        (problem,) = os_problems(o, "rke", "aws", "x86_64", False, False)
        assert "RKE1 runs on Docker" in problem and "ubuntu-24.04, rhel-9, rocky-9, sles-15" in problem


def test_fips():
    # switched by the boot script on RHEL, Rocky, AL2023
    for o in ("rhel-9", "rocky-9", "al2023"):
        assert os_problems(o, "rke2", "aws", "x86_64", True, False) == []
    # elsewhere only a FIPS image the pool brings
    for o in ("ubuntu-24.04", "sles-15", "sle-micro-6"):
        (problem,) = os_problems(o, "rke2", "aws", "x86_64", True, False)
        assert "FIPS image of your own" in problem
        assert os_problems(o, "rke2", "aws", "x86_64", True, False, custom_image=True) == []
    # RKE2's FIPS claim: linux/amd64 only (rke2-docs about_hardened_images.md)
    assert any("amd64 only" in p for p in os_problems("rhel-9", "rke2", "aws", "arm64", True, False))
    assert any("RKE1 has none" in p for p in os_problems("rhel-9", "rke", "aws", "x86_64", True, False))


def test_airgap_is_rke2_and_preinstalled_needs_an_image():
    assert any("RKE1 needs Docker" in p for p in os_problems("ubuntu-24.04", "rke", "aws", "x86_64", False, True))
    assert any("already holds RKE2" in p for p in os_problems("rhel-9", "rke2", "aws", "x86_64", False, True, preinstalled=True))
    assert os_problems("rhel-9", "rke2", "aws", "x86_64", False, True, preinstalled=True, custom_image=True) == []


def test_unknown_values_name_what_is_allowed():
    (p,) = os_problems("centos-7", "rke2", "aws", "x86_64", False, False)
    assert "'centos-7'" in p and "ubuntu-24.04" in p and "al2023" in p


@pytest.mark.parametrize("os_name", OSES)
def test_every_row_names_its_ssm_agent_unit_and_login_user(os_name):
    image = OS_IMAGES[os_name]
    assert image.login_user and image.ssm_agent_unit.endswith(".service")
    # Rocky's and RHEL's images lack the agent (ssm-docs agent-install-rocky.md; not in ami-preinstalled-agent.md)
    if os_name in ("rhel-9", "rocky-9", "sle-micro-6"):
        assert not image.ssm_agent_preinstalled
