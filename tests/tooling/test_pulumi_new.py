"""`pulumi new <this repository> --name platform-eu`: the project it makes passes its own checks.

`make_project` produces that project as the CLI does, step by step from pulumi/pulumi (read at 1b59498;
the CLI this repository pins, .github/pulumi-version, behaves the same):

1. The template is the repository as cloned: every file but `.git` and the legacy `.pulumi.template.yaml`
   (pkg/cmd/pulumi/templates/project_templates.go walkFiles), so stacks/, tests/ and the golden plans too.
2. Each text file (no NUL in its first 8,000 bytes, isBinary) and each file name gets `${PROJECT}` and
   `${DESCRIPTION}` replaced, YAML-quoted in `.yaml` files (CopyTemplateFiles, transform).
3. Pulumi.yaml is read back, its `name` set to the new name, its description to the answer, `template` removed
   (pkg/cmd/pulumi/project/newcmd/new.go, "Load the project, update the name & description, remove the
   template section"), and the `pulumi:template` tag added under project config `pulumi:tags`
   (Project.AddConfigStackTags in sdk/go/common/workspace/project.go; the URL without credentials or query,
   newcmd/template.go sanitizeTemplate); `Pulumi.yaml.append` is deleted.
4. The project is saved (pkg/workspace/paths.go SaveProject -> Project.Save -> the YAML marshaler in
   sdk/go/common/encoding/marshal.go): a project read from a file is written through a comment-keeping edit
   (sdk/go/common/util/yamlutil/edit.go: kept nodes keep their comments and order, new keys go last in their
   map, a removed key takes its comments along); without its original text every comment goes
   (yamlutil.YamlEncode, indent 2, Go struct field order). Both layouts are checked (`comments`).
5. The stack's config is the template's questions answered (newcmd/config.go resolveTemplateConfig): a key
   without a namespace gets the project's (pkg/cmd/pulumi/config/io.go ParseConfigKeyForProject), empty
   answers are left out (encryptTemplateConfig), and the file lands in stackConfigDir.
Then the CLI runs the stack with the declared keys namespaced by the project's name, refusing a stack that
misses a declared key without a default (pkg/workspace/config.go mergeConfig), and the program reads its keys
in that namespace.
"""

# split: this module mixes levels (issue 33 §7.2); the stack-file transforms (pure) -> tests/unit.

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import yaml

from rke_aws.settings import config as settings
from rke_aws.settings import stackfile
from rke_aws_offline.engine import harness
from tests.support.configs import parse_config
from tests.support.template import stack_text

ROOT = harness.ROOT
NAME = "platform-eu"
STACK = "staging"
TEMPLATE_URL = "https://user:secret@github.com/example/rke-aws?ref=main"
CHECK_TIMEOUT = 900


