"""`rke-aws <command> [...]`: the offline tools, and the tools for a real account with the stack files read here.

    rke-aws plan <stack> [--json]                     what a stack would create, against an emulated account
    rke-aws diff [--base REF] [...]                   per-resource diff of every stack against a git ref
    rke-aws doctor <stack> [--emulated] [...]         check an AWS account for what the CCM needs
    rke-aws kubeconfig <stack> [...]                  the cluster's admin kubeconfig (README "The kubeconfig")
    rke-aws rotate <stack> [--dry-run] [...]          replace stale nodes one at a time (README "Patching nodes by rotation")
    rke-aws snapshots [--check] [stack ...]           rewrite (or compare) tests/snapshots/<stack>.json
    rke-aws schema [--write]                          check / regenerate what comes from the config model

`python3 -m offline.tasks <command>` runs these inside the project's virtualenv.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from rke_aws_offline.engine import harness


def _plan(argv: list[str]) -> int:
    from rke_aws_offline.report import plan_report

    return plan_report.main(argv)


def _diff(argv: list[str]) -> int:
    from rke_aws_offline.report import diff

    return diff.main(argv)


def _snapshots(argv: list[str]) -> int:
    from rke_aws_offline import snapshots

    return snapshots.main(argv)


def _schema(argv: list[str]) -> int:
    from rke_aws_offline import schema

    return schema.main(argv)


# ---- doctor: the checks are rke_aws.ops.doctor's; the stack, its outputs and the account come from here ----

def _pulumi_outputs(stack: str) -> dict:
    proc = subprocess.run(["pulumi", "stack", "output", "--json", "--stack", stack], cwd=harness.ROOT,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"`pulumi stack output --json --stack {stack}` failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def doctor(argv: list[str] | None = None) -> int:
    from rke_aws.ops import doctor as doctor_checks

    ap = argparse.ArgumentParser(prog="rke-aws doctor", description=doctor_checks.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack", choices=harness.stack_names())
    ap.add_argument("--emulated", action="store_true", help="build the stack in an emulated account (moto) and check that")
    ap.add_argument("--outputs", help="JSON file of the stack's outputs (`pulumi stack output --json`)")
    ap.add_argument("--profile", help="AWS profile for a real account")
    ap.add_argument("--region", help="default: the stack's region output, else its aws:region")
    args = ap.parse_args(argv)
    title = f"doctor {args.stack}"

    if args.emulated:
        from rke_aws_offline.engine import emulated_account

        try:
            run, account = emulated_account.build_stack(args.stack)
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
            outputs = _pulumi_outputs(args.stack)
        else:
            print("no Pulumi CLI: pass --outputs FILE (from `pulumi stack output --json`), or --emulated", file=sys.stderr)
            return 2
        exp = doctor_checks.Expectations.from_outputs(outputs, args.stack)
    except (OSError, ValueError, RuntimeError) as err:
        print(f"{args.stack}: {err}", file=sys.stderr)
        return 2
    region = args.region or outputs.get("region") or harness.stack_config(args.stack).get("aws:region")
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

def kubeconfig(argv: list[str] | None = None, session: Any = None) -> int:
    from pathlib import Path

    from rke_aws.ops import kubeconfig as kube
    from rke_aws.settings import config as cfgmod
    from rke_aws_offline import schema

    ap = argparse.ArgumentParser(prog="rke-aws kubeconfig", description=kube.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack")
    ap.add_argument("--output", help="RKE2: the file to write (default kubeconfig-<stack>.yaml)")
    ap.add_argument("--from", dest="source", default=kube.RKE_KUBECONFIG,
                    help=f"RKE1: the kubeconfig `rke up` wrote (default {kube.RKE_KUBECONFIG})")
    ap.add_argument("--profile", help="RKE2: the AWS profile to read the parameter with")
    args = ap.parse_args(argv)
    try:
        cfg = kube.stack_settings(args.stack, harness.stack_config(args.stack))
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
            kube.store_in_stack(args.stack, text, harness.ROOT)
            # The CLI rewrote the stack file without its comments: give editors their schema line back.
            stack_file = schema.STACKS_DIR / f"Pulumi.{args.stack}.yaml"
            if stack_file.exists():
                schema.restore_schema_line(stack_file)
            print(f"stored {source} as the encrypted kubeconfig of stack {args.stack}; `pulumi up` installs the CCM")
    except cfgmod.ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (kube.KubeconfigError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


# ---- rotate: the rotation is rke_aws.ops.rotate's; the project directory is this checkout ----------------

def rotate(argv: list[str] | None = None) -> int:
    from rke_aws.ops import rotate as rotation

    ap = argparse.ArgumentParser(prog="rke-aws rotate", description=rotation.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack")
    ap.add_argument("--kubeconfig", help="admin kubeconfig (default: the stack's `kubeconfig`, else "
                                         "kubeconfig-<stack>.yaml from `make kubeconfig`)")
    ap.add_argument("--dry-run", action="store_true", help="show the stale nodes and the order; change nothing")
    args = ap.parse_args(argv)
    return rotation.command(args.stack, args.kubeconfig, args.dry_run, work_dir=harness.ROOT)


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "plan": _plan, "diff": _diff, "doctor": doctor, "kubeconfig": kubeconfig, "rotate": rotate,
    "snapshots": _snapshots, "schema": _schema,
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
