"""Golden plans: tests/snapshots/<stack>.json is `python3 -m offline.tasks plan <stack> --json` of each stack,
against the emulated account.

`python3 -m offline.tasks snapshots [stack ...]` (`rke-aws snapshots`) rewrites them; `--check` only compares and
prints a unified diff per stack that changed. The tests compare through syrupy (tests/support/golden.py: the same
files, the same text), so `pytest tests/emulated/test_snapshots.py --snapshot-update` writes what this writes. The
files hold no timestamps; keys are sorted and IDs come from the seeded emulator, so a diff is a real change.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from rke_aws_offline.engine import harness
from rke_aws_offline.report import plan_report

SNAPSHOT_DIR = harness.ROOT / "tests" / "snapshots"


def snapshot_path(stack: str) -> Path:
    return SNAPSHOT_DIR / f"{stack}.json"


def render_snapshot(stack: str) -> str:
    return plan_report.to_json(plan_report.plan_stack(stack))


def diff(stack: str, current: str) -> str:
    """Unified diff from the stored snapshot to `current` ('' when equal)."""
    path = snapshot_path(stack)
    stored = path.read_text() if path.exists() else ""
    if stored == current:
        return ""
    rel = path.relative_to(harness.ROOT)
    return "".join(difflib.unified_diff(stored.splitlines(keepends=True), current.splitlines(keepends=True),
                                        fromfile=f"{rel} (stored)", tofile=f"{rel} (this plan)"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("stacks", nargs="*", help="default: every stack in stacks/")
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 when a snapshot differs")
    args = ap.parse_args(argv)
    stacks = args.stacks or harness.stack_names()
    unknown = set(stacks) - set(harness.stack_names())
    if unknown:
        print(f"unknown stack(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    changed = 0
    SNAPSHOT_DIR.mkdir(parents=True, exist_ok=True)
    for stack in stacks:
        current = render_snapshot(stack)
        d = diff(stack, current)
        if not d:
            print(f"{stack}: unchanged")
            continue
        changed += 1
        if args.check:
            print(d)
        else:
            snapshot_path(stack).write_text(current)
            print(f"{stack}: written {snapshot_path(stack).relative_to(harness.ROOT)}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
