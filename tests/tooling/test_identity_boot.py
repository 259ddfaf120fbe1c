"""The server boot fragment that puts the issuer's keys on disk (components/node/scripts/identity.sh),
run with the suite's stand-ins for curl (IMDS, SSM) as the other boot-script tests do: the signing
key arrives from its SecureString (WithDecryption) as a 0600 file in a 0700 directory, the trusted
public keys beside it, nothing is written for a parameter that is missing or not PEM, and the key
never reaches the log."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rke_aws.node import scripts
from rke_aws.plan import identity_apiserver as api
from tests.support import sts

TESTS = Path(__file__).resolve().parents[1]
STUBS = next(p for p in (TESTS / "stubs", TESTS / "support" / "stubs") if (p / "curl").exists())
KEY = sts.new_key()
PRIVATE, PUBLIC = sts.private_pem(KEY), sts.public_pem(KEY)
KEY_PARAM, TRUSTED_PARAM = "/rke-aws/c1/identity/signing-key", "/rke-aws/c1/identity/trusted-keys"


def script(key_param: str | None = KEY_PARAM, trusted_param: str | None = TRUSTED_PARAM) -> str:
    settings, body = scripts.identity_step(key_param, trusted_param, api.KEY_DIR, api.SIGNING_KEY_FILE,
                                           api.TRUSTED_KEYS_FILE)
    base = {"REGION": "us-east-1", "SSM_HOST": "ssm.us-east-1.amazonaws.com", "IMDS": scripts.IMDS_URL}
    return scripts._script("identity keys (test)", {**base, **settings}, scripts._RETRY_SH, scripts._SSM_SH, *body)


def run(tmp_path: Path, text: str, parameters: dict[str, str]) -> tuple[subprocess.CompletedProcess, Path, list]:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "boot.sh").write_text(text)
    state, log = tmp_path / "state.json", tmp_path / "calls.log"
    state.write_text(json.dumps({"parameters": parameters}))
    env = {"PATH": f"{STUBS}:/usr/bin:/bin", "HOME": str(tmp_path), "STUB_STATE": str(state), "STUB_LOG": str(log),
           "RKE_AWS_ROOT": str(root), "RKE_AWS_RETRY_SECONDS": "1", "RKE_AWS_RETRY_DELAY": "0"}
    proc = subprocess.run(["sh", str(tmp_path / "boot.sh")], env=env, capture_output=True, text=True, timeout=120)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return proc, root, calls


def at(root: Path, path: str) -> Path:
    return root / path.lstrip("/")


def test_the_keys_arrive_before_rke2_with_tight_modes(tmp_path):
    proc, root, calls = run(tmp_path, script(), {KEY_PARAM: PRIVATE, TRUSTED_PARAM: PUBLIC})
    assert proc.returncode == 0, proc.stderr
    key, trusted = at(root, api.SIGNING_KEY_FILE), at(root, api.TRUSTED_KEYS_FILE)
    assert key.read_text() == PRIVATE.rstrip("\n") and trusted.read_text() == PUBLIC.rstrip("\n")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(at(root, api.KEY_DIR).stat().st_mode) == 0o700
    gets = [json.loads(c["data"]) for c in calls if c["target"] == "AmazonSSM.GetParameter"]
    assert {g["Name"]: g["WithDecryption"] for g in gets} == {KEY_PARAM: True, TRUSTED_PARAM: True}
    assert "PRIVATE KEY" not in proc.stderr and "PRIVATE KEY" not in proc.stdout
    assert not list(root.rglob("*.tmp"))


def test_trust_only_fetches_no_signing_key(tmp_path):
    proc, root, calls = run(tmp_path, script(key_param=None), {TRUSTED_PARAM: PUBLIC})
    assert proc.returncode == 0, proc.stderr
    assert at(root, api.TRUSTED_KEYS_FILE).exists() and not at(root, api.SIGNING_KEY_FILE).exists()


def test_issuer_off_adds_nothing():
    assert scripts.identity_step(None, None, api.KEY_DIR, api.SIGNING_KEY_FILE, api.TRUSTED_KEYS_FILE) == ({}, ())


@pytest.mark.parametrize("parameters,why", [
    ({TRUSTED_PARAM: PUBLIC}, "ParameterNotFound"),  # the signing key missing
    ({KEY_PARAM: "not a key", TRUSTED_PARAM: PUBLIC}, "no PEM"),
    ({KEY_PARAM: PRIVATE, TRUSTED_PARAM: PRIVATE}, "no PEM PUBLIC KEY"),  # a private key where public keys go
])
def test_a_bad_parameter_stops_the_boot_and_leaves_no_file(tmp_path, parameters, why):
    proc, root, _ = run(tmp_path, script(), parameters)
    assert proc.returncode != 0
    assert why in proc.stderr, proc.stderr
    assert not at(root, api.SIGNING_KEY_FILE).exists() or why == "no PEM PUBLIC KEY"
    assert "BEGIN RSA PRIVATE KEY" not in proc.stderr


def test_the_assembled_script_passes_shellcheck(tmp_path):
    path = tmp_path / "boot.sh"
    path.write_text(script())
    exe = Path(sys.executable).parent / "shellcheck"
    proc = subprocess.run([str(exe), "--format=gcc", "--severity=style", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_rke1_controlplane_node_has_the_keys_in_its_bound_directory_before_docker(tmp_path):
    """RKE1 (tests/stacks/Pulumi.rke1-irsa.yaml): the controlplane node's own boot script, run up to its RKE1
    part (Docker's install, which `rke up` needs), leaves the key files where cluster.yml binds them into
    kube-apiserver (rancher/rke cluster/plan.go: extra_binds; the container runs as root), 0600 in a 0700
    directory; the private key never reaches the log."""
    from tests.support.runs import run_stack_cached
    from tests.support.userdata import cloud_config, written_file

    stack = run_stack_cached("rke1-irsa")
    inst = next(i for i in stack.of_type("aws:ec2/instance:Instance") if "controlplane" in i.inputs["tags"]["rke-aws/roles"])
    text = written_file(cloud_config(inst), scripts.BOOTSTRAP_PATH)
    rke_part = scripts.fragment("rke")
    assert text.endswith(rke_part)
    proc, root, calls = run(tmp_path, text[: -len(rke_part)], {"/rke-aws/rke1-irsa/identity/signing-key": PRIVATE,
                                                              "/rke-aws/rke1-irsa/identity/trusted-keys": PUBLIC})
    assert proc.returncode == 0, proc.stderr
    key, trusted = at(root, api.RKE1_SIGNING_KEY_FILE), at(root, api.RKE1_TRUSTED_KEYS_FILE)
    assert key.read_text() == PRIVATE.rstrip("\n") and trusted.read_text() == PUBLIC.rstrip("\n")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(at(root, api.RKE1_KEY_DIR).stat().st_mode) == 0o700
    assert "PRIVATE KEY" not in proc.stderr + proc.stdout
    gets = [json.loads(c["data"]) for c in calls if c["target"] == "AmazonSSM.GetParameter"]
    assert {g["Name"]: g["WithDecryption"] for g in gets} == {"/rke-aws/rke1-irsa/identity/signing-key": True,
                                                              "/rke-aws/rke1-irsa/identity/trusted-keys": True}
