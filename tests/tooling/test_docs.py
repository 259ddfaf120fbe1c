"""The documentation cannot rot: every stack file in README.md and docs/ is planned, every program using the
package runs, every link and repository path resolves, versions and URLs agree, and the commands it names exist.

Stack files are the YAML blocks whose first line names one (`# stacks/Pulumi.<stack>.yaml`); they are written in
the quickstart project's namespace (`my-cluster`) and planned as that project under the mocks, by this
repository's stack program. Programs are the Python blocks importing `rke_aws`: each runs as the project's
`__main__.py` with the quickstart's stack file as its configuration (plus `platform:team`, the namespace of the
program's own that the two-cluster example reads).
"""

from __future__ import annotations

import re
from pathlib import Path

import pulumi
import pytest
import yaml

from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness
from tests.support import docs
from tests.support.pending import needs_api
from tests.support.runs import run_cached

ROOT = docs.ROOT
INSTANCE = "aws:ec2/instance:Instance"


def _plan(text: str, stack: str, main: Path | None = None, extra: dict[str, str] | None = None):
    config, secret_keys = stackfile.load_stack_text(text, f"Pulumi.{stack}.yaml", project=docs.PROJECT)
    config = {**config, **(extra or {})}
    if main is None:
        # The stack program's first run of this config, shared (tests/support/runs.py): the README's quickstart
        # stack file is also getting-started's and test_readme's. run_cached marks secret what the CLI marks.
        assert secret_keys == stackfile.secret_keys_of(config), secret_keys
        return run_cached(config, stack, docs.PROJECT)
    return harness.run_program(config, stack=stack, secret_keys=secret_keys, project=docs.PROJECT, main=main)


# ---- stack files --------------------------------------------------------------------------------------

@pytest.mark.parametrize("block", docs.stack_blocks(), ids=lambda b: b.where)
def test_every_stack_file_in_the_docs_is_planned(block):
    config = docs.stack_config(block)
    namespaces = {k.split(":", 1)[0] for k in config if ":" in k} - {"aws", "pulumi", "kubernetes"}
    assert namespaces == {docs.PROJECT}, f"{block.where}: keys in {namespaces}, not the quickstart's {docs.PROJECT}:"
    run = _plan(block.text, block.stack)
    assert run.of_type(INSTANCE), f"{block.where}: planned no instance"


def test_the_docs_have_stack_files_and_programs():
    """The parser finds what the docs hold (a silent parser would make every test above vacuous)."""
    assert len(docs.stack_blocks()) >= 6 and len(docs.program_blocks()) >= 3


# ---- programs ---------------------------------------------------------------------------------------

_PROGRAM_RUNS: dict[str, harness.ProgramRun] = {}


def _program_run(text: str, tmp_path: Path) -> harness.ProgramRun:
    """A program of the docs run as the quickstart project's `__main__.py`, once per session (in one process): the
    two-cluster example is also one of the blocks every program runs as."""
    if text not in _PROGRAM_RUNS:
        main = tmp_path / "__main__.py"
        main.write_text(text)
        _, stack, _ = docs.quickstart()
        _PROGRAM_RUNS[text] = _plan(stack.text, "dev", main=main, extra={"platform:team": "payments"})
    return _PROGRAM_RUNS[text]


@needs_api
@pytest.mark.parametrize("block", docs.program_blocks(), ids=lambda b: b.where)
def test_every_program_in_the_docs_runs(block, tmp_path):
    run = _program_run(block.text, tmp_path)
    assert run.of_type(INSTANCE), f"{block.where}: registered no instance"


@needs_api
def test_the_two_cluster_example_registers_two_disjoint_clusters(tmp_path):
    (block,) = [b for b in docs.program_blocks() if "for colour" in b.text]
    run = _program_run(block.text, tmp_path)
    names = sorted(r.name for r in run.of_type(INSTANCE))
    assert names == [f"payments-{c}-{p}" for c in ("blue", "green") for p in ("agents-0", "agents-1", "server-0")]
    urns = [r.urn for r in run.resources]
    assert len(urns) == len(set(urns))
    assert {"payments-blue", "payments-green", "blueApiUrl", "greenApiUrl"} <= set(run.outputs)


