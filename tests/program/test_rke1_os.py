"""RKE1 pools on RHEL 9, Rocky 9 and SLES 15 (issue 35 item 3: "RKE1 only where RKE supports Docker on that
OS"): planned, and each node's user data carries its OS's step before Docker (components/node/scripts.py
rke1_node_steps; the facts per OS are components/settings/os_images.py's, sourced there). Booted against the
OS stand-ins in tests/tooling/test_rke1_os_boot.py."""

from __future__ import annotations

import jsonschema
import pytest
import yaml

from rke_aws.node import scripts
from rke_aws.settings import os_images
from rke_aws_offline.engine import harness
from tests.support import upstream
from tests.support.boot import INSTANCE
from tests.support.node_boot import RKE1_OSES, rke1_os_config
from tests.support.runs import run_cached
from tests.support.userdata import cloud_config


@pytest.fixture(scope="module")
def run() -> harness.ProgramRun:
    return run_cached(rke1_os_config(), stack="rke1os")


def _pool(run: harness.ProgramRun, pool: str) -> harness.Registration:
    return next(i for i in run.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/pool"] == pool)


def _script(inst: harness.Registration) -> str:
    return next(f["content"] for f in cloud_config(inst)["write_files"] if f["path"] == scripts.BOOTSTRAP_PATH)


def test_an_rke1_cluster_on_rhel_rocky_and_sles_plans_with_each_oss_user(run):
    users = {n["hostname_override"]: n["user"] for n in yaml.safe_load(run.outputs["rkeClusterYml"])["nodes"]}
    for os_name in RKE1_OSES:
        inst = _pool(run, os_name)
        assert users[inst.inputs["tags"]["Name"]] == os_images.OS_IMAGES[os_name].login_user, os_name


@pytest.mark.parametrize("os_name", ["rhel-9", "rocky-9"])
def test_rke1_rhel_family_user_data_holds_the_os_step_before_docker_ce(run, os_name):
    """The SSM agent's rpm (the images lack it: AWS Systems Manager User Guide agent-install-rhel.md), firewalld
    and nm-cloud-setup off, NetworkManager's keyfile for Canal (rke1-docs docs/os/os.md; rke2-docs
    known_issues.md), then Docker CE from Rancher's install-docker (its rhel|rocky branch, rancher/install-docker
    dist/27.5.1.sh)."""
    script = _script(_pool(run, os_name))
    image = os_images.OS_IMAGES[os_name]
    assert f"OS_NAME='{image.title}'" in script
    assert f"SSM_AGENT_RPM_URL='{scripts.ssm_agent_rpm_url('us-west-2', 'amazonaws.com', 'x86_64')}'" in script
    for setting in ("FIREWALLD='yes'", "NM_CLOUD_SETUP='yes'", "NM_KEYFILE='yes'", "FIPS='no'", "MAY_REBOOT='no'"):
        assert setting in script, setting
    assert script.index('log "preparing $OS_NAME"') < script.index('retry download "$DOCKER_INSTALL_URL"')
    assert "DOCKER_INSTALL_URL='https://releases.rancher.com/install-docker/" in script


def test_rke1_sles_user_data_installs_suses_docker_package(run):
    """install-docker stops on SLES but s390x (rancher/install-docker dist/27.5.1.sh): Docker is SUSE's `docker`
    package from the Containers module (rke1-docs docs/os/os.md)."""
    script = _script(_pool(run, "sles-15"))
    assert f"DOCKER_INSTALL_URL='file://{scripts.RKE1_DOCKER_INSTALLED}'" in script
    assert "DOCKER_PACKAGE='docker'" in script and "DOCKER_MODULE='sle-module-containers'" in script
    assert "releases.rancher.com" not in script
    assert "FIREWALLD='yes'" in script and "FORWARDING='yes'" in script and "SSM_AGENT_RPM_URL=''" in script


def test_rke1_ubuntu_pool_keeps_the_script_of_before(run):
    assert "OS_NAME=" not in _script(_pool(run, "ubuntu"))


def test_rke1_os_user_data_is_valid_cloud_config(run):
    validator = jsonschema.Draft4Validator(upstream.cloud_init_schema())
    for inst in run.of_type(INSTANCE):
        errors = list(validator.iter_errors(cloud_config(inst)))
        assert not errors, f"{inst.urn}: {errors[:3]}"


def test_rke1_rhel_node_behind_a_proxy_gives_its_rpm_agent_the_proxy():
    """The agent RHEL/Rocky get is the rpm's amazon-ssm-agent.service (AWS Systems Manager User Guide
    agent-install-rhel.md), not Ubuntu's snap unit: its proxy drop-in goes where systemd reads that unit's
    (systemd.unit(5): <unit>.d/*.conf), and proxy.sh restarts that unit."""
    cfg = {**rke1_os_config(), "rke-aws:proxy": '{"httpsProxy": "http://proxy.corp.example:3128"}'}
    run = run_cached(cfg, stack="rke1os")
    files = {f["path"] for f in cloud_config(_pool(run, "rhel-9"))["write_files"]}
    assert "/etc/systemd/system/amazon-ssm-agent.service.d/http-proxy.conf" in files, sorted(files)
    assert not any(p.startswith("/etc/systemd/system/snap.") for p in files), sorted(files)
    assert "SSM_AGENT_UNIT='amazon-ssm-agent.service'" in _script(_pool(run, "rhel-9"))
    ubuntu = {f["path"] for f in cloud_config(_pool(run, "ubuntu"))["write_files"]}
    assert f"/etc/systemd/system/{scripts.SSM_AGENT_UNIT}.d/http-proxy.conf" in ubuntu
