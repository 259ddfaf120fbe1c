"""The distribution as a user gets it: the wheel, built offline from a copy of the sources, and a fresh virtual
environment with the wheel installed, where `import rke_aws` is the wheel's copy (never this checkout's editable
install) and the `rke-aws` command is the wheel's. The dependencies (pulumi, pydantic, moto, ...) come from this
checkout's venv through a `.pth` line, so nothing is downloaded. One wheel per test run, shared by the xdist
workers (tests/support/once.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.once import once_per_run, workers_dir

ROOT = Path(__file__).resolve().parents[2]
# What the build reads: pyproject.toml names the README and the licence; the two package folders.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "components", "offline")


def uv() -> str:
    """uv as `python3 -m offline.tasks` runs it: $UV (uv run sets it), PATH, or the private copy in .tools/."""
    for candidate in (os.environ.get("UV"), shutil.which("uv"), str(ROOT / ".tools" / "bin" / "uv")):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.skip("uv not found (python3 -m offline.tasks setup installs it)")


def run(*args: str, timeout: int = 300, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, args))}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory every xdist worker of this run sees (pytest removes it with the run's others)."""
    return workers_dir(tmp_path_factory) or tmp_path_factory.getbasetemp()


def _build(out: Path, work: Path) -> Path:
    src = work / "src"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable}
    run(uv(), "build", "--wheel", "--offline", "--quiet", "-o", str(out), str(src), env=env)
    (built,) = out.glob("rke_aws-*.whl")
    return built


def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel (setuptools from uv's cache: `uv sync` built the editable install with it), built once per run."""
    shared = shared_dir(tmp_path_factory)
    out = shared / "rke-aws-wheel"

    def build() -> Path:
        out.mkdir(exist_ok=True)
        return _build(out, tmp_path_factory.mktemp("wheel-src"))

    return once_per_run(shared, "rke-aws-wheel", build)


def fresh_venv(wheel_path: Path, venv: Path) -> Path:
    """A new virtual environment at `venv` holding the wheel; returns its bin directory."""
    run(sys.executable, "-m", "venv", "--without-pip", str(venv))
    python = venv / "bin" / "python"
    run(uv(), "pip", "install", "--offline", "--no-deps", "--quiet", "--python", str(python), str(wheel_path),
        env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"})
    # The dependencies from this checkout's venv; its editable finder's .pth is not read from there (a .pth
    # line adds a path, it does not process that directory's .pth files).
    site = Path(run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    (site / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def user_env(bindir: Path) -> dict[str, str]:
    """The environment of a user's shell with the project's venv active: no trace of this checkout (no
    PYTHONPATH, no test settings), the venv's bin first on PATH."""
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "UV_CACHE_DIR", "XDG_CACHE_HOME")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["PATH"] = f"{bindir}:/usr/local/bin:/usr/bin:/bin"
    env["VIRTUAL_ENV"] = str(bindir.parent)
    env.update({"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@example.com"})
    return env
