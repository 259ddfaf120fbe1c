"""Registry hosts and endpoints as the settings rules judge them, and the images this program deploys (which
upstream registries an air-gapped cluster must mirror). Pure; components/node/registries.py renders
registries.yaml and RKE1's private_registries from the same facts (its docstring cites the sources)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from . import versions

DOCKER_HUB = "docker.io"

# A registry host as containerd and RKE2 take it: a DNS name or IPv4 address, optionally with a port.
_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
HOST_PATTERN = re.compile(rf"^(?:{_LABEL}(?:\.{_LABEL})*)(?::(?P<port>[0-9]{{1,5}}))?\Z")


def is_registry_host(value: str) -> bool:
    """host[:port] (RFC 3986 authority without user info), what system-default-registry and a mirror key are."""
    m = HOST_PATTERN.match(value)
    if m is None:
        return False
    return m.group("port") is None or 0 < int(m.group("port")) < 65536


def mirror_authority(endpoint: str) -> str:
    """The host[:port] of a mirror endpoint URL, the key its auth and tls live under in `configs`."""
    return urlsplit(endpoint).netloc


def registry_problems(mirrors: Mapping[str, str], *, username: str | None = None, has_password: bool = False,
                      ca_bundle: str | None = None, system_default: str | None = None) -> list[str]:
    """Why the registry section cannot be used, as sentences without a config key (the caller names
    `registry.mirrors.<host>`, `registry.username` ...); [] when it can."""
    out: list[str] = []
    for upstream, endpoint in mirrors.items():
        if upstream != "*" and not is_registry_host(upstream):
            out.append(f"mirrors: '{upstream}' is not a registry host (host or host:port, like docker.io or "
                       f"registry.k8s.io), nor \"*\" for every registry")
        parts = urlsplit(endpoint)
        if parts.scheme not in ("https", "http") or not is_registry_host(parts.netloc):
            out.append(f"mirrors.{upstream}: '{endpoint}' is not a registry endpoint (https://host[:port][/path])")
            continue
        if parts.query or parts.fragment:
            out.append(f"mirrors.{upstream}: '{endpoint}' carries a query or fragment; give https://host[:port][/path]")
        if parts.scheme == "http" and (username or has_password):
            out.append(f"mirrors.{upstream}: '{endpoint}' is plain http, and credentials would cross the network "
                       f"in the clear; use https")
    if bool(username) != has_password:
        out.append("username and password go together: set both, or neither")
    if ca_bundle is not None and "-----BEGIN CERTIFICATE-----" not in ca_bundle:
        out.append("caBundle is not a PEM bundle (-----BEGIN CERTIFICATE----- ...)")
    if system_default is not None and not is_registry_host(system_default):
        out.append(f"systemDefault: '{system_default}' is not host[:port] (RKE2 takes only an RFC 3986 authority "
                   f"here: rke2-docs install/airgap.md)")
    return out


# --- images this program deploys ----------------------------------------------------------------------

@dataclass(frozen=True)
class DeployedImage:
    component: str
    repository: str  # fully qualified: registry/path
    source: str  # where the program (or the chart it installs) names it
    distributions: tuple[str, ...] = ("rke", "rke2")
    when: str | None = None  # deployed only with this feature ("identity", "load-balancer-controller")


# The EBS CSI chart's images (kubernetes-sigs/aws-ebs-csi-driver charts/aws-ebs-csi-driver/values.yaml at
# 429e202e, chart 2.64.0: image.repository and sidecars.*.image.repository).
_EBS = "aws-ebs-csi-driver chart 2.64.0 values.yaml"
DEPLOYED_IMAGES: tuple[DeployedImage, ...] = (
    DeployedImage("cloud-controller-manager", versions.CCM_IMAGE_REPOSITORY, "settings/versions.py CCM_IMAGE_REPOSITORY"),
    DeployedImage("ebs-csi driver", "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver", f"{_EBS} image"),
    DeployedImage("ebs-csi provisioner", "public.ecr.aws/csi-components/csi-provisioner", f"{_EBS} sidecars.provisioner"),
    DeployedImage("ebs-csi attacher", "public.ecr.aws/csi-components/csi-attacher", f"{_EBS} sidecars.attacher"),
    DeployedImage("ebs-csi snapshotter", "public.ecr.aws/csi-components/csi-snapshotter", f"{_EBS} sidecars.snapshotter"),
    DeployedImage("ebs-csi livenessprobe", "public.ecr.aws/csi-components/livenessprobe", f"{_EBS} sidecars.livenessProbe"),
    DeployedImage("ebs-csi resizer", "public.ecr.aws/csi-components/csi-resizer", f"{_EBS} sidecars.resizer"),
    DeployedImage("ebs-csi node-driver-registrar", "public.ecr.aws/csi-components/csi-node-driver-registrar",
                  f"{_EBS} sidecars.nodeDriverRegistrar"),
    DeployedImage("ebs-csi volume-modifier", "public.ecr.aws/ebs-csi-driver/volume-modifier-for-k8s",
                  f"{_EBS} sidecars.volumemodifier"),
    # rancher/system-upgrade-controller's manifest (versions.SUC_MANIFEST_URLS): its Deployment and the
    # kubectl image its jobs run (ConfigMap default-controller-env SYSTEM_UPGRADE_JOB_KUBECTL_IMAGE,
    # rancher/kubectl); rke2-docs install/airgap.md lists both, with rancher/rke2-upgrade, for air-gapped upgrades.
    DeployedImage("system-upgrade-controller", "docker.io/rancher/system-upgrade-controller",
                  "system-upgrade-controller.yaml (versions.SUC_VERSION)", ("rke2",)),
    DeployedImage("kubectl in upgrade jobs", "docker.io/rancher/kubectl",
                  "system-upgrade-controller.yaml SYSTEM_UPGRADE_JOB_KUBECTL_IMAGE", ("rke2",)),
    DeployedImage("rke2-upgrade in Plans", f"docker.io/{versions.RKE2_UPGRADE_IMAGE}",
                  "settings/versions.py RKE2_UPGRADE_IMAGE", ("rke2",)),
    # Rancher's registration manifest runs rancher/rancher-agent (Docker Hub) unless Rancher's own
    # system-default-registry setting says otherwise.
    DeployedImage("rancher agent", "docker.io/rancher/rancher-agent", "Rancher's registration manifest"),
    # Workload identity (issue 36): the pinned webhook and controller images (plan/identity_webhook.py,
    # plan/identity_lbc.py set them in the charts' values).
    DeployedImage("pod identity webhook", versions.POD_IDENTITY_WEBHOOK_IMAGE.rsplit(":", 1)[0],
                  "settings/versions.py POD_IDENTITY_WEBHOOK_IMAGE", ("rke2", "rke"), when="identity"),
    DeployedImage("aws-load-balancer-controller", versions.LOAD_BALANCER_CONTROLLER_IMAGE.rsplit(":", 1)[0],
                  "settings/versions.py LOAD_BALANCER_CONTROLLER_IMAGE", ("rke2", "rke"), when="load-balancer-controller"),
)


def split_image(image: str) -> tuple[str, str]:
    """(registry, path) of an image reference, as Docker and containerd normalise it: the first component
    is a registry when it has a dot or a port, or is localhost; otherwise Docker Hub, where a single
    component is under library/ (distribution/reference, normalize.go)."""
    first, sep, rest = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return DOCKER_HUB, image if sep else f"library/{image}"


def mirror_for(registry: str, mirrors: Mapping[str, str]) -> str | None:
    """The mirror endpoint containerd uses for `registry`: its own entry, else the "*" wildcard entry."""
    return mirrors.get(registry) or mirrors.get("*")


def unmirrored_images(mirrors: Mapping[str, str], distribution: str = "rke2",
                      images: Iterable[DeployedImage] = DEPLOYED_IMAGES,
                      features: Iterable[str] = ()) -> dict[str, list[str]]:
    """Upstream registry -> the components whose images it serves and no mirror covers. With a
    registry configured and no internet (air-gap), each is an image nodes cannot pull. RKE2's
    system-default-registry does not help here: none of these read it (module docstring)."""
    out: dict[str, list[str]] = {}
    for image in images:
        if distribution not in image.distributions or (image.when is not None and image.when not in set(features)):
            continue
        registry, _ = split_image(image.repository)
        if mirror_for(registry, mirrors) is None:
            out.setdefault(registry, []).append(image.component)
    return out


def pulled_as(image: str, distribution: str, mirrors: Mapping[str, str] | None) -> str:
    """The reference the program gives a chart for `image`: RKE2's containerd pulls through registries.yaml's
    mirrors whatever the name says; RKE1's Docker has no per-registry mirrors (rancher/rke types PrivateRegistry),
    so there the image must name the mirror (rewrite_image)."""
    return rewrite_image(image, mirrors) if distribution == "rke" and mirrors else image


def rewrite_image(image: str, mirrors: Mapping[str, str]) -> str:
    """The reference under which a mirror serves `image` (registry replaced by the mirror's host[:port]
    and path): what RKE1 (Docker, no per-registry mirrors) must be told to pull. Unchanged without a mirror."""
    registry, path = split_image(image)
    endpoint = mirror_for(registry, mirrors)
    if endpoint is None:
        return image
    parts = urlsplit(endpoint)
    prefix = parts.netloc + parts.path.rstrip("/")
    return f"{prefix}/{path}"


def ebs_csi_image_values(mirrors: Mapping[str, str]) -> dict[str, Any]:
    """The EBS CSI chart's image repositories named through the mirror (its values' `image.repository` and
    `sidecars.<name>.image.repository`, as DEPLOYED_IMAGES records where the chart names each): what RKE1 needs,
    whose Docker has no per-registry mirrors (RKE2's containerd rewrites by registry and needs none of this)."""
    out: dict[str, Any] = {}
    for image in DEPLOYED_IMAGES:
        if not image.source.startswith(_EBS + " "):
            continue
        path = image.source[len(_EBS) + 1:].split(".")  # "image" or "sidecars.<name>"
        node = out
        for part in path if path != ["image"] else []:
            node = node.setdefault(part, {})
        node["image"] = {"repository": rewrite_image(image.repository, mirrors)}
    return out

