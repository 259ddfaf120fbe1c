"""The boot scripts: the .sh fragments in scripts/ (package data, shellchecked as files by the tests)
joined after a header that sets each script's values. Pure functions of the node plan."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ..plan.identity_apiserver import (
    KEY_DIR,
    RKE1_KEY_DIR,
    RKE1_SIGNING_KEY_FILE,
    RKE1_TRUSTED_KEYS_FILE,
    SIGNING_KEY_FILE,
    TRUSTED_KEYS_FILE,
)
from ..plan.names import KUBE_API_PORT, MANIFEST_PREFIX, RKE2_SUPERVISOR_PORT
from ..plan.nodes import PlannedNode
from ..plan.proxy import ProxyEnv
from ..settings import os_images, versions
from . import airgap_artifacts, registries
from .rke1_cluster import RKE_KERNEL_MODULES, Rke1Identity
from .rke2_config import (
    CIS_SYSCTL_SOURCES,
    RKE2_AGENT_TOKEN_PATH,
    RKE2_CONFIG_PATH,
    RKE2_MANIFESTS_DIR,
    RKE2_TOKEN_PATH,
    Rke2Boot,
)

# Each fragment file starts with comments for the reader and shellcheck, down to this line.
FRAGMENT_MARKER = "# ---- fragment ----\n"


def fragment(name: str) -> str:
    """The part of scripts/<name>.sh below its marker line, byte for byte."""
    text = resources.files(__package__).joinpath("scripts", f"{name}.sh").read_text(encoding="utf-8")
    head, marker, body = text.partition(FRAGMENT_MARKER)
    if not marker:
        raise ValueError(f"scripts/{name}.sh: no {FRAGMENT_MARKER.strip()!r} line")
    return body


BOOTSTRAP_PATH = "/usr/local/sbin/rke-aws-bootstrap"


SYNC_PATH = "/usr/local/sbin/rke-aws-sync-manifests"


SYNC_INTERVAL = "2min"  # how soon a changed manifest (CCM values, upgrade Plans) reaches the servers


# Every network step at boot is retried for this long: instances no longer wait for their NAT
# gateway (about 105 s to create), the instance role's credentials appear a few seconds after
# boot, and a mirror can be briefly unreachable. 15 minutes, well over the 10 the issue sets.
RETRY_SECONDS = 900


RETRY_DELAY = 10


def _quote(value: Any) -> str:
    """Always single-quoted (shlex.quote leaves safe-looking words bare, which shellcheck reads as
    arithmetic or commands): nothing in a value is ever expanded by the shell."""
    return "'" + str(value).replace("'", "'\\''") + "'"


def _assignments(settings: Mapping[str, Any]) -> str:
    return "".join(f"{k}={_quote(v)}\n" for k, v in settings.items())


# Shell the boot scripts share: logging, a retry loop with a time budget, downloads ...
_RETRY_SH = fragment("retry")


# ... and IMDSv2 credentials and SigV4-signed SSM calls (Ubuntu images carry curl >= 8 and python3,
# but no AWS CLI).
_SSM_SH = fragment("ssm")


_RKE2_SH = fragment("rke2")


_SYNC_SH = fragment("sync")


_RKE_SH = fragment("rke")


_PROXY_SH = fragment("proxy")


_IDENTITY_SH = fragment("identity")


def identity_step(key_parameter: str | None, trusted_parameter: str | None, key_dir: str, key_file: str,
                  trusted_file: str, generations: str = "") -> tuple[dict[str, str], tuple[str, ...]]:
    """A server boot script's settings and body for the service-account issuer's keys
    (components/plan/identity_apiserver.py names the files): the signing key (SecureString) and the trusted
    public keys, fetched before RKE2 starts (RKE1: before Docker, rke_boot_script); None skips a file. Not used
    while the issuer is off."""
    if key_parameter is None and trusted_parameter is None:
        return {}, ()
    settings = {
        "IDENTITY_DIR": key_dir,
        "IDENTITY_KEY_REQUEST": _get_request(key_parameter, True) if key_parameter else "",
        "IDENTITY_KEY_FILE": key_file,
        "IDENTITY_TRUSTED_REQUEST": _get_request(trusted_parameter, True) if trusted_parameter else "",
        "IDENTITY_TRUSTED_FILE": trusted_file,
        **({"IDENTITY_GENERATIONS": generations} if generations else {}),
    }
    return settings, (_IDENTITY_SH,)


# The SSM agent's unit on Ubuntu (installed as a snap); its proxy drop-in is cloud_init.SSM_AGENT_PROXY_DROP_IN.
SSM_AGENT_UNIT = "snap.amazon-ssm-agent.amazon-ssm-agent.service"


def _proxy_step(proxy: ProxyEnv | None) -> tuple[dict[str, str], tuple[str, ...]]:
    """A boot script's settings and body for the proxy: the SSM agent restarted with its drop-in."""
    if proxy is None:
        return {}, ()
    return {"SSM_AGENT_UNIT": SSM_AGENT_UNIT}, (_PROXY_SH,)


