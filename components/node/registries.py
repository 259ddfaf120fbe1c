"""A private registry for the images nodes pull: RKE2's registries.yaml and system-default-registry, RKE1's
private_registries, and which images this program deploys need a mirror. Pure.

Sources (read offline):
- rke2-docs = rancher/rke2-docs @ 9477b7b1df1f `docs/install/private_registry.md`: registries.yaml is read
  from /etc/rancher/rke2/registries.yaml at start; `mirrors.<registry>.endpoint` lists the mirrors of an
  upstream registry (an endpoint without a scheme is https; plain http must say `http://`); `configs` hold
  `auth` and `tls` keyed by the MIRROR's host[:port] ("mirror docker.io to https://registry.example.com:5000,
  put auth under configs."registry.example.com:5000""); containerd tries the default endpoint
  (https://<registry>/v2, docker.io: https://index.docker.io/v2) last; images keep their names.
- rke2-docs `docs/install/airgap.md`: `system-default-registry` is only an RFC 3986 authority (host[:port]).
- rancher/rke2 `pkg/images/images.go`, `pkg/bootstrap/bootstrap.go` (research sheet 35 §1):
  system-default-registry re-prefixes RKE2's own images and is injected into RKE2's bundled charts as
  global.systemDefaultRegistry; a user HelmChart gets it only with the annotation
  rke2.cattle.io/inject-cluster-config (off by default from v1.36), and the upstream aws-cloud-controller-manager
  and aws-ebs-csi-driver charts, system-upgrade-controller and Rancher's agent never read it. So every image
  this program deploys needs a registries.yaml mirror of its upstream registry.
- rancher/rke @ 40c5dd465677 `types/rke_types.go` PrivateRegistry (url, user, password, is_default),
  `cluster/defaults.go` setClusterImageDefaults (the first is_default url prefixes every default system
  image as "<url>/<image>"), `cluster/plan.go` + `docker/docker.go` GetKubeletDockerConfig: with any private
  registry, RKE passes the kubelet container RKE_KUBELET_DOCKER_CONFIG, a docker config holding
  base64(user:password) for every registry: the password sits in the kubelet container's environment on
  every node (and in cluster.yml and the RKE state file).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ..plan.cluster_documents import dump_yaml
from ..settings.registry_hosts import (  # noqa: F401  (re-exported: the pure checks live in settings)
    DEPLOYED_IMAGES,
    DOCKER_HUB,
    HOST_PATTERN,
    DeployedImage,
    is_registry_host,
    mirror_authority,
    mirror_for,
    registry_problems,
    rewrite_image,
    split_image,
    unmirrored_images,
)

REGISTRIES_PATH = "/etc/rancher/rke2/registries.yaml"
# cloud-init writes the rendered text here when the password must be filled in at boot (scripts/registries.sh)
REGISTRIES_TEMPLATE_PATH = "/etc/rancher/rke2/registries.yaml.template"
REGISTRY_CA_PATH = "/etc/rancher/rke2/registry-ca.pem"  # the `caBundle` PEM, written by cloud-init
# What stands for the password in the template; scripts/registries.sh replaces it, quotes included, with
# the password as a JSON string (a valid YAML double-quoted scalar).
PASSWORD_PLACEHOLDER = "@@RKE_AWS_REGISTRY_PASSWORD@@"
# How dump_yaml writes the placeholder (YAML must quote a plain scalar starting with '@', a reserved indicator).
PASSWORD_PLACEHOLDER_YAML = f"'{PASSWORD_PLACEHOLDER}'"

def _authorities(mirrors: Mapping[str, str], system_default: str | None) -> list[str]:
    hosts = [mirror_authority(e) for e in mirrors.values()]
    if system_default:
        hosts.append(system_default)  # RKE2 pulls its own images from there by name: it needs the same auth/tls
    return list(dict.fromkeys(hosts))


def _mirror(endpoint: str) -> dict[str, Any]:
    """One `mirrors` entry. A path in the endpoint (https://host/project) is a project of the mirror
    holding the upstream's repositories: containerd takes the endpoint as the registry's root, so the
    path becomes a rewrite of every repository name (rke2-docs private_registry.md "Rewrites": they
    transform the name, never the tag), which is also how rewrite_image names it for RKE1."""
    parts = urlsplit(endpoint)
    prefix = parts.path.strip("/")
    entry: dict[str, Any] = {"endpoint": [f"{parts.scheme}://{parts.netloc}"]}
    if prefix:
        entry["rewrite"] = {"^(.*)$": f"{prefix}/$1"}
    return entry


def rke2_registries(mirrors: Mapping[str, str], *, username: str | None = None, has_password: bool = False,
                    ca_bundle: bool = False, system_default: str | None = None) -> dict[str, Any]:
    """registries.yaml as a document. The password is PASSWORD_PLACEHOLDER: the boot script puts the
    SecureString's value in its place."""
    doc: dict[str, Any] = {"mirrors": {up: _mirror(endpoint) for up, endpoint in sorted(mirrors.items())}}
    configs: dict[str, Any] = {}
    for host in _authorities(mirrors, system_default):
        entry: dict[str, Any] = {}
        if username and has_password:
            entry["auth"] = {"username": username, "password": PASSWORD_PLACEHOLDER}
        if ca_bundle:
            entry["tls"] = {"ca_file": REGISTRY_CA_PATH}
        if entry:
            configs[host] = entry
    if configs:
        doc["configs"] = configs
    return doc


def rke2_registries_yaml(mirrors: Mapping[str, str], **kwargs: Any) -> str:
    text = dump_yaml(rke2_registries(mirrors, **kwargs))
    if kwargs.get("has_password"):
        assert PASSWORD_PLACEHOLDER_YAML in text, "the password placeholder is not quoted as scripts/registries.sh expects"
    return text


def rke2_registry_config_keys(system_default: str | None) -> dict[str, str]:
    """config.yaml keys on every RKE2 node (server and agent both accept system-default-registry:
    tests/rke2_keys.py)."""
    return {"system-default-registry": system_default} if system_default else {}


def rke1_private_registries(mirrors: Mapping[str, str], username: str | None = None,
                            password: Any = None) -> list[dict[str, Any]]:
    """cluster.yml private_registries: one entry per mirror (url without scheme, host[:port][/path]); the
    Docker Hub mirror is the default registry, because RKE's default system images are Docker Hub
    images (rancher/...), prefixed as <url>/<image>. `password` may be a secret value: RKE puts it in
    cluster.yml, its state file, and the kubelet container's environment on every node."""
    entries: dict[str, dict[str, Any]] = {}
    default = mirror_for(DOCKER_HUB, mirrors)
    for endpoint in [default, *mirrors.values()] if default else list(mirrors.values()):
        parts = urlsplit(endpoint)
        url = parts.netloc + parts.path.rstrip("/")
        if url in entries:
            continue
        entry: dict[str, Any] = {"url": url}
        if username:
            entry["user"] = username
            entry["password"] = password
        if endpoint == default:
            entry["is_default"] = True
        entries[url] = entry
    return list(entries.values())
