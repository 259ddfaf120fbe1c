"""`make kubeconfig STACK=<stack>`: the cluster's admin kubeconfig, without copy-paste.

RKE2: the first server published its admin kubeconfig (server: the control-plane endpoint) as the
SecureString `/rke-aws/<clusterId>/admin-kubeconfig`, encrypted with a key only the account's
admins may use. This reads it with your AWS credentials and writes it to a file only you can read
(mode 0600; default `kubeconfig-<stack>.yaml`, git-ignored). `pulumi up` reads the same parameter by
itself: the file is for you (kubectl, helm).

RKE1: `rke up` writes `kube_config_cluster.yml` next to `cluster.yml`. This stores it as the stack's
encrypted `kubeconfig` (`pulumi config set --secret kubeconfig`, the value on stdin, never on a
command line), so the next `pulumi up` installs the CCM.

    rke-aws kubeconfig <stack> [--output FILE] [--from kube_config_cluster.yml] [--profile P]
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from ..plan.lookups import published_kubeconfig_problem
from ..plan.names import KUBE_API_PORT, KUBECONFIG_PENDING, endpoint_name, kubeconfig_parameter_name
from ..settings import config as cfgmod
from ..settings.stackfile import secret_keys_of

RKE_KUBECONFIG = "kube_config_cluster.yml"  # what `rke up` writes beside cluster.yml


class KubeconfigError(Exception):
    """Something the user can fix; the message says what."""


def stack_settings(stack: str, raw: dict[str, str]) -> cfgmod.StackConfig:
    """The stack's settings from its flat config (the stack file as the Pulumi CLI reads it)."""
    return cfgmod.parse(raw, project="rke-aws", stack=stack, region=raw.get("aws:region"),
                        secret_keys=secret_keys_of(raw))


def check_kubeconfig(text: str, source: str) -> None:
    """A kubeconfig with at least one cluster and user, or a clear refusal (never echoing its content)."""
    try:
        doc: Any = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise KubeconfigError(f"{source} is not YAML ({type(err).__name__})") from None
    if not isinstance(doc, dict) or doc.get("kind") != "Config" or not doc.get("clusters") or not doc.get("users"):
        raise KubeconfigError(f"{source} is not a kubeconfig (kind: Config with clusters and users)")


def write_private(path: Path, text: str) -> None:
    """Create or replace `path` readable by its owner only; the content never exists with wider rights."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # O_CREAT's mode does not apply to a file left over from an earlier run
        with os.fdopen(fd, "w") as f:
            f.write(text)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def read_published(cluster_id: str, region: str, session: Any) -> str:
    """The RKE2 admin kubeconfig the first server published."""
    name = kubeconfig_parameter_name(cluster_id)
    ssm = session.client("ssm", region_name=region)
    try:
        value = ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"]
    except Exception as err:  # noqa: BLE001 - botocore's ClientError names the cause (not found, access denied)
        raise KubeconfigError(f"could not read {name} in {region}: {err}; the first server publishes it once it has "
                              "initialised the cluster, and only principals allowed kms:Decrypt on its key can read it") from None
    if value == KUBECONFIG_PENDING:
        raise KubeconfigError(f"{name} is still '{KUBECONFIG_PENDING}': the first server has not initialised the "
                              "cluster yet (its boot log: /var/log/cloud-init-output.log); try again in a few minutes")
    problem = published_kubeconfig_problem(value, f"https://{endpoint_name(cluster_id)}:{KUBE_API_PORT}")
    if problem:  # every server may overwrite the parameter: use only what RKE2 writes
        raise KubeconfigError(f"{name} is refused: {problem}; check the cluster's servers")
    return value


def store_in_stack(stack: str, text: str, project_dir: Path, pulumi: str | None = None) -> None:
    """`pulumi config set --secret kubeconfig` in `project_dir` (Pulumi.yaml, stacks/) with the value on
    stdin (command lines are visible to every local user and land in shell history)."""
    pulumi = pulumi or shutil.which("pulumi")
    if not pulumi:
        raise KubeconfigError("the Pulumi CLI is not on PATH; install it, or run "
                              f"`pulumi config set --secret kubeconfig --stack {stack} < {RKE_KUBECONFIG}`")
    done = subprocess.run([pulumi, "config", "set", "--secret", "kubeconfig", "--stack", stack],
                          input=text, text=True, cwd=project_dir, capture_output=True)
    if done.returncode != 0:
        raise KubeconfigError(f"pulumi config set failed: {done.stderr.strip() or done.stdout.strip()}")
