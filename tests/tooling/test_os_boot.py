"""Each OS's boot script as the PROGRAM writes it into a node's user data (issue 35 item 3), run against that
OS's package-manager stand-ins (tests/support/osstubs: dnf, rpm, zypper, transactional-update, fips-mode-setup,
... in front of tests/support/stubs' IMDS, SSM and systemctl; the harness of tests/tooling/test_node_boot.py).
The unit tests there run scripts assembled from made-up settings; these run what `pulumi up` would send, for
a cluster with a pool of every OS, and for the rke2-al2023-fips fixture stack. Bash runs are slow: tooling tier.

What each OS needs comes from components/settings/os_images.py (each fact sourced there): RHEL/Rocky get the
SSM agent's rpm (AWS Systems Manager User Guide agent-install-rhel.md / -rocky.md: not on the images) and leave
SELinux to RKE2's rpm install (its rke2-server.env sets RKE2_SELINUX=true, rancher/rke2-packaging); SLES 15
gets the forwarding sysctls wicked would revert (rke2-docs known_issues.md); SLE Micro installs rke2-selinux
with transactional-update and reboots before RKE2 (rke2-docs install/methods.md), and its config.yaml says
`selinux: true` (tarball install, rke2-docs security/selinux.md); AL2023 with fips switches FIPS mode on and
reboots before RKE2 makes any key (Red Hat / AWS: fips-mode-setup --enable, reboot)."""

from __future__ import annotations

import json

import pytest
import yaml

from rke_aws.node import rke2_config, scripts
from rke_aws_offline.engine import harness
from tests.support.boot import INSTANCE, rke2_parameters
from tests.support.node_boot import Node, online_install_sh
from tests.support.runs import run_stack_cached
from tests.support.userdata import cloud_config

REGION = "us-west-2"
OSES = ("rhel-9", "rocky-9", "sles-15", "sle-micro-6", "al2023")


@pytest.fixture(scope="module")
def every_os() -> harness.ProgramRun:
    """Ubuntu servers and one worker pool per other OS, commercial partition (where every vendor publishes)."""
    pools = [{"name": "servers", "roles": ["controlplane", "etcd"], "count": 1}]
    pools += [{"name": o.replace(".", ""), "roles": ["worker"], "count": 1, "os": o} for o in OSES]
    cfg = {"aws:region": REGION, "rke-aws:distribution": "rke2", "rke-aws:clusterId": "oses",
           "rke-aws:kubernetesVersion": "v1.33.5+rke2r1", "rke-aws:nodePools": json.dumps(pools),
           "rke-aws:ccm": json.dumps({"install": "manifest"})}
    return harness.run_program(cfg, stack="oses")


def _instance(run: harness.ProgramRun, pool: str) -> harness.Registration:
    return next(i for i in run.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/pool"] == pool)


def _files(inst: harness.Registration) -> dict[str, str]:
    return {f["path"]: f["content"] for f in cloud_config(inst)["write_files"]}


def _node(tmp_path, run: harness.ProgramRun, inst: harness.Registration, **state) -> Node:
    files = _files(inst)
    ssm = scripts.ssm_agent_rpm_url(REGION, "amazonaws.com", "x86_64")
    base = {"parameters": rke2_parameters(run), "downloads": {scripts.INSTALL_RKE2_URL: online_install_sh()},
            "public": {ssm: "agent rpm"}}
    return Node(tmp_path, files[scripts.BOOTSTRAP_PATH], {**base, **state},
                files={rke2_config.RKE2_CONFIG_PATH: files[rke2_config.RKE2_CONFIG_PATH]})


def test_every_pool_gets_its_vendors_image_and_its_os_steps(every_os):
    amis = {_instance(every_os, p).inputs["tags"]["rke-aws/pool"]: _instance(every_os, p).inputs["ami"]
            for p in ["servers", *(o.replace(".", "") for o in OSES)]}
    assert len(set(amis.values())) == len(amis), amis  # one image per OS
    ubuntu = _files(_instance(every_os, "servers"))[scripts.BOOTSTRAP_PATH]
    assert "OS_NAME=" not in ubuntu, "an Ubuntu node's boot is the one of before"
    for o in OSES:
        script = _files(_instance(every_os, o.replace(".", "")))[scripts.BOOTSTRAP_PATH]
        assert "OS_NAME=" in script and "preparing $OS_NAME" in script, o


@pytest.mark.parametrize("os_name", ["rhel-9", "rocky-9"])
def test_rhel_family_gets_the_ssm_agent_and_rke2_by_its_rpm_install(every_os, tmp_path, os_name):
    inst = _instance(every_os, os_name)
    # the image's NetworkManager cloud routing and firewalld (rke2-docs known_issues.md: disable both)
    b = _node(tmp_path, every_os, inst, units=["nm-cloud-setup.timer", "nm-cloud-setup.service",
                                                "firewalld.service"]).boot()
    assert b.returncode == 0 and b.started(), b.stderr
    assert b.state["installed"] == ["amazon-ssm-agent"]
    for unit in ("nm-cloud-setup.timer", "nm-cloud-setup.service", "firewalld.service"):
        assert f"systemctl disable --now {unit}" in b.systemctl, (unit, b.systemctl)
    assert (b.root / "etc/NetworkManager/conf.d/rke2-canal.conf").exists()
    assert "selinux" not in yaml.safe_load(_files(inst)[rke2_config.RKE2_CONFIG_PATH]), \
        "the rpm install enables SELinux itself (rke2-server.env)"


def test_sles15_writes_the_forwarding_sysctls_and_keeps_its_agent(every_os, tmp_path):
    b = _node(tmp_path, every_os, _instance(every_os, "sles-15"), units=["amazon-ssm-agent.service"]).boot()
    assert b.returncode == 0 and b.started(), b.stderr
    assert (b.root / "etc/sysctl.d/90-rke2.conf").read_text().startswith("net.ipv4.conf.all.forwarding=1")
    assert not [c for c in b.os_calls if c[0] in ("zypper", "dnf", "transactional-update")]


def test_sle_micro_installs_its_policy_in_a_snapshot_reboots_then_starts_rke2(every_os, tmp_path):
    inst = _instance(every_os, "sle-micro-6")
    assert yaml.safe_load(_files(inst)[rke2_config.RKE2_CONFIG_PATH])["selinux"] is True
    node = _node(tmp_path, every_os, inst, read_only=True)
    first = node.boot()
    assert first.returncode == 0 and first.state["rebooted"] == 1 and not first.started(), first.stderr
    assert {"rke2-selinux", "amazon-ssm-agent"} <= set(first.state["pending"])
    second = node.reboot()
    assert second.returncode == 0 and second.started(), second.stderr
    assert second.state["rebooted"] == 1


def test_al2023_fips_stack_switches_fips_mode_before_rke2(tmp_path):
    run = run_stack_cached("rke2-al2023-fips")
    inst = next(i for i in run.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/pool"] == "agents")
    node = _node(tmp_path, run, inst)
    first = node.boot()
    assert first.returncode == 0, first.stderr
    assert ["fips-mode-setup", "--enable"] in first.os_calls and first.state["rebooted"] == 1 and not first.started()
    second = node.reboot()
    assert second.returncode == 0 and second.started(), second.stderr
