"""hardening: cis (RKE2): the profile the configured version accepts, what it needs of the host, the
audit policy and Pod Security configuration, and the version gates of the keys written.

Expected values are written from RKE2's sources and docs (tests/support/rke2_keys.py has the citations):
`cis` since v1.25.15 / v1.26.10 / v1.27.7 / v1.28.2, `cis-1.23` refused from v1.30.14 / v1.31.10 /
v1.32.6 / v1.33.2 and 1.34; the profile makes a server refuse to start without an `etcd` user and
the kubelet refuse kernel parameters other than those of rke2-cis-sysctl.conf
(protect-kernel-defaults); the tarball install (Ubuntu) puts that file in /usr/local/share/rke2.
"""

# split: this module mixes levels (issue 33 §7.2); the pure tests -> tests/unit.

from __future__ import annotations

import pytest
import yaml

from rke_aws.node import rke2_config
from rke_aws.plan.snapshots import has_etcd_s3_retention
from rke_aws_offline.engine import harness
from tests.support.boot import boot, first_server, rke2_parameters
from tests.support.configs import set_key
from tests.support.rke2_keys import RKE2_AGENT_KEYS, RKE2_SERVER_KEYS
from tests.support.runs import run_stack_cached
from tests.support.userdata import cloud_config, written_file

INSTANCE = "aws:ec2/instance:Instance"


@pytest.mark.parametrize("version, profile", [
    ("v1.33.5+rke2r1", "cis"),
    ("v1.33.1+rke2r1", "cis"),  # both names valid there; `cis` is the one that stays
    ("v1.30.0+rke2r1", "cis"),
    ("v1.36.2+rke2r1", "cis"),
    ("v1.28.2+rke2r1", "cis"),
    ("v1.28.1+rke2r1", "cis-1.23"),
    ("v1.27.6+rke2r1", "cis-1.23"),
    ("v1.25.15+rke2r1", "cis"),
])
def test_profile_name_for_the_version(version, profile):
    assert rke2_config.cis_profile(version) == profile


@pytest.mark.parametrize("version, present", [
    ("v1.30.14+rke2r1", False), ("v1.31.11+rke2r1", False), ("v1.31.12+rke2r1", True),
    ("v1.32.7+rke2r1", False), ("v1.32.8+rke2r1", True), ("v1.33.3+rke2r1", False), ("v1.33.4+rke2r1", True),
    ("v1.34.0+rke2r1", False), ("v1.34.1+rke2r1", True), ("v1.35.0+rke2r1", True),
])
def test_etcd_s3_retention_only_where_rke2_has_it(version, present):
    assert has_etcd_s3_retention(version) is present


@pytest.fixture(scope="module")
def cis_run() -> harness.ProgramRun:
    return harness.run_program(set_key(harness.stack_config("rke2-prod"), "hardening", "cis"), stack="rke2-prod")


def _configs(run) -> dict[str, tuple[dict, dict]]:
    out = {}
    for inst in run.of_type(INSTANCE):
        doc = cloud_config(inst)
        out[inst.inputs["tags"]["Name"]] = (yaml.safe_load(written_file(doc, rke2_config.RKE2_CONFIG_PATH)), doc)
    return out