# ---- links, paths, versions, commands ----------------------------------------------------------------

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation but - and _ dropped, spaces to -."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", docs.prose(path), re.M)}


@pytest.mark.parametrize("page", docs.pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(page):
    broken = []
    for target in LINK.findall(docs.prose(page)):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"


REPO_PATH = re.compile(r"(?<![\w./-])((?:components|offline|tests|bench|policies|schema|examples|docs|\.github)/"
                       r"[\w./-]*[\w/])")


CREATED_ELSEWHERE = {"policies/venv"}  # Pulumi creates it from policies/requirements.txt


@pytest.mark.parametrize("page", docs.pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_the_docs_name_exists(page):
    """Paths of this repository named in prose: a moved or deleted file makes its mention stale. (The user's
    own project's files, stacks/Pulumi.<stack>.yaml and .github/workflows/<name>.yml, exist in the example.)"""
    missing = []
    for path in REPO_PATH.findall(docs.prose(page)):
        path = path.rstrip(".")
        if path in CREATED_ELSEWHERE:
            continue
        if not ((ROOT / path).exists() or (docs.ROOT / "examples" / "rke2-cluster" / path).exists()):
            missing.append(path)
    assert not missing, f"{page.relative_to(ROOT)}: no such path {sorted(set(missing))}"


URL = re.compile(r"https://(?:github\.com|raw\.githubusercontent\.com)/([\w-]+)/rke-aws(?:/tree)?/(v[\d.]+\d)")
PIN = re.compile(r"rke-aws(?:\[tools\])? @ git\+https://github\.com/([\w-]+)/rke-aws@(v[\d.]+\d)")


def test_every_link_to_a_release_names_this_version_and_one_repository():
    """The docs, the README and the example's pins name the release being documented (pyproject's version):
    a release bumps them all (docs/contributing.md)."""
    files = [*docs.pages(), *(p for p in (ROOT / "examples").rglob("*") if p.is_file())]
    found = [(f, m.group(1), m.group(2)) for f in files for rx in (URL, PIN) for m in rx.finditer(f.read_text())]
    assert found, "no link to a release found"
    wrong = [(str(f.relative_to(ROOT)), tag) for f, _, tag in found if tag != f"v{docs.version()}"]
    assert not wrong, f"links to another release than v{docs.version()}: {wrong}"
    assert len({owner for _, owner, _ in found}) == 1, {owner for _, owner, _ in found}


def test_the_commands_the_docs_name_are_commands_of_the_package():
    """`rke-aws <command>` in inline code and in shell blocks (README, docs/, the example's README)."""
    from rke_aws_offline import cli

    texts = [re.sub(r"<!--.*?-->", "", p.read_text(), flags=re.S)
             for p in (*docs.pages(), ROOT / "examples" / "rke2-cluster" / "README.md")]
    inline = {m.group(1) for t in texts for m in re.finditer(r"`(?:uv run (?:--no-sync )?)?rke-aws ([a-z][a-z-]*)", t)}
    shell = {m.group(1) for b in docs.all_blocks() if b.lang == "sh"
             for m in re.finditer(r"^(?:uv run (?:--no-sync )?)?rke-aws ([a-z][a-z-]*)", b.text, re.M)}
    named = inline | shell
    assert {"plan", "diff", "kubeconfig", "doctor"} <= named, named
    assert named <= set(cli.COMMANDS), f"not rke-aws commands: {sorted(named - set(cli.COMMANDS))}"


def test_every_page_is_in_the_index_and_the_readme_links_the_index_pages():
    index = (docs.DOCS / "README.md").read_text()
    for page in docs.DOCS.rglob("*.md"):
        if page.name != "README.md":
            assert f"({page.relative_to(docs.DOCS)})" in index, f"docs/README.md does not link {page.relative_to(ROOT)}"
    readme = docs.README.read_text()
    unlinked = [p for p in docs.DOCS.rglob("*.md") if p.name != "README.md" and f"(docs/{p.relative_to(docs.DOCS)})"
                not in readme and p.parent.name not in ("features", "operations", "reference")]
    assert not unlinked, f"README.md links none of {unlinked}"


def test_the_rotation_page_describes_the_rotation():
    """docs/operations/rotate.md holds issue 37's rotation (its README section before the README became a
    quickstart): the command, the order, the setting, and how to resume."""
    text = (docs.DOCS / "operations" / "rotate.md").read_text()
    assert "TODO" not in text and text.startswith("# Patching nodes by rotation")
    for needle in ("rke-aws rotate", "python3 -m offline.tasks rotate", "rotation.maxUnavailableAgents",
                   "## Stop and resume", "kube-system/rke-aws-rotation"):
        assert needle in text, needle


# ---- messages point at pages that exist -----------------------------------------------------------------

def test_messages_cite_pages_that_exist():
    """A refusal or warning that sends the user to the documentation names a page of docs/ and, in quotes, a
    heading on that page (`docs/operations/replace-node.md, 'Replacing a node'`); none cites a README section
    (the README is a quickstart now: its sections moved to docs/)."""
    cited, readme = [], []
    for path in (ROOT / "components").rglob("*.py"):
        text = re.sub(r'"\s*\n\s*f?"', "", path.read_text())  # adjacent string literals read as one
        where = str(path.relative_to(ROOT))
        readme += [(where, m.group(0)) for m in re.finditer(r"""README ['"][^'"]+['"]""", text)]
        cited += [(where, m.group(1), m.group(2)) for m in re.finditer(r"(docs/[a-z0-9/_-]+\.md), '([^']+)'", text)]
    assert not readme, f"messages cite README sections that are in docs/ now: {readme}"
    assert len(cited) >= 8, cited  # the planner's day-2 messages point at runbooks
    wrong = []
    for where, page, heading in cited:
        file = ROOT / page
        headings = {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", docs.prose(file), re.M)} if file.is_file() else set()
        if _slug(heading) not in headings:
            wrong.append((where, page, heading))
    assert not wrong, f"cited pages or headings that do not exist: {wrong}"


# ---- the configuration reference is the generator's ------------------------------------------------------

def test_the_configuration_reference_is_generated_in_its_page():
    from rke_aws_offline import schema

    text = schema.README.read_text()
    assert schema.README == docs.DOCS / "reference" / "configuration.md"
    assert text.count(schema.README_BEGIN) == 1 and text.count(schema.README_END) == 1


def test_stack_files_in_the_docs_are_what_a_stack_file_may_hold():
    """Only `config:`, `environment:` and the other keys of a project-stack file (pulumi/pulumi
    sdk/go/common/workspace/project.json's stack schema: config, environment, secretsprovider, encryptionsalt,
    encryptedkey)."""
    allowed = {"config", "environment", "secretsprovider", "encryptionsalt", "encryptedkey"}
    for block in docs.stack_blocks():
        doc = yaml.safe_load(block.text)
        assert set(doc) <= allowed, f"{block.where}: {set(doc) - allowed}"


def test_a_refused_docs_stack_file_would_fail_the_test(tmp_path):
    """The planning above is not vacuous: a docs-like stack file with a bad value is refused."""
    bad = f"# stacks/Pulumi.bad.yaml\nconfig:\n  aws:region: eu-west-1\n  {docs.PROJECT}:distribution: rke3\n"
    with pytest.raises((pulumi.RunError, Exception)) as refused:
        _plan(bad, "bad")
    assert f"{docs.PROJECT}:distribution" in str(refused.value)
