"""docs/features/airgap-os-fips.md "Filling the registry": `rke-aws images <stack>` prints the commands shown there,
and for every air-gapped fixture stack (tests/stacks/Pulumi.rke2-airgap*.yaml) they copy every image its golden
plan (tests/snapshots/<stack>.json) makes a node pull, to where the node's pull lands in the mirror, and nothing
else. skopeo and curl are stubbed (no network); bash, sort, grep and sha256sum are real.

The images are read from the plan, never from rke_aws.node.mirror_images:
- the CCM: the planned chart values (outputs.ccmValues image.repository/tag);
- EBS CSI: the planned HelmChart's chart and version, with that chart's own values.yaml and Chart.yaml
  (tests/data/upstream/aws-ebs-csi-driver-<version>/) under its valuesContent; which images its templates run
  (kubernetes-sigs/aws-ebs-csi-driver charts/aws-ebs-csi-driver/templates at that tag: _helpers.tpl
  fullImagePath, image.tag defaults to v<appVersion>; controller.yaml runs the volumemodifier only with
  controller.volumeModificationFeature.enabled, the snapshotter where snapshot.storage.k8s.io is served,
  which RKE2 bundles);
- the upgrade Plans' images (planned upgrade-plans.yaml) at the Plan's version with + replaced by -
  (rancher/system-upgrade-controller pkg/upgrade/plan/plan.go);
- system-upgrade-controller's manifest (the planned .url's version) as that release publishes it
  (tests/data/upstream/system-upgrade-controller-<version>/; scripts/package-controller sets the controller's
  tag to the release): the controller and its ConfigMap's SYSTEM_UPGRADE_JOB_KUBECTL_IMAGE;
- RKE2's own images: every line of the release's rke2-images-all list (stubbed here), named
  <system-default-registry>/<path> when the planned config.yaml sets it (rancher/rke2 pkg/images).
Where a pull lands: containerd with registries.yaml (the document nodes get, node/registries.rke2_registries;
the golden plan records its path, not its text) resolves `<registry>/<repo>:<tag>` through the mirror of that
registry, else "*", at the endpoint's host with each rewrite applied to the repository (rke2-docs
install/private_registry.md "Mirrors", "Rewrites"); without a mirror, at the registry itself.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from rke_aws.node import registries
from rke_aws_offline import cli
from rke_aws_offline.engine import harness
from tests.support import upstream

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "features" / "airgap-os-fips.md"
SECTION = "### Filling the registry"
DOC_STACK = "rke2-airgap"
AIRGAP_STACKS = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml")
                       for p in (ROOT / "tests" / "stacks").glob("Pulumi.rke2-airgap*.yaml"))

# What the stubbed release lists hold (the shape of rancher/rke2 scripts/build-images' lists: docker.io/rancher/...).
RKE2_LISTS = {
    "amd64": ["docker.io/rancher/hardened-kubernetes:v1.33.5-rke2r1-build20250910",
              "docker.io/rancher/mirrored-pause:3.6", "docker.io/rancher/rke2-cloud-provider:v1.33.4-build20250910"],
    "arm64": ["docker.io/rancher/hardened-kubernetes:v1.33.5-rke2r1-build20250910",
              "docker.io/rancher/mirrored-pause:3.6", "docker.io/rancher/klipper-helm:v0.9.8-build20250709"],
}


def _command_output(stack: str, capsys, *args: str) -> str:
    capsys.readouterr()
    assert cli.main(["-C", str(ROOT), "images", stack, *args]) == 0
    return capsys.readouterr().out


def _docker_hub(image: str) -> str:
    first, sep, rest = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return image
    return f"docker.io/{image}" if sep else f"docker.io/library/{image}"


# --- what the plan pulls ------------------------------------------------------------------------------------

def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _parameter(snap: dict, suffix: str):
    (value,) = [r["inputs"]["insecureValue"] for r in snap["resources"]
                if r["type"] == "Parameter" and r["name"].endswith(suffix)]
    return value


def planned_images(snap: dict) -> set[str]:
    out = set()
    ccm = snap["outputs"]["ccmValues"]["image"]
    out.add(f"{ccm['repository']}:{ccm['tag']}")
    ebs = snap["addons"].get("ebsCsi") or {}
    if ebs.get("enabled"):
        spec = ebs["helmChart"]["spec"]
        assert spec["chart"].rsplit("/", 1)[-1] == "aws-ebs-csi-driver"
        chart_dir = upstream.DATA / f"aws-ebs-csi-driver-{spec['version']}"
        chart = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
        values = _merge(yaml.safe_load((chart_dir / "values.yaml").read_text()),
                        yaml.safe_load(spec.get("valuesContent") or "{}") or {})
        registry = values["image"].get("containerRegistry") or ""
        out.add(f"{registry}{values['image']['repository']}:{values['image'].get('tag') or 'v' + chart['appVersion']}")
        for name, sidecar in values["sidecars"].items():
            if "image" not in sidecar:  # metadataLabeler runs the driver's own image (controller.yaml)
                continue
            if name == "volumemodifier" and not (values["controller"].get("volumeModificationFeature") or {}).get("enabled"):
                continue
            out.add(f"{registry}{sidecar['image']['repository']}:{sidecar['image']['tag']}")
    plans = _parameter(snap, "-manifest-upgrade-plans")
    for plan in plans:
        tag = plan["spec"]["version"].replace("+", "-")
        for step in ("upgrade", "prepare"):
            if step in plan["spec"]:
                out.add(_docker_hub(f"{plan['spec'][step]['image']}:{tag}"))
    url = _parameter(snap, "-manifest-system-upgrade-controller")
    version = url.rsplit("/", 2)[-2]
    docs = list(yaml.safe_load_all(
        (upstream.DATA / f"system-upgrade-controller-{version}" / "system-upgrade-controller.yaml").read_text()))
    for doc in docs:
        if doc and doc["kind"] == "ConfigMap":
            out.add(_docker_hub(doc["data"]["SYSTEM_UPGRADE_JOB_KUBECTL_IMAGE"]))
        if doc and doc["kind"] == "Deployment":
            for c in doc["spec"]["template"]["spec"]["containers"]:
                name = c["image"].rsplit(":", 1)[0]
                out.add(_docker_hub(f"{name}:{version}" if name == "rancher/system-upgrade-controller" else c["image"]))
    return {_docker_hub(i) for i in out}


def rke2_names(snap: dict, lines: list[str]) -> set[str]:
    (sdr,) = {c["content"].get("system-default-registry") for c in snap["configs"]}
    return {f"{sdr}/{line.split('/', 1)[1]}" if sdr else line for line in lines}


def resolve(image: str, registries_yaml: dict) -> str:
    registry, path = image.split("/", 1)
    mirrors = registries_yaml.get("mirrors", {})
    entry = mirrors.get(registry) or mirrors.get("*")
    if entry is None:
        return image
    repo, sep, tag = path.rpartition(":")
    for pattern, replacement in (entry.get("rewrite") or {}).items():
        repo = re.sub(pattern, re.sub(r"\$(\d)", r"\\\1", replacement), repo)
    return f"{urlsplit(entry['endpoint'][0]).netloc}/{repo}{sep}{tag}"


# --- running the commands -------------------------------------------------------------------------------------

STUBS = r'''
curl() {  # the release's image lists; sha256sum-<arch>.txt the sums of what was served
  for last; do :; done
  name=${last##*/}
  case "$name" in
    sha256sum-*.txt)
      arch=${name#sha256sum-}; arch=${arch%.txt}
      (cd "$LISTS" && sha256sum "rke2-images-all.linux-$arch.txt") > "$name" ;;
    *) cp "$LISTS/$name" "$name" ;;
  esac
  [ -z "${TAMPER:-}" ] || [ "$name" != "$TAMPER" ] || echo docker.io/evil/image:1 >> "$name"
}
skopeo() { printf '%s\n' "$*" >> copies.log; }
'''


def _run(script: str, tmp_path: Path, tamper: str = "") -> tuple[subprocess.CompletedProcess, list[tuple[str, str]]]:
    lists = tmp_path / "release"
    lists.mkdir()
    for arch, lines in RKE2_LISTS.items():
        (lists / f"rke2-images-all.linux-{arch}.txt").write_text("\n".join(lines) + "\n")
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(["bash", "-c", STUBS + script], cwd=work, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "LISTS": str(lists), "TAMPER": tamper})
    log = work / "copies.log"
    copies = []
    for line in log.read_text().splitlines() if log.exists() else []:
        verb, flag, src, dst = line.split()
        assert (verb, flag) == ("copy", "--all"), line
        copies.append((src.removeprefix("docker://"), dst.removeprefix("docker://")))
    return proc, copies


@pytest.mark.parametrize("stack", AIRGAP_STACKS)
def test_the_commands_copy_every_image_the_plan_pulls_to_where_the_nodes_pull_it(stack, tmp_path, capsys):
    snap = json.loads((ROOT / "tests" / "snapshots" / f"{stack}.json").read_text())
    reg = harness.stack_config(stack)["rke-aws:registry"]
    mirrors = (json.loads(reg) if isinstance(reg, str) else reg)["mirrors"]
    doc = registries.rke2_registries(mirrors)
    release_lines = sorted({line for lines in RKE2_LISTS.values() for line in lines})
    wanted = {(i, resolve(i, doc)) for i in planned_images(snap)}
    wanted |= {(line, resolve(name, doc)) for line, name in zip(release_lines, [
        next(iter(rke2_names(snap, [line]))) for line in release_lines], strict=True)}
    wanted = {(src, dst) for src, dst in wanted if src != dst}

    proc, copies = _run(_command_output(stack, capsys), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(copies) == len(set(copies)), "an image is copied twice"
    assert set(copies) == wanted, (sorted(wanted - set(copies)), sorted(set(copies) - wanted))


def test_a_tampered_release_list_stops_before_any_copy_of_it(tmp_path, capsys):
    proc, copies = _run(_command_output(DOC_STACK, capsys), tmp_path, tamper="rke2-images-all.linux-arm64.txt")
    assert proc.returncode != 0 and "FAILED" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert not [c for c in copies if "evil" in c[0] or "hardened-kubernetes" in c[0]]


def test_the_doc_shows_what_the_command_prints(capsys):
    text = DOC.read_text()
    section = text[text.index(SECTION):]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    assert f"rke-aws images {DOC_STACK}" in section[:section.index("```sh")]
    assert block == _command_output(DOC_STACK, capsys)


def test_one_architecture_downloads_and_copies_its_list_only(tmp_path, capsys):
    out = _command_output(DOC_STACK, capsys, "--arch", "amd64")
    assert "linux-arm64" not in out and "sha256sum-arm64" not in out
    proc, copies = _run(out, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not [c for c in copies if "klipper-helm" in c[0]]  # only on the stubbed arm64 list

