"""Graviton / arm64 pools (issue 26): each pool's image follows its instance type's architecture.

Facts from their owners:
- EC2 DescribeInstanceTypes gives each type's SupportedArchitectures (x86_64, arm64, ...): the
  architecture is looked up, never guessed from the type's name (the emulated account answers from
  moto's instance-type data).
- Canonical names its images ubuntu-noble-24.04-<amd64|arm64>-server-<date> (Canonical, "Find Ubuntu
  images on AWS"); the mocks answer an arm64 image only for a name with `-arm64-` in it.
- RKE2: "Add arm64 support (#4335)" in v1.27.3+rke2r1 (rke2-docs release notes, v1.27.X), its arm64
  CNI images from v1.27.10 (rancher/rke2#5262). RKE1 on arm64: "experimental ... not yet officially
  supported" (Rancher manager docs, "Running on ARM64 Mixed Architecture (Experimental)").
- pulumi/pulumi pkg/resource/deploy/step_generator.go: ignore_changes (`ami` on nodes) is applied to the
  inputs before the diff, and a replacement is created from them.
"""

from __future__ import annotations

import copy

import pytest

from rke_aws.settings import versions
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated.provider_checks import ubuntu_image_id
from tests.support.configs import with_pools
from tests.support.runs import run_stack_cached

INSTANCE = "aws:ec2/instance:Instance"

# Images the program deploys, and the upstream build that publishes each for linux/arm64 too.
MULTI_ARCH = {
    # kubernetes/cloud-provider-aws cloudbuild.yaml: buildx --platform=linux/amd64,linux/arm64
    "registry.k8s.io/provider-aws/cloud-controller-manager": "kubernetes/cloud-provider-aws cloudbuild.yaml",
    # rancher/rke2-upgrade .github/workflows/release.yml (ed2e59b): platforms: linux/amd64, linux/arm64
    "rancher/rke2-upgrade": "rancher/rke2-upgrade .github/workflows/release.yml",
    # rancher/system-upgrade-controller .github/workflows/release.yml: platforms linux/amd64,linux/arm64,linux/arm
    "rancher/system-upgrade-controller": "rancher/system-upgrade-controller .github/workflows/release.yml",
}


def _amis(run) -> dict[str, str]:
    return {r.name: r.inputs["ami"] for r in run.resources if r.type == INSTANCE}


def _ubuntu(run, arch: str) -> str:
    """The ID of Canonical's image of `arch` in the run's emulated account."""
    return ubuntu_image_id(run.config["aws:region"], arch)


def test_pools_of_both_architectures_mix_each_with_its_own_image():
    run = harness.run_program(with_pools("rke2-dev", lambda p: p[1].update(instanceType="m7g.large")), stack="rke2-dev")
    amis = _amis(run)
    assert amis["rke2-dev-server-0"] == _ubuntu(run, "x86_64")
    assert {amis["rke2-dev-agents-0"], amis["rke2-dev-agents-1"]} == {_ubuntu(run, "arm64")}
    asked = sorted(f["values"][0] for lk in run.lookups if lk.token.endswith("getAmi")
                   for f in lk.args.get("filters", []) if f["name"] == "name")
    assert asked == sorted(versions.UBUNTU_AMI_NAMES.values()), asked
    assert all(lk.args.get("owners") == ["099720109477"] for lk in run.lookups if lk.token.endswith("getAmi"))


def test_an_all_graviton_cluster_asks_for_the_arm64_image_only():
    def graviton(pools):
        pools[0]["instanceType"] = "m7g.large"
        pools[1]["instanceType"] = "c7g.medium"
    run = harness.run_program(with_pools("rke2-dev", graviton), stack="rke2-dev")
    assert set(_amis(run).values()) == {_ubuntu(run, "arm64")}
    assert sum(lk.token.endswith("getAmi") for lk in run.lookups) == 1


