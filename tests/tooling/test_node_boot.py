"""RKE2 boot scripts for other operating systems, air-gapped installs and a registry password, run: the
script scripts.rke2_script assembles (rke2.sh's own settings, made up here, plus scripts.node_steps) is
written into a scratch root and executed with stand-ins for each OS's tools (tests/support/osstubs: dnf,
rpm, zypper, transactional-update, fips-mode-setup, ...; S3 answered with botocore checking every
signature) in front of the ones tests/tooling/test_bootstrap.py uses (tests/support/stubs: IMDS, SSM, systemctl). A
"reboot" is the test applying what the reboot would (pending packages installed, FIPS on) and running
the script again, as rke-aws-bootstrap.service does.

What matters: which packages each OS gets and from where, what is switched off, when the node reboots
and that it resumes, that RKE2 is installed from the bucket's artifacts with INSTALL_RKE2_ARTIFACT_PATH,
and that an air-gapped node talks to no host outside its VPC's endpoints.
"""

from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rke_aws.node import registries, scripts
from rke_aws.node.scripts import Airgap
from tests.support.node_boot import (
    ALLOWED_HOSTS,
    BUCKET,
    EL9_RPMS,
    PASSWORD_PARAMETER,
    PREFIX,
    REGION,
    RELEASE,
    SLEMICRO_RPMS,
    STUBS,
    SUFFIX,
    TOKEN_PARAMETER,
    Node,
    bucket,
    online_install_sh,
    rke2_settings,
)


def test_the_made_up_settings_are_what_rke2_sh_and_ssm_sh_read():
    declared: set[str] = set()
    for name in ("rke2", "ssm"):
        text = (Path(scripts.__file__).parent / "scripts" / f"{name}.sh").read_text()
        head = text.partition(scripts.FRAGMENT_MARKER)[0].split("which sets\n", 1)[1].split("\n# (", 1)[0]
        declared |= set(re.findall(r"[A-Z][A-Z0-9_]+", head))
    assert declared - {"ROOT"} == set(rke2_settings())


def script_for(os_name: str, *, airgap: Airgap | None = None, fips: bool = False, arch: str = "x86_64",
               password: bool = False, kind: str = "agent") -> str:
    steps = scripts.node_steps(os_name, region=REGION, dns_suffix=SUFFIX, arch=arch, release=RELEASE, fips=fips,
                               airgap=airgap, registry_password_parameter=PASSWORD_PARAMETER if password else None)
    return scripts.rke2_script(rke2_settings(kind), None, steps)


def hosts(urls: list[str]) -> set[str]:
    """The hosts of the URLs (file:// URLs name no host: the node's own files)."""
    return {re.match(r"^[a-z0-9]+://([^/:]+)", u).group(1) for u in urls if not u.startswith("file://")}


def public_urls(script: str) -> list[str]:
    """Literal URLs in a script's text whose host is not one an air-gapped node may reach (URLs built from
    shell variables are checked through the values the header gives those variables, which are literal)."""
    literal = [u for u in re.findall(r"https?://[^\s'\"]+", script) if "$" not in u and "%s" not in u]
    return [u for u in literal if hosts([u]) - ALLOWED_HOSTS - {"127.0.0.1"}]


# ---- RHEL 9, air-gapped ---------------------------------------------------------------------------------

