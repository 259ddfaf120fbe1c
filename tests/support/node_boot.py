"""A node booted from the boot script the program writes, in a scratch root, against each OS's package-manager
stubs (tests/support/osstubs, in front of tests/support/stubs): shared by tests/tooling/test_node_boot.py and
tests/tooling/test_os_boot.py."""

from __future__ import annotations

import atexit
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import types
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rke_aws.node import airgap_artifacts, scripts

TESTS = Path(__file__).resolve().parent.parent
STUBS = TESTS / "support" / "osstubs"
BASE_STUBS = TESTS / "support" / "stubs"
REGION, SUFFIX = "us-gov-west-1", "amazonaws.com"
RELEASE = "v1.35.7+rke2r1"
BUCKET, PREFIX = "corp-rke2-artifacts", "rke2"
TOKEN_PARAMETER = "/rke-aws/c1/agent-token"
PASSWORD_PARAMETER = "/rke-aws/c1/registry-password"
# What an air-gapped node may reach: instance metadata and the VPC's endpoints (SSM's interface endpoint,
# the artifacts bucket and AWS's agent bucket through the S3 gateway endpoint).
ALLOWED_HOSTS = {"169.254.169.254", f"ssm.{REGION}.{SUFFIX}", f"{BUCKET}.s3.{REGION}.{SUFFIX}", f"s3.{REGION}.{SUFFIX}"}


def rke2_settings(kind: str = "agent") -> dict[str, object]:
    """rke2.sh's header for a joining node (made-up values of the shape scripts.rke2_boot_script writes)."""
    token = json.dumps({"Name": TOKEN_PARAMETER, "WithDecryption": True})
    return {
        "NODE_NAME": "ip-10-0-1-23.us-gov-west-1.compute.internal", "KIND": kind, "INSTALL_VERSION": RELEASE,
        "INSTALL_SCRIPT_URL": scripts.INSTALL_RKE2_URL, "REGION": REGION, "SSM_HOST": f"ssm.{REGION}.{SUFFIX}",
        "IMDS": scripts.IMDS_URL, "ENDPOINT": "api.c1.internal", "SUPERVISOR_PORT": 9345, "INITIALISER": "no",
        "PEER_IPS": "", "CONFIG": "/etc/rancher/rke2/config.yaml", "TOKEN_FILE": "/etc/rancher/rke2/agent-token",
        "TOKEN_REQUEST": token, "AGENT_TOKEN_FILE": "/etc/rancher/rke2/agent-token", "AGENT_TOKEN_REQUEST": "",
        "MARKER_PARAMETER": "/rke-aws/c1/init", "MARKER_REQUEST": "{}", "MANIFEST_PATH": "", "CIS": "no",
        "CIS_SYSCTL_SOURCES": " ".join(scripts.CIS_SYSCTL_SOURCES), "KUBECONFIG_PARAMETER": "", "KUBECONFIG_KEY": "",
        "ADMIN_KUBECONFIG": "/etc/rancher/rke2/rke2.yaml", "API_PORT": 6443, "SYNC": scripts.SYNC_PATH,
        "WORK": "/var/lib/rke-aws",
    }


def stand_in_install_sh(arch: str = "amd64") -> str:
    """RKE2's install.sh as far as an air-gapped install goes (rancher/rke2 install.sh @ 6ce1a8019e9d): with
    INSTALL_RKE2_ARTIFACT_PATH it stages sha256sum-<arch>.txt and rke2.linux-<arch>.tar.gz from there (both
    required), verifies the tarball against its line of the sums (fatal on a mismatch), verifies the image
    archive and moves it into /var/lib/rancher/rke2/agent/images, copies other rke2-images-* files, and
    installs the tarball (the tar method: ARTIFACT_PATH set). Without the variable it would download."""
    return f"""#!/bin/sh
set -e
A="$INSTALL_RKE2_ARTIFACT_PATH"
[ -n "$A" ] || {{ echo "install.sh: would download from GitHub" >&2; exit 1; }}
for f in sha256sum-{arch}.txt rke2.linux-{arch}.tar.gz; do [ -f "$A/$f" ] || {{ echo "install.sh: no $A/$f" >&2; exit 1; }}; done
for f in rke2.linux-{arch}.tar.gz rke2-images.linux-{arch}.tar.zst; do
  [ -f "$A/$f" ] || continue
  want=$(grep "$f" "$A/sha256sum-{arch}.txt" | awk '{{print $1}}')
  have=$(sha256sum "$A/$f" | awk '{{print $1}}')
  [ "$want" = "$have" ] || {{ echo "install.sh: download sha256 does not match $want, got $have" >&2; exit 1; }}
done
images="$RKE_AWS_ROOT/var/lib/rancher/rke2/agent/images"
mkdir -p "$images" "$RKE_AWS_ROOT/usr/local/lib/systemd/system" "$RKE_AWS_ROOT/usr/local/share/rke2"
mv -f "$A/rke2-images.linux-{arch}.tar.zst" "$images/"
printf 'tar %s\\n' "$INSTALL_RKE2_TYPE" > "$RKE_AWS_ROOT/installed-by"
printf '[Service]\\n' > "$RKE_AWS_ROOT/usr/local/lib/systemd/system/rke2-$INSTALL_RKE2_TYPE.service"
"""


