"""scripts.rke1_node_steps (issue 35 item 3): what an RKE1 node's boot adds for its OS, as a pure function of the OS
table (components/settings/os_images.py, each fact sourced there). Booted in tests/tooling/test_rke1_os_boot.py."""

from __future__ import annotations

import pytest

from rke_aws.node import scripts
from rke_aws.settings import os_images

RKE1_OSES = [o.name for o in os_images.OS_IMAGES.values() if o.rke1]


def _steps(os_name: str) -> scripts.NodeSteps | None:
    return scripts.rke1_node_steps(os_name, region="eu-west-1", dns_suffix="amazonaws.com", arch="x86_64")


def test_rke1_runs_on_ubuntu_rhel_rocky_and_sles_only():
    """RKE1 on RHEL/Rocky 9.5 validated (rancher/rancher#48550), SLES 15 SP6 (rancher/rancher#46249); no Docker
    on SLE Micro, Amazon Linux not validated (rancher/rancher#31645 open)."""
    assert sorted(RKE1_OSES) == ["rhel-9", "rocky-9", "sles-15", "ubuntu-24.04"]


def test_ubuntu_gets_no_step():
    assert _steps(os_images.DEFAULT_OS) is None


@pytest.mark.parametrize("os_name", ["rhel-9", "rocky-9", "sles-15"])
def test_each_other_os_gets_os_prep_with_its_facts_and_never_fips_airgap_or_a_reboot(os_name):
    steps = _steps(os_name)
    assert steps is not None
    image = os_images.OS_IMAGES[os_name]
    s = steps.settings
    assert scripts.fragment("os_prep") in steps.before_rke2
    assert s["FIPS"] == "no" and s["DEFAULT_ROUTE"] == "no" and s["MAY_REBOOT"] == "no" and s["RPM_PREFIX"] == ""
    assert s["FIREWALLD"] == ("yes" if image.firewalld else "no")
    assert s["NM_CLOUD_SETUP"] == ("yes" if image.nm_cloud_setup else "no")
    agent = "" if image.ssm_agent_preinstalled else scripts.ssm_agent_rpm_url("eu-west-1", "amazonaws.com", "x86_64")
    assert s["SSM_AGENT_RPM_URL"] == agent


@pytest.mark.parametrize("os_name", ["rhel-9", "rocky-9"])
def test_rhel_family_keeps_rancher_install_docker(os_name):
    """install-docker's rhel|rocky branch installs Docker CE (rancher/install-docker dist/27.5.1.sh)."""
    steps = _steps(os_name)
    assert steps is not None and steps.install_script_url is None
    assert scripts.fragment("rke1_docker") not in steps.before_rke2


def test_sles_takes_docker_from_suses_package_instead():
    """install-docker stops on SLES but s390x (rancher/install-docker dist/27.5.1.sh); rke1-docs docs/os/os.md:
    SUSE's `docker` package from the Containers module."""
    steps = _steps("sles-15")
    assert steps is not None
    assert steps.before_rke2[-1] == scripts.fragment("rke1_docker")
    assert steps.install_script_url == f"file://{scripts.RKE1_DOCKER_INSTALLED}"
    assert steps.settings["DOCKER_PACKAGE"] == "docker" and steps.settings["DOCKER_MODULE"] == "sle-module-containers"
