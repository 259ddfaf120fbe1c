"""Day 2 for what is installed in the cluster: removals say what goes and what stays, charts the
servers' helm-controller runs are really removed, and no credential is revoked while the driver
may still use it.

What removing a manifest does, from the owners' source:
- k3s pkg/deploy/controller.go (k3s-io/k3s, read at 0301210f): the deploy controller walks the files
  present; a removed file is never looked at again, so what it created stays. Applying a file names
  the Addon after the file name up to its first dot and applies WithOwner(addon): objects that Addon
  created and the file no longer holds are pruned. An empty file therefore deletes them.
- k3s-io/helm-controller pkg/controllers/chart/chart.go (21a911f8) OnRemove: a deleted HelmChart gets
  a helm delete job, then its resources are removed: the chart is uninstalled.
"""

# split: this module mixes levels (issue 33 §7.2); the pure test -> tests/unit/plan.

from __future__ import annotations

import copy

import pytest
import yaml

from rke_aws.cluster import manifests as manifest_mod
from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness
from tests.support.configs import set_key
from tests.support.day2 import KUBECONFIG, code_in, readable, refused, run

RELEASE = "kubernetes:helm.sh/v3:Release"
ACCESS_KEY = "aws:iam/accessKey:AccessKey"


def params(r: harness.ProgramRun) -> dict[str, str]:
    return {p.inputs["name"].rsplit("/", 1)[1]: p.inputs.get("insecureValue") or p.inputs.get("value")
            for p in r.of_type("aws:ssm/parameter:Parameter") if "/manifests/" in p.inputs["name"]}


def warned(r: harness.ProgramRun, text: str) -> str:
    found = [m for lvl, m in r.logs if lvl == "warning" and text in m]
    assert found, [m for _, m in r.logs]
    return found[0]


def path_grant(r: harness.ProgramRun) -> bool:
    return any("ssm:GetParametersByPath" in p.inputs["policy"] for p in r.of_type("aws:iam/rolePolicy:RolePolicy"))


@pytest.fixture
def dev() -> dict:
    return harness.stack_config("rke2-dev")  # ccm.install: manifest


def test_an_emptied_manifest_deletes_what_the_old_one_created():
    """The deploy controller's Addon is the file name up to the first dot: the emptied file must
    name the same Addon, and hold no object."""
    for old in ("ebs-csi.yaml", "system-upgrade-controller-crd.url", "ccm.yaml"):
        base = manifest_mod.base_name(old)
        emptied = manifest_mod.emptied_name(base)
        assert emptied.split(".")[0] == ("rke-aws-" + old).split(".")[0].removeprefix("rke-aws-")
        assert emptied.endswith(".yaml") and emptied != old
    assert [d for d in yaml.safe_load_all(manifest_mod.EMPTIED) if d is not None] == []


def test_ebs_csi_off_in_manifest_mode_uninstalls_through_the_servers_and_keeps_the_key_until_done(dev, monkeypatch):
    from rke_aws.plan import running
    from tests.support.day2 import fake_api

    base = run(dev, stack="rke2-dev")
    assert {"ebs-csi.yaml", "ebs-csi-credentials.yaml"} <= set(params(base))
    off = set_key(copy.deepcopy(dev), "addons", {"ebsCsi": False})
    after = run(off, base, stack="rke2-dev")
    p = params(after)
    assert "ebs-csi.yaml" not in p and p["ebs-csi.removed.yaml"] == manifest_mod.EMPTIED
    assert p["ebs-csi-credentials.removed.yaml"] == manifest_mod.EMPTIED and "ebs-csi-credentials.yaml" not in p
    assert after.of_type(ACCESS_KEY), "the key was revoked while the servers may still run the driver"
    assert after.outputs["rke2ManifestsRemoving"] == ["ebs-csi", "ebs-csi-credentials"]
    w = warned(after, "rke-aws:addons.ebsCsi: false")
    assert "the volumes and their PersistentVolumes stay" in w and "IAM user and key stay" in w
    # The next update cannot know without the cluster: the key stays ...
    again = run(off, after, stack="rke2-dev")
    assert again.of_type(ACCESS_KEY) and again.outputs["rke2ManifestsRemoving"] == ["ebs-csi", "ebs-csi-credentials"]
    # ... until the user confirms the HelmChart is gone ...
    done = run(set_key(copy.deepcopy(off), "confirmClusterState", code_in(w, "manifests")), again, stack="rke2-dev")
    assert not done.of_type(ACCESS_KEY) and done.outputs["rke2ManifestsRemoving"] == []
    # ... or the cluster shows it (through a fake API): not while the HelmChart is still there ...
    monkeypatch.setattr(running, "TRANSPORT", lambda access: fake_api([], plans=[], charts=["aws-ebs-csi-driver"]))
    still = run(readable(off, "rke2-dev"), again, stack="rke2-dev")
    assert still.of_type(ACCESS_KEY) and still.outputs["rke2ManifestsRemoving"] == ["ebs-csi", "ebs-csi-credentials"]
    # ... once it is gone.
    monkeypatch.setattr(running, "TRANSPORT", lambda access: fake_api(
        [], plans=[{"metadata": {"name": "rke2-server"}}], charts=["aws-cloud-controller-manager"]))
    read = run(readable(off, "rke2-dev"), again, stack="rke2-dev")
    assert not read.of_type(ACCESS_KEY)
    # The emptied manifests stay for good: rke2-server re-applies every file at each start.
    assert params(done)["ebs-csi.removed.yaml"] == manifest_mod.EMPTIED