def online_install_sh() -> str:
    return ('#!/bin/sh\nprintf "online %s %s\\n" "$INSTALL_RKE2_TYPE" "${INSTALL_RKE2_ARTIFACT_PATH:-no-artifacts}" '
            '> "$RKE_AWS_ROOT/installed-by"\n')


def bucket(arch: str = "amd64", rpms: dict[str, str] | None = None, missing: tuple[str, ...] = ()) -> dict[str, str]:
    """The artifacts bucket as a user fills it (airgap_artifacts' layout)."""
    tarball, images = f"tarball {arch}", f"images {arch}"
    sums = (f"{hashlib.sha256(tarball.encode()).hexdigest()}  rke2.linux-{arch}.tar.gz\n"
            f"{hashlib.sha256(images.encode()).hexdigest()}  rke2-images.linux-{arch}.tar.zst\n")
    base = airgap_artifacts.release_prefix(PREFIX, RELEASE)
    objects = {base + "install.sh": stand_in_install_sh(arch), base + f"sha256sum-{arch}.txt": sums,
               base + f"rke2.linux-{arch}.tar.gz": tarball, base + f"rke2-images.linux-{arch}.tar.zst": images,
               # the image lists are in the release too: never fetched (RKE2 would pull what they name)
               base + f"rke2-images.linux-{arch}.txt": "docker.io/rancher/hardened-kubernetes\n"}
    objects.update(rpms or {})
    return {k: v for k, v in objects.items() if not any(k.endswith(m) for m in missing)}


EL9_RPMS = {"rke2/rpms/el9/rke2-selinux-0.23-1.el9.noarch.rpm": "policy",
            "rke2/rpms/el9/container-selinux-2.229.0-1.el9.noarch.rpm": "container policy"}
SLEMICRO_RPMS = {"rke2/rpms/slemicro/rke2-selinux-0.23-1.slemicro.noarch.rpm": "policy",
                 "rke2/rpms/slemicro/public.key": "-----BEGIN PGP PUBLIC KEY BLOCK-----"}


@cache
def s3_signer() -> str:
    """The Unix socket where this process computes, with botocore, the signature the S3 stand-in checks each
    request against (tests/support/osstubs/sigv4.py): started on first use, for as long as the process runs."""
    sigv4 = types.ModuleType("sigv4")  # from its source: no __pycache__ among the stand-ins
    exec(compile((STUBS / "sigv4.py").read_text(), str(STUBS / "sigv4.py"), "exec"), sigv4.__dict__)  # noqa: S102
    where = Path(tempfile.mkdtemp(prefix="s3-signer-"))  # short: a socket's path has at most 107 bytes
    sigv4.serve(str(where / "socket"))  # a daemon thread: it ends with the process
    atexit.register(shutil.rmtree, where, True)
    return str(where / "socket")


@dataclass
class Booted:
    returncode: int
    stderr: str
    root: Path
    state: dict
    urls: list[str]
    os_calls: list[list[str]]
    systemctl: list[str]

    def started(self, kind: str = "agent") -> bool:
        return f"systemctl enable --now rke2-{kind}.service" in self.systemctl


