"""The suite passes with whatever valid stack files a user keeps in stacks/ (guide: tests run anywhere
the repository is cloned). The experiment that found six tests assuming "no kubeconfig" (review of
issues 21-24, finding 1), and test_urns after them (issue 32, item 9), repeated: every stacks/ file copied
into a temporary directory with a `secure:` kubeconfig added (what `pulumi config set --secret
kubeconfig` writes, README phase two), then every test over stacks/ runs against the copy
(RKE_AWS_STACKS_DIR, offline/engine/stacks.py) in a subprocess.

Which tests go over stacks/ is not a list kept here: tests/conftest.py marks `reads_stacks` every test
parametrized with an environment's name (STACKS, stack_run), and a test reading one environment by name
carries the marker itself; the subprocess runs `-m reads_stacks`, in one process, over the modules this session's
collection found holding such a test and those it never collected (tests/support/stacks_read.py), so the rest of
the tree is not imported again. RKE_AWS_USER_STACKS_ALL=1 runs the whole
suite against the copy instead (CI's tests job does), all but the golden plans, which are the repository's
own stacks by definition.
"""

# split: this module mixes levels (issue 33 §7.2); the program run -> tests/program.

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness
from tests.support import shell, stacks_read

# A ciphertext as the CLI writes it (tests/stacks/Pulumi.rke-phase2.yaml has the same kind); offline it
# is a placeholder, secret because it was `secure:`.
# In the project's namespace (the project's name, components/settings/config.py NAMESPACE).
KUBECONFIG = f"{harness.project_name()}:kubeconfig"
SECURE_KUBECONFIG = "v1:dHJ5RmNxQ1RXaGx0M0ZqRzpBbm90aGVyIGZha2UgY2lwaGVydGV4dDsgaXRzIHBsYWludGV4dCBpcyBhIGt1YmVjb25maWcu"

# Set on a step that a step running the whole suite against the copy (RKE_AWS_USER_STACKS_ALL=1) follows in the same
# job (preview.yml): the `-m reads_stacks` subset would be run twice.
LATER = "RKE_AWS_USER_STACKS_LATER"
SENTINEL = "tests/tooling/test_user_stacks.py::test_pointed_at_the_copy_every_stack_read_has_a_kubeconfig"
# The golden plans are the repository's own stacks by definition: never run against the copy.
SNAPSHOTS = harness.ROOT / "tests" / "emulated" / "test_snapshots.py"


def with_kubeconfig(text: str) -> str:
    """A stack file's text with a `secure:` kubeconfig in its config map (comments and the rest kept):
    inserted as the map's first key, indented as its next line is."""
    if (yaml.safe_load(text) or {}).get("config", {}).get(KUBECONFIG) is not None:
        return text
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if re.fullmatch(r"config:\s*", line, re.ASCII))
    following = next((line for line in lines[at + 1:] if line.strip() and not line.lstrip().startswith("#")), "  x")
    indent = following[: len(following) - len(following.lstrip())] or "  "
    entry = f"{indent}{KUBECONFIG}:\n{indent}{indent}secure: {SECURE_KUBECONFIG}\n"
    return "".join(lines[: at + 1]) + entry + "".join(lines[at + 1:])


