"""What makes each distribution use the external AWS cloud provider: cloud-init user data, RKE1's
cluster.yml and RKE2's /etc/rancher/rke2/config.yaml. Pure functions of the node plan.

Both distributions ignore configuration keys they do not know (RKE1 silently, RKE2 with a
warning), so every key written here is checked against the lists below by the tests.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Mapping, Optional, Sequence

import yaml

from . import versions
from .node_plan import NodePlan

# Keys rancher/rke's cluster.yml parser reads (RancherKubernetesEngineConfig); others are dropped silently.
RKE_CLUSTER_KEYS = frozenset({
    "nodes", "services", "network", "authentication", "addons", "addons_include", "system_images",
    "ssh_key_path", "ssh_cert_path", "ssh_agent_auth", "authorization", "ignore_docker_version",
    "enable_cri_dockerd", "kubernetes_version", "private_registries", "ingress", "cluster_name",
    "cloud_provider", "prefix_path", "win_prefix_path", "addon_job_timeout", "bastion_host",
    "monitoring", "restore", "rotate_certificates", "dns", "upgrade_strategy", "rotate_encryption_key",
})
RKE_NODE_KEYS = frozenset({
    "address", "port", "internal_address", "role", "hostname_override", "user", "docker_socket",
    "ssh_key", "ssh_key_path", "ssh_cert", "ssh_cert_path", "ssh_agent_auth", "labels", "taints",
})
RKE_CLOUD_PROVIDER_KEYS = frozenset({"name", "useInstanceMetadataHostname"})
RKE_EXTERNAL_PROVIDER = "external-aws"  # RKE >= v1.5.0 / v1.4.15: --cloud-provider=external
RKE_IN_TREE_PROVIDER = "aws"  # refused by RKE for Kubernetes >= 1.27

RKE2_COMMON_KEYS = frozenset({
    "token", "token-file", "server", "node-name", "node-label", "node-taint", "node-ip", "cloud-provider-name",
    "kubelet-arg", "kube-proxy-arg", "profile",
})
RKE2_SERVER_ONLY_KEYS = frozenset({
    "tls-san", "kube-apiserver-arg", "kube-controller-manager-arg", "disable-cloud-controller", "cni",
    "write-kubeconfig-mode",
})
RKE2_SERVER_KEYS = RKE2_COMMON_KEYS | RKE2_SERVER_ONLY_KEYS
RKE2_AGENT_KEYS = RKE2_COMMON_KEYS
RKE2_SUPERVISOR_PORT = 9345
RKE2_CONFIG_PATH = "/etc/rancher/rke2/config.yaml"
RKE2_TOKEN_PATH = "/etc/rancher/rke2/join-token"
RKE2_MANIFESTS_DIR = "/var/lib/rancher/rke2/server/manifests"

# curl flags for every download at boot: a fresh NAT gateway or mirror can fail the first tries.
CURL_RETRY = "curl --fail --silent --show-error --location --retry 10 --retry-delay 5 --retry-max-time 600 --retry-all-errors"
# Kernel settings RKE1 nodes need for pod networking through bridges.
RKE_SYSCTLS = {
    "net.bridge.bridge-nf-call-iptables": "1",
    "net.bridge.bridge-nf-call-ip6tables": "1",
    "net.ipv4.ip_forward": "1",
}
RKE_KERNEL_MODULES = ("br_netfilter", "overlay")


# libyaml's emitter when present: same output, several times faster at hundreds of nodes.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(doc: Any, *, sort_keys: bool = False, width: int = 80) -> str:
    return yaml.dump(doc, Dumper=_DUMPER, sort_keys=sort_keys, width=width)


def _hostname(node: NodePlan) -> dict[str, Any]:
    # The OS hostname is the full private DNS name: kubelet defaults its node name to it.
    return {
        "preserve_hostname": False,
        "hostname": node.name.split(".")[0],
        "fqdn": node.name,
        "prefer_fqdn_over_hostname": True,
    }


def _cloud_config(doc: Mapping[str, Any]) -> str:
    return "#cloud-config\n" + dump_yaml(dict(doc), width=1000)


def rke_user_data(node: NodePlan, ssh_user: str) -> str:
    """cloud-init for an RKE1 node: hostname, kernel settings, a Docker engine RKE supports."""
    sysctl = "".join(f"{k} = {v}\n" for k, v in RKE_SYSCTLS.items())
    modules = "".join(f"{m}\n" for m in RKE_KERNEL_MODULES)
    install = f"https://releases.rancher.com/install-docker/{versions.RKE_DOCKER_VERSION}.sh"
    doc = {
        **_hostname(node),
        "write_files": [
            {"path": "/etc/modules-load.d/rke.conf", "content": modules},
            {"path": "/etc/sysctl.d/90-rke.conf", "content": sysctl},
        ],
        "runcmd": [
            ["sh", "-c", " && ".join(f"modprobe {m}" for m in RKE_KERNEL_MODULES)],
            ["sysctl", "--system"],
            ["sh", "-c", f"{CURL_RETRY} {install} -o /tmp/install-docker.sh && sh /tmp/install-docker.sh"],
            ["usermod", "-aG", "docker", ssh_user],
            ["systemctl", "enable", "--now", "docker"],
        ],
    }
    return _cloud_config(doc)


def rke_cluster_config(
    nodes: Sequence[NodePlan],
    public_ips: Mapping[str, str],
    *,
    cluster_id: str,
    kubernetes_version: str,
    ssh_user: str,
    ssh_key_path: Optional[str],
    leader_migration: bool,
) -> dict[str, Any]:
    """cluster.yml for `rke up`. `public_ips` maps node name to its public IP (absent: private only)."""
    doc: dict[str, Any] = {
        "cluster_name": cluster_id,
        "kubernetes_version": kubernetes_version,
        "nodes": [
            {
                "address": public_ips.get(n.name) or n.private_ip,
                "internal_address": n.private_ip,
                # Standalone `rke up` with external-aws needs this equal to the private DNS name.
                "hostname_override": n.name,
                "user": ssh_user,
                "role": list(n.roles),
            }
            for n in nodes
        ],
    }
    if ssh_key_path:
        doc["ssh_key_path"] = ssh_key_path
    if leader_migration:
        # Migration phase: the in-tree provider keeps running, handing its controllers to the CCM.
        doc["cloud_provider"] = {"name": RKE_IN_TREE_PROVIDER}
        doc["services"] = {"kube-controller": {"extra_args": {"enable-leader-migration": "true"}}}
    else:
        doc["cloud_provider"] = {"name": RKE_EXTERNAL_PROVIDER}
    return doc


def rke_cluster_yml(*args: Any, **kwargs: Any) -> str:
    return dump_yaml(rke_cluster_config(*args, **kwargs))


def rke2_config(
    node: NodePlan,
    *,
    registration_ip: str,
    leader_migration: bool = False,
) -> dict[str, Any]:
    """/etc/rancher/rke2/config.yaml of one node; only keys valid for its type (server or agent).

    The join token is referenced by file; the file is fetched from SSM at boot (see fetch_parameter).
    """
    doc: dict[str, Any] = {"token-file": RKE2_TOKEN_PATH}
    if not node.is_first_server:
        doc["server"] = f"https://{registration_ip}:{RKE2_SUPERVISOR_PORT}"
    doc["node-name"] = node.name
    doc["node-ip"] = node.private_ip
    if leader_migration:
        # Migration phase: in-tree provider plus leader migration (Kubernetes <= 1.26 only).
        doc["cloud-provider-name"] = "aws"
    else:
        doc["cloud-provider-name"] = "external"
    if node.pool.is_server:
        doc["tls-san"] = [registration_ip, node.name]
        if leader_migration:
            doc["kube-controller-manager-arg"] = ["enable-leader-migration=true"]
        else:
            # cloud-provider-name: external alone leaves RKE2's own cloud controller running.
            doc["disable-cloud-controller"] = True
    return doc


def fetch_parameter_script(region: str, parameter_name: str, dest: str) -> str:
    """Shell that reads a SecureString parameter with the instance role's credentials.

    Ubuntu images carry curl (with SigV4 signing) and python3 but no AWS CLI, so the call is made
    with curl against the SSM JSON API; credentials come from IMDSv2.
    """
    body = json.dumps({"Name": parameter_name, "WithDecryption": True})
    md = "http://169.254.169.254/latest"
    field = "python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]], end=\"\")'"
    return "\n".join([
        "set -eu",
        f'T=$({CURL_RETRY} -X PUT {md}/api/token -H "X-aws-ec2-metadata-token-ttl-seconds: 300")',
        # The role's credentials appear a few seconds after boot; --retry-all-errors waits for them.
        f'ROLE=$({CURL_RETRY} -H "X-aws-ec2-metadata-token: $T" {md}/meta-data/iam/security-credentials/)',
        f'CREDS=$({CURL_RETRY} -H "X-aws-ec2-metadata-token: $T" {md}/meta-data/iam/security-credentials/$ROLE)',
        f'AK=$(printf %s "$CREDS" | {field} AccessKeyId)',
        f'SK=$(printf %s "$CREDS" | {field} SecretAccessKey)',
        f'ST=$(printf %s "$CREDS" | {field} Token)',
        "umask 077",
        f'{CURL_RETRY} --aws-sigv4 "aws:amz:{region}:ssm" --user "$AK:$SK" -H "x-amz-security-token: $ST" '
        f'-H "X-Amz-Target: AmazonSSM.GetParameter" -H "Content-Type: application/x-amz-json-1.1" '
        f"-d {shlex.quote(body)} https://ssm.{region}.amazonaws.com/ "
        f"| python3 -c 'import json,sys; print(json.load(sys.stdin)[\"Parameter\"][\"Value\"], end=\"\")' > {dest}.tmp",
        # Never leave an empty token behind: RKE2 would start a cluster of its own with it.
        f"test -s {dest}.tmp",
        f"mv {dest}.tmp {dest}",
    ]) + "\n"


def rke2_user_data(node: NodePlan, config_yaml: str, manifests: Mapping[str, str], *,
                   region: str, token_parameter: str) -> str:
    """cloud-init for an RKE2 node: hostname, config.yaml, join token from SSM, pinned install, service start."""
    kind = "server" if node.pool.is_server else "agent"
    files = [
        {"path": RKE2_CONFIG_PATH, "permissions": "0600", "content": config_yaml},
        {"path": "/usr/local/sbin/rke-aws-fetch-token", "permissions": "0700",
         "content": fetch_parameter_script(region, token_parameter, RKE2_TOKEN_PATH)},
    ]
    if node.pool.is_server:
        files += [
            {"path": f"{RKE2_MANIFESTS_DIR}/{fname}", "permissions": "0600", "content": body}
            for fname, body in sorted(manifests.items())
        ]
    env = f"INSTALL_RKE2_TYPE={kind} INSTALL_RKE2_VERSION={shlex.quote(versions.RKE2_VERSION)}"
    doc = {
        **_hostname(node),
        "write_files": files,
        # One chain: cloud-init runs every runcmd entry even after a failure, and RKE2 must not
        # start without its token.
        "runcmd": [
            ["sh", "-c", " && ".join([
                "sh /usr/local/sbin/rke-aws-fetch-token",
                f"{CURL_RETRY} https://get.rke2.io -o /tmp/install-rke2.sh",
                f"{env} sh /tmp/install-rke2.sh",
                f"systemctl enable --now rke2-{kind}.service",
            ])],
        ],
    }
    return _cloud_config(doc)


def rke2_config_yaml(doc: Mapping[str, Any]) -> str:
    return dump_yaml(dict(doc))
