"""`pulumi new <repository>/tree/<tag>/examples/rke2-cluster`: the CLI takes the example folder as the template,
and the project it makes (tests/support/template.py, step by step from pulumi/pulumi) is the user's: their name,
their namespace, no template block, the stack file in stacks/, and nothing of this repository but that folder.

Why a folder and not the repository: the CLI treats any folder holding a Pulumi.yaml as a template
(pkg/cmd/pulumi/templates/project_templates.go listTemplates and LoadTemplate load the folder the URL names, with
or without a `template:` block) and copies all of it (walkFiles), so `pulumi new <repository>` would copy the
tests, golden plans and tooling (issue 34). A URL may name a folder at a ref (`tree/<ref>/<path>`:
sdk/go/common/util/gitutil/git.go GetGitReferenceNameOrHashAndSubDirectory, retrieve.go RetrieveGitFolder).
"""

from __future__ import annotations

import re

import pytest
import yaml

from tests.support import docs, template

NAME = "platform-eu"
STACK = "staging"


# ---- the URL -------------------------------------------------------------------------------------------

def ref_and_folder(url: str, refs: list[str]) -> tuple[str, str]:
    """GetGitReferenceNameOrHashAndSubDirectory for `<repository>/tree/...`: a 40-hex commit, else the longest
    branch or tag name the rest starts with; what follows it is the folder. Without `tree/`, HEAD and the path."""
    m = re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/?(.*)", url)
    assert m, url
    path = m.group(1).strip("/")
    parts = path.split("/") if path else []
    assert all(p not in (".", "..") for p in parts), "invalid Git URL"
    if not parts or parts[0] != "tree":
        return "HEAD", "/".join(parts)
    rest = "/".join(parts[1:]) + "/"
    if re.fullmatch(r"[0-9a-fA-F]{40}", parts[1] if len(parts) > 1 else ""):
        return parts[1], "/".join(parts[2:])
    for ref in sorted(refs, key=len, reverse=True):
        if rest.startswith(ref + "/"):
            return ref, rest[len(ref) + 1:].strip("/")
    raise AssertionError("invalid Git URL: no such ref")


def _documented_urls() -> list[str]:
    found = {m.group(0) for p in docs.pages()
             for m in re.finditer(r"https://github\.com/[\w-]+/rke-aws/tree/[^\s`)'\"]+", p.read_text())}
    return sorted(found)


def test_the_documented_urls_name_the_example_folder_at_the_release_tag():
    urls = _documented_urls()
    assert urls, "no `pulumi new` URL in the docs"
    for url in urls:
        ref, folder = ref_and_folder(url, refs=["main", f"v{docs.version()}"])
        assert ref == f"v{docs.version()}" and folder == "examples/rke2-cluster", url
        assert (docs.ROOT / folder / "Pulumi.yaml").exists()


def test_the_ref_parser_follows_the_clis_examples():
    """The cases of pulumi/pulumi sdk/go/common/util/gitutil/git_test.go TestGetGitReferenceNameOrHashAndSubDirectory
    that apply to github.com URLs."""
    pre = "https://github.com/pulumi/templates"
    assert ref_and_folder(pre + "/tree/master/templates/python", ["master"]) == ("master", "templates/python")
    assert ref_and_folder(pre + "/tree/master/", ["master"]) == ("master", "")
    sha = "929b6e4c5c39196ae2482b318f145e0d765e9608"
    assert ref_and_folder(f"{pre}/tree/{sha}/templates", []) == (sha, "templates")
    assert ref_and_folder(pre + "/templates/python", []) == ("HEAD", "templates/python")
    assert ref_and_folder(pre + "/tree/my/content", ["my", "my/content"]) == ("my/content", "")


def test_this_repository_is_not_a_template_of_itself():
    """The root Pulumi.yaml asks nothing (no `template:` block): the template is examples/rke2-cluster."""
    assert "template" not in yaml.safe_load((docs.ROOT / "Pulumi.yaml").read_text())


# ---- the project it makes -----------------------------------------------------------------------------------

@pytest.fixture(scope="module", params=["kept", "lost"], ids=lambda c: f"comments-{c}")
def new_project(request, tmp_path_factory):
    return template.make_project(tmp_path_factory.mktemp(f"new-{request.param}") / NAME, stack=STACK,
                                 comments=request.param)


def test_the_project_has_what_new_go_writes(new_project):
    doc = yaml.safe_load((new_project / "Pulumi.yaml").read_text())
    assert doc["name"] == NAME and "template" not in doc
    assert doc["description"] == template.template_block()["description"]
    assert doc["config"]["pulumi:tags"] == {
        "value": {"pulumi:template": "https://github.com/OWNER/rke-aws/tree/v0.2.0/examples/rke2-cluster"}}
    assert doc["runtime"]["options"]["toolchain"] == "uv" and doc["stackConfigDir"] == "stacks"
    assert template.missing_required(new_project, STACK) == []


def test_no_placeholder_is_left(new_project):
    for path in new_project.rglob("*"):
        if path.is_file():
            assert "${PROJECT}" not in path.read_text() and "${DESCRIPTION}" not in path.read_text(), path


def test_nothing_of_this_repository_but_the_example_is_copied(new_project):
    top = {p.name for p in new_project.iterdir()}
    assert top == {"Pulumi.yaml", "__main__.py", "pyproject.toml", "README.md", ".gitignore", "stacks", ".github"}, top
