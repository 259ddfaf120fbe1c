"""`rke-aws rotate <stack>`: the command line (rke_aws_offline/cli.py), the task and the make target that run
rke_aws.ops.rotate. That the rotation imports no offline tooling is import-linter's `product` contract
(pyproject [tool.importlinter])."""

from __future__ import annotations

import re

import pytest

from rke_aws.ops import rotate
from rke_aws_offline import cli, tasks


def test_the_task_and_make_target_run_the_rotation():
    assert tasks.IN_VENV["rotate"] == ["rke-aws", "rotate"]
    assert cli.COMMANDS["rotate"] is cli.rotate
    makefile = (rotate.ROOT / "Makefile").read_text()
    assert re.search(r"^rotate:.*\n\t@\$\(TASKS\) rotate \$\(STACK\)", makefile, re.MULTILINE), "no make rotate"


def test_the_command_line_hands_the_checkout_to_the_rotation(monkeypatch):
    seen = {}
    monkeypatch.setattr(rotate, "command", lambda *a, **kw: seen.update(args=a, kw=kw) or 0)
    assert cli.main(["rotate", "prod", "--dry-run", "--kubeconfig", "k.yaml"]) == 0
    assert seen["args"] == ("prod", "k.yaml", True) and seen["kw"]["work_dir"] == rotate.ROOT
    with pytest.raises(SystemExit):
        cli.main(["rotate"])  # the stack is required
