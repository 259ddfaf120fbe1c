"""`python -m bench.commands [--write] [--no-suite] [--cpu [--base DIR]]`: the two commands users wait for.

Default: wall time, run as users run them (through the task runner, in a fresh interpreter): the offline plan of a
stack (`python3 -m offline.tasks plan rke2-dev`, best and median of 3) and the whole suite
(`python3 -m offline.tasks test`, once).

`--cpu`: the plan's CPU seconds (user + sys of the process, from wait4) as a ratio to a bare `import pulumi_aws`
measured in the same run, interleaved, medians (issue 33.7 sets the target as that ratio). `--base DIR`: also the
plan of another checkout of the repository (e.g. `git archive main | tar -x -C DIR`), run with DIR's packages
first on the path, so before and after come from one run. The floor row (`--no-floor`: without it) is what any
program costs through the offline engine: the typed baseline of the same stack (its resources with the SDKs' own
classes, no rke_aws; bench/floor.py) in a fresh process, through this checkout's (and DIR's) harness and account.

`--write` puts the table into bench/RESULTS.md (its own section, which `python -m bench --write` keeps)."""

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

from bench import arguments

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS.md"
PLAN_STACK = "rke2-dev"
PLAN_TARGET_S = 5.0
# Issue 33.7: the whole suite (ruff and mypy included) at most 60 s wall on 2 cores (an earlier issue's was 110 s).
SUITE_TARGET_S = 60.0
BEGIN, END = "<!-- commands -->", "<!-- /commands -->"
CPU_BEGIN, CPU_END = "<!-- plan-cpu -->", "<!-- /plan-cpu -->"
# Issue 33.7: the plan at most 1.5 s of CPU and at most 6x a bare `import pulumi_aws` measured in the same run.
PLAN_CPU_TARGET_S = 1.5
PLAN_RATIO_TARGET = 6.0
IMPORT = [sys.executable, "-c", "import pulumi_aws"]


