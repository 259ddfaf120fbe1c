"""examples/rke2-cluster: the project a user gets (`pulumi new <repository>/tree/<tag>/examples/rke2-cluster`).

It holds what a user's project needs and nothing of this repository's tests, golden plans or tooling; the
project `pulumi new` makes of it (tests/support/template.py), copied to a temporary directory with no access to
this repository, plans and diffs with the package's command from the wheel (tests/support/package.py).
"""

from __future__ import annotations

import ast
import re
import subprocess
import tomllib

import pytest
import yaml

from tests.support import docs, package, template
from tests.support.pending import needs_user_project

ROOT = docs.ROOT
EXAMPLE = template.EXAMPLE
WORKFLOWS = {"preview.yml", "pr-comment.yml", "deploy.yml", "drift.yml"}
FILES = {"Pulumi.yaml", "__main__.py", "pyproject.toml", "README.md", ".gitignore", "stacks/Pulumi.dev.yaml",
         ".github/pulumi-version", *(f".github/workflows/{w}" for w in WORKFLOWS)}


def test_the_example_holds_a_users_project_and_nothing_else():
    files = {str(p) for p in template.template_files(EXAMPLE)}
    assert files == FILES, f"unexpected {sorted(files - FILES)}, missing {sorted(FILES - files)}"


def test_its_program_is_three_lines_of_the_public_api():
    tree = ast.parse((EXAMPLE / "__main__.py").read_text())
    body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    assert len(body) == 3, ast.dump(tree)[:500]
    (imp,) = [n for n in body if isinstance(n, ast.ImportFrom)]
    assert imp.module == "rke_aws" and {a.name for a in imp.names} == {"RkeCluster", "RkeClusterArgs"}
    assert "flat_outputs" not in (EXAMPLE / "__main__.py").read_text(), "a new project keeps its state nested"


def test_it_pins_this_release_of_the_package_with_its_tools_for_development():
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())
    pin = f"@v{docs.version()}"
    (dep,) = project["project"]["dependencies"]
    assert re.fullmatch(rf"rke-aws @ git\+https://github\.com/[\w-]+/rke-aws{re.escape(pin)}", dep), dep
    (dev,) = project["dependency-groups"]["dev"]
    assert dev == dep.replace("rke-aws @", "rke-aws[tools] @"), dev
    assert project["tool"]["uv"]["package"] is False


def test_its_cli_pin_is_this_repositorys():
    assert (EXAMPLE / ".github" / "pulumi-version").read_text() == (ROOT / ".github" / "pulumi-version").read_text()


def test_its_pulumi_yaml_is_a_uv_python_project_reading_stacks_from_stacks():
    doc = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())
    assert doc["name"] == "${PROJECT}" and doc["description"] == "${DESCRIPTION}"
    assert doc["runtime"] == {"name": "python", "options": {"toolchain": "uv"}}
    assert doc["stackConfigDir"] == "stacks" and "template" in doc
    assert "config" not in doc, "the program declares no keys: its namespace is the user's project"


def test_its_stack_file_is_in_the_projects_namespace():
    doc = yaml.safe_load((EXAMPLE / "stacks" / "Pulumi.dev.yaml").read_text())
    assert {k.split(":")[0] for k in doc["config"]} == {"aws", "${PROJECT}"}


# ---- the project, planned and diffed where the user works --------------------------------------------------

@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The project `pulumi new` makes (named platform-eu, stack dev), a git repository with one commit, its
    `.venv` a fresh environment with the wheel."""
    made = template.make_project(tmp_path_factory.mktemp("user") / "platform-eu", stack="dev")
    assert not (made / "tests").exists() and not (made / "components").exists()
    env = package.user_env(made)  # PATH fixed below
    for args in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-qm", "new project"]):
        package.run(*args, cwd=made, env=env)
    bindir = package.fresh_venv(package.wheel(tmp_path_factory), made / ".venv")
    return made, package.user_env(bindir)


def _rke_aws(project, *args: str) -> subprocess.CompletedProcess:
    made, env = project
    return subprocess.run(["rke-aws", *args], cwd=made, env=env, capture_output=True, text=True, timeout=900)


@needs_user_project
def test_the_project_plans_with_the_packages_command(project):
    proc = _rke_aws(project, "plan", "dev")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "ip-10-40-" in proc.stdout and ".ec2.internal" in proc.stdout, proc.stdout[:3000]


@needs_user_project
def test_the_project_diffs_a_planted_instance_type_change_with_old_and_new(project):
    made, _ = project
    stack_file = made / "stacks" / "Pulumi.dev.yaml"
    before = stack_file.read_text()
    doc = yaml.safe_load(before)  # the stack file as `pulumi new` left it (its answers merged: block style)
    (pools_key,) = [k for k in doc["config"] if k.endswith(":nodePools")]
    (agents,) = [p for p in doc["config"][pools_key] if p["name"] == "agents"]
    assert agents["instanceType"] == "m6i.large"
    agents["instanceType"] = "m6i.xlarge"
    stack_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert stack_file.read_text() != before
    try:
        proc = _rke_aws(project, "diff", "--base", "HEAD")
    finally:
        stack_file.write_text(before)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert re.search(r"m6i\.large\s*(→|->)\s*m6i\.xlarge", proc.stdout), proc.stdout[-3000:]


def test_an_unknown_stack_is_named_in_the_users_project(project):
    """The stack is looked up in the project's own stackConfigDir before any program runs (report/project.py)."""
    proc = _rke_aws(project, "plan", "dve")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "dve" in out and "Traceback" not in proc.stderr, out[-2000:]
    assert "dev" in out.replace("dve", ""), out[-2000:]