IMDS_URL = "http://169.254.169.254/latest"


INSTALL_RKE2_URL = "https://get.rke2.io"


# The generator the scripts' header names: the module's path before the layers (components/node/). Kept
# as it was: the header is part of every node's user data, and changing it would change every instance.
GENERATOR = "components/bootstrap.py"


def _script(purpose: str, settings: Mapping[str, Any], *bodies: str, proxy: ProxyEnv | None = None) -> str:
    fixed = {
        # Tests run the script against a scratch directory and a short budget; nodes never set these.
        "ROOT": "${RKE_AWS_ROOT:-}",
        "RETRY_SECONDS": f"${{RKE_AWS_RETRY_SECONDS:-{RETRY_SECONDS}}}",
        "RETRY_DELAY": f"${{RKE_AWS_RETRY_DELAY:-{RETRY_DELAY}}}",
    }
    return (
        "#!/bin/sh\n"
        f"# {purpose}. Generated by rke-aws ({GENERATOR}).\n"
        "set -eu\n"
        + "".join(f'{k}="{v}"\n' for k, v in fixed.items())
        + _assignments(settings)
        # Every download and SSM call, and what they start (RKE2's and Docker's install scripts, apt).
        + ("".join(f"export {k}={_quote(v)}\n" for k, v in proxy.shell_variables().items()) if proxy else "")
        + "".join(bodies)
    )


def _get_request(name: str, decrypt: bool) -> str:
    return json.dumps({"Name": name, "WithDecryption": decrypt})