def test_rhel9_airgapped_installs_selinux_policy_and_rke2_from_the_bucket(tmp_path):
    script = script_for("rhel-9", airgap=Airgap(BUCKET, PREFIX))
    ssm_rpm = scripts.ssm_agent_rpm_url(REGION, SUFFIX, "x86_64")
    node = Node(tmp_path, script, {
        "s3": {BUCKET: bucket(rpms=EL9_RPMS)}, "public": {ssm_rpm: "agent rpm"},
        "requires": {"rke2-selinux": ["container-selinux"]}, "repos_reachable": False,
        "units": ["nm-cloud-setup.service", "nm-cloud-setup.timer", "firewalld.service"]})
    b = node.boot()
    assert b.returncode == 0, b.stderr
    # SELinux policy with what it needs, from the bucket, the OS's repositories disabled (RHUI is out of reach)
    dnf = [c for c in b.os_calls if c[0] == "dnf"]
    assert dnf and all("--disablerepo=*" in c for c in dnf), dnf
    assert {"rke2-selinux", "container-selinux", "amazon-ssm-agent"} <= set(b.state["installed"]), b.state["installed"]
    # nm-cloud-setup and firewalld off (rke2-docs known_issues.md), Canal's interfaces left to it
    assert {"nm-cloud-setup.service", "nm-cloud-setup.timer", "firewalld.service"} <= set(b.state["stopped"])
    keyfile = (b.root / "etc/NetworkManager/conf.d/rke2-canal.conf").read_text()
    assert keyfile.startswith("[keyfile]\nunmanaged-devices=interface-name:flannel*;interface-name:cali*")
    # RKE2 from the bucket's artifacts by install.sh's tar method; images where RKE2 imports them
    assert (b.root / "installed-by").read_text() == "tar agent\n"
    assert (b.root / "var/lib/rancher/rke2/agent/images/rke2-images.linux-amd64.tar.zst").read_text() == "images amd64"
    assert not list((b.root / "var/lib/rke-aws/artifacts").glob("*.txt.*")), "an image list was fetched"
    assert not (b.root / "var/lib/rke-aws/artifacts/rke2-images.linux-amd64.txt").exists()
    assert b.started("agent") and not b.state.get("rebooted")
    # nothing but IMDS and the VPC's endpoints; every S3 request signed as botocore signs it
    assert hosts(b.urls) <= ALLOWED_HOSTS, hosts(b.urls) - ALLOWED_HOSTS
    assert not b.state.get("s3_refused"), b.state.get("s3_refused")
    assert public_urls(script) == []


def test_rhel9_airgapped_stops_when_container_selinux_is_missing(tmp_path):
    """dnf cannot resolve rke2-selinux's Requires(post) container-selinux offline: the node stops before RKE2."""
    rpms = {k: v for k, v in EL9_RPMS.items() if "container-selinux" not in k}
    node = Node(tmp_path, script_for("rhel-9", airgap=Airgap(BUCKET, PREFIX)), {
        "s3": {BUCKET: bucket(rpms=rpms)}, "public": {scripts.ssm_agent_rpm_url(REGION, SUFFIX, "x86_64"): "rpm"},
        "requires": {"rke2-selinux": ["container-selinux"]}, "repos_reachable": False})
    b = node.boot()
    assert b.returncode != 0 and not b.started(), b.stderr
    assert "nothing provides container-selinux" in b.stderr


def test_missing_artifact_stops_the_boot_naming_it(tmp_path):
    node = Node(tmp_path, script_for("ubuntu-24.04", airgap=Airgap(BUCKET, PREFIX)),
                {"s3": {BUCKET: bucket(missing=("rke2-images.linux-amd64.tar.zst",))}})
    b = node.boot()
    assert b.returncode != 0 and not b.started()
    assert f"S3 GET s3://{BUCKET}/rke2/{RELEASE}/rke2-images.linux-amd64.tar.zst failed: NoSuchKey" in b.stderr


def test_graviton_node_fetches_the_arm64_artifacts(tmp_path):
    node = Node(tmp_path, script_for("ubuntu-24.04", airgap=Airgap(BUCKET, PREFIX), arch="arm64"),
                {"s3": {BUCKET: bucket("arm64")}})
    b = node.boot()
    assert b.returncode == 0, b.stderr
    assert (b.root / "var/lib/rancher/rke2/agent/images/rke2-images.linux-arm64.tar.zst").exists()
    assert all("amd64" not in u for u in b.urls)


def test_s3_refuses_a_signature_made_with_other_keys(tmp_path):
    """The stand-in S3 has teeth: with a secret key other than the one the node signs with (IMDS's),
    botocore computes another signature, every GET is refused as S3 refuses it, and the node stops."""
    node = Node(tmp_path, script_for("ubuntu-24.04", airgap=Airgap(BUCKET, PREFIX)), {"s3": {BUCKET: bucket()}})
    s3_stub = (STUBS / "s3.py").read_text()
    patched = tmp_path / "stubs"
    patched.mkdir()
    for f in (f for f in STUBS.iterdir() if f.is_file()):
        target = patched / f.name
        target.write_text(f.read_text().replace('SIGNING_KEYS = ("AKIA", "secret", "session")',
                                                'SIGNING_KEYS = ("AKIA", "other-secret", "session")')
                          if f.name == "s3.py" else f.read_text())
        target.chmod(f.stat().st_mode)
    assert 'SIGNING_KEYS = ("AKIA", "secret", "session")' in s3_stub
    b = node.boot(patched)
    assert b.returncode != 0 and "SignatureDoesNotMatch" in b.stderr, b.stderr
    assert b.state["s3_refused"]