def test_the_architecture_is_looked_up_not_read_from_the_type_name():
    """A made-up type named like Graviton but described by EC2 as x86_64 gets the amd64 image."""
    from rke_aws_offline.engine.emulated import moto_import

    moto_import.load()  # before moto's first import: the trimmed one
    from moto.ec2.models import instance_types

    cfg = with_pools("rke2-dev", lambda p: p[1].update(instanceType="x9g.large"))
    # A type EC2 describes like m6i.large (x86_64) under a Graviton-looking name, offered where m6i.large is:
    # entries in moto's tables (its copy of DescribeInstanceTypes and DescribeInstanceTypeOfferings).
    instance_types.INSTANCE_TYPES["x9g.large"] = dict(instance_types.INSTANCE_TYPES["m6i.large"], InstanceType="x9g.large")
    zones = instance_types.INSTANCE_TYPE_OFFERINGS["availability-zone"][cfg["aws:region"]]
    added = [dict(row, InstanceType="x9g.large") for row in zones if row["InstanceType"] == "m6i.large"]
    zones.extend(added)
    try:
        run = harness.run_program(cfg, stack="rke2-dev")
    finally:
        del instance_types.INSTANCE_TYPES["x9g.large"]
        for row in added:
            zones.remove(row)
    assert set(_amis(run).values()) == {_ubuntu(run, "x86_64")}


def test_rke1_on_graviton_is_refused_with_the_reason():
    cfg = with_pools("rke-dev", lambda p: p[-1].update(instanceType="m7g.large"))
    with pytest.raises(Exception) as refused:
        harness.run_program(cfg, stack="rke-dev")
    assert "is an arm64 (Graviton) type; RKE1 on arm64 is experimental" in str(refused.value)


def test_running_agents_change_architecture_only_by_rotation():
    """Running agents keep their type (nodes.IGNORED_ON_UPDATE): an arm64 type for an x86_64 pool
    launches nothing and replaces nothing in the update; each agent is stale, and rotation launches it
    with the pool's new type and the arm64 default image (a targeted replacement creates from the
    program's inputs: pulumi/pulumi pkg/resource/deploy/step_generator.go isTargetedReplace)."""
    from rke_aws.plan import stale

    first = run_stack_cached("rke2-dev")
    cfg = with_pools("rke2-dev", lambda p: p[1].update(instanceType="m7g.large"))
    run = harness.run_program(cfg, stack="rke2-dev", previous_outputs=copy.deepcopy(first.outputs))
    agents = [n for n in run.outputs["nodes"] if n["pool"] == "agents"]
    assert agents and all(n["wanted"] == {**n["wanted"], "instanceType": "m7g.large", "image": _ubuntu(run, "arm64")}
                          for n in agents)
    old = {n["name"]: n for n in first.outputs["nodes"]}
    for n in agents:  # what runs is what the engine keeps: the old type and image
        found = stale.stale_node({**n, **stale.running_values(old[n["name"]])})
        assert found is not None and {d.attribute.key for d in found.differences} == {"image", "instanceType"}, found
    # A new arm64 pool next to it is fine.
    ok = with_pools("rke2-dev", lambda p: (p[1].update(instanceType="m6i.xlarge"),
                                       p.append({"name": "arm", "roles": ["worker"], "count": 1,
                                                 "instanceType": "m7g.large"})))
    run = harness.run_program(ok, stack="rke2-dev", previous_outputs=copy.deepcopy(first.outputs))
    assert _amis(run)["rke2-dev-arm-0"] == _ubuntu(run, "arm64")


def test_every_image_the_program_deploys_is_published_for_arm64():
    assert versions.CCM_IMAGE_REPOSITORY in MULTI_ARCH
    assert versions.RKE2_UPGRADE_IMAGE in MULTI_ARCH
    for url in versions.SUC_MANIFEST_URLS:
        assert url.startswith("https://github.com/rancher/system-upgrade-controller/releases/"), url