def test_ebs_csi_off_in_helm_mode_says_what_is_uninstalled_and_what_stays():
    cfg = set_key(harness.stack_config("rke2-prod"), "kubeconfig", stackfile.secret(KUBECONFIG))
    base = run(cfg)
    after = run(set_key(copy.deepcopy(cfg), "addons", {"ebsCsi": False}), base)
    assert [r.inputs["name"] for r in after.of_type(RELEASE)] == ["aws-cloud-controller-manager"]
    w = warned(after, "this update uninstalls from the cluster")
    assert "aws-ebs-csi-driver" in w and "PersistentVolumes stay" in w and "IAM user and key are deleted after it" in w


def test_manifest_to_helm_removes_the_charts_first_then_installs_releases(dev, monkeypatch):
    from rke_aws.plan import running
    from tests.support.day2 import fake_api

    base = run(dev, stack="rke2-dev")
    helm = set_key(readable(set_key(copy.deepcopy(dev), "ccm", {"install": "helm"}), "rke2-dev"), "kubeconfig",
                   stackfile.secret(KUBECONFIG))
    phase1 = run(helm, base, stack="rke2-dev")
    assert not phase1.of_type(RELEASE), "a Release while helm-controller still runs the same chart"
    p = params(phase1)
    assert set(p) == {f"{b}.removed.yaml" for b in ("ccm", "ebs-csi", "ebs-csi-credentials", "upgrade-plans",
                                                    "system-upgrade-controller", "system-upgrade-controller-crd")}
    assert path_grant(phase1), "the servers lose the right to sync and keep stale manifests on disk"
    w = warned(phase1, "rke-aws:ccm.install: helm")
    assert "the CCM is not running until a later `pulumi up` installs it" in w
    # Still there (the cluster cannot be read: the placeholder kubeconfig): no Release yet.
    assert not run(helm, phase1, stack="rke2-dev").of_type(RELEASE)
    # The cluster shows the upgrade Plans still there: not yet either.
    monkeypatch.setattr(running, "TRANSPORT", lambda access: fake_api([], plans=[{"metadata": {"name": "rke2-agent"}}],
                                                                      charts=[]))
    assert not run(readable(helm, "rke2-dev"), phase1, stack="rke2-dev").of_type(RELEASE)
    # The cluster shows the HelmCharts and Plans gone: the Releases go in.
    monkeypatch.setattr(running, "TRANSPORT", lambda access: fake_api([], plans=[], charts=[]))
    phase2 = run(readable(helm, "rke2-dev"), phase1, stack="rke2-dev")
    assert {r.inputs["name"] for r in phase2.of_type(RELEASE)} == {"aws-cloud-controller-manager", "aws-ebs-csi-driver"}
    assert path_grant(phase2) and set(params(phase2)) == set(p)


# ---- allowUninstall ---------------------------------------------------------------------------

@pytest.mark.reads_stacks
def test_allow_uninstall_says_what_it_uninstalls_and_is_refused_once_nothing_is_left():
    cfg = set_key(harness.stack_config("rke2-prod"), "kubeconfig", stackfile.secret(KUBECONFIG))
    base = run(cfg)
    gone = set_key(harness.stack_config("rke2-prod"), "allowUninstall", True)
    gone.pop("rke-aws:kubeconfig", None)  # no kubeconfig: the cluster is gone (whatever stacks/ holds)
    after = run(gone, base)
    assert not after.of_type(RELEASE) and "installedInCluster" not in after.outputs
    w = warned(after, "this update uninstalls from the cluster (allowUninstall")
    assert all(x in w for x in ("aws-cloud-controller-manager", "system-upgrade-controller", "aws-ebs-csi-driver"))
    assert not [m for _, m in after.logs if "not installed yet" in m], "the old message promised an install"
    # Left set, the next update is refused: it would uninstall silently next time.
    message = refused(gone, after)
    assert "rke-aws:allowUninstall: true, but this update uninstalls nothing" in message
    assert "pulumi config rm allowUninstall" in message
    # With a kubeconfig and nothing left out, it is refused as well.
    assert "uninstalls nothing" in refused(set_key(copy.deepcopy(cfg), "allowUninstall", True), base)
