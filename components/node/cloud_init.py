"""Each node's cloud-init user data: the RKE2 config, boot script and manifest sync it writes (RKE2), or the
kernel settings and Docker install (RKE1), as a cloud-config, compressed and encoded under EC2's 16 KB limit.
Pure functions of the node plan."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Mapping
from typing import Any

from ..plan.cluster_documents import dump_yaml
from ..plan.nodes import PlannedNode
from ..plan.proxy import ProxyEnv
from ..settings import os_images
from . import registries
from .rke1_cluster import RKE_KERNEL_MODULES, RKE_SYSCTLS, Rke1Identity
from .rke2_config import (
    AUDIT_POLICY,
    AUDIT_POLICY_PATH,
    PSA_CONFIG_PATH,
    RKE2_CONFIG_PATH,
    Rke2Boot,
    psa_config,
    rke2_config,
    rke2_config_yaml,
)
from .scripts import (
    BOOTSTRAP_PATH,
    SSM_AGENT_UNIT,
    SYNC_INTERVAL,
    SYNC_PATH,
    Airgap,
    NodeSteps,
    manifest_sync_script,
    node_steps,
    rke2_boot_script,
    rke_boot_script,
)


def _hostname(node: PlannedNode) -> dict[str, Any]:
    # The OS hostname is the full private DNS name: kubelet defaults its node name to it.
    return {
        "preserve_hostname": False,
        "hostname": node.name.split(".")[0],
        "fqdn": node.name,
        "prefer_fqdn_over_hostname": True,
    }


def _cloud_config(doc: Mapping[str, Any]) -> str:
    return "#cloud-config\n" + dump_yaml(dict(doc), width=1000)



# systemd units that re-run the manifest sync on every server, so changed manifests (CCM values,
# upgrade Plans) reach running servers: their user data is ignored after the first boot.
SYNC_SERVICE = f"""[Unit]
Description=rke-aws: mirror the cluster's manifests from SSM into RKE2's manifests directory
After=network-online.target

[Service]
Type=oneshot
ExecStart={SYNC_PATH}
"""
SYNC_TIMER = f"""[Unit]
Description=rke-aws: mirror the cluster's manifests every {SYNC_INTERVAL}

[Timer]
OnBootSec={SYNC_INTERVAL}
OnUnitActiveSec={SYNC_INTERVAL}

[Install]
WantedBy=timers.target
"""


def rke2_steps(node: PlannedNode, boot: Rke2Boot) -> NodeSteps | None:
    """The boot script's OS, FIPS, air-gap and registry steps (scripts.node_steps) for the node's pool; None for
    an Ubuntu node online without FIPS or a registry password (the script of before)."""
    os_name = node.pool.os
    if (os_name == os_images.DEFAULT_OS and not boot.fips and not boot.airgap
            and boot.registry_password_parameter is None):
        return None
    airgap = (Airgap(boot.airgap_bucket or "", boot.airgap_prefix, boot.airgap_preinstalled) if boot.airgap else None)
    return node_steps(os_name, region=boot.region, dns_suffix=boot.dns_suffix,
                      arch=boot.arch_of(node.pool.name or ""), release=boot.install_version, fips=boot.fips,
                      airgap=airgap, registry_password_parameter=boot.registry_password_parameter)


def _registry_files(boot: Rke2Boot) -> list[dict[str, Any]]:
    """registries.yaml (or, with a password, its template for registries.sh) and the registry's CA."""
    files: list[dict[str, Any]] = []
    if boot.registry_ca:
        files.append({"path": registries.REGISTRY_CA_PATH, "permissions": "0644", "content": boot.registry_ca})
    if boot.registries_yaml is not None:
        path = registries.REGISTRIES_TEMPLATE_PATH if boot.registry_password_parameter else registries.REGISTRIES_PATH
        files.append({"path": path, "permissions": "0600", "content": boot.registries_yaml})
    return files


def rke2_user_data(node: PlannedNode, boot: Rke2Boot) -> str:
    """cloud-init for an RKE2 node: hostname, config.yaml, the boot script (and on servers in manifest
    mode the manifest sync with its timer), then one runcmd: the boot script."""
    files = [
        {"path": RKE2_CONFIG_PATH, "permissions": "0600", "content": rke2_config_yaml(rke2_config(node, boot))},
        {"path": BOOTSTRAP_PATH, "permissions": "0700", "content": rke2_boot_script(node, boot, rke2_steps(node, boot))},
    ]
    files += _registry_files(boot)
    if boot.proxy is not None:
        # Read by the RKE2 unit at start (EnvironmentFile=-/etc/default/%N): written before the install.
        kind = "server" if node.pool.is_server else "agent"
        files.append({"path": f"{RKE2_ENVIRONMENT_DIR}/rke2-{kind}", "permissions": "0644",
                      "content": boot.proxy.rke2_environment()})
        files += _ssm_agent_proxy(boot.proxy, node.pool.os)
    if node.pool.is_server and boot.cis_profile:
        files += [
            {"path": PSA_CONFIG_PATH, "permissions": "0600", "content": dump_yaml(psa_config(boot.psa_rancher))},
            {"path": AUDIT_POLICY_PATH, "permissions": "0600", "content": dump_yaml(AUDIT_POLICY)},
        ]
    if node.pool.is_server and boot.manifest_path:
        files += [
            {"path": SYNC_PATH, "permissions": "0700", "content": manifest_sync_script(boot)},
            {"path": "/etc/systemd/system/rke-aws-sync-manifests.service", "permissions": "0644", "content": SYNC_SERVICE},
            {"path": "/etc/systemd/system/rke-aws-sync-manifests.timer", "permissions": "0644", "content": SYNC_TIMER},
        ]
    # One command: cloud-init runs every runcmd entry even after a failure, and RKE2 must not start
    # without its token.
    doc = {**_hostname(node), "write_files": files, "runcmd": [[BOOTSTRAP_PATH]]}
    return _cloud_config(doc)