# ---- SLE Micro 6: transactional-update, the reboot and the resume -----------------------------------------

def test_sle_micro_airgapped_reboots_once_then_installs_rke2(tmp_path):
    script = script_for("sle-micro-6", airgap=Airgap(BUCKET, PREFIX))
    ssm_rpm = scripts.ssm_agent_rpm_url(REGION, SUFFIX, "x86_64")
    node = Node(tmp_path, script, {"s3": {BUCKET: bucket(rpms=SLEMICRO_RPMS)}, "public": {ssm_rpm: "agent rpm"},
                                   "signed": ["rke2-selinux"], "units": ["firewalld.service"],
                                   "read_only": True})
    first = node.boot()
    assert first.returncode == 0, first.stderr
    # the policy and the agent went into a new snapshot, with Rancher's key imported first (zypper would
    # refuse the signed rpm otherwise); nothing is installed in the running system, RKE2 not started yet
    tu = [c for c in first.os_calls if c[0] == "transactional-update"]
    assert tu and tu[0][1:5] == ["--no-selfupdate", "-d", "--continue", "run"], tu
    assert first.state["keys"] == ["public.key"]
    assert {"rke2-selinux", "amazon-ssm-agent"} <= set(first.state["pending"]) and "rke2-selinux" not in first.state["installed"]
    assert first.state["rebooted"] == 1 and not first.started()
    unit = (first.root / "etc/systemd/system/rke-aws-bootstrap.service").read_text()
    assert f"ExecStart={scripts.BOOTSTRAP_PATH}" in unit and "ConditionPathExists=/var/lib/rke-aws/prepared" in unit
    assert "systemctl enable rke-aws-bootstrap.service" in first.systemctl
    # the unit and the network files were written before the snapshot was taken
    order = [c for c in first.systemctl if "rke-aws-bootstrap" in c]
    assert order == ["systemctl enable rke-aws-bootstrap.service"]
    assert (first.root / "var/lib/rke-aws/prepared").exists()

    second = node.reboot()
    assert second.returncode == 0, second.stderr
    assert "resumed after the reboot" in second.stderr
    assert "systemctl disable rke-aws-bootstrap.service" in second.systemctl, "the unit would run at every boot"
    assert not (second.root / "var/lib/rke-aws/prepared").exists()
    assert len([c for c in second.os_calls if c[0] == "transactional-update"]) == len(tu), "packages installed twice"
    assert second.state["rebooted"] == 1, "rebooted again"
    assert (second.root / "installed-by").read_text() == "tar agent\n" and second.started()
    assert "amazon-ssm-agent.service" in second.state["started"]
    assert hosts(second.urls) <= ALLOWED_HOSTS and not second.state.get("s3_refused")

    third = node.boot()  # run again later (by hand): no second preparation, no reboot
    assert third.state["rebooted"] == 1


def test_sle_micro_online_takes_the_policy_from_rancher_repository(tmp_path):
    node = Node(tmp_path, script_for("sle-micro-6"), {
        "downloads": {scripts.INSTALL_RKE2_URL: online_install_sh()}, "read_only": True,
        "public": {scripts.ssm_agent_rpm_url(REGION, SUFFIX, "x86_64"): "agent rpm"}})
    first = node.boot()
    assert first.returncode == 0, first.stderr
    assert first.state["repos"] == ["https://rpm.rancher.io/rke2/stable/common/slemicro/noarch"]
    # two transactions before the reboot: the second continues the first (both packages in the snapshot)
    assert {"rke2-selinux", "amazon-ssm-agent"} <= set(first.state["pending"]) and first.state["rebooted"] == 1
    second = node.reboot()
    assert second.returncode == 0 and second.started(), second.stderr
    assert (second.root / "installed-by").read_text() == "online agent no-artifacts\n"


# ---- FIPS ---------------------------------------------------------------------------------------------------

def test_al2023_fips_switches_before_rke2_and_remakes_the_ssh_host_keys(tmp_path):
    node = Node(tmp_path, script_for("al2023", fips=True), {"downloads": {scripts.INSTALL_RKE2_URL: online_install_sh()}},
                files={"/etc/ssh/ssh_host_ed25519_key": "made before FIPS"})
    first = node.boot()
    assert first.returncode == 0, first.stderr
    assert ["fips-mode-setup", "--enable"] in first.os_calls
    assert first.state["rebooted"] == 1 and not first.started(), "RKE2 made keys before FIPS mode was on"
    second = node.reboot()
    assert second.returncode == 0 and second.started(), second.stderr
    assert not (second.root / "etc/ssh/ssh_host_ed25519_key").exists() and second.state["ssh_keys_made"] == 1
    assert "systemctl restart sshd.service" in second.systemctl


