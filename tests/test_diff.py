"""`make diff`: a pull request's changes per stack and resource, with replacements called out.

A scratch git repository holds this program; its committed state is the base, edits to its
working tree the head, as on a pull-request branch.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from offline import diff, harness

STACK = "rke2-prod"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    for name in ("__main__.py", "Pulumi.yaml"):
        shutil.copy(harness.ROOT / name, root / name)
    for name in ("components", "stacks"):
        shutil.copytree(harness.ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(root)]
    subprocess.run(git[:-2] + ["init", "-q", str(root)], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "base"], check=True)
    return root


def edit(repo: Path, change) -> None:
    path = repo / "stacks" / f"Pulumi.{STACK}.yaml"
    original = path.read_text()
    doc = yaml.safe_load(original)
    change(doc["config"])
    path.write_text(yaml.safe_dump(doc))
    return original


def run_diff(repo: Path, change) -> diff.StackDiff:
    path = repo / "stacks" / f"Pulumi.{STACK}.yaml"
    original = path.read_text()
    try:
        edit(repo, change)
        (result,) = diff.diff_stacks("HEAD", repo, [STACK], include_fixtures=False)
    finally:
        path.write_text(original)
    return result


def by_action(d: diff.StackDiff, action: str) -> set[str]:
    return {c.name for c in d.changes if c.action == action}


def test_adding_a_zone_replaces_nothing(repo):
    d = run_diff(repo, lambda c: c["rke-aws:network"].update(availabilityZones=4))
    assert d.refused is None, d.refused
    assert by_action(d, "replace") == set() and by_action(d, "delete") == set(), diff.render_text([d])
    assert {"rke2-prod-private-3", "rke2-prod-public-3"} <= by_action(d, "add"), diff.render_text([d])
    assert not any(c.type == diff.INSTANCE for c in d.changes if c.action != "unchanged"), diff.render_text([d])


def test_changing_a_subnet_replaces_exactly_the_nodes_in_it(repo):
    def move_private_1(c):
        c["rke-aws:network"].update(publicSubnetCidrs=["10.40.128.0/20", "10.40.144.0/20", "10.40.160.0/20"],
                                    privateSubnetCidrs=["10.40.0.0/20", "10.40.112.0/20", "10.40.32.0/20"])
    d = run_diff(repo, move_private_1)
    assert d.refused is None, d.refused
    replaced = {c.node for c in d.changes if c.action == "replace" and c.type == diff.INSTANCE}
    assert {c.name for c in d.changes if c.action == "replace" and c.type == diff.INSTANCE} == {
        "rke2-prod-servers-1", "rke2-prod-agents-1"}, diff.render_text([d])
    assert "rke2-prod-private-1" in by_action(d, "replace")
    (server,) = [c.node for c in d.changes if c.action == "replace" and c.name == "rke2-prod-servers-1"]
    old_name = server.split(" -> ")[0]
    assert old_name in {n["name"] for n in harness.run_stack(STACK).outputs["nodes"]}, server
    assert d.etcd == [f"{old_name} (replaced)"], (d.etcd, replaced)
    text = diff.render_text([d])
    assert "replace" in text and "etcd members deleted or replaced" in text


def test_a_refused_change_is_the_result(repo):
    d = run_diff(repo, lambda c: c["rke-aws:nodePools"][0].update(count=1))
    assert d.refused and "2 of the 3 etcd members" in d.refused
    assert "would stop" in diff.render_markdown([d], "HEAD")


def test_markdown_lists_every_change(repo):
    d = run_diff(repo, lambda c: c["rke-aws:nodePools"][1].update(instanceType="m6i.4xlarge"))
    md = diff.render_markdown([d], "origin/main")
    updated = by_action(d, "update")
    assert {"rke2-prod-agents-0", "rke2-prod-agents-1", "rke2-prod-agents-2"} <= updated, diff.render_text([d])
    for name in updated:
        assert f"`Instance {name}`" in md
    assert "changed instanceType" in md and md.startswith("### Offline plan diff against `origin/main`")


def test_replace_rules_cover_every_type_the_program_registers(stack_run):
    types = {r.type for r in stack_run.resources if r.custom}
    missing = types - set(diff.REPLACE_ON) - {"kubernetes:upgrade.cattle.io/v1:Plan"}
    assert not missing, f"no replacement rule for {missing}"


def test_dump_is_plain_json(tmp_path):
    out = tmp_path / "run.json"
    diff.dump(harness.ROOT, harness.stack_file("rke2-dev"), None, out)
    data = json.loads(out.read_text())
    assert data["resources"] and "nodes" in data["outputs"]


def test_checkout_works_without_tarfile_filters(tmp_path, monkeypatch):
    """Debian 12's Python 3.11.2 predates tarfile's extraction filters (3.11.4); the fallback
    extracts the same files and still refuses members that would land outside the target."""
    import io
    import tarfile

    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    out = diff.checkout("HEAD", diff.ROOT, tmp_path / "tree")
    assert (out / "__main__.py").read_text() == (diff.ROOT / "__main__.py").read_text()
    evil = io.BytesIO()
    with tarfile.open(fileobj=evil, mode="w") as tar:
        info = tarfile.TarInfo("../outside")
        tar.addfile(info, io.BytesIO(b""))
    monkeypatch.setattr(diff.subprocess, "run", lambda *a, **k: type("P", (), {"stdout": evil.getvalue()})())
    with pytest.raises(RuntimeError, match="refusing archive member '../outside'"):
        diff.checkout("HEAD", diff.ROOT, tmp_path / "evil")
    assert not (tmp_path / "outside").exists()