def timed(cmd: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, proc.returncode


def cpu_timed(cmd: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `cmd`: user + sys of that process and its children (os.wait4)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {proc.returncode}) in {cwd}")
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


def base_env(base: Path) -> dict[str, str]:
    """An environment whose Python imports rke_aws and rke_aws_offline from the checkout `base` (links in
    base/.bench-path to its components/ and offline/, ahead of this venv's editable install)."""
    links = base / ".bench-path"
    links.mkdir(exist_ok=True)
    for name, target in (("rke_aws", "components"), ("rke_aws_offline", "offline")):
        link = links / name
        if not link.exists():
            link.symlink_to((base / target).resolve(), target_is_directory=True)
    return {**os.environ, "PYTHONPATH": str(links)}


def floor_spec(path: Path) -> Path:
    """Pickle (config, stack, typed-baseline entries) of PLAN_STACK for bench/floor.py (one program run, here)."""
    import pickle

    from bench import baseline, runner
    from rke_aws_offline.engine import harness
    from rke_aws_offline.engine.emulated_account import MotoMocks

    config = harness.stack_config(PLAN_STACK)
    mocks = MotoMocks(config.get("aws:region", "us-west-2"))
    run = runner.run_main(runner.PROGRAM_MAIN, config, PLAN_STACK, mocks)
    path.write_bytes(pickle.dumps((config, PLAN_STACK, baseline.derive(run, runner.ids_by_type_and_name(mocks)))))
    return path


def plan_cpu(runs: int, base: Path | None, floor: bool = True) -> str:
    """The plan's CPU against a bare `import pulumi_aws`, interleaved runs, as a RESULTS.md section."""
    import tempfile

    plan = [sys.executable, "-m", "rke_aws_offline.cli", "plan", PLAN_STACK]
    series: dict[str, list[tuple[float, float]]] = {"import": [], "plan": []}
    cases: list[tuple[str, list[str], Path, dict[str, str] | None]] = [("import", IMPORT, ROOT, None), ("plan", plan, ROOT, None)]
    if base is not None:
        series["base"] = []
        cases.append(("base", plan, base, base_env(base)))
    if floor:
        spec = floor_spec(Path(tempfile.mkdtemp(prefix="rke-aws-floor-")) / "spec.pickle")
        for key, checkout, env in [("floor", ROOT, None)] + ([("base floor", base, base_env(base))] if base else []):
            series[key] = []
            cases.append((key, [sys.executable, str(ROOT / "bench" / "floor.py"), str(checkout), str(spec)], checkout, env))
    for checkout in {ROOT, base or ROOT}:
        # The checkouts' own bytecode, as `python3 -m offline.tasks` writes it (offline/tasks.py compile_sources):
        # the import does not where PYTHONDONTWRITEBYTECODE is set, and pulumi_aws's is compiled by uv.
        subprocess.run([sys.executable, "-m", "compileall", "-qq", "components", "offline"], cwd=checkout,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    for _, cmd, cwd, env in cases:  # warm-up: the OS's file cache
        cpu_timed(cmd, cwd, env)
    for _ in range(runs):
        for key, cmd, cwd, env in cases:
            series[key].append(cpu_timed(cmd, cwd, env))
    if floor:
        import shutil

        shutil.rmtree(spec.parent, ignore_errors=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in series.items()}
    imp = med["import"][1]

    def row(label: str, key: str, target: str) -> str:
        wall, cpu = med[key]
        lo, hi = min(c for _, c in series[key]), max(c for _, c in series[key])
        return f"| {label} | {cpu:.2f} ({lo:.2f}–{hi:.2f}) | {wall:.2f} | **{cpu / imp:.1f}×** | {target} |"

    rows = [row("`python -c \"import pulumi_aws\"`", "import", "1×")]
    if base is not None:
        rows.append(row(f"`rke-aws plan {PLAN_STACK}`, before (`--base`)", "base", ""))
    verdict = "met" if med["plan"][1] <= PLAN_CPU_TARGET_S and med["plan"][1] / imp <= PLAN_RATIO_TARGET else "NOT met"
    rows.append(row(f"`rke-aws plan {PLAN_STACK}`, this checkout", "plan",
                    f"≤ {PLAN_CPU_TARGET_S} s and ≤ {PLAN_RATIO_TARGET:.0f}×: {verdict}"))
    if "base floor" in series:
        rows.append(row("floor: its typed baseline through the engine, before (`--base`)", "base floor", ""))
    if "floor" in series:
        rows.append(row("floor: its typed baseline through the engine (bench/floor.py), this checkout", "floor", ""))
    return "\n".join([
        CPU_BEGIN,
        "## The plan's CPU, as a ratio to a bare `import pulumi_aws` (issue 33.7)",
        "",
        f"`python -m bench.commands --cpu{' --base <checkout>' if base else ''} --no-suite --write`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, `nproc` {os.cpu_count()}, CPython "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the end; medians of {runs} interleaved "
        "runs (range); CPU = user + sys seconds of the process (wait4), each in a fresh interpreter, no task runner.",
        "",
        "| command | CPU s | wall s | CPU ÷ import | target |",
        "|---|---:|---:|---:|---|",
        *rows,
        CPU_END,
    ])


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


def with_section(text: str, block: str, begin: str = BEGIN, end: str = END) -> str:
    """`text` with its section between `begin` and `end` replaced by `block` (or `block` appended)."""
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if pattern.search(text):
        return pattern.sub(lambda _: block, text)
    return text.rstrip("\n") + "\n\n" + block + "\n"


def kept_section(old: str, begin: str = BEGIN, end: str = END) -> str | None:
    match = re.search(re.escape(begin) + ".*?" + re.escape(end), old, re.S)
    return match.group(0) if match else None


def keep_sections(old: str, new: str) -> str:
    """`new` (bench/run.py's report) with the sections this module measured apart carried over from `old`."""
    for begin, end in ((BEGIN, END), (CPU_BEGIN, CPU_END)):
        kept = kept_section(old, begin, end)
        if kept:
            new = with_section(new, kept, begin, end)
    return new


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.commands", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="also write the table into bench/RESULTS.md")
    ap.add_argument("--no-suite", action="store_true", help="time the plan only")
    ap.add_argument("--cpu", action="store_true", help="the plan's CPU as a ratio to a bare `import pulumi_aws`")
    ap.add_argument("--base", type=Path, help="with --cpu: also the plan of this other checkout (before)")
    ap.add_argument("--runs", type=arguments.count(1), default=5, help="with --cpu: interleaved runs of each command")
    ap.add_argument("--no-floor", action="store_true", help="with --cpu: without the typed baseline's row")
    args = ap.parse_args(argv)
    if args.cpu:
        block = plan_cpu(args.runs, args.base, floor=not args.no_floor)
        print(block)
        if args.write:
            RESULTS.write_text(with_section(RESULTS.read_text(), block, CPU_BEGIN, CPU_END))
        if args.no_suite:
            return 0
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