def user_stacks(into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    # The files' `$schema=../schema/...` line resolves beside the copy as it does beside stacks/.
    (into.parent / "schema").symlink_to(harness.ROOT / "schema", target_is_directory=True)
    for path in sorted(harness.STACKS_DIR.glob("Pulumi.*.yaml")):
        text = with_kubeconfig(path.read_text())
        assert yaml.safe_load(text)["config"][KUBECONFIG] is not None, path
        (into / path.name).write_text(text)
    return into


def test_the_copy_carries_a_secure_kubeconfig_and_nothing_else_changes(tmp_path):
    copy_dir = user_stacks(tmp_path / "stacks")
    originals = sorted(harness.STACKS_DIR.glob("Pulumi.*.yaml"))
    assert originals and [p.name for p in originals] == sorted(p.name for p in copy_dir.iterdir())
    for path in originals:
        before = yaml.safe_load(path.read_text())["config"]
        after = yaml.safe_load((copy_dir / path.name).read_text())["config"]
        assert after.pop(KUBECONFIG) == before.pop(KUBECONFIG, {"secure": SECURE_KUBECONFIG})
        assert after == before, path.name
        flat, secret_keys = stackfile.load_stack_text((copy_dir / path.name).read_text(), path.name)
        assert KUBECONFIG in secret_keys, path.name


@pytest.mark.skipif(bool(os.environ.get("RKE_AWS_STACKS_DIR")), reason="already running against other stacks")
@pytest.mark.skipif(bool(os.environ.get(LATER)) and not os.environ.get("RKE_AWS_USER_STACKS_ALL"),
                    reason=f"{LATER}: a later step runs the whole suite against the copy")
def test_the_tests_over_stacks_pass_when_every_stack_has_a_kubeconfig(tmp_path, tmp_path_factory, request):
    stacks = user_stacks(tmp_path / "stacks")
    # The boot scripts are the same bytes with a kubeconfig: what this run's shellcheck found clean is not checked
    # again (tests/support/shell.py; a script that differs, or has findings, is).
    env = {**os.environ, "RKE_AWS_STACKS_DIR": str(stacks), shell.CLEAN_ENV: str(shell.clean_verdicts(tmp_path_factory))}
    if os.environ.get("RKE_AWS_USER_STACKS_ALL"):
        selection = ["tests", "--ignore", "tests/emulated/test_snapshots.py",
                     "-n", os.environ.get("RKE_AWS_USER_STACKS_WORKERS", "auto")]
    else:
        # Only the modules holding such a test (or never collected here: tests/support/stacks_read.py), not the
        # whole tree: collecting it costs ~16 s of CPU; in one process, which evaluates each stack once (two
        # xdist workers each collect and evaluate everything again).
        modules = [str(p.relative_to(harness.ROOT)) for p in stacks_read.modules_to_run(
            request.config.stash[stacks_read.COLLECTED], harness.ROOT / "tests") if p != SNAPSHOTS]
        selection = [*modules, "--ignore", "tests/emulated/test_snapshots.py", "-m", "reads_stacks",
                     "-n", os.environ.get("RKE_AWS_USER_STACKS_WORKERS", "0")]
    report = tmp_path / "report.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *selection],
                          cwd=harness.ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"with a kubeconfig in every stacks/ file:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
    # The sentinel ran (not skipped): the subprocess read the copy, not stacks/.
    cases = ElementTree.parse(report).getroot().iter("testcase")
    (sentinel,) = [c for c in cases if c.get("name") == SENTINEL.rsplit("::", 1)[1]]
    assert not list(sentinel), ElementTree.tostring(sentinel, encoding="unicode")


@pytest.mark.reads_stacks
def test_pointed_at_the_copy_every_stack_read_has_a_kubeconfig():
    """Run in the subprocess above: stacks/ is the copy, and what the tests read carries the kubeconfig."""
    if not os.environ.get("RKE_AWS_STACKS_DIR"):
        pytest.skip("not pointed at a copy of stacks/")
    assert harness.STACKS_DIR == Path(os.environ["RKE_AWS_STACKS_DIR"]) != harness.ROOT / "stacks"
    environments = harness.stack_names(include_fixtures=False)
    assert environments and all(harness.stack_file(s).parent == harness.STACKS_DIR for s in environments)
    for stack in environments:
        assert KUBECONFIG in stackfile.secret_keys_of(harness.stack_config(stack)), stack


def test_pull_requests_run_the_whole_suite_against_the_copy():
    doc = yaml.safe_load((harness.ROOT / ".github" / "workflows" / "preview.yml").read_text())
    steps = doc["jobs"]["test"]["steps"]
    (step,) = [s for s in steps if (s.get("env") or {}).get("RKE_AWS_USER_STACKS_ALL") == "1"]
    assert step["run"] == "python3 -m offline.tasks test tests/tooling/test_user_stacks.py", step
    # A step leaving the subset to later is followed by that step, in every workflow.
    for path in sorted((harness.ROOT / ".github" / "workflows").glob("*.yml")):
        for job in (yaml.safe_load(path.read_text()).get("jobs") or {}).values():
            steps = job.get("steps") or []
            for i, s in enumerate(steps):
                if (s.get("env") or {}).get(LATER):
                    assert any((t.get("env") or {}).get("RKE_AWS_USER_STACKS_ALL") == "1" for t in steps[i + 1:]), \
                        f"{path.name}: {s.get('run')} leaves the tests over stacks/ to a step that never comes"


@pytest.mark.parametrize("stack", harness.stack_names(include_fixtures=False))
def test_a_test_parametrized_with_an_environment_is_selected(stack, request):
    """The marker comes from the parametrization (tests/conftest.py): a new test over STACKS needs nothing."""
    assert request.node.get_closest_marker("reads_stacks") is not None


def test_the_copy_runs_the_modules_found_going_over_stacks_and_every_one_never_collected(tmp_path):
    """tests/support/stacks_read.py: a module collected without a test over stacks/ is left out; one never collected
    in this session (the suite's --ignore=tests/unit, a run of one file) is run, as what it holds is unknown."""
    for name in ("a/test_reads.py", "a/test_pure.py", "b/test_unseen.py", "b/helpers.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    reads, pure, unseen = (tmp_path / n for n in ("a/test_reads.py", "a/test_pure.py", "b/test_unseen.py"))
    collected = stacks_read.Collected(modules=frozenset({reads, pure}), reading=frozenset({reads}))
    assert stacks_read.modules_to_run(collected, tmp_path) == [reads, unseen]


def test_this_session_recorded_the_modules_going_over_stacks(request):
    collected = request.config.stash[stacks_read.COLLECTED]
    assert Path(__file__).resolve() in collected.reading <= collected.modules  # the sentinel's module
