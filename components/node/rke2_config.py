"""RKE2's /etc/rancher/rke2/config.yaml for each node, and what hardening adds to it. Pure.

RKE2 ignores configuration keys it does not know (with a warning), so the tests check every key
written here against RKE2's own lists (tests/support/rke2_keys.py, from rancher/rke2's sources)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..plan import names
from ..plan import rancher as rancher_plan
from ..plan.cluster_documents import dump_yaml
from ..plan.identity_apiserver import rke2_args
from ..plan.names import RKE2_SUPERVISOR_PORT
from ..plan.nodes import PlannedNode
from ..plan.proxy import ProxyEnv
from ..plan.snapshots import EtcdS3, etcd_s3_keys
from ..settings import os_images, versions
from ..settings.versions import rke2_patch_at_least

# An etcd-only server (rke2-docs install/server_roles.md "etcd-only"): no control-plane component.
ETCD_ONLY_KEYS = ("disable-apiserver", "disable-controller-manager", "disable-scheduler")


RKE2_CONFIG_PATH = "/etc/rancher/rke2/config.yaml"


RKE2_TOKEN_PATH = "/etc/rancher/rke2/join-token"


RKE2_AGENT_TOKEN_PATH = "/etc/rancher/rke2/agent-token"


RKE2_MANIFESTS_DIR = "/var/lib/rancher/rke2/server/manifests"


@dataclass(frozen=True)
class Rke2Boot:
    """What every RKE2 node of the cluster boots with (besides its own identity)."""
    region: str
    ssm_host: str  # ssm.<region>.<partition DNS suffix>
    install_version: str  # INSTALL_RKE2_VERSION: exactly the configured kubernetesVersion
    endpoint: str  # the registration host name, in every server's tls-san and every joiner's server:
    server_ips: tuple[str, ...]  # the planned etcd servers, probed before initialising
    token_parameter: str
    marker_parameter: str
    agent_token_parameter: str | None = None
    manifest_path: str | None = None  # SSM path whose parameters mirror into the manifests dir
    leader_migration: bool = False
    etcd_s3: EtcdS3 | None = None  # servers snapshot etcd to S3 with their role
    cis_profile: str | None = None  # RKE2's CIS profile name for the installed version, or None
    kubeconfig_parameter: str | None = None  # where the initialising server publishes the admin kubeconfig
    kubeconfig_key: str | None = None  # the KMS key it is encrypted with
    proxy: ProxyEnv | None = None  # `proxy`: the boot scripts' and RKE2's environment
    # servers' `ingress-controller` (plan/ingress.py); None: no key, RKE2 keeps what the cluster runs
    ingress_controller: str | None = None
    psa_rancher: bool = False  # with cis_profile: Rancher's namespaces exempted too (`rancher` set)
    # issue 35: `fips`, the partition's DNS suffix (the SSM agent's bucket, the S3 endpoint host) and each pool's
    # CPU architecture (pool name -> x86_64 | arm64): what a node's OS and air-gap steps need (scripts.node_steps).
    fips: bool = False
    dns_suffix: str = "amazonaws.com"
    pool_archs: Mapping[str, str] = field(default_factory=dict)
    identity: Rke2Identity | None = None  # identity.serviceAccounts irsa: the API servers' issuer and key files
    # ---- issue 35: a private registry and an air-gapped install (all unset: the boot of before) ----
    registries_yaml: str | None = None  # registries.yaml (node/registries.py); a template when a password is set
    registry_ca: str | None = None  # registry.caBundle, written to registries.REGISTRY_CA_PATH
    system_default_registry: str | None = None  # config.yaml system-default-registry (servers and agents)
    registry_password_parameter: str | None = None  # the SecureString registries.sh fills the template from
    airgap_bucket: str | None = None  # airgap: the artifacts bucket (None: online, or preinstalled)
    airgap_prefix: str = ""
    airgap_preinstalled: bool = False
    airgap: bool = False  # airgap set at all (default route, no public host)

    def arch_of(self, pool: str) -> str:
        return self.pool_archs.get(pool, "x86_64")


@dataclass(frozen=True)
class Rke2Identity:
    """The service-account issuer on the API servers (plan/identity_apiserver.py): its kube-apiserver-arg
    entries, and the SSM parameters the boot step identity.sh writes the key files from (key: None while the
    servers only trust the cluster's key)."""
    issuer_url: str
    signing: bool
    key_parameter: str | None
    trusted_parameter: str
    generations: str = ""  # "trusted 1,2 signs 2": in the boot script, so a rotation step makes servers stale


# Written on servers with hardening: cis (RKE2's CIS profile enforces restricted Pod Security with
# exemptions): system-upgrade-controller's upgrade jobs must run privileged in their namespace.
PSA_CONFIG_PATH = names.PSA_CONFIG_PATH


AUDIT_POLICY_PATH = "/etc/rancher/rke2/audit-policy.yaml"


# Where RKE2's install puts its CIS kernel parameters file: the tarball install under /usr/local
# (Ubuntu), or /opt/rke2 when /usr/local is read-only; RPM installs under /usr.
CIS_SYSCTL_SOURCES = ("/usr/local/share/rke2/rke2-cis-sysctl.conf", "/opt/rke2/share/rke2/rke2-cis-sysctl.conf",
                      "/usr/share/rke2/rke2-cis-sysctl.conf")


# RKE2's own restricted configuration exempts kube-system, cis-operator-system,
# compliance-operator-system (Rancher 2.12+) and tigera-operator (rancher/rke2 pkg/rke2/psa.go).
PSA_EXEMPT_NAMESPACES = ("kube-system", "cis-operator-system", "compliance-operator-system", "tigera-operator",
                         "system-upgrade")


def psa_exempt_namespaces(rancher: bool) -> tuple[str, ...]:
    """The namespaces a CIS server's Pod Security configuration exempts: RKE2's and this program's, and
    Rancher's only when the cluster is registered in Rancher."""
    # Rancher's list: components/plan/rancher.py (its docs, "PSA restricted exemptions").
    extra = rancher_plan.PSA_EXEMPT_NAMESPACES if rancher else ()
    return tuple(dict.fromkeys(PSA_EXEMPT_NAMESPACES + extra))


def psa_config(rancher: bool = False) -> dict[str, Any]:
    """The AdmissionConfiguration at PSA_CONFIG_PATH (servers with hardening: cis)."""
    return {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "AdmissionConfiguration",
        "plugins": [{"name": "PodSecurity", "configuration": {
            "apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "restricted", "enforce-version": "latest", "audit": "restricted",
                         "audit-version": "latest", "warn": "restricted", "warn-version": "latest"},
            "exemptions": {"usernames": [], "runtimeClasses": [], "namespaces": list(psa_exempt_namespaces(rancher))},
        }}],
    }


