"""`pulumi new` as the CLI runs it, for the template this repository offers (examples/rke2-cluster), step by
step from pulumi/pulumi (read at 1b59498; the CLI .github/pulumi-version pins behaves the same):

1. `pulumi new <repository>/tree/<ref>/examples/rke2-cluster`: the URL names a folder of a repository at a ref
   (sdk/go/common/util/gitutil/git.go ParseGitRepoURL, GetGitReferenceNameOrHashAndSubDirectory; retrieve.go
   RetrieveGitFolder), and the template is that folder, the one holding the Pulumi.yaml
   (pkg/cmd/pulumi/templates/project_templates.go listTemplates, LoadTemplate): its files only, every one but
   `.git` and the legacy `.pulumi.template.yaml` (walkFiles). A clone holds the tracked files.
2. The project's name defaults to the directory's when Pulumi.yaml's name is `${PROJECT}`
   (pkg/workspace/templates.go ValueOrSanitizedDefaultProjectName), the description to the template's when it is
   `${DESCRIPTION}` (ValueOrDefaultProjectDescription).
3. Each text file (no NUL in its first 8,000 bytes, isBinary) and each file name gets `${PROJECT}` and
   `${DESCRIPTION}` replaced, YAML-quoted in `.yaml` files (CopyTemplateFiles, transform, toYAMLString).
4. Pulumi.yaml is read back, its `name` set, its description set, `template` removed, and the `pulumi:template`
   tag added under project config `pulumi:tags` (pkg/cmd/pulumi/project/newcmd/new.go; Project.AddConfigStackTags
   in sdk/go/common/workspace/project.go; the URL without credentials or query, newcmd/template.go
   sanitizeTemplate). The project is saved through the YAML marshaler (sdk/go/common/encoding/marshal.go): a
   project read from a file keeps its comments and key order (sdk/go/common/util/yamlutil/edit.go), a removed key
   takes its comments along, new keys go last.
5. The stack's config is the template's questions answered (newcmd/config.go resolveTemplateConfig): a key
   without a namespace gets the project's (pkg/cmd/pulumi/config/io.go ParseConfigKeyForProject), empty answers
   are left out (encryptTemplateConfig), and the values are saved into the stack's file in stackConfigDir,
   merged with a file of that name the template already holds.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rke2-cluster"
TEMPLATE_URL = "https://user:secret@github.com/OWNER/rke-aws/tree/v0.2.0/examples/rke2-cluster?x=1"


def cli_key(key: str, project: str) -> str:
    """A template config key as `pulumi new` stores it (io.go parseConfigKey): one without a namespace
    gets the project's."""
    return key if ":" in key else f"{project}:{key}"


def stack_text(answers: dict[str, str], project: str) -> str:
    """The stack file as `pulumi new` writes it from the template's answers alone: the prompted keys with the
    user's answers; empty answers are left out (newcmd/config.go encryptTemplateConfig)."""
    return yaml.safe_dump({"config": {cli_key(k, project): v for k, v in answers.items() if v != ""}}, sort_keys=True)