# EC2 refuses user data over 16 KiB in raw form, before base64 (RunInstances API reference,
# UserData). terraform-provider-aws checks `user_data` against 16,384 only as text and
# `user_data_base64` only for being base64 (internal/service/ec2/ec2_instance.go), so nothing but
# this program stands between a large cloud-config and a failed RunInstances.
USER_DATA_LIMIT = 16384
# The largest payload any configuration may produce: a quarter of the limit kept free for what a
# later change adds to the boot (config.py refuses what would exceed it; tests build the worst case).
USER_DATA_BUDGET = 12288
# gzip's header for a deterministic payload: no file name, no modification time (0), maximum
# compression flag, OS "unknown" (RFC 1952 section 2.3). Written out because gzip.compress(mtime=0)
# lets zlib choose the OS byte since Python 3.11, and that differs between platforms.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
GZIP_LEVEL = 9


def gzip_user_data(text: str) -> bytes:
    """The raw bytes EC2 stores for a node: `text` gzip-compressed, the same bytes on every run and
    machine with the same zlib (cloud-init recognises the gzip magic and decompresses before parsing:
    cloudinit/user_data.py, util.decomp_gzip)."""
    data = text.encode()
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = packer.compress(data) + packer.flush()
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def encode_user_data(text: str) -> str:
    """What the instance's `user_data_base64` input carries: the gzip payload, base64-encoded (the
    provider sends it to RunInstances as given). offline/report/review.py decodes it for reviewers."""
    return base64.b64encode(gzip_user_data(text)).decode()


def raw_size(encoded: str) -> int:
    """The size EC2 limits: the bytes before base64."""
    return len(base64.b64decode(encoded, validate=True))


RKE2_ENVIRONMENT_DIR = "/etc/default"
DOCKER_PROXY_DROP_IN = "/etc/systemd/system/docker.service.d/http-proxy.conf"
# The SSM agent (Session Manager) is a Go program and reads the same variables from its unit's environment.
SSM_AGENT_PROXY_DROP_IN = f"/etc/systemd/system/{SSM_AGENT_UNIT}.d/http-proxy.conf"


def _ssm_agent_proxy(proxy: ProxyEnv | None, os: str = os_images.DEFAULT_OS) -> list[dict[str, str]]:
    """The agent's proxy drop-in, for the unit of the node's OS (os_images ssm_agent_unit: the snap's on Ubuntu,
    amazon-ssm-agent.service where the agent is the rpm)."""
    if proxy is None:
        return []
    unit = os_images.OS_IMAGES[os].ssm_agent_unit
    path = SSM_AGENT_PROXY_DROP_IN if unit == SSM_AGENT_UNIT else f"/etc/systemd/system/{unit}.d/http-proxy.conf"
    return [{"path": path, "permissions": "0644", "content": proxy.systemd_drop_in()}]


def rke_user_data(node: PlannedNode, ssh_user: str, proxy: ProxyEnv | None = None,
                  steps: NodeSteps | None = None, identity: Rke1Identity | None = None) -> str:
    """cloud-init for an RKE1 node: hostname, kernel settings, a Docker engine RKE supports (with the
    proxy in its unit's environment: docs.docker.com/engine/daemon/proxy, "systemd unit file"); `steps`: its
    OS's (scripts.rke1_node_steps)."""
    sysctl = "".join(f"{k} = {v}\n" for k, v in RKE_SYSCTLS.items())
    modules = "".join(f"{m}\n" for m in RKE_KERNEL_MODULES)
    doc = {
        **_hostname(node),
        "write_files": [
            {"path": "/etc/modules-load.d/rke.conf", "content": modules},
            {"path": "/etc/sysctl.d/90-rke.conf", "content": sysctl},
            *([{"path": DOCKER_PROXY_DROP_IN, "permissions": "0644", "content": proxy.systemd_drop_in()}]
              if proxy is not None else []),
            *_ssm_agent_proxy(proxy, node.pool.os),
            {"path": BOOTSTRAP_PATH, "permissions": "0700",
             "content": rke_boot_script(node, ssh_user, proxy, steps, identity)},
        ],
        "runcmd": [[BOOTSTRAP_PATH]],
    }
    return _cloud_config(doc)

