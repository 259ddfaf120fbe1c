"""The README: short, its quickstart run exactly as written, its figures the bench's.

The quickstart as a user follows it: `mkdir <dir> && cd <dir>`, `pulumi new <template URL> --stack <stack>` (the
project `pulumi new` makes from examples/rke2-cluster, tests/support/template.py, named after the directory),
`stacks/Pulumi.<stack>.yaml` made to say what the README shows, the project's environment active (here: a fresh
virtual environment holding the wheel, tests/support/package.py), then each `rke-aws plan` line of the README
run by bash as written, in the project, with nothing of this repository on the path.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import yaml

from rke_aws.settings import stackfile
from tests.support import docs, package, template
from tests.support.pending import needs_user_project
from tests.support.runs import run_cached

ROOT = docs.ROOT
MAX_LINES = 200  # issue 34: "README under ~200 lines"


def test_the_readme_is_short():
    lines = docs.README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; what does not fit goes to docs/"


def _quickstart_project() -> tuple[str, str, str]:
    """(directory = project name, stack, template URL) from the quickstart's shell lines."""
    new, _, _ = docs.quickstart()
    (mkdir,) = re.findall(r"^mkdir (\S+) && cd \1$", new.text, re.M)
    (line,) = [line for line in new.text.splitlines() if line.startswith("pulumi new ")]
    words = shlex.split(line)
    return mkdir, words[words.index("--stack") + 1], words[2]


def test_the_quickstart_makes_the_project_from_the_example_of_this_release():
    name, stack, url = _quickstart_project()
    m = re.fullmatch(r"https://github\.com/[\w-]+/rke-aws/tree/(v[\d.]+)/(.+)", url)
    assert m, url
    assert m.group(1) == f"v{docs.version()}", f"the quickstart makes a project of {m.group(1)}, not this release"
    assert (ROOT / m.group(2) / "Pulumi.yaml").exists() and "template" in yaml.safe_load(
        (ROOT / m.group(2) / "Pulumi.yaml").read_text()), f"{m.group(2)} is not a template folder"
    _, block, _ = docs.quickstart()
    assert block.stack == stack, f"the stack file shown is {block.stack}'s, the project's stack is {stack}"
    keys = docs.stack_config(block)
    assert {k.split(":")[0] for k in keys if not k.startswith("aws:")} == {name}, \
        f"the stack file's keys are not in the project's namespace ({name}, the directory's name)"


def test_the_quickstart_stack_file_is_planned():
    """Under the mocks with this repository's stack program, in the project's namespace (the rest of the quickstart
    needs the package's command: below)."""
    name, stack, _ = _quickstart_project()
    _, block, _ = docs.quickstart()
    config, secret_keys = stackfile.load_stack_text(block.text, f"Pulumi.{stack}.yaml", project=name)
    assert secret_keys == stackfile.secret_keys_of(config), secret_keys  # what run_cached marks secret
    run = run_cached(config, stack, name)  # shared with test_docs.py, which plans the same stack file
    servers = [r for r in run.of_type("aws:ec2/instance:Instance") if "-server-" in r.name]
    assert len(servers) == 3, "the quickstart promises the default layout: three servers and two workers"


@needs_user_project
def test_the_quickstart_runs_as_written(tmp_path_factory):
    name, stack, url = _quickstart_project()
    _, block, commands = docs.quickstart()
    plans = [c for c in commands if c.startswith("rke-aws plan")]
    assert plans, commands
    project = template.make_project(tmp_path_factory.mktemp("quickstart") / name, stack=stack, url=url)
    (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(block.text)
    bindir = package.fresh_venv(package.wheel(tmp_path_factory), project / ".venv")
    for command in plans:
        proc = subprocess.run(["bash", "-e", "-c", command], cwd=project, env=package.user_env(bindir),
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"`{command}`:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        assert "eu-west-1.compute.internal" in proc.stdout, proc.stdout[:3000]  # the node table, on the first screen


# ---- the bench's figures ---------------------------------------------------------------------------------

BENCH = re.compile(r"<!-- bench:commands[^>]*-->\n(.*?)<!-- /bench:commands -->", re.S)


def test_the_performance_table_is_the_benchs():
    """The README shows bench/RESULTS.md's "commands users wait for" table as the bench wrote it (one run: the
    plan's CPU and the suite's wall, with their ratios to a bare `import pulumi_aws` where the bench gives them).
    After `python -m bench.commands --write`, copy its table rows here."""
    results = (ROOT / "bench" / "RESULTS.md").read_text()
    section = results[results.index("<!-- commands -->"):results.index("<!-- /commands -->")]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    m = BENCH.search(docs.README.read_text())
    assert m, "README.md: the performance table (<!-- bench:commands --> ... <!-- /bench:commands -->) is missing"
    assert [line for line in m.group(1).splitlines() if line.startswith("|")] == rows


def test_the_readme_says_what_the_first_pulumi_up_takes():
    """Issue 34.8: the quickstart says how long the first `pulumi up` takes and what it waits for: the bench's
    deploy-graph estimate (bench/RESULTS.md "critical path by create time") rounded to minutes."""
    results = (ROOT / "bench" / "RESULTS.md").read_text()
    seconds = max(int(s) for s in re.findall(r"critical path by create time \((\d+) s\)", results))
    minutes = round(seconds / 60)
    text = docs.README.read_text()
    assert f"about {minutes} minutes" in text and "NAT gateway" in text, (seconds, minutes)


def test_the_readme_names_the_two_commands_of_this_repository():
    text = docs.README.read_text()
    for command in ("python3 -m offline.tasks setup", "python3 -m offline.tasks test --fast"):
        assert command in text, command
    assert Path(ROOT / ".ci" / "run").read_text().rstrip().endswith("exec python3 -m offline.tasks test")