def rke2_boot_script(node: PlannedNode, boot: Rke2Boot, steps: NodeSteps | None = None) -> str:
    """`steps`: the node's OS, air-gap and registry steps (node_steps); None: those of the node's OS and
    `fips` (none for an Ubuntu node without FIPS: the script of before)."""
    if steps is None:
        steps = node_steps(node.pool.os, region=boot.region, dns_suffix=boot.dns_suffix,
                           arch=boot.pool_archs.get(node.pool.name, "x86_64"), release=boot.install_version,
                           fips=boot.fips)
    server = node.pool.is_server
    agent_token = boot.agent_token_parameter
    token = boot.token_parameter if (server or agent_token is None) else agent_token
    settings = {
        "NODE_NAME": node.name,
        "KIND": "server" if server else "agent",
        "INSTALL_VERSION": boot.install_version,
        "INSTALL_SCRIPT_URL": INSTALL_RKE2_URL,
        "REGION": boot.region,
        "SSM_HOST": boot.ssm_host,
        "IMDS": IMDS_URL,
        "ENDPOINT": boot.endpoint,
        "SUPERVISOR_PORT": RKE2_SUPERVISOR_PORT,
        "INITIALISER": "yes" if node.is_first_server else "no",
        "PEER_IPS": " ".join(ip for ip in boot.server_ips if ip != node.private_ip),
        "CONFIG": RKE2_CONFIG_PATH,
        "TOKEN_FILE": RKE2_TOKEN_PATH if (server or agent_token is None) else RKE2_AGENT_TOKEN_PATH,
        "TOKEN_REQUEST": _get_request(token, True),
        "AGENT_TOKEN_FILE": RKE2_AGENT_TOKEN_PATH,
        "AGENT_TOKEN_REQUEST": _get_request(agent_token, True) if (server and agent_token) else "",
        "MARKER_PARAMETER": boot.marker_parameter,
        "MARKER_REQUEST": _get_request(boot.marker_parameter, False),
        "MANIFEST_PATH": (boot.manifest_path or "") if server else "",
        "CIS": "yes" if boot.cis_profile else "no",
        "CIS_SYSCTL_SOURCES": " ".join(CIS_SYSCTL_SOURCES),
        "KUBECONFIG_PARAMETER": (boot.kubeconfig_parameter or "") if node.is_first_server else "",
        "KUBECONFIG_KEY": (boot.kubeconfig_key or "") if node.is_first_server else "",
        "ADMIN_KUBECONFIG": "/etc/rancher/rke2/rke2.yaml",
        "API_PORT": KUBE_API_PORT,
        "SYNC": SYNC_PATH,
        "WORK": "/var/lib/rke-aws",
    }
    identity = boot.identity if server and node.pool.is_controlplane else None
    if identity is not None:
        # The issuer's key files, before RKE2 starts (identity.sh), after the OS's and registry's steps.
        extra, body = identity_step(identity.key_parameter, identity.trusted_parameter, KEY_DIR, SIGNING_KEY_FILE,
                                    TRUSTED_KEYS_FILE, identity.generations)
        steps = steps or NodeSteps()
        steps = NodeSteps({**steps.settings, **extra}, steps.helpers, (*steps.before_rke2, *body),
                          steps.install_script_url)
    return rke2_script(settings, boot.proxy, steps)


def rke2_script(settings: Mapping[str, Any], proxy: ProxyEnv | None = None, steps: NodeSteps | None = None) -> str:
    """An RKE2 node's boot script from rke2.sh's settings. Without `steps` the bytes are what every node ran
    before node_steps existed (its user data, and so its instance, unchanged)."""
    proxy_settings, proxy_step = _proxy_step(proxy)
    extra: dict[str, Any] = {}
    helpers: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    if steps is not None:
        extra, helpers, before = dict(steps.settings), steps.helpers, steps.before_rke2
        if steps.install_script_url is not None:
            extra["INSTALL_SCRIPT_URL"] = steps.install_script_url
    return _script("RKE2 node bootstrap: tokens, init-or-join, install, start", {**settings, **proxy_settings, **extra},
                   _RETRY_SH, *proxy_step, _SSM_SH, *helpers, 'mkdir -p "$ROOT$WORK"\n', *before, _RKE2_SH,
                   proxy=proxy)


def manifest_sync_script(boot: Rke2Boot) -> str:
    settings = {
        "REGION": boot.region,
        "SSM_HOST": boot.ssm_host,
        "IMDS": IMDS_URL,
        "MANIFESTS": RKE2_MANIFESTS_DIR,
        "PREFIX": MANIFEST_PREFIX,
        # WithDecryption: a manifest holding a credential is a SecureString (manifests.py).
        "MANIFEST_REQUEST": json.dumps({"Path": boot.manifest_path, "Recursive": False, "MaxResults": 10,
                                        "WithDecryption": True}),
    }
    airgap: tuple[str, ...] = ()
    retry = _RETRY_SH
    if boot.airgap_bucket:  # s3:// manifests from the artifacts bucket (airgap; s3_download.sh)
        settings["S3_HOST"] = f"s3.{boot.region}.{boot.dns_suffix}"
        airgap = (_S3_SH, fragment("s3_download"))
        # s3_download.sh replaces retry.sh's `download`, and the sync lists no bucket: tell shellcheck.
        retry = _RETRY_SH.replace("\ndownload() {", "\n# shellcheck disable=SC2329  # replaced by s3_download.sh\ndownload() {")
        assert retry != _RETRY_SH, "retry.sh no longer defines download()"
        airgap = (_S3_SH.replace("\ns3_list() {", "\n# shellcheck disable=SC2329  # the sync lists nothing\ns3_list() {"),
                  fragment("s3_download"))
    return _script("Mirror this cluster's manifests from SSM into RKE2's manifests directory", settings,
                   retry, _SSM_SH, *airgap, _SYNC_SH, proxy=boot.proxy)


