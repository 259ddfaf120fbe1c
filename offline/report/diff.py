"""`rke-aws diff --base <git ref>` (`make diff BASE=<ref>`): what a pull request changes, per stack and resource, offline.

An estimate from the program's inputs: the real `pulumi preview --diff`, run where cloud credentials exist, is
authoritative (it sees the live state). Per stack, in an emulated AWS account (the one the plan uses, so the
diff knows what the plan knows: every instance type the region offers):

  base     the base ref's program with the base's stack file, as a new stack;
  base′    the same again with base's outputs as its last outputs: the steady state after the base was deployed
           (what a new stack registers differs from what a running one does: the RKE2 init marker, `pending`);
  head     the working tree's program with its stack file and base′'s outputs as its last outputs.

base′ and head are compared resource by resource (offline/report/compare.py), inputs before secrets are masked (a
changed secret is a change; its value is never shown), and judged as the providers would (offline/engine/
resource_types.py, each rule with the upstream file it comes from):

  + add       a resource the base did not have
  - delete    a resource the working tree no longer registers
  ~ update    changed inputs that the provider updates in place (an EC2 instance's type or user data:
              by stopping it, called out)
  +- replace  a changed input that forces a new resource, an input that takes the ID of a resource
              being replaced, or a resource whose provider is replaced
  ? unknown   may replace: a type without rules here, or a rule that needs what only AWS knows, or
              a component the provider builds itself (kubernetes:yaml/v2:ConfigFile) whose inputs changed

Each changed input is shown old → new. Inputs a resource ignores (ignore_changes) never count; when they change,
the diff says what that means for the running resource (user data is read at first boot: replace the node).
The head program's warnings and notes come first under its stack; if it refuses the change (the quorum or
version guard, a bad config), that refusal is the stack's result, as in `pulumi preview`; so is a second claim on
one old resource through an alias (the engine's "Duplicate resource alias"). Each checkout's programs run in one
fresh interpreter, importing that checkout's own package (`rke_aws`, or `components` before the package layout).

    rke-aws diff --base origin/main [--format markdown] [--preview-url URL] [--all] [--quiet] [stack ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from rke_aws_offline.engine.resource_types import (  # noqa: F401 - the rules, and the names tests read through this module
    RULE_SOURCES,
    RULES,
    TYPES,
    TypeRules,
    Verdict,
    _active_cluster,
    instance_architectures,
)
from rke_aws_offline.report.compare import (  # noqa: F401 - the comparison's names, as tests and tools read them here
    ACTIONS,
    INSTANCE,
    Change,
    DuplicateAlias,
    StackDiff,
    compare,
    diffable,
    judge,
)
from rke_aws_offline.report.diff_text import LABEL, SYMBOL, render_markdown, render_text  # noqa: F401
from rke_aws_offline.report.progress import Progress
from rke_aws_offline.report.project import Project, ProjectError

ROOT = Path(__file__).resolve().parents[2]
PROGRESS = "@progress "  # a line of the evaluating interpreter's stdout naming the stack it starts


class GitError(Exception):
    """A git command failed; the message is git's own."""


class UnknownStack(Exception):
    """A stack named on the command line that neither side has."""


# ---- evaluating one checkout ---------------------------------------------------------------------

def stack_config(stack_file: Path, project: str | None = None) -> tuple[dict[str, str], list[str]]:
    """A stack file's config as the Pulumi CLI would hand it over (rke_aws.settings.stackfile.load_stack_text:
    secret only what is `secure:`), and the keys it marks secret. `project`: the configuration namespace
    (default: this repository's, per stack: harness.project_of).

    An encrypted value cannot be decrypted offline; it becomes the harness's placeholder plus a
    digest of its ciphertext, so re-encrypting a value (`pulumi config set --secret` with a new
    kubeconfig) changes the inputs it reaches and shows as "changed (secret)" without any text.
    The same ciphertext gives the same placeholder in both runs.
    """
    import hashlib

    from rke_aws.settings import stackfile
    from rke_aws_offline.engine import harness

    def placeholder(cipher: str) -> str:
        return f"{stackfile.SECURE_PLACEHOLDER} (ciphertext {hashlib.sha256(cipher.encode()).hexdigest()[:12]})"

    stack = stack_file.name[len("Pulumi."):-len(".yaml")]
    return stackfile.load_stack_text(stack_file.read_text(), stack_file.name, placeholder,
                                     project or harness.project_of(stack))