# Requests' metadata for everything, nothing for the noisiest read-only endpoints (RKE2's default
# policy logs nothing at all).
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "None", "nonResourceURLs": ["/healthz*", "/livez*", "/readyz*", "/version"]},
        {"level": "None", "users": ["system:kube-proxy"], "verbs": ["watch"]},
        {"level": "Metadata"},
    ],
}


def cis_profile(version: str) -> str:
    """RKE2's CIS profile name. `cis` exists since v1.25.15 / v1.26.10 / v1.27.7 / v1.28.2; `cis-1.23`
    is refused (rke2 exits) since v1.30.14 / v1.31.10 / v1.32.6 / v1.33.2 and 1.34 (rancher/rke2
    PR #8349), so `cis` wherever it exists."""
    return "cis" if rke2_patch_at_least(version, {25: 15, 26: 10, 27: 7, 28: 2}, 29) else "cis-1.23"


def ingress_keys(controller: str, version: str) -> dict[str, Any]:
    """A server's ingress keys. `ingress-controller` always: a release without the option skips it with a
    warning and honours it once upgraded past it, so an upgrade to v1.36 or later never leaves the choice
    to RKE2's default (versions.RKE2_INGRESS_OPTION_SINCE). `none` on such a release: ingress-nginx, its
    only controller, disabled the way it knows (`disable`; pkg/cli/cmds/server.go DisableItems)."""
    keys: dict[str, Any] = {"ingress-controller": controller}
    if controller == "none" and not versions.rke2_patch_at_least(version, *versions.RKE2_INGRESS_OPTION_SINCE):
        keys["disable"] = ["rke2-ingress-nginx"]
    return keys


