"""Boot scripts run under stubs (tests/support/stubs): `boot` runs a node's generated script as cloud-init
would, with curl, systemctl, date and sleep faked."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from rke_aws.node import rke2_config, scripts
from rke_aws_offline.engine import harness
from tests.support.userdata import cloud_config

STUBS = Path(__file__).resolve().parent / "stubs"


INSTANCE = "aws:ec2/instance:Instance"


# What RKE2 writes to /etc/rancher/rke2/rke2.yaml (k3s's kubeconfig template: one cluster, one
# client certificate, the server on the loopback address).
ADMIN_KUBECONFIG = """apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
    server: https://127.0.0.1:6443
  name: default
contexts:
- context:
    cluster: default
    user: default
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: default
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
    client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCg==
"""


def instances(run: harness.ProgramRun) -> dict[str, harness.Registration]:
    return {r.inputs["tags"]["Name"]: r for r in run.of_type(INSTANCE)}


@dataclass
class Booted:
    returncode: int
    stderr: str
    root: Path
    state: dict
    calls: list[dict]
    systemctl: list[str]
    installed: str
    config_at_start: dict | None  # what RKE2 read when the script started it
    manifests_at_start: list[str] | None  # what was in its manifests directory then (servers)

    def config(self) -> dict:
        return yaml.safe_load((self.root / rke2_config.RKE2_CONFIG_PATH.lstrip("/")).read_text())


def boot(inst: harness.Registration, tmp_path: Path, parameters: dict[str, str], *, serving=(), denied=(),
         ssm_host: str = "", script: str = scripts.BOOTSTRAP_PATH, budget: int | None = 1, users=(),
         page_size: int = 10, indent=None, online_at: int | None = None) -> Booted:
    """Write the instance's cloud-init files under a scratch root and run `script` there.

    `budget`: RKE_AWS_RETRY_SECONDS (retry delay 0); None: the script's own budget and delay, on a
    fake clock that starts at 0 and moves on with every sleep. `online_at`: nothing outside the
    instance answers before the fake clock reaches it (a NAT gateway still being created)."""
    root = tmp_path / "root"
    for f in cloud_config(inst).get("write_files") or []:
        path = root / f["path"].lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f["content"])
        path.chmod(int(f.get("permissions", "0644"), 8))
    log = tmp_path / "calls.log"
    installed = tmp_path / "installed"
    state_file = tmp_path / "state.json"
    state = {
        "parameters": dict(parameters), "serving": list(serving), "denied": list(denied), "ssm_host": ssm_host,
        "users": list(users),  # what tests/support/stubs/getent finds
        "page_size": page_size, "indent": indent,  # how SSM pages and formats GetParametersByPath
        "downloads": {
            # The stand-in install: records what it was asked for; RKE2 "writes" its admin kubeconfig.
            scripts.INSTALL_RKE2_URL: (f'printf "%s %s" "$INSTALL_RKE2_TYPE" "$INSTALL_RKE2_VERSION" > {installed}\n'
                                         f'mkdir -p "$RKE_AWS_ROOT/etc/rancher/rke2"\n'
                                         f'printf "%s\\n" "{ADMIN_KUBECONFIG}" > "$RKE_AWS_ROOT/etc/rancher/rke2/rke2.yaml"\n'
                                         # the tarball install ships the CIS kernel parameters file
                                         f'mkdir -p "$RKE_AWS_ROOT/usr/local/share/rke2"\n'
                                         f'printf "vm.panic_on_oom=0\\n" > "$RKE_AWS_ROOT/usr/local/share/rke2/rke2-cis-sysctl.conf"\n'),
            **{u: f"# downloaded from {u}\n" for u in _all_urls(parameters)},
        },
    }
    state_file.write_text(json.dumps(state))
    env = {"PATH": f"{STUBS}:/usr/bin:/bin", "HOME": str(tmp_path), "STUB_STATE": str(state_file),
           "STUB_LOG": str(log), "RKE_AWS_ROOT": str(root)}
    if online_at is not None:
        env["STUB_ONLINE_AT"] = str(online_at)  # tests/support/stubs/curl refuses what is outside the instance until then
    if budget is None:
        env["STUB_CLOCK"] = str(tmp_path / "clock")
    else:
        env.update(RKE_AWS_RETRY_SECONDS=str(budget), RKE_AWS_RETRY_DELAY="0")
    proc = subprocess.run(["sh", str(root / script.lstrip("/"))], env=env, capture_output=True, text=True, timeout=120)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    sysctl = Path(f"{log}.systemctl")
    at_start = Path(f"{log}.config-at-start")
    manifests_at_start = Path(f"{log}.manifests-at-start")
    return Booted(proc.returncode, proc.stderr, root, json.loads(state_file.read_text()), calls,
                  sysctl.read_text().splitlines() if sysctl.exists() else [],
                  installed.read_text() if installed.exists() else "",
                  yaml.safe_load(at_start.read_text()) if at_start.exists() else None,
                  manifests_at_start.read_text().split() if manifests_at_start.exists() else None)


def _all_urls(parameters: dict[str, str]) -> list[str]:
    return [v for k, v in parameters.items() if k.endswith(".url")]


def rke2_parameters(run: harness.ProgramRun, marker: str = "pending") -> dict[str, str]:
    """The SSM parameters as the program registered them (values of the tokens: made up)."""
    out = {}
    for reg in run.of_type("aws:ssm/parameter:Parameter"):
        value = reg.inputs.get("value", reg.inputs.get("insecureValue"))
        out[reg.inputs["name"]] = f"token-of-{reg.name}" if reg.inputs["type"] == "SecureString" else value
    out[run.outputs["rke2InitMarkerParameter"]] = marker
    return out


def first_server(run) -> harness.Registration:
    (first,) = [i for i in run.of_type(INSTANCE) if "server:" not in _config_text(i)
                and "agent" not in i.inputs["tags"]["rke-aws/roles"] and i.inputs["tags"]["rke-aws/roles"] != "worker"]
    return first


def _config_text(inst) -> str:
    return next(f["content"] for f in cloud_config(inst)["write_files"] if f["path"] == rke2_config.RKE2_CONFIG_PATH)