def template_files(template: Path = EXAMPLE) -> list[Path]:
    """The template as a clone holds it: its tracked files (or, in a working tree, new ones not ignored)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
                             cwd=template, check=True, capture_output=True, text=True).stdout
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # an exported tree without git
        skip = {".git", ".venv", "__pycache__"}
        names = [str(p.relative_to(template)) for p in template.rglob("*") if p.is_file() and not skip & set(p.parts)]
    return [Path(n) for n in sorted(names) if ".git" not in Path(n).parts and Path(n).name != ".pulumi.template.yaml"
            and (template / n).is_file()]


def _is_binary(data: bytes) -> bool:
    return b"\0" in data[:8000]


def _transform(text: str, name: str, description: str) -> str:
    return text.replace("${PROJECT}", name).replace("${DESCRIPTION}", description)


def sanitize_template(url: str) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", parts.fragment))


def yaml_scalar(value: str) -> str:
    return yaml.safe_dump(value, default_style=None).removesuffix("...\n").strip()


def _project_kept_comments(text: str, name: str, description: str, tag: str) -> str:
    """Step 4 with the original text: `name` and `description` changed in place, `template:` and the comment
    lines just above it removed, `pulumi:tags` under `config:` (created last when there is none)."""
    lines = text.splitlines(keepends=True)
    out = []
    for line in lines:
        if re.match(r"name:\s", line):
            line = f"name: {yaml_scalar(name)}\n"
        elif re.match(r"description:\s", line):
            line = f"description: {yaml_scalar(description)}\n"
        out.append(line)
    lines = out
    top = [i for i, line in enumerate(lines) if line[:1] not in ("", " ", "#", "\n")]

    def block(key: str) -> tuple[int, int] | None:
        start = next((i for i in top if lines[i].startswith(f"{key}:")), None)
        if start is None:
            return None
        return start, next((i for i in top if i > start), len(lines))

    found = block("template")
    if found:
        t_start, t_end = found
        while t_start > 0 and lines[t_start - 1].lstrip().startswith("#"):
            t_start -= 1
        lines[t_start:t_end] = []
        top = [i for i, line in enumerate(lines) if line[:1] not in ("", " ", "#", "\n")]
    tags = f"  pulumi:tags:\n    value:\n      pulumi:template: {yaml_scalar(tag)}\n"
    found = block("config")
    if found is None:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines.append("config:\n" + tags)
    else:
        c_start, c_end = found
        at = c_end
        while at > c_start + 1 and (not lines[at - 1].strip() or lines[at - 1].lstrip().startswith("#")):
            at -= 1
        lines[at:at] = [tags]
    return "".join(lines)


def _project_without_comments(text: str, name: str, description: str, tag: str) -> str:
    """Step 4 without the original text: the Project struct marshalled, fields in declaration order."""
    doc = yaml.safe_load(text)
    config = dict(doc.get("config") or {})
    config["pulumi:tags"] = {"value": {"pulumi:template": tag}}
    fields = ("type", "description", "items", "default", "value", "secret")
    out: dict = {"name": name}
    for key in ("runtime", "main"):
        if key in doc:
            out[key] = doc[key]
    out["description"] = description
    for key in ("author", "website", "license"):
        if key in doc:
            out[key] = doc[key]
    out["config"] = {k: {f: v[f] for f in fields if f in v} for k, v in sorted(config.items())}
    for key in ("stackConfigDir", "backend", "options", "packages", "plugins"):
        if key in doc:
            out[key] = doc[key]
    return yaml.safe_dump(out, sort_keys=False, width=10_000, indent=2)


def template_block(template: Path = EXAMPLE) -> dict:
    return yaml.safe_load((template / "Pulumi.yaml").read_text())["template"]


def make_project(dest: Path, *, name: str | None = None, stack: str = "dev", comments: str = "kept",
                 answers: dict[str, str] | None = None, url: str = TEMPLATE_URL, template: Path = EXAMPLE) -> Path:
    """The project `pulumi new <url> --stack <stack> [--name <name>]` makes in `dest` (name: `dest`'s by default)
    with the template's defaults, or `answers`, for its questions."""
    dest.mkdir(parents=True, exist_ok=True)
    name = name or dest.name
    block = template_block(template)
    description = block.get("description", "")  # the prompt's default for `${DESCRIPTION}`
    for rel in template_files(template):
        data = (template / rel).read_bytes()
        target = dest / _transform(str(rel), name, "")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not _is_binary(data):
            yaml_file = rel.suffix == ".yaml"
            data = _transform(data.decode(), yaml_scalar(name) if yaml_file else name,
                              yaml_scalar(description) if yaml_file else description).encode()
        target.write_bytes(data)
        shutil.copymode(template / rel, target)
    (dest / "Pulumi.yaml.append").unlink(missing_ok=True)
    copied = (dest / "Pulumi.yaml").read_text()  # new.go reads back the copy, placeholders replaced
    tag = sanitize_template(url)
    project = (_project_kept_comments if comments == "kept" else _project_without_comments)(
        copied, name, description, tag)
    (dest / "Pulumi.yaml").write_text(project)
    values = {cli_key(k, name): v for k, v in
              {**{k: v.get("default", "") for k, v in block["config"].items()}, **(answers or {})}.items() if v != ""}
    config_dir = dest / (yaml.safe_load(project).get("stackConfigDir") or ".")
    config_dir.mkdir(parents=True, exist_ok=True)
    stack_file = config_dir / f"Pulumi.{stack}.yaml"
    existing = yaml.safe_load(stack_file.read_text()) if stack_file.exists() else None
    doc = existing or {}
    doc.setdefault("config", {}).update(values)
    stack_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    return dest


def missing_required(project_dir: Path, stack: str) -> list[str]:
    """mergeConfig's refusal: declared keys of the project's namespace with neither value nor default."""
    project = yaml.safe_load((project_dir / "Pulumi.yaml").read_text())
    name = project["name"]
    stack_doc = yaml.safe_load((project_dir / (project.get("stackConfigDir") or ".") / f"Pulumi.{stack}.yaml").read_text())
    given = set((stack_doc or {}).get("config") or {})
    out = []
    for key, decl in (project.get("config") or {}).items():
        full = key if ":" in key else f"{name}:{key}"
        if full.startswith(f"{name}:") and full not in given and "default" not in decl and "value" not in decl:
            out.append(key)
    return out
