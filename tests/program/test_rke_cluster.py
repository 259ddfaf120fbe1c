"""The README's example of RkeCluster used from another program runs, and builds what the stack program
builds: the same resources and outputs (plus its own)."""

# split: this module mixes levels (issue 33 §7.2); the pure tests -> tests/unit.

from __future__ import annotations

import re
from pathlib import Path

from rke_aws_offline.engine import harness
from tests.support.runs import run_stack_cached

ROOT = Path(__file__).resolve().parents[2]


def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(r"<!-- example -->\n```python\n(.*?)```\n<!-- /example -->", text, re.S)
    assert match, "README.md: the RkeCluster example (<!-- example --> ... <!-- /example -->) is missing"
    return match.group(1)


def test_readme_example_is_short():
    assert len(readme_example().strip().splitlines()) <= 10


def test_readme_example_builds_the_stack(tmp_path):
    main = tmp_path / "__main__.py"
    main.write_text(readme_example())
    run = harness.run_program(harness.stack_config("rke2-dev"), stack="rke2-dev", main=main)
    stack = run_stack_cached("rke2-dev")
    assert {r.urn: r.inputs for r in run.resources} == {r.urn: r.inputs for r in stack.resources}
    assert run.outputs["apiUrl"] == stack.outputs["kubernetesApiUrl"]
    assert {k: v for k, v in run.outputs.items() if k != "apiUrl"} == stack.outputs


def test_main_is_short():
    lines = (ROOT / "__main__.py").read_text().splitlines()
    assert len(lines) <= 40, f"__main__.py has {len(lines)} lines: the wiring belongs in components/rke_cluster.py"