def test_every_node_runs_the_profile_and_servers_get_audit_and_pod_security(cis_run):
    servers = {n["name"] for n in cis_run.outputs["nodes"] if "controlplane" in n["roles"]}
    assert servers and len(servers) < len(cis_run.outputs["nodes"])
    for name, (conf, doc) in _configs(cis_run).items():
        assert conf["profile"] == "cis", name
        if name in servers:
            assert set(conf) <= RKE2_SERVER_KEYS, f"{name}: {set(conf) - RKE2_SERVER_KEYS}"
            for key in ("audit-policy-file", "pod-security-admission-config-file"):
                f = next(f for f in doc["write_files"] if f["path"] == conf[key])
                assert f["permissions"] == "0600", f"{name}: {f['path']} readable by everyone"
            audit = yaml.safe_load(written_file(doc, conf["audit-policy-file"]))
            assert (audit["apiVersion"], audit["kind"]) == ("audit.k8s.io/v1", "Policy"), name
            assert audit["rules"][-1] == {"level": "Metadata"}, f"{name}: not everything is audited"
            psa = yaml.safe_load(written_file(doc, conf["pod-security-admission-config-file"]))
            assert (psa["apiVersion"], psa["kind"]) == ("apiserver.config.k8s.io/v1", "AdmissionConfiguration")
            (plugin,) = psa["plugins"]
            pss = plugin["configuration"]
            assert plugin["name"] == "PodSecurity" and pss["kind"] == "PodSecurityConfiguration"
            assert {pss["defaults"][m] for m in ("enforce", "audit", "warn")} == {"restricted"}, name
            # system-upgrade-controller's jobs run privileged (RKE2 upgrades); kube-system hosts the CCM.
            assert {"kube-system", "system-upgrade"} <= set(pss["exemptions"]["namespaces"]), name
        else:
            assert set(conf) <= RKE2_AGENT_KEYS, f"{name}: {set(conf) - RKE2_AGENT_KEYS}"
            assert "audit-policy-file" not in conf and "pod-security-admission-config-file" not in conf, name


def test_not_hardened_by_default():
    run = run_stack_cached("rke2-prod")
    for name, (conf, _doc) in _configs(run).items():
        assert "profile" not in conf and "audit-policy-file" not in conf, name
    assert run.outputs["hardening"] == "none"


def test_a_cis_server_gets_its_etcd_user_and_kernel_parameters_before_rke2_starts(cis_run, tmp_path):
    first = first_server(cis_run)
    b = boot(first, tmp_path, rke2_parameters(cis_run))
    assert b.returncode == 0, b.stderr
    host = b.systemctl
    assert host[0] == "useradd -r -c etcd user -s /sbin/nologin -M etcd -U", host
    assert host.index("systemctl restart systemd-sysctl") < host.index("systemctl enable --now rke2-server.service"), host
    applied = b.root / "etc/sysctl.d/60-rke2-cis.conf"
    assert applied.read_text() == "vm.panic_on_oom=0\n", "the shipped CIS sysctl file was not installed"


def test_an_existing_etcd_user_is_kept_and_agents_get_only_the_kernel_parameters(cis_run, tmp_path):
    first = first_server(cis_run)
    b = boot(first, tmp_path / "server", rke2_parameters(cis_run), users=["etcd"])
    assert b.returncode == 0, b.stderr
    assert not [c for c in b.systemctl if c.startswith("useradd")], b.systemctl
    agent = next(i for i in cis_run.of_type(INSTANCE) if i.inputs["tags"]["rke-aws/roles"] == "worker")
    a = boot(agent, tmp_path / "agent", rke2_parameters(cis_run, marker="initialized by x"))
    assert a.returncode == 0, a.stderr
    assert not [c for c in a.systemctl if c.startswith("useradd")], a.systemctl
    assert "systemctl restart systemd-sysctl" in a.systemctl, a.systemctl


def test_changing_hardening_on_a_running_stack_warns_that_running_nodes_keep_theirs():
    first = run_stack_cached("rke2-prod")
    run = harness.run_program(set_key(harness.stack_config("rke2-prod"), "hardening", "cis"), stack="rke2-prod",
                              previous_outputs=first.outputs)
    (warning,) = [m for lvl, m in run.logs if lvl == "warning" and m.startswith("rke-aws:hardening")]
    assert "none -> cis" in warning and f"running {len(first.outputs['nodes'])} keep 'none'" in warning, warning
    again = harness.run_program(harness.stack_config("rke2-prod"), stack="rke2-prod", previous_outputs=first.outputs)
    assert not [m for _, m in again.logs if m.startswith("rke-aws:hardening")]
