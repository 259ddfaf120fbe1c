"""Existing stacks keep their resources: every URN a stack registered before the components moved under
RkeCluster (tests/data/urns-0.1.json, written from the program of commit 30c578b, main before the layers) is taken over by exactly
one resource of today's program, by its URN or through its aliases as the engine resolves them
(offline/engine/records.match_old_urns: pulumi/pulumi pkg/resource/deploy/step_generator.go generateAliases,
inheritedChildAlias). A URN nobody takes over would be deleted, and its successor created. A change that
removes or renames a resource on purpose regenerates the data: python -m rke_aws_offline.urns_before <ref>.

Each stack runs from the stack file the data were recorded with (stored beside them), not from stacks/: a
user's own stack (a kubeconfig set in phase two, other pools) registers other resources than the old program
did for the recorded file, and would fail the check for no fault of the program (issue 32, item 9)."""

# split: this module mixes levels (issue 33 §7.2); the alias-matching tests on hand-made registrations ->
# tests/unit.

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness, records
from tests.support.runs import run_cached

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" / "urns-0.1.json").read_text())
BEFORE = DATA["urns"]
# Every URN each stack registered with main before the package layout of issue 33 (written by
# `python -m rke_aws_offline.urns_before bfc26ec --out tests/data/urns-0.2.json`): the refactor keeps them all, by URN.
DATA_02 = json.loads((Path(__file__).resolve().parents[1] / "data" / "urns-0.2.json").read_text())


def run_recorded(stack: str, data: dict = DATA) -> harness.ProgramRun:
    """Today's program on the stack file the old URNs were recorded with, in this repository's project."""
    config, _ = stackfile.load_stack_text(data["stacks"][stack], f"Pulumi.{stack}.yaml", project=harness.PROJECT)
    ccm = json.loads(config.get("rke-aws:ccm", "{}"))
    if config.get("rke-aws:distribution") == "rke2" and "install" not in ccm:
        # Running under those releases, an RKE2 stack without ccm.install ran a Helm release (their default); its
        # state records it and keeps it (ClusterState.running_ccm_install; tests/program/day2/
        # test_day2_ccm_default.py), where a NEW stack of that file now gets manifest mode (issue 34.8).
        config["rke-aws:ccm"] = json.dumps({**ccm, "install": "helm"})
    return run_cached(config, stack, project=harness.PROJECT)


@pytest.mark.parametrize("stack", sorted(DATA_02["urns"]))
def test_every_urn_of_0_2_is_registered_unchanged(stack):
    """The package layout, the renamed imports and the planner's steps move code, not resources: every
    stack registers exactly the URNs main did before them (no alias needed, none lost, none added)."""
    urns = [r.urn for r in run_recorded(stack, DATA_02).resources]
    assert len(urns) == len(set(urns))
    before = set(DATA_02["urns"][stack])
    assert sorted(set(urns) - before) == [] and sorted(before - set(urns)) == []


@pytest.mark.parametrize("stack", sorted(BEFORE))
def test_every_old_urn_is_taken_over(stack):
    run = run_recorded(stack)
    old = set(BEFORE[stack])
    match = records.match_old_urns(run.resources, old)
    lost = sorted(old - set(match.values()))
    assert not lost, f"{stack}: these resources would be deleted and created again:\n" + "\n".join(lost)
    # What is new are components (RkeCluster, and the two that took over parts of JoinToken) and the
    # resources of features added since (a fixture stack's new pool); none replaces an old resource.
    created = [r for r in run.resources if r.urn not in match]
    stale = {u.rpartition("::")[2] for u in old}
    assert not [r.urn for r in created if r.custom and r.name in stale], created


def test_every_recorded_stack_has_its_file():
    assert set(DATA["stacks"]) == set(BEFORE)


def test_without_the_aliases_the_urns_are_lost():
    """The check can fail: the same registrations without their aliases take over nothing moved."""
    run = run_recorded("rke2-dev")
    bare = [dataclasses.replace(r, aliases=[]) for r in run.resources]
    match = records.match_old_urns(bare, set(BEFORE["rke2-dev"]))
    assert not match


def _reg(urn: str, parent: str = "", aliases=()) -> harness.Registration:
    return harness.Registration(urn=urn, type=urn.split("::")[2].rpartition("$")[2], name=urn.rpartition("::")[2],
                                inputs={}, state={}, parent=parent, dependencies=[], protect=False,
                                delete_before_replace=False, ignore_changes=[], provider="", custom=True,
                                aliases=list(aliases))


def test_children_inherit_the_parents_alias_with_its_old_name():
    """inheritedChildAlias: the old parent's type chain, and its old name where the child's name starts
    with the new one (step_generator.go)."""
    head = "urn:pulumi:dev::rke-aws::"
    old = {head + "my:C::app", head + "my:C$aws:s3/bucket:Bucket::app-logs", head + "my:C$aws:s3/bucket:Bucket::data"}
    parent = _reg(head + "my:Top$my:C::newapp", aliases=[head + "my:C::app"])
    kids = [_reg(head + "my:Top$my:C$aws:s3/bucket:Bucket::newapp-logs", parent.urn),
            _reg(head + "my:Top$my:C$aws:s3/bucket:Bucket::data", parent.urn)]
    match = records.match_old_urns([parent, *kids], old)
    assert sorted(match.values()) == sorted(old)
    # An old URN is claimed once: a second claim stops the engine ("Duplicate resource alias").
    twin = _reg(head + "my:D::x", aliases=[head + "my:C::app"])
    with pytest.raises(ValueError, match="Duplicate resource alias"):
        records.match_old_urns([parent, twin], old)
