"""The images a configured stack pulls through its private registry, where the mirror must hold each, and the
commands that copy them there (`rke-aws images <stack>`; docs/features/airgap-os-fips.md "Filling the
registry"). Pure.

Where each image's name and tag come from (all pinned in settings/versions.py, or derived from the stack):
- the CCM: ccm.image, else versions.CCM_IMAGE_TAGS for the cluster's minor (sections.Ccm.image_for);
- EBS CSI and its sidecars: versions.EBS_CSI_IMAGES (the pinned chart's values.yaml; the program sets none);
- system-upgrade-controller and the kubectl of its jobs: versions.SUC_IMAGE, SUC_KUBECTL_IMAGE; the Plans'
  rancher/rke2-upgrade at the release's tag (versions.rke2_upgrade_tag), only where this program writes the
  Plans (plan/rancher.program_upgrades);
- the pod identity webhook and the AWS Load Balancer Controller: versions.POD_IDENTITY_WEBHOOK_IMAGE,
  LOAD_BALANCER_CONTROLLER_IMAGE (the program sets them in the charts' values);
- Rancher's agent: rancher/rancher-agent at the Rancher server's own version, which no stack key holds: the
  commands take it from RANCHER_VERSION;
- RKE2's own images: the release's `rke2-images-all.linux-<arch>.txt` (rancher/rke2 scripts/package-images:
  every image list of the release, `docker.io/rancher/...` one per line; sha256sum-<arch>.txt covers it,
  scripts/checksum), copied line by line as rancher/rke2's own scripts/copy-images.sh does (the line's
  registry replaced by the target's). Not listed here: the release names them, not this program;
- RKE1's system images: `rke config --system-images --version <version>` (rancher/rke cmd/config.go
  generateSystemImagesList) prints them, Docker Hub names without a registry.

Where a node pulls each (so where the mirror must hold it):
- RKE2: containerd resolves a reference through registries.yaml: the mirror of its registry (or "*"), the
  endpoint's path a rewrite of the repository (node/registries.py _mirror; rke2-docs
  install/private_registry.md). RKE2's own images are named `<system-default-registry>/<path>` when that is
  set (rancher/rke2 pkg/images), and then resolved the same way.
- RKE1: Docker has no per-registry mirrors: the CCM and EBS CSI images are named through the mirror
  (registry_hosts.rewrite_image), RKE's system images as `<default registry url>/<image>` (rancher/rke
  cluster/defaults.go).
An image whose registry no mirror covers is pulled from its registry directly and is not listed.

skopeo (containers/skopeo docs/skopeo-copy.1.md): `copy --all` copies a multi-architecture image's list
and every image in it (without it, only the platform of the machine running skopeo); `docker://` is the
registry transport.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..plan.addons import ebs_csi_wanted
from ..plan.rancher import program_upgrades
from ..settings import versions
from ..settings.registry_hosts import DOCKER_HUB, mirror_for, split_image
from ..settings.resolve import ClusterConfig
from .airgap_artifacts import RKE2_ARCH

ARCHITECTURES = tuple(RKE2_ARCH)  # EC2's names (x86_64, arm64); RKE2's release files say amd64, arm64
RANCHER_VERSION_VARIABLE = "RANCHER_VERSION"
RANCHER_AGENT = "docker.io/rancher/rancher-agent"


@dataclass(frozen=True)
class MirrorImage:
    component: str
    upstream: str  # fully qualified, with its tag (and/or digest)
    mirror: str  # the reference the mirror must serve it under: what the nodes' pull resolves to


@dataclass(frozen=True)
class ImageList:
    """A release's list of images, copied line by line: each line is `<registry>/<path>:<tag>` of
    `registry`, held by the mirror as `<target>/<path>:<tag>`."""
    what: str
    urls: tuple[str, ...]  # the lists (one per architecture) ...
    checksums: tuple[tuple[str, str], ...]  # ... and (sum file URL, listed file) to verify each against
    registry: str  # every line's registry
    target: str  # host[:port][/path] the lines' registry becomes
    command: str | None = None  # prints the list instead of a download (RKE1: the rke binary)


@dataclass(frozen=True)
class UnknownTag:
    """An image the stack pulls whose tag no stack key holds: the commands read it from `variable`."""
    component: str
    repository: str
    mirror: str  # the repository in the mirror (no tag)
    variable: str
    why: str


@dataclass(frozen=True)
class MirrorPlan:
    images: tuple[MirrorImage, ...]
    lists: tuple[ImageList, ...]
    unknown: tuple[UnknownTag, ...]


def _qualified(image: str) -> str:
    registry, path = split_image(image)
    return f"{registry}/{path}"


def mirror_prefix(registry: str, mirrors: dict[str, str]) -> str | None:
    """host[:port][/path] under which the mirror of `registry` holds its repositories; None without one."""
    endpoint = mirror_for(registry, mirrors)
    if endpoint is None:
        return None
    parts = urlsplit(endpoint)
    return parts.netloc + parts.path.rstrip("/")


def pulled_from(image: str, mirrors: dict[str, str]) -> str | None:
    """The reference a node's pull of `image` resolves to through the mirrors; None when none covers it."""
    registry, path = split_image(image)
    prefix = mirror_prefix(registry, mirrors)
    return f"{prefix}/{path}" if prefix is not None else None


