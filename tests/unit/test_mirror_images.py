"""node/mirror_images: which images a stack pulls through its mirror, per feature, and the commands that copy
them (the air-gapped fixtures' full lists are checked against their golden plans in
tests/tooling/test_docs_registry.py).

Sources: rke2-docs install/private_registry.md (containerd pulls a registry's images through its mirror, or
"*", under the same repository names; a mirror URL's path is a rewrite); rancher/rke cluster/defaults.go (the
default private registry prefixes RKE's system images as <url>/<image>) and cmd/config.go (`rke config
--system-images --version`); rancher/system-upgrade-controller v0.20.1 manifests/system-upgrade-controller.yaml
(SYSTEM_UPGRADE_JOB_KUBECTL_IMAGE) and pkg/upgrade/plan/plan.go (the Plan's version, + as -, is the tag);
containers/skopeo docs/skopeo-copy.1.md (`--all`: the list and every image in it; the docker transport takes a
tag or a digest); Rancher's registration manifest runs rancher/rancher-agent at the server's version.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rke_aws.node import mirror_images
from rke_aws.settings import registry_hosts, stackfile, versions
from rke_aws.settings.resolve import from_flat

ROOT = Path(__file__).resolve().parents[2]
MIRROR = "https://registry.corp.example/hub"
SECRET = "offline-placeholder: encrypted value, not decrypted offline"


def _cfg(stack: str = "rke2-airgap", **sections):
    flat, secret_keys = stackfile.load_stack_text((ROOT / "tests" / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    for key, value in sections.items():
        name = f"rke-aws:{key}"
        if value is None:
            flat.pop(name, None)
        else:
            flat[name] = value if isinstance(value, str) else json.dumps(value)
    if "rancher" in sections:  # its token is a secret value, as `pulumi config set --secret --path` makes it
        secret_keys = [*secret_keys, "rke-aws:rancher"]
    return from_flat(flat, project="rke-aws", stack=stack, secret_keys=secret_keys)


def _online(**sections):
    """The air-gapped fixture with a NAT gateway and no airgap section (its registry kept unless given)."""
    return _cfg(airgap=None, network={"vpcCidr": "10.96.0.0/16", "availabilityZones": 3, "natGateways": "single"},
                **sections)


def _components(plan) -> dict[str, str]:
    return {i.component: i.upstream for i in plan.images}


def test_the_upgrade_images_follow_who_owns_upgrades():
    own = _components(mirror_images.images_for(_cfg()))
    assert own["rke2-upgrade in Plans"] == "docker.io/rancher/rke2-upgrade:v1.33.5-rke2r1"
    assert own["kubectl in upgrade jobs"] == "docker.io/rancher/kubectl:v1.30.3"
    assert own["system-upgrade-controller"] == f"docker.io/rancher/system-upgrade-controller:{versions.SUC_VERSION}"
    rancher = {"url": "https://rancher.corp.example", "upgrades": "rancher", "token": SECRET}
    theirs = mirror_images.images_for(_cfg(rancher=rancher))
    assert not {"rke2-upgrade in Plans", "kubectl in upgrade jobs", "system-upgrade-controller"} & set(_components(theirs))


def test_rancher_s_agent_is_copied_at_the_version_given_and_the_commands_stop_without_it(tmp_path):
    rancher = {"url": "https://rancher.corp.example", "token": SECRET}
    plan = mirror_images.images_for(_cfg(rancher=rancher))
    (agent,) = plan.unknown
    assert agent.repository == "docker.io/rancher/rancher-agent"
    assert agent.mirror == "registry.corp.example/dockerhub/rancher/rancher-agent"
    line = next(cmd for cmd in mirror_images.copy_commands(plan).splitlines()
                if cmd.startswith("skopeo") and "rancher-agent" in cmd)
    stub = 'skopeo() { printf "%s\\n" "$*" >> log; }\n'
    missing = subprocess.run(["bash", "-e", "-c", stub + line], cwd=tmp_path, capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin"})
    assert missing.returncode != 0 and "RANCHER_VERSION" in missing.stderr
    given = subprocess.run(["bash", "-e", "-c", stub + line], cwd=tmp_path, capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "RANCHER_VERSION": "v2.12.1"})
    assert given.returncode == 0, given.stderr
    assert (tmp_path / "log").read_text().split() == [
        "copy", "--all", "docker://docker.io/rancher/rancher-agent:v2.12.1",
        "docker://registry.corp.example/dockerhub/rancher/rancher-agent:v2.12.1"]


def test_identity_and_the_load_balancer_controller_add_their_images():
    base = _components(mirror_images.images_for(_cfg()))
    assert "pod identity webhook" not in base and "aws-load-balancer-controller" not in base
    on = _components(mirror_images.images_for(_online(identity={"serviceAccounts": "irsa"},
                                                   addons={"ebsCsi": True, "loadBalancerController": True})))
    assert on["pod identity webhook"] == versions.POD_IDENTITY_WEBHOOK_IMAGE
    assert on["aws-load-balancer-controller"] == versions.LOAD_BALANCER_CONTROLLER_IMAGE


def test_without_ebs_csi_none_of_its_images():
    plan = mirror_images.images_for(_cfg(addons={"ebsCsi": False}))
    assert not [i for i in plan.images if i.component.startswith("ebs-csi")]


def test_an_unmirrored_registry_s_images_are_pulled_upstream_and_not_listed():
    plan = mirror_images.images_for(_online(registry={"mirrors": {"docker.io": MIRROR}}))
    assert {i.upstream.split("/")[0] for i in plan.images} == {"docker.io"}
    assert all(i.mirror.startswith("registry.corp.example/hub/") for i in plan.images)
    # no system-default-registry: RKE2's images are docker.io's, pulled through its mirror
    (rke2,) = plan.lists
    assert rke2.target == "registry.corp.example/hub"


def test_no_mirror_no_images():
    plan = mirror_images.images_for(_online(registry=None))
    assert plan == mirror_images.MirrorPlan((), (), ())


def test_rke1_names_its_images_through_the_docker_hub_mirror_and_lists_rke_s_system_images():
    cfg = _cfg("rke-phase2", registry={"mirrors": {"docker.io": MIRROR, "registry.k8s.io": MIRROR + "-k8s"}})
    plan = mirror_images.images_for(cfg)
    ccm = next(i for i in plan.images if i.component == "cloud-controller-manager")
    assert ccm.mirror == registry_hosts.rewrite_image(ccm.upstream, dict(cfg.registry.mirrors))
    assert not [i for i in plan.images if "upgrade" in i.component]
    (system,) = plan.lists
    assert system.command == f"rke config --system-images --version {cfg.kubernetes_version}"
    assert system.target == "registry.corp.example/hub"
    text = mirror_images.copy_commands(plan)
    assert '"docker://docker.io/$path" "docker://registry.corp.example/hub/$path"' in text


def test_a_digest_pinned_ccm_image_is_copied_by_digest():
    digest = "sha256:" + "a" * 64
    plan = mirror_images.images_for(_cfg(ccm={"install": "manifest", "image":
                                              f"registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.4@{digest}"}))
    line = mirror_images.copy_commands(plan).splitlines()[1]  # after set -euo pipefail
    assert line == (f"skopeo copy --all docker://registry.k8s.io/provider-aws/cloud-controller-manager@{digest} "
                    f"docker://registry.corp.example/k8s/provider-aws/cloud-controller-manager@{digest}")


@pytest.mark.parametrize("archs, files", [(["x86_64"], ["amd64"]), (["arm64", "x86_64"], ["amd64", "arm64"])])
def test_rke2_s_lists_per_architecture(archs, files):
    (rke2,) = mirror_images.images_for(_cfg(), archs).lists
    assert [u.rsplit("/", 1)[1] for u in rke2.urls] == [f"rke2-images-all.linux-{a}.txt" for a in files]
    assert rke2.urls[0].startswith("https://github.com/rancher/rke2/releases/download/v1.33.5%2Brke2r1/")


def test_the_ebs_csi_table_names_the_repositories_the_mirror_check_knows():
    """versions.EBS_CSI_IMAGES (what is copied) and registry_hosts.DEPLOYED_IMAGES (what an air-gapped stack
    must mirror, and what RKE1 renames) name the same repositories for the chart's values paths."""
    known = {d.source.split(" values.yaml ", 1)[1]: d.repository for d in registry_hosts.DEPLOYED_IMAGES
             if " values.yaml " in d.source}
    for path, image in versions.EBS_CSI_IMAGES.items():
        assert known[path] == image.rsplit(":", 1)[0], path