def result_of(run) -> dict:
    """A program run as plain JSON data (what `dump` writes and `compare` reads)."""
    return {
        "resources": [_jsonable(dataclasses.asdict(r)) for r in run.resources],
        "outputs": _jsonable(run.outputs),
        "secretOutputs": sorted(run.secret_outputs),
        "logs": [f"{level}: {message}" for level, message in run.logs],
    }


def _request(stack_file: Path, previous: dict | None, project: str | None = None, main: Path | None = None,
             again: bool = False) -> dict:
    """What one evaluation needs, read by this checkout: the stack file as the Pulumi CLI reads it (a
    plain-text kubeconfig is refused, a bad file is this stack's result) and the last outputs. `again`:
    evaluate a second time with the first run's outputs as the last outputs (base′)."""
    stack = stack_file.name[len("Pulumi."):-len(".yaml")]
    try:
        config, secret_keys = stack_config(stack_file, project)
    except Exception as err:  # noqa: BLE001 - a refusal is this stack's result
        return {"stack": stack, "refused": str(err)}
    request = {"stack": stack, "config": config, "secretKeys": secret_keys, "previous": previous, "again": again}
    if project:
        request["project"] = project
    if main:
        request["main"] = str(main)
    return request


def _run_once(root: Path, request: dict, previous: dict | None) -> dict:
    from rke_aws_offline.engine import emulated_account

    main = Path(request.get("main") or root / "__main__.py")
    program: dict[str, Any] = {"previous_outputs": previous, "main": main, "secret_keys": request["secretKeys"]}
    if request.get("project"):
        program["project"] = request["project"]
    try:
        run, account = emulated_account.build(request["config"], request["stack"], **program)
    except Exception as err:  # noqa: BLE001 - a refusal is this stack's result
        return {"refused": str(err)}
    account.stop()
    return json.loads(json.dumps(result_of(run), default=str))


def _evaluate_request(root: Path, request: dict) -> dict:
    """Run the program in `root` (in this process, in a fresh emulated account) on a `_request`; its
    registrations as plain JSON data; with `again`, {"base": first, "steady": second}."""
    if "refused" in request:
        return {"refused": request["refused"]}
    from rke_aws_offline.engine import harness

    # The checkout's own package before anything imports rke_aws (the emulated account reads its versions).
    harness.import_checkout(Path(request.get("main") or root / "__main__.py").resolve().parent)
    first = _run_once(root, request, request.get("previous"))
    if not request.get("again"):
        return first
    steady = _run_once(root, request, first["outputs"]) if "refused" not in first else first
    return {"base": first, "steady": steady}


def dump(root: Path, stack_file: Path, previous: dict | None, out: Path) -> None:
    """Run the program in `root` with `stack_file` (in this process) and write its registrations."""
    out.write_text(json.dumps(_evaluate_request(root, _request(stack_file, previous)), default=str))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        items = [_jsonable(v) for v in value]
        return sorted(items) if isinstance(value, set) else items
    if hasattr(value, "text") and isinstance(value.text, str):  # a StringAsset
        return value.text
    return value


