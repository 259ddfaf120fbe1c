"""rke-aws: plan, review and operate RKE/RKE2 clusters on AWS from a Pulumi project.

    rke-aws plan <stack> [--full] [--json]           what a stack would create, evaluated in an emulated AWS account
    rke-aws diff [--base REF] [--format markdown]    what the working tree changes against a git ref, per stack
    rke-aws doctor <stack> [--emulated] [...]        check an AWS account for what the cloud provider needs
    rke-aws kubeconfig <stack> [...]                 the cluster's admin kubeconfig (mode 0600)
    rke-aws rotate <stack> [--dry-run] [...]         replace stale nodes one at a time (docs/operations/rotate.md)
    rke-aws images <stack> [--arch amd64|arm64]      the commands that copy the stack's images into its registry mirror
    rke-aws snapshots [--check] [stack ...]          (this repository) rewrite or compare tests/snapshots/<stack>.json
    rke-aws schema [--write]                         (this repository) regenerate what comes from the config model

Run in a Pulumi project's directory, or give it: `rke-aws -C <dir> plan dev`. The project is the nearest
Pulumi.yaml at or above it: its `name` is the configuration namespace, `stackConfigDir` holds the stack files
(Pulumi.<stack>.yaml), `main` the program. `plan` and `diff` need no credentials and no network; `doctor`,
`kubeconfig` and `rotate` read the real account (AWS_PROFILE / --profile). `rke-aws <command> --help` for each command's options.
In this repository `python3 -m offline.tasks <command>` runs the same inside the project's virtualenv.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rke_aws_offline.report.project import Project, ProjectError


@contextlib.contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """Python's cyclic garbage collector off for one plan: its passes walk the hundreds of thousands of objects
    the provider SDKs and moto create at import, 12% of the plan's CPU, to free about 1 MB (peak RSS of
    `plan rke2-dev` 187 MB with it, 189 MB without; /usr/bin/time). Reference counting frees the rest as usual.
    Afterwards the objects the plan leaves (the SDKs' modules and classes, moto's tables: they live as long as the
    process) go to the permanent generation (gc.freeze) before the collector is back: re-enabled over them, its
    first pass (and in a process that exits normally, the one at exit) would scan them all. Median CPU of
    `plan rke2-dev`, 6 interleaved runs each on a loaded 2-core machine: neither this nor _end_process 3.78 s,
    this alone 2.65 s, _end_process alone 2.60 s, both 2.47 s. An in-process caller gets the collector back for
    what it allocates next; gc.unfreeze() would hand it those objects too."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.freeze()
            gc.enable()


def _plan(argv: list[str], project: Project | None = None) -> int:
    with _without_cyclic_gc():
        from rke_aws_offline.report import plan_report

        return plan_report.main(argv, project)


def _diff(argv: list[str], project: Project | None = None) -> int:
    from rke_aws_offline.report import diff

    return diff.main(argv, project)


def _snapshots(argv: list[str], project: Project | None = None) -> int:
    from rke_aws_offline import snapshots

    return snapshots.main(argv)


def _schema(argv: list[str], project: Project | None = None) -> int:
    from rke_aws_offline import schema

    return schema.main(argv)


# ---- doctor: the checks are rke_aws.ops.doctor's; the stack, its outputs and the account come from here ----