def rke2_config(node: PlannedNode, boot: Rke2Boot) -> dict[str, Any]:
    """/etc/rancher/rke2/config.yaml of one node; only keys valid for its type (server or agent).

    Tokens are referenced by file; the files are fetched from SSM at boot. The initialising server
    has no `server:` key: its boot script adds one before starting RKE2 when a cluster already
    exists, and after initialising one (so a later restart without etcd data rejoins).
    """
    server = node.pool.is_server
    doc: dict[str, Any] = {}
    if server or boot.agent_token_parameter is None:
        doc["token-file"] = RKE2_TOKEN_PATH
    else:
        doc["token-file"] = RKE2_AGENT_TOKEN_PATH  # agents hold the agent token only
    if server and boot.agent_token_parameter is not None:
        doc["agent-token-file"] = RKE2_AGENT_TOKEN_PATH
    if not node.is_first_server:
        doc["server"] = f"https://{boot.endpoint}:{RKE2_SUPERVISOR_PORT}"
    if server and not node.pool.is_etcd:
        # disable-etcd without `server:` starts a single-node SQLite server, not a control-plane node of this
        # cluster (rke2-docs datastore/embedded.md); the planner never makes such a node the initialiser.
        if "server" not in doc:
            raise ValueError(f"{node.name}: a control-plane-only server cannot initialise the cluster")
        doc["disable-etcd"] = True
    elif server and not node.pool.is_controlplane:
        doc.update({key: True for key in ETCD_ONLY_KEYS})
    doc["node-name"] = node.name
    doc["node-ip"] = node.private_ip
    # Leader migration (Kubernetes <= 1.26 only, enforced in config.py): the in-tree provider keeps
    # running while it hands its controllers to the CCM.
    doc["cloud-provider-name"] = "aws" if boot.leader_migration else "external"
    if boot.cis_profile:
        doc["profile"] = boot.cis_profile
    if boot.system_default_registry:
        doc["system-default-registry"] = boot.system_default_registry
    if boot.airgap and versions.rke2_patch_at_least(boot.install_version, *versions.RKE2_DISABLE_DEFAULT_ENDPOINT_SINCE):
        # No way to the public registries: never fall back to them (versions.RKE2_DISABLE_DEFAULT_ENDPOINT_SINCE).
        doc["disable-default-registry-endpoint"] = True
    if server:
        doc["tls-san"] = [boot.endpoint, node.name, node.private_ip]
        if boot.etcd_s3 and node.pool.is_etcd:  # only etcd members take snapshots
            doc.update(etcd_s3_keys(boot.etcd_s3, boot.install_version))
        if boot.cis_profile:
            doc["audit-policy-file"] = AUDIT_POLICY_PATH
            doc["pod-security-admission-config-file"] = PSA_CONFIG_PATH
        if boot.ingress_controller:
            doc.update(ingress_keys(boot.ingress_controller, boot.install_version))
        if boot.identity is not None and node.pool.is_controlplane:
            doc["kube-apiserver-arg"] = rke2_args(boot.identity.issuer_url, boot.identity.signing)
        if boot.leader_migration:
            doc["kube-controller-manager-arg"] = ["enable-leader-migration=true"]
        else:
            # cloud-provider-name: external alone leaves RKE2's own cloud controller running.
            doc["disable-cloud-controller"] = True
    # `selinux: true` where the OS enforces SELinux and RKE2 is not installed from its rpm (which sets
    # RKE2_SELINUX itself): rke2-docs security/selinux.md. Nothing on Ubuntu. Not air-gapped: another
    # branch's key (issue 35 items 1-2).
    doc.update(os_images.rke2_config_keys(node.pool.os, airgap=False))
    return doc


def rke2_config_yaml(doc: Mapping[str, Any]) -> str:
    return dump_yaml(dict(doc))
