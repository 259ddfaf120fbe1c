"""RKE1 nodes on RHEL 9, Rocky 9 and SLES 15 (issue 35 item 3): the boot script as the PROGRAM writes it into
each node's user data, run against that OS's stand-ins (tests/support/osstubs, the harness of
tests/tooling/test_os_boot.py) and a stand-in of Rancher's install-docker script that keeps the real one's
distribution rules (tests.support.node_boot.stand_in_install_docker). Bash runs are slow: tooling tier.

What each OS needs is components/settings/os_images.py's, each fact sourced there:
- RHEL/Rocky images lack the SSM agent (AWS Systems Manager User Guide agent-install-rhel.md, -rocky.md): its
  rpm from the region's amazon-ssm-<region> bucket, installed and enabled;
- firewalld and nm-cloud-setup off (rke1-docs docs/os/os.md, RHEL note: nm-cloud-setup's routing table interferes
  with the CNI, the default firewall blocks pods; rke2-docs known_issues.md: disable firewalld for Canal);
- Docker CE, not podman-docker, on RHEL (rke1-docs docs/os/os.md) from install-docker's rhel|rocky branch
  (rancher/install-docker dist/27.5.1.sh @ d69b486);
- SLES: install-docker stops on every machine but s390x (same script), so Docker is SUSE's `docker` package from
  the Containers module, activated with SUSEConnect where it is not active (rke1-docs docs/os/os.md);
- SELinux stays enforcing: nothing in the script touches it (RKE needs rancher-selinux only when Docker's own
  SELinux support is on: rancher/rke cluster/selinux.go)."""

from __future__ import annotations

import platform

import pytest

from rke_aws.node import scripts
from rke_aws_offline.engine import harness
from tests.support.boot import INSTANCE
from tests.support.node_boot import (
    OS_RELEASE,
    RKE1_OS_REGION,
    RKE1_OSES,
    Booted,
    Node,
    rke1_os_config,
    stand_in_install_docker,
)
from tests.support.runs import run_cached
from tests.support.shell import shellcheck
from tests.support.userdata import cloud_config

INSTALL_DOCKER = "https://releases.rancher.com/install-docker/"
LOGIN = {"rhel-9": "ec2-user", "rocky-9": "rocky", "sles-15": "ec2-user"}  # os_images login_user
# SUSE's product name of the Containers module for this machine (rke1-docs: sle-module-containers/<version>/<arch>)
CONTAINERS_MODULE = f"sle-module-containers/15.7/{platform.machine()}"


@pytest.fixture(scope="module")
def rke1_oses() -> harness.ProgramRun:
    return run_cached(rke1_os_config(), stack="rke1os")


def _script(run: harness.ProgramRun, pool: str) -> str:
    inst = next(i for i in run.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/pool"] == pool)
    return next(f["content"] for f in cloud_config(inst)["write_files"] if f["path"] == scripts.BOOTSTRAP_PATH)


def _boot(tmp_path, run: harness.ProgramRun, os_name: str, **state) -> Booted:
    script = _script(run, os_name.replace(".", ""))
    ssm = scripts.ssm_agent_rpm_url(RKE1_OS_REGION, "amazonaws.com", "x86_64")
    installer = next(line.split("'")[1] for line in script.splitlines() if line.startswith("DOCKER_INSTALL_URL="))
    base = {"downloads": {installer: stand_in_install_docker()} if installer.startswith(INSTALL_DOCKER) else {},
            "public": {ssm: "agent rpm"}}
    return Node(tmp_path, script, {**base, **state}, files={"/etc/os-release": OS_RELEASE[os_name]}).boot()


def _docker_started(b: Booted, user: str) -> None:
    assert "systemctl enable --now docker" in b.systemctl, b.systemctl
    assert user in b.state.get("groups", {}).get("docker", []), b.state.get("groups")


def _selinux_left_alone(script: str) -> None:
    # never disabled, never permissive (issue 35: SELinux enforcing, never disabled)
    assert "setenforce" not in script and "selinux/config" not in script and "SELINUX=" not in script


@pytest.mark.parametrize("os_name", ["rhel-9", "rocky-9"])
def test_rke1_on_rhel_family_gets_the_ssm_agent_docker_ce_and_no_firewalld(rke1_oses, tmp_path, os_name):
    b = _boot(tmp_path, rke1_oses, os_name,
              units=["nm-cloud-setup.timer", "nm-cloud-setup.service", "firewalld.service"])
    assert b.returncode == 0, b.stderr
    assert "amazon-ssm-agent" in b.state["installed"], b.state["installed"]
    assert "systemctl enable --now amazon-ssm-agent.service" in b.systemctl, b.systemctl
    for unit in ("nm-cloud-setup.timer", "nm-cloud-setup.service", "firewalld.service"):
        assert f"systemctl disable --now {unit}" in b.systemctl, (unit, b.systemctl)
    assert (b.root / "etc/NetworkManager/conf.d/rke2-canal.conf").read_text().count("interface-name:flannel*")
    # Docker CE through install-docker's rhel|rocky branch, after the OS step
    assert ["dnf", "install", "-y", "docker-ce", "docker-ce-cli", "containerd.io"] in b.os_calls, b.os_calls
    assert b.systemctl.index("systemctl disable --now firewalld.service") < b.systemctl.index(
        "systemctl enable --now docker")
    _docker_started(b, LOGIN[os_name])
    _selinux_left_alone(_script(rke1_oses, os_name))


def test_rke1_on_sles_gets_suses_docker_package_and_keeps_its_agent(rke1_oses, tmp_path):
    b = _boot(tmp_path, rke1_oses, "sles-15", units=["amazon-ssm-agent.service", "firewalld.service"],
              repos=[CONTAINERS_MODULE])
    assert b.returncode == 0, b.stderr
    assert ["zypper", "--non-interactive", "install", "docker"] in b.os_calls, b.os_calls
    assert "docker" in b.state["installed"] and not any(u.startswith(INSTALL_DOCKER) for u in b.urls), b.urls
    assert not [c for c in b.os_calls if c[0] == "SUSEConnect"], "the module was active already"
    assert "systemctl disable --now firewalld.service" in b.systemctl, b.systemctl
    assert (b.root / "etc/sysctl.d/90-rke2.conf").read_text().startswith("net.ipv4.conf.all.forwarding=1")
    assert "amazon-ssm-agent" not in b.state["installed"], "the image's agent is kept"
    _docker_started(b, LOGIN["sles-15"])
    _selinux_left_alone(_script(rke1_oses, "sles-15"))


def test_rke1_on_sles_activates_the_containers_module_when_docker_is_not_found(rke1_oses, tmp_path):
    b = _boot(tmp_path, rke1_oses, "sles-15", units=["amazon-ssm-agent.service"], products=[CONTAINERS_MODULE])
    assert b.returncode == 0, b.stderr
    assert ["SUSEConnect", "-p", CONTAINERS_MODULE] in b.os_calls, b.os_calls
    _docker_started(b, LOGIN["sles-15"])


def test_rke1_ubuntu_script_is_the_one_of_before(rke1_oses):
    script = _script(rke1_oses, "ubuntu")
    assert "OS_NAME=" not in script and "preparing $OS_NAME" not in script
    assert f"DOCKER_INSTALL_URL='{INSTALL_DOCKER}" in script


def test_every_rke1_os_script_passes_shellcheck(rke1_oses, tmp_path):
    for os_name in RKE1_OSES:
        problems = shellcheck(_script(rke1_oses, os_name.replace(".", "")), tmp_path / "script.sh")
        assert not problems, f"{os_name}:\n{problems}"
