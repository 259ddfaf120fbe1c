"""The environments: one per stacks/Pulumi.<stack>.yaml. Standard library only (CI runs it bare).

    python3 -m offline.engine.stacks            # GitHub step outputs: all=[...], first=[...], production=[...]

The workflows take their matrices from here, so adding an environment is adding its stack file
(and its snapshot, `python3 -m offline.tasks snapshots`); nothing else lists the stacks. Stacks whose name ends in
`-prod` are production: deployed after every other stack succeeded, one at a time.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PULUMI_YAML = ROOT / "Pulumi.yaml"
# The project (and configuration namespace) of the test fixtures, of configs tests build and of the
# template's samples in a project `pulumi new` made: this repository's name. A user's environment in
# stacks/ runs as the project Pulumi.yaml names (project_of), as the CLI runs it.
PROJECT = "rke-aws"
# RKE_AWS_STACKS_DIR: another directory of stack files in place of stacks/, for tests only
# (tests/tooling/test_user_stacks.py runs the tests over stacks/ against a copy whose files all carry a
# kubeconfig, as a user's own stacks may).
STACKS_DIR = Path(os.environ["RKE_AWS_STACKS_DIR"]) if os.environ.get("RKE_AWS_STACKS_DIR") else ROOT / "stacks"
PRODUCTION_SUFFIX = "-prod"
# This repository's own stacks. `pulumi new <this repository>` copies every file of the template
# (pulumi/pulumi pkg/cmd/pulumi/templates/project_templates.go CopyTemplateFiles: all but .git), these
# included; in the project it makes they are examples and test fixtures, not the user's environments.
SAMPLE_STACKS = ("rke-dev", "rke-prod", "rke2-dev", "rke2-prod")
# What `pulumi new` adds to the project it makes (pkg/cmd/pulumi/project/newcmd/new.go: the
# `pulumi:template` tag, apitype.ProjectTemplateTag, under project config `pulumi:tags`).
_TEMPLATE_TAG = re.compile(r"""^\s+["']?pulumi:template["']?\s*:""", re.MULTILINE)
_NAME = re.compile(r"""^name:[ \t]*["']?([A-Za-z0-9_.-]+)["']?[ \t]*(?:#.*)?$""", re.MULTILINE)


def project_name() -> str:
    """The Pulumi project's name (Pulumi.yaml `name`), which is also its configuration namespace:
    the CLI namespaces declared and bare keys with it (pulumi/pulumi pkg/workspace/config.go)."""
    m = _NAME.search(PULUMI_YAML.read_text())
    if m is None:
        raise SystemExit(f"{PULUMI_YAML}: no `name:` line")
    return m.group(1)


def made_by_pulumi_new() -> bool:
    """Whether this project was made by `pulumi new` from a template (new.go tags it; this
    repository, the template, carries no such tag)."""
    return _TEMPLATE_TAG.search(PULUMI_YAML.read_text()) is not None


def _stack_files() -> list[str]:
    return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))


def environments() -> list[str]:
    """The stacks the workflows deploy: every stack file in stacks/; in a project `pulumi new` made,
    all but the template's samples (samples())."""
    held = set(samples())
    return [s for s in _stack_files() if s not in held]


def samples() -> list[str]:
    """The template's sample stacks, in a project `pulumi new` made from this repository: planned and
    snapshotted like tests/stacks/ (in this repository's namespace), never deployed."""
    if not made_by_pulumi_new():
        return []
    return [s for s in _stack_files() if s in SAMPLE_STACKS]


def is_production(stack: str) -> bool:
    return stack.endswith(PRODUCTION_SUFFIX)


def matrices() -> dict[str, list[str]]:
    stacks = environments()
    return {
        "all": stacks,
        "first": [s for s in stacks if not is_production(s)],
        "production": [s for s in stacks if is_production(s)],
    }


def main() -> int:
    for key, stacks in matrices().items():
        print(f"{key}={json.dumps(stacks)}")
    for stack in samples():
        print(f"stacks/Pulumi.{stack}.yaml: a sample of the template this project was made from, not deployed; "
              "to deploy a stack of that name, give the file (and the stack) another name", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())


FIXTURE_STACKS_DIR = ROOT / "tests" / "stacks"


def stack_names(include_fixtures: bool = True, fixtures_dir: Path = FIXTURE_STACKS_DIR) -> list[str]:
    """Environments (stacks/), and with `include_fixtures` the test-only stacks in tests/stacks/ (and the
    template's samples in a project `pulumi new` made, samples()). Here, not in the harness, so that listing
    stacks loads no Pulumi runtime (the unit tier's conftest lists them)."""
    fixtures = [p.name[len("Pulumi."):-len(".yaml")] for p in fixtures_dir.glob("Pulumi.*.yaml")]
    return sorted(environments() + (fixtures + samples() if include_fixtures else []))
