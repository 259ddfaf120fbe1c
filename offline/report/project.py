"""The Pulumi project the commands work on: this repository, or a user's own project that depends on the package.

`rke-aws plan|diff|doctor|kubeconfig` run in a project directory (or `-C DIR`), as the Pulumi CLI does: the
nearest Pulumi.yaml at or above it names the project (its `name` is the configuration namespace), where the
stack files are (`stackConfigDir`, default: beside Pulumi.yaml) and the program (`main`, default: the project
directory's `__main__.py`). Pulumi's own reading of these fields: pulumi/pulumi sdk/go/common/workspace/project.go
(Project.Name, Main, StackConfigDir) and pkg/workspace/config.go (stack files `Pulumi.<stack>.yaml` in
StackConfigDir, relative to the project directory).

In this repository (the checkout the package is installed from, editable) the maintainers' stacks come along:
the test-only stacks in tests/stacks/ and the template's samples (rke_aws_offline.engine.harness.stack_names),
run in this repository's namespace as the tests run them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

PULUMI_YAML = "Pulumi.yaml"


class ProjectError(Exception):
    """No Pulumi project where the command runs, or a Pulumi.yaml it cannot use."""


def _this_checkout() -> Path:
    from rke_aws_offline.engine import harness

    return harness.ROOT


@dataclass(frozen=True)
class Project:
    root: Path  # the directory holding Pulumi.yaml
    name: str  # Pulumi.yaml `name`: the configuration namespace of its stacks
    stacks_dir: Path  # `stackConfigDir`, or the project directory
    main: Path  # the program: `main` (a file, or a directory holding __main__.py), or <root>/__main__.py
    # Further directories of stack files a command may name (this repository: tests/stacks/).
    extra_dirs: tuple[Path, ...] = field(default=())

    @classmethod
    def load(cls, root: Path) -> Project:
        """The project whose Pulumi.yaml is in `root`."""
        path = root / PULUMI_YAML
        try:
            doc = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as err:
            raise ProjectError(f"{path}: {err}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not doc["name"]:
            raise ProjectError(f"{path}: no `name:` (the project's name, which is its configuration namespace)")
        stacks = root / str(doc.get("stackConfigDir") or ".")
        main = root / str(doc.get("main") or ".")
        if main.is_dir():
            main = main / "__main__.py"
        root = root.resolve()
        # This repository (or a copy of it): its test-only stacks (`--all`), in its own namespace.
        extra = (root / "tests" / "stacks",) if (root / "components").is_dir() and (root / "tests" / "stacks").is_dir() else ()
        return cls(root, doc["name"], stacks.resolve(), main.resolve(), extra)

    @classmethod
    def find(cls, start: Path | None = None) -> Project:
        """The project at or above `start` (default: the working directory), as the Pulumi CLI finds it; when
        there is none, this checkout's (the package installed editable from this repository)."""
        here = Path(start or os.getcwd()).resolve()
        for d in (here, *here.parents):
            if (d / PULUMI_YAML).is_file():
                return cls.load(d)
        if start is None and (_this_checkout() / PULUMI_YAML).is_file() and (_this_checkout() / "components").is_dir():
            return cls.load(_this_checkout())
        raise ProjectError(f"no {PULUMI_YAML} in {here} or above: run in your Pulumi project's directory "
                           "(or pass -C <directory>)")

    @property
    def is_this_checkout(self) -> bool:
        """This repository itself: its stacks are read as the tests read them (harness)."""
        return self.root == _this_checkout().resolve()

    def _dirs(self) -> tuple[Path, ...]:
        return (self.stacks_dir, *self.extra_dirs)

    def environments(self) -> list[str]:
        """The stacks the project deploys (its stack files)."""
        if self.is_this_checkout:
            from rke_aws_offline.engine.stacks import environments

            return environments()
        return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in self.stacks_dir.glob("Pulumi.*.yaml"))

    def stack_names(self, include_fixtures: bool = True) -> list[str]:
        if self.is_this_checkout:
            from rke_aws_offline.engine import harness

            return harness.stack_names(include_fixtures)
        return self.environments()

    def stack_file(self, stack: str) -> Path:
        if self.is_this_checkout:
            from rke_aws_offline.engine import harness

            return harness.stack_file(stack)
        path = self.stacks_dir / f"Pulumi.{stack}.yaml"
        if not path.exists():
            raise FileNotFoundError(f"no stack file Pulumi.{stack}.yaml in {self.stacks_dir}")
        return path

    def namespace_of(self, stack: str) -> str:
        """The configuration namespace `stack` runs in (this repository's test-only stacks: its own name)."""
        if self.is_this_checkout:
            from rke_aws_offline.engine import harness

            return harness.project_of(stack)
        return self.name

    def stack_config(self, stack: str) -> tuple[dict[str, str], list[str]]:
        """The stack's configuration as the Pulumi CLI hands it to the program (flat keys), and its secret keys."""
        from rke_aws.settings import stackfile

        path = self.stack_file(stack)
        return stackfile.load_stack_text(path.read_text(), path.name, project=self.namespace_of(stack))

    def relative(self, path: Path) -> str:
        try:
            return str(path.resolve().relative_to(self.root))
        except ValueError:
            return str(path)