def _program_images(cfg: ClusterConfig) -> list[tuple[str, str]]:
    """(component, upstream image) for every image this program deploys with `cfg` (module docstring)."""
    out = [("cloud-controller-manager", cfg.ccm.image_for(cfg.kubernetes_minor))]
    if ebs_csi_wanted(cfg, None):
        out += [(f"ebs-csi {path}", image) for path, image in versions.EBS_CSI_IMAGES.items()]
    if program_upgrades(cfg):
        out += [("system-upgrade-controller", versions.SUC_IMAGE),
                ("kubectl in upgrade jobs", versions.SUC_KUBECTL_IMAGE),
                ("rke2-upgrade in Plans",
                 f"{versions.RKE2_UPGRADE_IMAGE}:{versions.rke2_upgrade_tag(cfg.kubernetes_version)}")]
    if cfg.identity.service_accounts == "irsa":
        out.append(("pod identity webhook", versions.POD_IDENTITY_WEBHOOK_IMAGE))
    if cfg.addons.load_balancer_controller:
        out.append(("aws-load-balancer-controller", versions.LOAD_BALANCER_CONTROLLER_IMAGE))
    return out


def _rke2_lists(cfg: ClusterConfig, mirrors: dict[str, str], archs: Iterable[str]) -> list[ImageList]:
    system_default = cfg.registry.system_default if cfg.registry is not None else None
    # RKE2 names its images <system-default-registry>/<path> when that is set, else docker.io/<path>.
    registry = system_default or DOCKER_HUB
    target = mirror_prefix(registry, mirrors) or system_default
    if target is None:
        return []
    release = cfg.kubernetes_version
    base = f"https://github.com/rancher/rke2/releases/download/{release.replace('+', '%2B')}"
    names = sorted({RKE2_ARCH[a] for a in archs})
    return [ImageList(
        f"RKE2 {release}'s images ({', '.join(names)})",
        tuple(f"{base}/rke2-images-all.linux-{a}.txt" for a in names),
        tuple((f"{base}/sha256sum-{a}.txt", f"rke2-images-all.linux-{a}.txt") for a in names),
        DOCKER_HUB, target)]


def _rke1_lists(cfg: ClusterConfig, mirrors: dict[str, str]) -> list[ImageList]:
    # node/registries.rke1_private_registries: the Docker Hub mirror is RKE's default registry.
    target = mirror_prefix(DOCKER_HUB, mirrors)
    if target is None:
        return []
    return [ImageList(f"RKE's system images for {cfg.kubernetes_version}", (), (), DOCKER_HUB, target,
                      command=f"rke config --system-images --version {cfg.kubernetes_version}")]


