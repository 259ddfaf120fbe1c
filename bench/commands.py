"""`python -m bench.commands [--write] [--no-suite]`: wall time of the two commands users wait for, run as
users run them (through the task runner, in a fresh interpreter): the offline plan of a stack
(`python3 -m offline.tasks plan rke2-dev`, best and median of 3) and the whole suite
(`python3 -m offline.tasks test`, once). `--write` puts the table into bench/RESULTS.md (its own section,
which `python -m bench --write` keeps)."""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS.md"
PLAN_STACK = "rke2-dev"
PLAN_TARGET_S = 5.0
SUITE_TARGET_S = 110.0
BEGIN, END = "<!-- commands -->", "<!-- /commands -->"


def timed(cmd: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, proc.returncode


def section(plan: list[float], suite: float | None, suite_rc: int | None) -> str:
    rows = [f"| `python3 -m offline.tasks plan {PLAN_STACK}` | {min(plan):.2f} (median {statistics.median(plan):.2f}, "
            f"{len(plan)} runs) | {PLAN_TARGET_S:.0f} | {'met' if min(plan) <= PLAN_TARGET_S else 'NOT met'} |"]
    if suite is not None:
        rows.append(f"| `python3 -m offline.tasks test` | {suite:.0f} (1 run{', FAILED' if suite_rc else ''}) | "
                    f"{SUITE_TARGET_S:.0f} | {'met' if suite <= SUITE_TARGET_S else 'NOT met'} |")
    return "\n".join([
        BEGIN,
        "## The commands users wait for",
        "",
        f"`python -m bench.commands --write`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, `nproc` "
        f"{os.cpu_count()}, CPython {platform.python_version()}; wall seconds, each command in a fresh process "
        "through the task runner (uv sync included).",
        "",
        "| command | seconds | target | |",
        "|---|---:|---:|---|",
        *rows,
        END,
    ])


def with_section(text: str, block: str) -> str:
    """`text` with its commands section replaced by `block` (or `block` appended)."""
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if pattern.search(text):
        return pattern.sub(lambda _: block, text)
    return text.rstrip("\n") + "\n\n" + block + "\n"


def kept_section(old: str) -> str | None:
    match = re.search(re.escape(BEGIN) + ".*?" + re.escape(END), old, re.S)
    return match.group(0) if match else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.commands", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="also write the table into bench/RESULTS.md")
    ap.add_argument("--no-suite", action="store_true", help="time the plan only")
    args = ap.parse_args(argv)
    runner = [sys.executable, "-m", "offline.tasks"]
    timed([*runner, "plan", PLAN_STACK])  # warm-up: uv sync writing bytecode, the OS's file cache
    plan = []
    for _ in range(3):
        seconds, rc = timed([*runner, "plan", PLAN_STACK])
        if rc:
            print(f"plan {PLAN_STACK} failed (exit {rc})", file=sys.stderr)
            return rc
        plan.append(seconds)
    suite, suite_rc = (None, None) if args.no_suite else timed([*runner, "test"])
    block = section(plan, suite, suite_rc)
    print(block)
    if args.write:
        RESULTS.write_text(with_section(RESULTS.read_text(), block))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