def _pulumi_outputs(stack: str, cwd: Path) -> dict:
    proc = subprocess.run(["pulumi", "stack", "output", "--json", "--stack", stack], cwd=cwd,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"`pulumi stack output --json --stack {stack}` failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def doctor(argv: list[str] | None = None, project: Project | None = None) -> int:
    from rke_aws.ops import doctor as doctor_checks

    project = project or Project.find()
    ap = argparse.ArgumentParser(prog="rke-aws doctor", description=doctor_checks.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack", choices=project.stack_names())
    ap.add_argument("--emulated", action="store_true", help="build the stack in an emulated account (moto) and check that")
    ap.add_argument("--outputs", help="JSON file of the stack's outputs (`pulumi stack output --json`)")
    ap.add_argument("--profile", help="AWS profile for a real account")
    ap.add_argument("--region", help="default: the stack's region output, else its aws:region")
    args = ap.parse_args(argv)
    title = f"doctor {args.stack}"

    if args.emulated:
        from rke_aws_offline.engine import emulated_account

        try:
            config = project.stack_config(args.stack)[0]
            run, account = emulated_account.build(config, args.stack, main=project.main,
                                                  project=project.namespace_of(args.stack))
        except Exception as err:  # noqa: BLE001
            print(f"{args.stack}: could not build the stack in the emulated account: {err}", file=sys.stderr)
            return 2
        try:
            results = doctor_checks.check_account(doctor_checks.Clients.from_session(account),
                                                  doctor_checks.Expectations.from_outputs(run.outputs, args.stack))
        finally:
            account.stop()
        print(doctor_checks.report(results, title + " (emulated account)"))
        return 1 if doctor_checks.failed(results) else 0

    import boto3

    try:
        if args.outputs:
            with open(args.outputs, encoding="utf-8") as f:
                outputs = json.load(f)
        elif shutil.which("pulumi"):
            outputs = _pulumi_outputs(args.stack, project.root)
        else:
            print("no Pulumi CLI: pass --outputs FILE (from `pulumi stack output --json`), or --emulated", file=sys.stderr)
            return 2
        exp = doctor_checks.Expectations.from_outputs(outputs, args.stack)
    except (OSError, ValueError, RuntimeError) as err:
        print(f"{args.stack}: {err}", file=sys.stderr)
        return 2
    region = args.region or outputs.get("region") or project.stack_config(args.stack)[0].get("aws:region")
    session = boto3.Session(profile_name=args.profile, region_name=region)
    if session.get_credentials() is None:
        print("no AWS credentials found (set AWS_PROFILE or pass --profile), or use --emulated", file=sys.stderr)
        return 2
    import os

    results = (doctor_checks.check_account(session, exp)
               + doctor_checks.check_rancher(exp, os.environ.get("RANCHER_TOKEN") or None))
    print(doctor_checks.report(results, f"{title} ({region})"))
    return 1 if doctor_checks.failed(results) else 0


# ---- kubeconfig: reading and storing are rke_aws.ops.kubeconfig's; the stack file is found here ----------

def kubeconfig(argv: list[str] | None = None, session: Any = None, project: Project | None = None) -> int:
    from rke_aws.diagnostics import ConfigError
    from rke_aws.ops import kubeconfig as kube
    from rke_aws_offline import schema

    ap = argparse.ArgumentParser(prog="rke-aws kubeconfig", description=kube.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack")
    ap.add_argument("--output", help="RKE2: the file to write (default kubeconfig-<stack>.yaml)")
    ap.add_argument("--from", dest="source", default=kube.RKE_KUBECONFIG,
                    help=f"RKE1: the kubeconfig `rke up` wrote (default {kube.RKE_KUBECONFIG})")
    ap.add_argument("--profile", help="RKE2: the AWS profile to read the parameter with")
    args = ap.parse_args(argv)
    project = project or Project.find()
    try:
        cfg = kube.stack_settings(args.stack, project.stack_config(args.stack)[0])
        if cfg.distribution == "rke2":
            if session is None:
                import boto3

                session = boto3.Session(profile_name=args.profile) if args.profile else boto3.Session()
            text = kube.read_published(cfg.cluster_id, cfg.region, session)
            out = Path(args.output or f"kubeconfig-{args.stack}.yaml")
            kube.write_private(out, text)
            print(f"wrote {out} (mode 0600); its server is the control-plane endpoint, which resolves inside the "
                  f"cluster's VPC (controlPlaneEndpoint)")
        else:
            source = Path(args.source)
            if not source.is_file():
                raise kube.KubeconfigError(f"{source} not found: `rke up --config cluster.yml` writes it beside cluster.yml")
            text = source.read_text()
            kube.check_kubeconfig(text, str(source))
            kube.store_in_stack(args.stack, text, project.root)
            # The CLI rewrote the stack file without its comments: give editors their schema line back.
            stack_file = schema.STACKS_DIR / f"Pulumi.{args.stack}.yaml"
            if project.is_this_checkout and stack_file.exists():
                schema.restore_schema_line(stack_file)
            print(f"stored {source} as the encrypted kubeconfig of stack {args.stack}; `pulumi up` installs the CCM")
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (kube.KubeconfigError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


# ---- rotate: the rotation is rke_aws.ops.rotate's; the project directory is the stack's ----------------

def rotate(argv: list[str] | None = None, project: Project | None = None) -> int:
    from rke_aws.ops import rotate as rotation

    ap = argparse.ArgumentParser(prog="rke-aws rotate", description=rotation.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack")
    ap.add_argument("--kubeconfig", help="admin kubeconfig (default: the stack's `kubeconfig`, else "
                                         "kubeconfig-<stack>.yaml from `rke-aws kubeconfig`)")
    ap.add_argument("--dry-run", action="store_true", help="show the stale nodes and the order; change nothing")
    args = ap.parse_args(argv)
    project = project or Project.find()
    return rotation.command(args.stack, args.kubeconfig, args.dry_run, work_dir=project.root)


# ---- images: the list and the commands are rke_aws.node.mirror_images'; the stack file is read here -------

def images(argv: list[str] | None = None, project: Project | None = None) -> int:
    from rke_aws.diagnostics import ConfigError
    from rke_aws.node import mirror_images
    from rke_aws.node.airgap_artifacts import RKE2_ARCH
    from rke_aws.settings.resolve import from_flat

    ap = argparse.ArgumentParser(prog="rke-aws images", description=mirror_images.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack")
    ap.add_argument("--arch", action="append", choices=sorted(RKE2_ARCH.values()),
                    help="RKE2's image lists of this architecture only (repeatable; default: amd64 and arm64, "
                         "which covers every pool; the other images are copied with all their platforms)")
    args = ap.parse_args(argv)
    project = project or Project.find()
    by_name = {v: k for k, v in RKE2_ARCH.items()}
    try:
        flat, secret_keys = project.stack_config(args.stack)
        cfg = from_flat(flat, project=project.namespace_of(args.stack), stack=args.stack, secret_keys=secret_keys)
    except (ConfigError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    plan = mirror_images.images_for(cfg, [by_name[a] for a in args.arch] if args.arch else mirror_images.ARCHITECTURES)
    if not plan.images and not plan.lists and not plan.unknown:
        print(f"{args.stack}: no registry.mirrors, so no image is pulled through a mirror", file=sys.stderr)
        return 0
    print(mirror_images.copy_commands(plan))
    return 0


COMMANDS: dict[str, Callable[..., int]] = {
    "plan": _plan, "diff": _diff, "doctor": doctor, "kubeconfig": kubeconfig, "rotate": rotate,
    "snapshots": _snapshots, "schema": _schema, "images": images,
}


class _NoProject:
    """Outside a project, for a command's --help: it names no stacks."""

    def stack_names(self) -> list[str]:
        return []


def _end_process(code: int) -> None:
    """End this process now, as interpreter exit would, minus its teardown: the exit handlers run (atexit) and the
    output flushed, but no collector pass at exit and no deallocation of every module and object one by one (after
    a plan: the SDKs' classes, moto's tables; the numbers are in _without_cyclic_gc's doc)."""
    import atexit
    import os

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: interpreter exit says so with status 120
            code = code or 120
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """The `rke-aws` command. Without `argv` it reads the process's own command line (the `rke-aws` script,
    `python -m rke_aws_offline.cli`) and a plan then ends the process (_end_process); with `argv` (an in-process
    caller) every command returns its exit code."""
    process = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    where: Path | None = None
    while argv[:1] and argv[0] in ("-C", "--cwd") or (argv and argv[0].startswith("--cwd=")):
        if argv[0].startswith("--cwd="):
            where, argv = Path(argv[0].split("=", 1)[1]), argv[1:]
        elif len(argv) < 2:
            print("rke-aws: -C needs a directory", file=sys.stderr)
            return 2
        else:
            where, argv = Path(argv[1]), argv[2:]
    if argv[:1] in (["--version"], ["-V"]):
        from rke_aws import __version__

        print(f"rke-aws {__version__}")
        return 0
    if not argv or argv[0] not in COMMANDS:
        print(__doc__, file=sys.stderr if argv[:1] not in (["-h"], ["--help"]) else sys.stdout)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        project = Project.find(where) if where is not None or argv[0] not in ("snapshots", "schema") else None
    except ProjectError as err:
        if {"-h", "--help"} & set(argv[1:]):  # a command's help needs no project: argparse answers before it is read
            return COMMANDS[argv[0]](argv[1:], project=_NoProject())  # type: ignore[arg-type]
        print(f"rke-aws: {err}", file=sys.stderr)
        return 2
    code = COMMANDS[argv[0]](argv[1:], project=project)
    if process and argv[0] == "plan":
        _end_process(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