def rke_boot_script(node: PlannedNode, ssh_user: str, proxy: ProxyEnv | None = None,
                    steps: NodeSteps | None = None, identity: Rke1Identity | None = None) -> str:
    """`steps`: the node's OS steps (rke1_node_steps; None on Ubuntu: the script of before).
    `identity` (identity.serviceAccounts irsa): controlplane nodes fetch the issuer's key files from SSM
    (identity.sh, RKE1's paths) before Docker is installed, so `rke up` finds them when it starts kube-apiserver
    with the directory bound in (rke1_cluster.py); other nodes' scripts are unchanged. Both files always: `rke up`
    never rewrites host files, and the signing key must be there when a bring-your-own issuer starts signing."""
    ssh_user = os_images.login_user(node.pool.os, ssh_user)
    settings = {
        "NODE_NAME": node.name,
        "DOCKER_VERSION": versions.RKE_DOCKER_VERSION,
        "DOCKER_INSTALL_URL": f"https://releases.rancher.com/install-docker/{versions.RKE_DOCKER_VERSION}.sh",
        "KERNEL_MODULES": " ".join(RKE_KERNEL_MODULES),
        "SSH_USER": ssh_user,
        "WORK": "/var/lib/rke-aws",
        # Docker's unit got the proxy from its drop-in (cloud_init.DOCKER_PROXY_DROP_IN): restarted once
        # it is installed, in case the package started it before systemd read the drop-in.
        "DOCKER_PROXY": "yes" if proxy is not None else "no",
    }
    proxy_settings, proxy_step = _proxy_step(proxy)
    # The OS's steps (os_prep.sh, Docker from the OS's packages) before rke.sh; their settings win (the OS's
    # SSM agent unit, the Docker installer).
    extra: dict[str, Any] = dict(steps.settings) if steps else {}
    if steps is not None and steps.install_script_url is not None:
        extra["DOCKER_INSTALL_URL"] = steps.install_script_url
    keys: tuple[str, ...] = ()
    if identity is not None and node.pool.is_controlplane:
        id_settings, body = identity_step(identity.key_parameter, identity.trusted_parameter, RKE1_KEY_DIR,
                                          RKE1_SIGNING_KEY_FILE, RKE1_TRUSTED_KEYS_FILE)
        proxy_settings |= {"REGION": identity.region, "SSM_HOST": identity.ssm_host, "IMDS": IMDS_URL, **id_settings}
        keys = (_SSM_SH, *body)
    return _script("RKE1 node bootstrap: kernel settings and the Docker engine RKE supports",
                   {**settings, **proxy_settings, **extra}, _RETRY_SH, *proxy_step, *(steps.helpers if steps else ()),
                   'mkdir -p "$ROOT$WORK"\n', *keys, *(steps.before_rke2 if steps else ()), _RKE_SH, proxy=proxy)


# ---- other operating systems, air-gapped installs, a private registry (issue 35) ---------------------
# The OS table is components/node/os_images.py; what the bucket holds, components/node/airgap_artifacts.py;
# registries.yaml, components/node/registries.py.

# SigV4-signed S3 GETs by python3 (RHEL 9's curl 7.76.1 cannot sign S3 requests).
_S3_SH = fragment("s3")


_OS_PREP_SH = fragment("os_prep")