def test_fips_still_off_after_the_reboot_stops_the_node(tmp_path):
    node = Node(tmp_path, script_for("rhel-9", fips=True), {
        "downloads": {scripts.INSTALL_RKE2_URL: online_install_sh()},
        "public": {scripts.ssm_agent_rpm_url(REGION, SUFFIX, "x86_64"): "agent rpm"}})
    assert node.boot().state["rebooted"] == 1
    state = json.loads(node.state_file.read_text())
    state["fips_pending"] = False  # the kernel did not come up in FIPS mode
    node.state_file.write_text(json.dumps(state))
    b = node.reboot()
    assert b.returncode != 0 and not b.started() and "FIPS mode is still off" in b.stderr


def test_fips_image_check_refuses_an_image_not_in_fips_mode(tmp_path):
    """Ubuntu has no FIPS mode this program switches: `fips` there means the user's FIPS image, checked."""
    node = Node(tmp_path, script_for("ubuntu-24.04", fips=True), {"downloads": {scripts.INSTALL_RKE2_URL: online_install_sh()}})
    b = node.boot()
    assert b.returncode != 0 and not b.started() and "does not run in FIPS mode" in b.stderr
    ok = Node(tmp_path / "fips", script_for("ubuntu-24.04", fips=True),
              {"downloads": {scripts.INSTALL_RKE2_URL: online_install_sh()}, "fips_enabled": "1"}).boot()
    assert ok.returncode == 0 and ok.started() and not ok.state.get("rebooted"), ok.stderr


# ---- other OSes online ------------------------------------------------------------------------------------

def test_rocky9_online_gets_the_ssm_agent_and_leaves_selinux_to_the_rpm_install(tmp_path):
    ssm_rpm = scripts.ssm_agent_rpm_url(REGION, SUFFIX, "x86_64")
    node = Node(tmp_path, script_for("rocky-9"), {"downloads": {scripts.INSTALL_RKE2_URL: online_install_sh()},
                                                  "public": {ssm_rpm: "agent rpm"}})
    b = node.boot()
    assert b.returncode == 0 and b.started(), b.stderr
    assert b.state["installed"] == ["amazon-ssm-agent"], "rke2-selinux comes with install.sh's rpm method online"
    assert [c for c in b.os_calls if c[0] == "dnf"][0][:3] == ["dnf", "install", "-y"]
    assert (b.root / "installed-by").read_text() == "online agent no-artifacts\n"


def test_sles15_writes_forwarding_for_wicked_and_installs_nothing(tmp_path):
    node = Node(tmp_path, script_for("sles-15"), {"downloads": {scripts.INSTALL_RKE2_URL: online_install_sh()},
                                                  "units": ["amazon-ssm-agent.service"]})
    b = node.boot()
    assert b.returncode == 0 and b.started(), b.stderr
    assert (b.root / "etc/sysctl.d/90-rke2.conf").read_text() == "net.ipv4.conf.all.forwarding=1\nnet.ipv6.conf.all.forwarding=1\n"
    assert not [c for c in b.os_calls if c[0] in ("zypper", "dnf", "transactional-update")]


def test_ubuntu_online_has_no_steps():
    """The default node boots as before: no step, so its user data (and its instance) stay the same."""
    assert scripts.node_steps("ubuntu-24.04", region=REGION, dns_suffix=SUFFIX, arch="x86_64", release=RELEASE) is None


# ---- preinstalled images, the default route, the registry password -----------------------------------------

def test_preinstalled_image_installs_nothing(tmp_path):
    script = script_for("rhel-9", airgap=Airgap(BUCKET, PREFIX, preinstalled=True))
    node = Node(tmp_path, script, {"rke2_version": RELEASE, "installed": ["rke2-selinux"],
                                   "units": ["amazon-ssm-agent.service"], "s3": {BUCKET: {}}},
                files={"/usr/lib/systemd/system/rke2-agent.service": "[Service]\n"})
    b = node.boot()
    assert b.returncode == 0 and b.started(), b.stderr
    assert not (b.root / "installed-by").exists() and not any("s3" in u for u in b.urls)
    assert hosts(b.urls) <= ALLOWED_HOSTS and public_urls(script) == []


