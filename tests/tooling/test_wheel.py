"""The distribution builds offline into a wheel that installs into a fresh virtual environment, where
`import rke_aws` is the wheel's copy (not this checkout's editable install) with its version, package data
and the `rke-aws` command. Dependencies come from this venv (a .pth line), so nothing is downloaded."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What the build reads: pyproject.toml names the README and the licence; the two package folders.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "components", "offline")


def _uv() -> str:
    """uv as `python3 -m offline.tasks` runs it: $UV (uv run sets it), PATH, or the private copy in .tools/."""
    for candidate in (os.environ.get("UV"), shutil.which("uv"), str(ROOT / ".tools" / "bin" / "uv")):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.skip("uv not found (python3 -m offline.tasks setup installs it)")


def _run(*args: str, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{' '.join(args)}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built offline (setuptools from uv's cache: `uv sync` built the editable install with it)
    from a copy of the sources, so the build leaves nothing in the checkout."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("dist")
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable}
    _run(_uv(), "build", "--wheel", "--offline", "--quiet", "-o", str(out), str(src), env=env)
    (built,) = out.glob("rke_aws-*.whl")
    return built


def test_the_wheel_holds_both_packages_their_data_and_the_command(wheel):
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert wheel.name == f"rke_aws-{version}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"rke_aws/__init__.py", "rke_aws/py.typed", "rke_aws/node/scripts/rke2.sh", "rke_aws/ops/doctor.py",
            "rke_aws_offline/cli.py", "rke_aws_offline/engine/harness.py"} <= names
    assert not [n for n in names if n.startswith(("components/", "offline/", "tests/", "bench/"))]
    entry_points = zipfile.ZipFile(wheel).read(f"rke_aws-{version}.dist-info/entry_points.txt").decode()
    assert "rke-aws = rke_aws_offline.cli:main" in entry_points


def test_the_wheel_installs_into_a_fresh_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", str(venv))
    python = venv / "bin" / "python"
    _run(_uv(), "pip", "install", "--offline", "--no-deps", "--quiet", "--python", str(python), str(wheel),
         env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"})
    # The dependencies (pulumi, pydantic, ...) from this venv; its editable finder's .pth is not read from there.
    site = Path(_run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    (site / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = ("import importlib.resources, rke_aws, rke_aws_offline.cli; "
             "print(rke_aws.__version__); print(rke_aws.__file__); "
             "print(importlib.resources.files('rke_aws.node').joinpath('scripts', 'rke2.sh').is_file())")
    out = _run(str(python), "-c", probe, cwd=tmp_path).stdout.split("\n")
    assert out[0] == rke_aws_version() and out[2] == "True", out
    assert Path(out[1]).is_relative_to(venv), f"rke_aws imported from {out[1]}, not the wheel"
    assert (venv / "bin" / "rke-aws").exists()


def rke_aws_version() -> str:
    import rke_aws

    return rke_aws.__version__