_AIRGAP_SH = fragment("airgap")


_PREINSTALLED_SH = fragment("preinstalled")


_REGISTRIES_SH = fragment("registries")


_RKE1_DOCKER_SH = fragment("rke1_docker")


# rke2-selinux for SLE Micro when online: Rancher's repository (rancher/rke2 install.sh do_install_rpm:
# https://rpm.rancher.io/rke2/<channel>/common/<slemicro>/noarch, channel stable).
WORK_DIR = "/var/lib/rke-aws"  # rke2.sh's WORK


RKE2_SELINUX_REPO = "https://rpm.rancher.io/rke2/stable/common/{infix}/noarch"


def ssm_agent_rpm_url(region: str, dns_suffix: str, arch: str) -> str:
    """The SSM agent's rpm in AWS's bucket of the node's own region (AWS Systems Manager User Guide,
    agent-install-rhel.md: https://s3.<region>.amazonaws.com/amazon-ssm-<region>/latest/linux_<arch>/...),
    reachable through the S3 gateway endpoint (same region only). China's suffix: not verified."""
    return (f"https://s3.{region}.{dns_suffix}/amazon-ssm-{region}/latest/"
            f"linux_{'arm64' if arch == 'arm64' else 'amd64'}/amazon-ssm-agent.rpm")


@dataclass(frozen=True)
class Airgap:
    """`airgap`: the artifacts bucket and prefix, or an image that already holds RKE2."""
    bucket: str
    prefix: str = ""
    preinstalled: bool = False