def template_files(root: Path = ROOT) -> list[Path]:
    """The template as a clone holds it: the repository's files (tracked, or new and not ignored)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                             check=True, capture_output=True, text=True).stdout
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # an exported tree without git
        skip = {".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules"}
        names = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and not skip & set(p.parts)]
    return [Path(n) for n in sorted(names) if ".git" not in Path(n).parts and Path(n).name != ".pulumi.template.yaml"
            and (root / n).is_file()]


def _is_binary(data: bytes) -> bool:
    return b"\0" in data[:8000]


def _transform(text: str, name: str, description: str) -> str:
    return text.replace("${PROJECT}", name).replace("${DESCRIPTION}", description)


def sanitize_template(url: str) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", parts.fragment))


def _yaml_scalar(value: str) -> str:
    return yaml.safe_dump(value, default_style=None).removesuffix("...\n").strip()


def _project_kept_comments(text: str, name: str, tag: str) -> str:
    """Step 4 with the original text: `name` changed in place, `template:` and the comment lines just above
    it (its head comment) removed, `pulumi:tags` appended as the last entry of `config:`."""
    lines = text.splitlines(keepends=True)
    lines = [f"name: {_yaml_scalar(name)}\n" if re.match(r"name:\s", line) else line for line in lines]
    top = [i for i, line in enumerate(lines) if line[:1] not in ("", " ", "#", "\n")]

    def block(key: str) -> tuple[int, int]:
        start = next(i for i in top if lines[i].startswith(f"{key}:"))
        end = next((i for i in top if i > start), len(lines))
        return start, end

    t_start, t_end = block("template")
    while t_start > 0 and lines[t_start - 1].lstrip().startswith("#"):
        t_start -= 1
    lines[t_start:t_end] = []
    top = [i for i, line in enumerate(lines) if line[:1] not in ("", " ", "#", "\n")]
    c_start, c_end = block("config")
    at = c_end
    while at > c_start + 1 and (not lines[at - 1].strip() or lines[at - 1].lstrip().startswith("#")):
        at -= 1
    tags = f"  pulumi:tags:\n    value:\n      pulumi:template: {_yaml_scalar(tag)}\n"
    lines[at:at] = [tags]
    return "".join(lines)


def _project_without_comments(text: str, name: str, tag: str) -> str:
    """Step 4 without the original text: the Project struct marshalled, fields in declaration order."""
    doc = yaml.safe_load(text)
    config = dict(doc.get("config") or {})
    config["pulumi:tags"] = {"value": {"pulumi:template": tag}}
    fields = ("type", "description", "items", "default", "value", "secret")
    out: dict = {"name": name}
    for key in ("runtime", "main", "description", "author", "website", "license"):
        if key in doc:
            out[key] = doc[key]
    out["config"] = {k: {f: v[f] for f in fields if f in v} for k, v in sorted(config.items())}
    for key in ("stackConfigDir", "backend", "options", "packages", "plugins"):
        if key in doc:
            out[key] = doc[key]
    return yaml.safe_dump(out, sort_keys=False, width=10_000, indent=2)


def make_project(dest: Path, *, name: str = NAME, stack: str = STACK, comments: str = "kept",
                 answers: dict[str, str] | None = None, url: str = TEMPLATE_URL, root: Path = ROOT) -> Path:
    template = yaml.safe_load((root / "Pulumi.yaml").read_text())["template"]
    description = yaml.safe_load((root / "Pulumi.yaml").read_text())["description"]  # the prompt's default
    for rel in template_files(root):
        data = (root / rel).read_bytes()
        target = dest / _transform(str(rel), name, "")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not _is_binary(data):
            yaml_file = rel.suffix == ".yaml"
            data = _transform(data.decode(), _yaml_scalar(name) if yaml_file else name,
                              _yaml_scalar(description) if yaml_file else description).encode()
        target.write_bytes(data)
        shutil.copymode(root / rel, target)
    (dest / "Pulumi.yaml.append").unlink(missing_ok=True)
    project = (dest / "Pulumi.yaml").read_text()
    tag = sanitize_template(url)
    project = (_project_kept_comments if comments == "kept" else _project_without_comments)(project, name, tag)
    (dest / "Pulumi.yaml").write_text(project)
    defaults = {k: v.get("default", "") for k, v in template["config"].items()}
    config_dir = yaml.safe_load(project).get("stackConfigDir") or "."
    (dest / config_dir / f"Pulumi.{stack}.yaml").write_text(stack_text({**defaults, **(answers or {})}, name))
    return dest


def missing_required(project_dir: Path, stack: str) -> list[str]:
    """mergeConfig's refusal: declared keys of the project's namespace with neither value nor default."""
    project = yaml.safe_load((project_dir / "Pulumi.yaml").read_text())
    name = project["name"]
    stack_doc = yaml.safe_load((project_dir / (project.get("stackConfigDir") or ".") / f"Pulumi.{stack}.yaml").read_text())
    given = set(stack_doc.get("config") or {})
    out = []
    for key, decl in (project.get("config") or {}).items():
        full = key if ":" in key else f"{name}:{key}"
        if full.startswith(f"{name}:") and full not in given and "default" not in decl and "value" not in decl:
            out.append(key)
    return out


# ---- the namespace ----------------------------------------------------------------------------------

def _renamed(cfg: dict[str, str], project: str) -> dict[str, str]:
    return {(f"{project}:{k.split(':', 1)[1]}" if k.startswith("rke-aws:") else k): v for k, v in cfg.items()}


def test_the_program_reads_its_keys_in_the_namespace_of_the_project_it_runs_in(base_config):
    """pulumi.get_project() is the namespace the CLI gave the declared keys (pkg/workspace/config.go
    parseConfigKey: a key without ':' gets the project's name)."""
    cfg = _renamed(base_config, NAME)
    cfg[f"{NAME}:kubeconfig"] = stackfile.secret("apiVersion: v1\nkind: Config\n")
    parsed = settings.parse(cfg, project=NAME, stack="x", region=cfg["aws:region"], secret_keys=[f"{NAME}:kubeconfig"])
    assert parsed.distribution == "rke2" and parsed.kubeconfig is not None
    with pytest.raises(settings.ConfigError) as refused:
        settings.parse(cfg, project=NAME, stack="x", region=cfg["aws:region"], secret_keys=[])
    assert refused.value.problems == [f"{NAME}:kubeconfig: is stored as plain text in the stack file; it holds "
                                      "cluster-admin credentials: set it with `pulumi config set --secret kubeconfig "
                                      "< kubeconfig.yaml`"]


def test_keys_left_in_the_template_namespace_are_refused_naming_the_projects(base_config):
    """A stack written before the rename (`rke-aws:` keys in project platform-eu) reaches the program under a
    namespace nothing reads: each key refused with the name it has in this project."""
    problems = _problems(base_config, NAME)
    assert f"{NAME}:distribution: missing; set rke or rke2" in problems, problems
    for key in ("distribution", "network", "nodePools"):
        assert (f"rke-aws:{key}: unknown namespace 'rke-aws', which nothing reads; did you mean {NAME}:{key}? this "
                f"project's keys are {NAME}:<key> (its name in Pulumi.yaml), and the providers and engine read aws:, "
                "kubernetes:, pulumi:") in problems, problems


def _problems(cfg: dict[str, str], project: str) -> list[str]:
    with pytest.raises(settings.ConfigError) as refused:
        settings.parse(cfg, project=project, stack="x", region=cfg["aws:region"], secret_keys=[])
    return refused.value.problems


def test_the_tests_parse_in_this_repositorys_namespace(base_config):
    assert parse_config(base_config).distribution == "rke2"


# ---- the project `pulumi new` makes -------------------------------------------------------------------

def _python(project_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """The venv's Python in the new project, importing the project's own packages: its components/ and
    offline/ as rke_aws and rke_aws_offline (the venv's editable install maps them to this repository;
    a PYTHONPATH entry comes first)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RKE_AWS_STACKS_DIR", "PYTEST_XDIST"))}
    links = project_dir.parent / f"{project_dir.name}-importroot"
    if not links.exists():
        links.mkdir()
        (links / "rke_aws").symlink_to(project_dir / "components", target_is_directory=True)
        (links / "rke_aws_offline").symlink_to(project_dir / "offline", target_is_directory=True)
    env["PYTHONPATH"] = os.pathsep.join([str(links), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, *args], cwd=project_dir, env=env, capture_output=True, text=True,
                          timeout=CHECK_TIMEOUT)


CHECKS = r"""
import json, sys
from rke_aws_offline.engine import harness, stacks
from rke_aws_offline import schema

def attempt(f):
    try:
        return f()
    except BaseException as err:  # each check reports on its own
        return {"error": f"{type(err).__name__}: {err}"[:3000]}

out = {"stale": attempt(schema.stale), "matrices": attempt(stacks.matrices),
       "samples": attempt(lambda: stacks.samples()), "project": attempt(lambda: stacks.project_name())}
run = attempt(lambda: harness.run_stack(sys.argv[1]))
if isinstance(run, dict):
    out["plan"] = run
else:
    out["plan"] = {"instances": sorted(r.name for r in run.resources if r.type == "aws:ec2/instance:Instance"),
                   "urn_projects": sorted({r.urn.split("::")[1] for r in run.resources}),
                   "clusterId": run.outputs["clusterId"]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module", params=["kept", "lost"], ids=lambda c: f"comments-{c}")
def new_project(request, tmp_path_factory) -> Path:
    return make_project(tmp_path_factory.mktemp(f"new-{request.param}") / NAME, comments=request.param)


def test_the_project_has_what_new_go_writes(new_project):
    doc = yaml.safe_load((new_project / "Pulumi.yaml").read_text())
    assert doc["name"] == NAME and "template" not in doc
    assert doc["config"]["pulumi:tags"] == {"value": {"pulumi:template": "https://github.com/example/rke-aws"}}
    assert (new_project / "stacks" / f"Pulumi.{STACK}.yaml").exists()
    assert missing_required(new_project, STACK) == []


def test_the_project_passes_its_schema_check_lists_only_its_own_stack_and_plans_it(new_project):
    proc = _python(new_project, "-c", CHECKS, STACK)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["stale"] == [], f"`python -m rke_aws_offline.schema` fails in the new project: {out['stale']}"
    # The deploy workflow's matrices (offline/engine/stacks.py): the user's stack, not the template's samples.
    assert out["matrices"] == {"all": [STACK], "first": [STACK], "production": []}, out["matrices"]
    assert out["samples"] == ["rke-dev", "rke-prod", "rke2-dev", "rke2-prod"] and out["project"] == NAME
    plan = out["plan"]
    assert "error" not in plan, plan["error"]
    assert plan["urn_projects"] == [NAME]
    assert plan["instances"] == [f"{STACK}-agents-0", f"{STACK}-agents-1", f"{STACK}-server-0", f"{STACK}-server-1",
                                 f"{STACK}-server-2"], plan["instances"]
    assert plan["clusterId"] == STACK


def test_the_project_passes_the_template_tests(new_project, request):
    if "lost" not in request.node.callspec.id:
        pytest.skip("one layout is enough for the pytest run (the schema check above covers both)")
    proc = _python(new_project, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "tests/program/test_template.py")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    progress = proc.stdout.split()[0]  # the template block's tests skip there; the stacks' check runs
    assert progress.count(".") == 1 and set(progress) == {"s", "."}, proc.stdout[-2000:]


def test_make_schema_rewrites_the_new_projects_pulumi_yaml_keeping_what_new_go_added(new_project, tmp_path):
    copy = tmp_path / "Pulumi.yaml"
    shutil.copy(new_project / "Pulumi.yaml", copy)
    proc = _python(new_project, "-c", "from rke_aws_offline import schema; import sys; "
                   "sys.stdout.write(schema.pulumi_yaml_text(open('Pulumi.yaml').read()))")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rewritten = yaml.safe_load(proc.stdout)
    assert rewritten == yaml.safe_load(copy.read_text())
    assert proc.stdout.count("# >>> generated by `make schema`") == 1 and "# <<< end of generated keys" in proc.stdout