def evaluate_all(root: Path, requests: list[dict], started=None) -> list[dict]:
    """The program of `root` on each request, in one fresh interpreter (so `root`'s own package is imported:
    rke_aws_offline.engine.harness.import_checkout); `started(i)` is called as it starts request i."""
    ready = [{"refused": r["refused"]} if "refused" in r else None for r in requests]
    todo = [r for r in requests if "refused" not in r]
    if not todo:
        return [r for r in ready if r is not None]
    with tempfile.TemporaryDirectory() as tmp:
        out, given = Path(tmp) / "runs.json", Path(tmp) / "requests.json"
        given.write_text(json.dumps(todo))
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(
            [sys.executable, "-m", "rke_aws_offline.report.diff", "--evaluate", str(root), str(given), str(out)],
            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        indices = [i for i, r in enumerate(ready) if r is None]
        assert proc.stdout is not None and proc.stderr is not None
        for line in proc.stdout:
            if line.startswith(PROGRESS) and started is not None:
                started(indices[int(line[len(PROGRESS):].strip())])
        stderr = proc.stderr.read()
        code = proc.wait(timeout=600)
        if code != 0 or not out.exists():
            raise RuntimeError(f"evaluating the program of {root} failed:\n{stderr[-4000:]}")
        results = json.loads(out.read_text())
    for i, result in zip(indices, results, strict=True):
        ready[i] = result
    return [r for r in ready if r is not None]


def evaluate(root: Path, stack_file: Path, previous: dict | None) -> dict:
    """One stack file evaluated by the program of `root` in a fresh interpreter (evaluate_all)."""
    return evaluate_all(root, [_request(stack_file, previous)])[0]


def _git(repo: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip() or f'exit {proc.returncode}'}")
    return proc.stdout


def checkout(ref: str, repo: Path, into: Path) -> Path:
    """The tree of `ref` (files only), extracted into `into`; a GitError with git's message when it fails."""
    archive = _git(repo, "archive", "--format=tar", ref)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 (Debian 12 ships 3.11.2)
            tar.extractall(into, filter="data")
        else:
            # What the "data" filter refuses: absolute paths, `..`, links (git archive makes none).
            for member in tar.getmembers():
                parts = Path(member.name).parts
                if member.name.startswith("/") or ".." in parts or member.islnk() or member.issym():
                    raise RuntimeError(f"{ref}: refusing archive member {member.name!r}")
            tar.extractall(into)
    return into


def git_root(path: Path) -> Path:
    return Path(_git(path, "rev-parse", "--show-toplevel").decode().strip()).resolve()


# ---- the command ----------------------------------------------------------------------------------

def _stack_files(dirs: list[Path]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for d in dirs:
        for p in sorted(d.glob("Pulumi.*.yaml")):
            found.setdefault(p.name[len("Pulumi."):-len(".yaml")], p)
    return found


def unknown_stack_message(stack: str, head: list[str], base: list[str], where: str) -> str:
    """`unknown stack 'rke2-dve' (neither the working tree nor the base has stacks/Pulumi.rke2-dve.yaml);
    stacks: …; did you mean rke2-dev?`"""
    from rke_aws.diagnostics import suggest

    names = sorted(set(head) | set(base))
    hint = suggest(stack, names)
    return (f"unknown stack {stack!r} (neither the working tree nor the base has {where}/Pulumi.{stack}.yaml); "
            f"stacks: {', '.join(names) or 'none'}" + (f"; did you mean {hint}?" if hint else ""))


def head_diagnostics(head: dict, base: dict | None) -> list[str]:
    """What the head program says to a reviewer: its warnings always; its notes when the base did not say them
    (a running stack repeats the same notes at every update: they are not news of this change)."""
    said = set((base or {}).get("logs") or [])
    return [m for m in head.get("logs") or [] if m.startswith(("warning:", "error:")) or m not in said]


def _steady(evaluated: dict | None) -> dict | None:
    """What the head is compared with: base′ (the base deployed, run again), else the base, else None."""
    if evaluated is None or "refused" in evaluated:
        return evaluated
    return evaluated["steady"] if "refused" not in evaluated["steady"] else evaluated["base"]


def diff_stacks(base_ref: str, repo: Path, stacks: list[str], include_fixtures: bool,
                progress: Progress | None = None, project: Project | None = None) -> list[StackDiff]:
    """Every named stack (default: the project's stacks, and those only the base has) diffed between
    `base_ref` and the working tree of `repo` (the git checkout holding the project)."""
    say = progress or Progress(quiet=True)
    project = project or (Project.load(repo) if (repo / "Pulumi.yaml").is_file() else Project.find())
    repo = repo.resolve()
    rel = project.root.relative_to(repo) if project.root.is_relative_to(repo) else Path(".")
    dirs = [project.stacks_dir] + (list(project.extra_dirs) if include_fixtures else [])
    head_files = _stack_files(dirs)
    with tempfile.TemporaryDirectory() as tmp:
        base_repo = checkout(base_ref, repo, Path(tmp) / "base")
        base_root = base_repo / rel
        base_files = _stack_files([base_root / d.relative_to(project.root) for d in dirs if d.is_relative_to(project.root)])
        if stacks:
            missing = [s for s in stacks if s not in head_files and s not in base_files]
            if missing:
                where = project.relative(project.stacks_dir)
                raise UnknownStack("; ".join(unknown_stack_message(s, list(head_files), list(base_files), where)
                                             for s in missing))
            names = list(stacks)
        else:
            from rke_aws_offline.engine.stacks import samples

            held = set(samples()) if project.is_this_checkout else set()
            names = sorted(n for n in set(head_files) | set(base_files) if n not in held)
        base_main = base_root / project.main.relative_to(project.root) if project.main.is_relative_to(project.root) \
            else base_root / "__main__.py"
        n = len(names)
        say(f"diff: base {base_ref}, {n} stack{'s' if n != 1 else ''}")
        with_base = [s for s in names if s in base_files and s in head_files]  # a removed stack runs nowhere
        base_requests = [_request(base_files[s], None, project.namespace_of(s), base_main, again=True) for s in with_base]
        base_results = dict(zip(with_base, evaluate_all(
            base_root, base_requests,
            lambda i: say(f"diff [{names.index(with_base[i]) + 1}/{n}] {with_base[i]}: the base ({base_ref})…")),
            strict=True))
        base_side = {s: _steady(base_results.get(s)) for s in names}
        with_head = [s for s in names if s in head_files]
        head_requests = [_request(head_files[s], (base_side[s] or {}).get("outputs") or None, project.namespace_of(s),
                                  project.main) for s in with_head]
        head_results = dict(zip(with_head, evaluate_all(
            project.root, head_requests,
            lambda i: say(f"diff [{names.index(with_head[i]) + 1}/{n}] {with_head[i]}: the working tree…")),
            strict=True))
    diffs = []
    for stack in names:
        if stack not in head_files:
            diffs.append(StackDiff(stack, note="the stack file was removed; its stack is not destroyed by a merge"))
            continue
        head = head_results[stack]
        d = compare(stack, base_side[stack] or {"resources": [], "outputs": {}}, head)
        d.diagnostics = head_diagnostics(head, base_side[stack])
        if base_side[stack] is None:
            d.note = "a new stack"
        diffs.append(d)
    say.done()
    return diffs


def main(argv: list[str] | None = None, project: Project | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--evaluate"]:  # evaluate_all(): this checkout's program on each request, in order
        root, given, out = Path(argv[1]).resolve(), Path(argv[2]), Path(argv[3])
        results = []
        for i, request in enumerate(json.loads(given.read_text())):
            print(f"{PROGRESS}{i}", flush=True)
            results.append(_evaluate_request(root, request))
        out.write_text(json.dumps(results, default=str))
        return 0
    if argv[:1] == ["--dump"]:  # one request, as dump() writes it
        root, given, out = argv[1:4]
        result = _evaluate_request(Path(root).resolve(), json.loads(Path(given).read_text()))
        Path(out).write_text(json.dumps(result, default=str))
        return 0
    ap = argparse.ArgumentParser(prog="rke-aws diff", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stacks", nargs="*", help="default: every stack of the project (its stack files)")
    ap.add_argument("--base", default="origin/main", help="git ref to compare against (default origin/main)")
    ap.add_argument("--repo", help="the git checkout whose working tree is the head (default: the project's)")
    ap.add_argument("--format", choices=("text", "markdown"), default="text")
    ap.add_argument("--all", action="store_true", help="this repository: also the test-only stacks in tests/stacks/")
    ap.add_argument("--preview-url", help="the workflow run where the real `pulumi preview --diff` ran (markdown links it)")
    ap.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    args = ap.parse_args(argv)
    say = Progress(quiet=args.quiet)
    try:
        project = project or Project.find(Path(args.repo) if args.repo else None)
        repo = Path(args.repo) if args.repo else git_root(project.root)
        diffs = diff_stacks(args.base, repo, args.stacks, args.all, say, project)
    except (GitError, UnknownStack, ProjectError) as err:
        say.done()
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(render_markdown(diffs, args.base, args.preview_url) if args.format == "markdown" else render_text(diffs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