@dataclass(frozen=True)
class NodeSteps:
    """What an RKE2 node's boot script adds for its OS, an air-gapped install and a registry password:
    header settings, helper functions (after ssm.sh), steps before rke2.sh, and what rke2.sh downloads
    as RKE2's install script."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    helpers: tuple[str, ...] = ()
    before_rke2: tuple[str, ...] = ()
    install_script_url: str | None = None


def node_steps(os: str, *, region: str, dns_suffix: str, arch: str, release: str, fips: bool = False,
               airgap: Airgap | None = None, registry_password_parameter: str | None = None) -> NodeSteps | None:
    """The steps of a node running `os` (os_images.OS_IMAGES) on `arch` with RKE2 `release`; None when
    there are none (Ubuntu online without FIPS or registry password: the boot script of before).
    `registry_password_parameter`: the SecureString holding the registry's password (registries.yaml
    is then a template, completed at boot)."""
    image = os_images.OS_IMAGES[os]
    settings: dict[str, Any] = {}
    helpers: list[str] = []
    before: list[str] = []
    install_url: str | None = None
    offline = airgap is not None and not airgap.preinstalled
    if airgap is not None:
        settings.update({"S3_HOST": f"s3.{region}.{dns_suffix}", "ARTIFACTS_BUCKET": airgap.bucket})
        helpers.append(_S3_SH)
    fips_mode = "no"
    if fips:
        fips_mode = "switch" if image.fips == "switch" else "check"
    if os != os_images.DEFAULT_OS or airgap is not None or fips:
        rpms = airgap_artifacts.rpm_prefix(airgap.prefix, os) if offline and airgap else None
        settings.update({
            "OS_NAME": image.title,
            "BOOTSTRAP": BOOTSTRAP_PATH,
            "PKG": image.package_manager,
            "ARTIFACTS_BUCKET": airgap.bucket if airgap else "",
            "RPM_PREFIX": rpms or "",
            # where the rpms wait: a transaction does not see /var, but sees /opt (os_prep.sh)
            "RPM_DIR": "/opt/rke-aws/rpms" if image.transactional else f"{WORK_DIR}/rpms",
            "DNF_REPOS": "none" if (rpms and image.offline_container_selinux) else "os",
            "SELINUX_REPO": (RKE2_SELINUX_REPO.format(infix=image.selinux_rpm_infix)
                             if image.selinux and image.transactional and airgap is None else ""),
            "SSM_AGENT_RPM_URL": "" if image.ssm_agent_preinstalled else ssm_agent_rpm_url(region, dns_suffix, arch),
            "SSM_AGENT_UNIT": image.ssm_agent_unit,
            "NM_KEYFILE": "yes" if image.network_manager else "no",
            "NM_CLOUD_SETUP": "yes" if image.nm_cloud_setup else "no",
            "FIREWALLD": "yes" if image.firewalld else "no",
            "FORWARDING": "yes" if image.wicked else "no",
            "FIPS": fips_mode,
            "FIPS_PACKAGE": image.fips_package or "",
            "DEFAULT_ROUTE": "yes" if airgap is not None else "no",
            "MAY_REBOOT": "yes" if os_images.may_reboot_at_first_boot(os, fips) else "no",
        })
        before.append(_OS_PREP_SH)
    if airgap is not None and airgap.preinstalled:
        settings.update({"SELINUX_POLICY": "yes" if image.selinux else "no"})
        before.append(_PREINSTALLED_SH)
        install_url = f"file://{WORK_DIR}/preinstalled.sh"  # written by preinstalled.sh: installs nothing
    elif airgap is not None:
        settings.update({
            "RELEASE_PREFIX": airgap_artifacts.release_prefix(airgap.prefix, release),
            "ARCH": airgap_artifacts.RKE2_ARCH[arch],
            "ARTIFACT_FILES": " ".join((airgap_artifacts.INSTALL_SCRIPT, *airgap_artifacts.release_files(arch))),
        })
        before.append(_AIRGAP_SH)
        # fetched by airgap.sh with the release's files; curl copies a file:// URL like any other
        install_url = f"file://{WORK_DIR}/artifacts/{airgap_artifacts.INSTALL_SCRIPT}"
    if registry_password_parameter is not None:
        settings.update({
            "REGISTRIES_TEMPLATE": registries.REGISTRIES_TEMPLATE_PATH,
            "REGISTRIES": registries.REGISTRIES_PATH,
            "REGISTRY_PASSWORD_REQUEST": _get_request(registry_password_parameter, True),
            "REGISTRY_PASSWORD_PLACEHOLDER": registries.PASSWORD_PLACEHOLDER_YAML,
        })
        before.append(_REGISTRIES_SH)
    if not (settings or before):
        return None
    return NodeSteps(settings, tuple(helpers), tuple(before), install_url)


# Written by rke1_docker.sh where Docker comes from the OS's packages: rke.sh fetches and runs it (installs nothing).
RKE1_DOCKER_INSTALLED = f"{WORK_DIR}/docker-from-os.sh"


def rke1_node_steps(os: str, *, region: str, dns_suffix: str, arch: str) -> NodeSteps | None:
    """An RKE1 node's OS steps (issue 35): os_prep.sh with the settings node_steps builds for RKE2 on that OS
    (the SSM agent where the image lacks it, firewalld and nm-cloud-setup off, NetworkManager's keyfile for
    Canal, wicked's forwarding sysctls: OS facts, components/settings/os_images.py), and Docker from the OS's
    packages where Rancher's install-docker does not install (rke1_docker.sh). None on Ubuntu (the script of
    before). No FIPS and no air-gap: both are refused for RKE1 (settings/rules)."""
    steps = node_steps(os, region=region, dns_suffix=dns_suffix, arch=arch, release="")
    image = os_images.OS_IMAGES[os]
    if steps is None or image.rke1_docker != "os-package":
        return steps
    return NodeSteps({**steps.settings, "DOCKER_VERSION": f"from {image.title}'s docker package",
                      "DOCKER_PACKAGE": "docker", "DOCKER_MODULE": "sle-module-containers",
                      "DOCKER_INSTALLED": RKE1_DOCKER_INSTALLED},
                     steps.helpers, (*steps.before_rke2, _RKE1_DOCKER_SH), f"file://{RKE1_DOCKER_INSTALLED}")