def _image_keys(node, path=()):
    """Every `image` mapping in a chart's values (the keys its templates take an image from)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "image" and isinstance(value, dict) and "repository" in value:
                yield ".".join((*path, key))
            else:
                yield from _image_keys(value, (*path, key))


@pytest.mark.parametrize("chart", ["aws-cloud-controller-manager-0.0.11", "amazon-eks-pod-identity-webhook-2.6.5",
                                   "aws-load-balancer-controller-3.5.0"])
def test_the_charts_whose_image_the_program_sets_run_no_other(chart):
    """The CCM, pod identity webhook and LBC charts (their values.yaml as released, tests/data/upstream/) each
    name one image, the one the program sets (ccm_values image_values, identity_webhook/identity_lbc values): so
    images_for lists all they run. EBS CSI names several, all pinned in versions.EBS_CSI_IMAGES."""
    import yaml

    from tests.support import upstream

    values = yaml.safe_load((upstream.DATA / chart / "values.yaml").read_text())
    assert list(_image_keys(values)) == ["image"]


def test_every_image_the_ebs_csi_chart_names_is_pinned_or_not_deployed():
    import yaml

    from tests.support import upstream

    chart_dir = upstream.DATA / f"aws-ebs-csi-driver-{versions.EBS_CSI_CHART_VERSION}"
    values = yaml.safe_load((chart_dir / "values.yaml").read_text())
    app = yaml.safe_load((chart_dir / "Chart.yaml").read_text())["appVersion"]
    named = {k.removesuffix(".image") or "image" for k in _image_keys(values)}
    # volumemodifier: templates/controller.yaml runs it only with controller.volumeModificationFeature.enabled
    assert named - set(versions.EBS_CSI_IMAGES) == {"sidecars.volumemodifier"}
    for path, image in versions.EBS_CSI_IMAGES.items():
        node = values
        for part in (path.split(".") if path != "image" else []):
            node = node[part]
        assert image.rsplit(":", 1)[0] == node["image"]["repository"], path
        # an empty tag is v<appVersion> (templates/_helpers.tpl fullImagePath)
        assert image.rsplit(":", 1)[1] == (node["image"]["tag"] or f"v{app}"), path


def test_the_script_stops_at_the_first_failure_and_reads_a_list_before_looping_over_it():
    """bash runs on after a failed command unless told otherwise (bash(1), "set -e"), and a failing command
    substitution in `for x in $(cmd)` does not stop even `set -e`: the list goes into a variable first."""
    plan = mirror_images.images_for(_cfg())
    lines = mirror_images.copy_commands(plan).splitlines()
    assert lines[0] == "set -euo pipefail"
    assert not [line for line in lines if line.startswith("for ") and "$(" in line], lines
