"""The program reports stale nodes and replaces none: day-2 sequences base -> change (the harness feeds a
run's outputs back as the next run's previous outputs), with the engine's rule for what a running instance
keeps (tests/support/offline_engine.py: pulumi/pulumi step_generator.go processIgnoreChanges keeps ignored
inputs; isTargetedReplace creates from the program's inputs)."""

from __future__ import annotations

import json

import pytest

from rke_aws.aws import nodes
from rke_aws.plan import stale
from rke_aws.settings import versions
from rke_aws_offline.engine import harness
from rke_aws_offline.engine.emulated_account import MotoMocks
from rke_aws_offline.report import plan_report
from tests.support import rotation as rot
from tests.support.offline_engine import INSTANCE, HarnessEngine


def _notes(run: harness.ProgramRun) -> list[str]:
    return [m for lvl, m in run.logs if lvl == "info" and m.startswith("stale: ")]


def _pools(cfg: dict, **changes) -> dict:
    out = dict(cfg)
    p = json.loads(cfg["rke-aws:nodePools"])
    for pool in p:
        pool.update(changes.get(pool["name"], {}))
    out["rke-aws:nodePools"] = json.dumps(p)
    return out


@pytest.fixture(scope="module")
def base() -> tuple[dict, harness.ProgramRun]:
    cfg = rot.config(servers=3, agents=2)
    return cfg, harness.run_program(cfg, stack="stale", mocks=MotoMocks(cfg.get("aws:region", "us-west-2")))


def _engine(base, shared: bool = False) -> HarnessEngine:
    """`shared`: the engine's updates are made once per session and read by every test that makes the same one
    (tests/support/offline_engine.py _run_once); not for a test that patches the program."""
    cfg, run = base
    return HarnessEngine(cfg, "stale", run=run, shared=shared)


def test_node_outputs_record_what_runs_and_what_is_wanted(base):
    _, run = base
    out = run.outputs["nodes"]
    for n in out:
        assert n["urn"].endswith(f"aws:ec2/instance:Instance::stale-{n['pool']}-{n['index']}"), n["urn"]
        assert n[stale.WANTED] == {k: n[k] for k in ("image", "instanceType", "bootDigest", "rootVolumeGb")}, n
    first = [n["name"] for n in out if n.get("firstServer")]
    assert first == [next(n["name"] for n in out if "etcd" in n["roles"])]
    assert stale.from_outputs(out) == [] and _notes(run) == []


def test_a_new_image_makes_the_pool_stale_and_changes_no_running_instance(base):
    engine = _engine(base, shared=True)
    cfg, first = base
    after = engine.up(rot.with_image(cfg, ("agents",)))
    agents = [n["name"] for n in first.outputs["nodes"] if n["pool"] == "agents"]
    notes = _notes(after)
    assert len(notes) == 2 and all(any(m.startswith(f"stale: {a} (agents-") for m in notes) for a in agents), notes
    assert all(f"image {first.outputs['nodes'][0]['image']} → {rot.NEW_IMAGE}" in m and "rotate" in m for m in notes)
    found = stale.from_outputs(engine.outputs()["nodes"])
    assert sorted(s.name for s in found) == sorted(agents)
    old = {r.urn: r for r in first.of_type(INSTANCE)}
    for r in after.of_type(INSTANCE):  # what the engine compares: inputs minus ignore_changes
        kept = {k: v for k, v in r.inputs.items() if k not in r.ignore_changes}
        assert kept == {k: v for k, v in old[r.urn].inputs.items() if k not in r.ignore_changes}, r.urn
    # The offline plan says so too (offline/report/plan_report.py summary).
    summary = plan_report.summary(after)
    assert sorted(summary["stale"]) == sorted(s.line() for s in found)
    assert "Stale nodes (they keep running as they booted" in plan_report.render(summary)


def test_a_targeted_replacement_takes_what_is_wanted(base):
    engine = _engine(base, shared=True)
    cfg, _ = base
    engine.up(rot.with_image(cfg, ("agents",)))
    target = next(n for n in engine.outputs()["nodes"] if n["pool"] == "agents" and n["index"] == 0)
    engine.replace([target["urn"]])
    now = {n["name"]: n for n in engine.outputs()["nodes"]}
    assert now[target["name"]]["image"] == rot.NEW_IMAGE and now[target["name"]]["instanceId"] != target["instanceId"]
    assert [s.name for s in stale.from_outputs(list(now.values()))] == [
        n for n, v in now.items() if v["pool"] == "agents" and n != target["name"]]


def test_an_edited_boot_script_makes_every_node_stale(base, monkeypatch):
    from rke_aws.node import scripts

    monkeypatch.setattr(scripts, "_RKE2_SH", scripts._RKE2_SH + "\n# a new step\n")
    engine = _engine(base)
    after = engine.up()
    assert len(_notes(after)) == 5 and all("boot configuration (user data digest)" in m for m in _notes(after))


def test_a_patch_upgrade_makes_no_node_stale(base):
    """INSTALL_VERSION reaches running nodes through the upgrade Plans, not through a new node."""
    cfg, first = base
    minor = versions.RKE2_VERSION.split(".")[1]
    earlier = [r for r in versions.RKE2_RELEASES if r.split(".")[1] == minor and r < versions.RKE2_VERSION]
    if not earlier:
        pytest.skip("no earlier patch release of the default minor is known")
    old = dict(cfg, **{"rke-aws:kubernetesVersion": earlier[-1]})
    engine = HarnessEngine(old, "stale")
    after = engine.up(dict(cfg, **{"rke-aws:kubernetesVersion": versions.RKE2_VERSION}))
    assert after.outputs["kubernetesVersion"] == versions.RKE2_VERSION
    assert _notes(after) == [] and stale.from_outputs(engine.outputs()["nodes"]) == []


def test_a_new_type_is_stale_on_every_node_and_stops_none(base):
    cfg, _ = base
    engine = _engine(base)
    after = engine.up(_pools(cfg, server={"instanceType": "m6i.xlarge"}, agents={"instanceType": "m6i.xlarge"}))
    assert all("instanceType" in r.ignore_changes for r in after.of_type(INSTANCE))
    assert len([m for m in _notes(after) if "instance type m6i.large → m6i.xlarge" in m]) == 5


def test_a_smaller_root_volume_is_kept_until_rotation_a_larger_one_grows_in_place(base):
    """EC2 API Reference, ModifyVolume: the new size must be at least the existing one."""
    cfg, _ = base
    engine = _engine(base)
    grown = engine.up(_pools(cfg, agents={"rootVolumeGb": 80}))
    assert _notes(grown) == [] and not any(nodes.ROOT_VOLUME_SIZE in r.ignore_changes for r in grown.of_type(INSTANCE))
    shrunk = engine.up(_pools(cfg, agents={"rootVolumeGb": 40}))
    kept = [r.name for r in shrunk.of_type(INSTANCE) if nodes.ROOT_VOLUME_SIZE in r.ignore_changes]
    assert sorted(kept) == ["stale-agents-0", "stale-agents-1"]
    assert all("root volume 80 GiB → 40 GiB" in m for m in _notes(shrunk)) and len(_notes(shrunk)) == 2