class Node:
    """One node's scratch root and stub state, booted as often as the test reboots it."""

    def __init__(self, tmp_path: Path, script: str, state: dict, files: dict[str, str] | None = None):
        self.tmp, self.root = tmp_path, tmp_path / "root"
        self.log, self.state_file = tmp_path / "calls.log", tmp_path / "state.json"
        boot = self.root / scripts.BOOTSTRAP_PATH.lstrip("/")
        boot.parent.mkdir(parents=True)
        boot.write_text(script)
        for path, content in {"/etc/rancher/rke2/config.yaml": "node-name: n\n", **(files or {})}.items():
            (self.root / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            (self.root / path.lstrip("/")).write_text(content)
        (self.root / "proc/sys/crypto").mkdir(parents=True)
        (self.root / "proc/sys/crypto/fips_enabled").write_text(state.pop("fips_enabled", "0"))
        base = {"parameters": {TOKEN_PARAMETER: "agent-token-value"}, "downloads": {}, "units": [],
                "installed": [], "default_route": "default via 10.0.0.1 dev ens5"}
        self.state_file.write_text(json.dumps({**base, **state}))

    def boot(self, stubs: Path = STUBS) -> Booted:
        env = {"PATH": f"{stubs}:{BASE_STUBS}:/usr/bin:/bin", "HOME": str(self.tmp), "STUB_STATE": str(self.state_file),
               "STUB_LOG": str(self.log), "RKE_AWS_ROOT": str(self.root), "RKE_AWS_RETRY_SECONDS": "1",
               "RKE_AWS_RETRY_DELAY": "0", "STUB_PYTHON": sys.executable, "STUB_CURL": str(BASE_STUBS / "curl"),
               "STUB_SYSTEMCTL": str(BASE_STUBS / "systemctl"), "STUB_SIGNER": s3_signer()}
        proc = subprocess.run(["sh", str(self.root / scripts.BOOTSTRAP_PATH.lstrip("/"))], env=env,
                              capture_output=True, text=True, timeout=120)
        calls = [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []
        os_log, sysctl = Path(f"{self.log}.os"), Path(f"{self.log}.systemctl")
        return Booted(proc.returncode, proc.stderr, self.root, json.loads(self.state_file.read_text()),
                      [c["url"] for c in calls],
                      [json.loads(line) for line in os_log.read_text().splitlines()] if os_log.exists() else [],
                      sysctl.read_text().splitlines() if sysctl.exists() else [])

    def reboot(self) -> Booted:
        """What the reboot does: the new snapshot's packages are there, FIPS mode is on if it was switched on."""
        state = json.loads(self.state_file.read_text())
        state["installed"] = state.get("installed", []) + state.pop("pending", [])
        state["snapshot_pending"] = False
        if state.pop("fips_pending", False):
            (self.root / "proc/sys/crypto/fips_enabled").write_text("1")
        self.state_file.write_text(json.dumps(state))
        return self.boot()


# ---- RKE1 nodes on other operating systems (issue 35 item 3) --------------------------------------------------

OS_RELEASE = {  # /etc/os-release as each vendor's image has it (the ID install-docker and rke1_docker.sh read)
    "rhel-9": 'NAME="Red Hat Enterprise Linux"\nID="rhel"\nVERSION_ID="9.6"\n',
    "rocky-9": 'NAME="Rocky Linux"\nID="rocky"\nVERSION_ID="9.6"\n',
    "sles-15": 'NAME="SLES"\nID="sles"\nVERSION_ID="15.7"\n',
    "ubuntu-24.04": 'NAME="Ubuntu"\nID=ubuntu\nVERSION_ID="24.04"\n',
}


def stand_in_install_docker() -> str:
    """Rancher's install-docker script (rancher/install-docker dist/27.5.1.sh @ d69b486) as far as these tests go:
    the distribution is /etc/os-release's ID; rhel and rocky add download.docker.com's linux/rhel repository
    and install docker-ce with dnf; sles stops on every machine but s390x ("Packages for SLES are currently only
    available for s390x"); any other ID is an unsupported distribution. (Ubuntu's apt path is not stood in.)"""
    return """#!/bin/sh
set -e
lsb_dist=$(. "$RKE_AWS_ROOT/etc/os-release" && echo "$ID")
case "$lsb_dist" in
  rhel|rocky)
    dnf install -y docker-ce docker-ce-cli containerd.io ;;
  sles)
    if [ "$(uname -m)" != s390x ]; then
      echo "Packages for SLES are currently only available for s390x"
      exit 1
    fi ;;
  *)
    echo "ERROR: Unsupported distribution '$lsb_dist'"
    exit 1 ;;
esac
"""


RKE1_OS_REGION = "us-west-2"
RKE1_OSES = ("rhel-9", "rocky-9", "sles-15")


def rke1_os_config() -> dict[str, str]:
    """An RKE1 cluster with a pool of each OS RKE1 runs on besides Ubuntu (commercial partition, where every
    vendor publishes), planned by tests/program and booted by tests/tooling (tests.support.runs.run_cached)."""
    pools = [{"name": "control", "roles": ["controlplane", "etcd"], "count": 1, "os": "rhel-9"},
             {"name": "ubuntu", "roles": ["worker"], "count": 1}]
    pools += [{"name": o.replace(".", ""), "roles": ["worker"], "count": 1, "os": o} for o in RKE1_OSES]
    return {"aws:region": RKE1_OS_REGION, "rke-aws:distribution": "rke", "rke-aws:clusterId": "rke1os",
            "rke-aws:nodePools": json.dumps(pools),
            "rke-aws:access": json.dumps({"sshKeyName": "rke1os", "sshKeyPath": "~/.ssh/rke1os.pem",
                                          "adminCidrs": ["10.0.0.0/8"]})}