@pytest.mark.parametrize("state, why", [({"rke2_version": "v1.34.9+rke2r1", "installed": ["rke2-selinux"]}, "holds RKE2 v1.34.9"),
                                        ({"rke2_version": RELEASE}, "lacks rke2-selinux")])
def test_preinstalled_image_that_does_not_fit_stops_the_node(tmp_path, state, why):
    node = Node(tmp_path, script_for("rhel-9", airgap=Airgap(BUCKET, PREFIX, preinstalled=True)),
                {**state, "units": ["amazon-ssm-agent.service"]},
                files={"/usr/lib/systemd/system/rke2-agent.service": "[Service]\n"})
    b = node.boot()
    assert b.returncode != 0 and not b.started() and why in b.stderr, b.stderr


def test_airgapped_node_without_default_route_gets_one_before_rke2(tmp_path):
    node = Node(tmp_path, script_for("ubuntu-24.04", airgap=Airgap(BUCKET, PREFIX)),
                {"s3": {BUCKET: bucket()}, "default_route": ""})
    b = node.boot()
    assert b.returncode == 0, b.stderr
    unit = (b.root / "etc/systemd/system/rke-aws-default-route.service").read_text()
    assert "Before=rke2-server.service rke2-agent.service" in unit and "via 203.0.113.255 dev dummy0 metric 1000" in unit
    assert b.systemctl.index("systemctl enable --now rke-aws-default-route.service") < b.systemctl.index(
        "systemctl enable --now rke2-agent.service")


@pytest.mark.parametrize("password", ["s3cr3t", "it's \"quoted\" # not a comment: {x}", "back\\slash\ttab ünï 🔑"])
def test_registry_password_reaches_registries_yaml_and_nothing_else(tmp_path, password):
    mirrors = {"docker.io": "https://registry.corp.example:5000", "registry.k8s.io": "https://registry.corp.example:5000/k8s"}
    template = registries.rke2_registries_yaml(mirrors, username="robot$rke", has_password=True)
    script = script_for("ubuntu-24.04", password=True)
    node = Node(tmp_path, script, {"downloads": {scripts.INSTALL_RKE2_URL: online_install_sh()},
                                   "parameters": {TOKEN_PARAMETER: "agent-token-value", PASSWORD_PARAMETER: password}},
                files={registries.REGISTRIES_TEMPLATE_PATH: template})
    b = node.boot()
    assert b.returncode == 0 and b.started(), b.stderr
    written = b.root / registries.REGISTRIES_PATH.lstrip("/")
    doc = yaml.safe_load(written.read_text())
    assert doc["configs"]["registry.corp.example:5000"]["auth"] == {"username": "robot$rke", "password": password}
    assert doc["mirrors"]["registry.k8s.io"] == {"endpoint": ["https://registry.corp.example:5000"],
                                                 "rewrite": {"^(.*)$": "k8s/$1"}}
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert not (b.root / "var/lib/rke-aws/registry-password").exists()
    assert password not in script and password not in template


# ---- every variant passes shellcheck -------------------------------------------------------------------------

VARIANTS = {
    "rhel-9 air-gapped": dict(os_name="rhel-9", airgap=Airgap(BUCKET, PREFIX)),
    "rocky-9 online": dict(os_name="rocky-9"),
    "sles-15 online": dict(os_name="sles-15"),
    "sle-micro-6 air-gapped": dict(os_name="sle-micro-6", airgap=Airgap(BUCKET, PREFIX)),
    "sle-micro-6 online": dict(os_name="sle-micro-6"),
    "al2023 fips": dict(os_name="al2023", fips=True),
    "al2023 air-gapped arm64": dict(os_name="al2023", airgap=Airgap(BUCKET, PREFIX), arch="arm64"),
    "preinstalled": dict(os_name="rhel-9", airgap=Airgap(BUCKET, PREFIX, preinstalled=True)),
    "registry password": dict(os_name="ubuntu-24.04", password=True),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_assembled_script_is_shellcheck_clean(variant, tmp_path):
    kwargs = dict(VARIANTS[variant])
    script = script_for(kwargs.pop("os_name"), **kwargs)
    path = tmp_path / "boot.sh"
    path.write_text(script)
    proc = subprocess.run([str(Path(sys.executable).parent / "shellcheck"), "--format=gcc", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if "air-gapped" in variant or variant == "preinstalled":
        assert public_urls(script) == [], public_urls(script)
