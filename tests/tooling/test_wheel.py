"""The distribution builds offline into a wheel that installs into a fresh virtual environment, where
`import rke_aws` is the wheel's copy (not this checkout's editable install) with its version, package data
and the `rke-aws` command; the tools for a real account import from it alone; and a program of a user's own, with
two clusters and a configuration namespace of its own, plans there. Dependencies come from this venv (a .pth
line), so nothing is downloaded (tests/support/package.py)."""

from __future__ import annotations

import json
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.support import docs, package
from tests.support.pending import needs_user_project

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return package.wheel(tmp_path_factory)


@pytest.fixture(scope="module")
def venv_bin(wheel, tmp_path_factory) -> Path:
    return package.fresh_venv(wheel, tmp_path_factory.mktemp("venv") / "venv")


def test_the_wheel_holds_both_packages_their_data_and_the_command(wheel):
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert wheel.name == f"rke_aws-{version}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"rke_aws/__init__.py", "rke_aws/py.typed", "rke_aws/node/scripts/rke2.sh", "rke_aws/ops/doctor.py",
            "rke_aws_offline/cli.py", "rke_aws_offline/engine/harness.py"} <= names
    assert not [n for n in names if n.startswith(("components/", "offline/", "tests/", "bench/", "examples/",
                                                   "docs/"))]
    entry_points = zipfile.ZipFile(wheel).read(f"rke_aws-{version}.dist-info/entry_points.txt").decode()
    assert "rke-aws = rke_aws_offline.cli:main" in entry_points


def test_the_wheel_installs_into_a_fresh_venv(venv_bin, tmp_path):
    probe = ("import importlib.resources, rke_aws, rke_aws_offline.cli; "
             "print(rke_aws.__version__); print(rke_aws.__file__); "
             "print(importlib.resources.files('rke_aws.node').joinpath('scripts', 'rke2.sh').is_file())")
    out = package.run(str(venv_bin / "python"), "-c", probe, cwd=tmp_path).stdout.split("\n")
    assert out[0] == rke_aws_version() and out[2] == "True", out
    assert Path(out[1]).is_relative_to(venv_bin.parent), f"rke_aws imported from {out[1]}, not the wheel"
    assert (venv_bin / "rke-aws").exists()


def test_the_tools_for_a_real_account_import_from_the_wheel_alone(venv_bin, tmp_path):
    """rke_aws.ops (doctor, kubeconfig) imports neither the offline tooling nor moto nor this repository's tests:
    in the fresh environment, with `tests` not importable and the offline package and moto made unimportable,
    they import and `rke-aws doctor --help` works."""
    probe = ("import sys\n"
             "class Block:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name.split('.')[0] in ('tests', 'moto', 'rke_aws_offline', 'components', 'offline'):\n"
             "            raise ImportError(f'{name} imported by the tools for a real account')\n"
             "sys.meta_path.insert(0, Block())\n"
             "import rke_aws.ops.doctor, rke_aws.ops.kubeconfig\n"
             "print('ok')\n")
    assert package.run(str(venv_bin / "python"), "-c", probe, cwd=tmp_path).stdout.strip() == "ok"


@needs_user_project
def test_the_command_runs_outside_this_repository(venv_bin, tmp_path):
    """`rke-aws doctor --help` from the wheel, in a directory that is no checkout of this repository."""
    proc = subprocess.run([str(venv_bin / "rke-aws"), "doctor", "--help"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env=package.user_env(venv_bin))
    assert proc.returncode == 0 and "doctor" in proc.stdout, proc.stderr[-2000:]


TWO_CLUSTERS_PROJECT = "platform-team"


@needs_user_project
def test_a_two_cluster_program_with_its_own_namespace_plans_from_the_wheel(venv_bin, tmp_path):
    """Issue 34: "a test installs the package into a fresh virtual environment from the built wheel and plans a
    two-cluster program with its own config namespace under the mocks". The program is the docs' example
    (docs/getting-started.md), in a project of its own; its namespace `platform` is the program's, rke-aws reads
    none of it."""
    (block,) = [b for b in docs.program_blocks() if "for colour" in b.text]
    project = tmp_path / TWO_CLUSTERS_PROJECT
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text(f"name: {TWO_CLUSTERS_PROJECT}\nruntime:\n  name: python\n"
                                         "stackConfigDir: stacks\n")
    (project / "__main__.py").write_text(block.text)
    (project / "stacks" / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n  platform:team: payments\n")
    proc = subprocess.run([str(venv_bin / "rke-aws"), "plan", "dev", "--json"], cwd=project,
                          env=package.user_env(venv_bin), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    plan = json.loads(proc.stdout)
    names = sorted(r["name"] for r in plan["resources"] if r["type"] == "Instance")
    assert names == [f"payments-{c}-{p}" for c in ("blue", "green") for p in ("agents-0", "agents-1", "server-0")]
    assert {"payments-blue", "payments-green"} <= set(plan["outputs"])


def rke_aws_version() -> str:
    import rke_aws

    return rke_aws.__version__