def images_for(cfg: ClusterConfig, archs: Iterable[str] = ARCHITECTURES) -> MirrorPlan:
    """What `cfg`'s nodes pull through its registry mirrors (module docstring), for the EC2 architectures
    `archs` (only RKE2's own lists differ per architecture; every other image is copied with all its
    platforms). Empty without mirrors."""
    mirrors = dict(cfg.registry.mirrors) if cfg.registry is not None else {}
    if not mirrors:
        return MirrorPlan((), (), ())
    images: list[MirrorImage] = []
    for component, image in _program_images(cfg):
        upstream = _qualified(image)
        if cfg.distribution == "rke" and cfg.ccm.image and component == "cloud-controller-manager":
            # RKE1 pulls a ccm.image as written (plan/planner.py rewrites only the default).
            continue
        target = pulled_from(upstream, mirrors)
        if target is not None and target != upstream:
            images.append(MirrorImage(component, upstream, target))
    unknown: list[UnknownTag] = []
    agent = pulled_from(RANCHER_AGENT, mirrors)
    if cfg.rancher is not None and agent is not None:
        unknown.append(UnknownTag(
            "rancher agent", RANCHER_AGENT, agent, RANCHER_VERSION_VARIABLE,
            "Rancher's registration manifest runs rancher/rancher-agent at the Rancher server's own version, "
            "which no stack key holds: set RANCHER_VERSION to it (v2.X.Y)"))
    lists = _rke2_lists(cfg, mirrors, archs) if cfg.distribution == "rke2" else _rke1_lists(cfg, mirrors)
    return MirrorPlan(tuple(images), tuple(lists), tuple(unknown))


# --- the commands ------------------------------------------------------------------------------------------

def _copyable(ref: str) -> str:
    """skopeo's docker transport takes a tag or a digest, not both: a digest-pinned reference copies by digest."""
    name, at, digest = ref.partition("@")
    if not at:
        return ref
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name = name[: name.rindex(":")]
    return f"{name}@{digest}"


def copy_commands(plan: MirrorPlan) -> str:
    """A bash script that copies every image of `plan` into the mirror (`skopeo login` to the mirror first). It
    stops at the first failure: a checksum that does not match, a list that cannot be had, a copy refused."""
    lines: list[str] = ["set -euo pipefail"]
    for image in plan.images:
        lines.append(f"skopeo copy --all docker://{_copyable(image.upstream)} docker://{_copyable(image.mirror)}")
    for unknown in plan.unknown:
        var = unknown.variable
        lines.append(f"# {unknown.component}: {unknown.why}")
        lines.append(f'skopeo copy --all "docker://{unknown.repository}:${{{var}:?set {var}}}" '
                     f'"docker://{unknown.mirror}:${{{var}}}"')
    for listed in plan.lists:
        lines.append(f"# {listed.what}")
        files = []
        for url in listed.urls:
            lines.append(f"curl -sfLO {url}")
            files.append(url.rsplit("/", 1)[1])
        for sums, file in listed.checksums:
            lines.append(f"curl -sfLO {sums}")
            lines.append(f"grep -E ' {file.replace('.', '[.]')}$' {sums.rsplit('/', 1)[1]} | sha256sum -c -")
        # The list is read before the loop: a failing command inside `for x in $(...)` would not stop the script.
        lines.append(f"images=$({listed.command})" if listed.command else f"images=$(sort -u {' '.join(files)})")
        lines += [
            "for image in $images; do",
            '  case "${image%%/*}" in',
            f"    {listed.registry}) path=${{image#*/}} ;;",
            f'    *.*|*:*|localhost) echo "not a {listed.registry} image: $image" >&2; exit 1 ;;',
            "    *) path=$image ;;",
            "  esac",
            f'  skopeo copy --all "docker://{listed.registry}/$path" "docker://{listed.target}/$path"',
            "done",
        ]
    return "\n".join(lines)
