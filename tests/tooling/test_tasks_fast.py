"""`python3 -m offline.tasks test --fast`, the inner loop: the unit tier with a tenth of each property test's
examples (tests/support/properties.py); the full `test` runs the same tier with every example."""

from __future__ import annotations

import subprocess

from rke_aws_offline import tasks
from tests.support import properties


def _envs(monkeypatch, args: list[str]) -> list[dict]:
    envs: list[dict] = []
    monkeypatch.delenv(properties.FAST_ENV, raising=False)
    monkeypatch.setattr(tasks, "find_uv", lambda: ["uv"])
    monkeypatch.setattr(tasks, "sync", lambda *a: 0)
    monkeypatch.setattr(tasks, "install_node_tools", lambda *a: 0)
    monkeypatch.setattr(tasks, "compile_sources", lambda: None)
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: envs.append(kw["env"]) or subprocess.CompletedProcess(cmd, 0))
    assert tasks.run("test", args) == 0
    return envs


def test_only_the_inner_loop_draws_fewer_examples(monkeypatch):
    assert tasks.FAST_TESTS_ENV == properties.FAST_ENV
    fast = _envs(monkeypatch, ["--fast"])
    assert fast[-1].get(properties.FAST_ENV) == "1"
    assert all(properties.FAST_ENV not in env for env in _envs(monkeypatch, []))


def test_the_counts(monkeypatch):
    monkeypatch.delenv(properties.FAST_ENV, raising=False)
    assert properties.examples(300) == 300
    monkeypatch.setenv(properties.FAST_ENV, "1")
    assert (properties.examples(300), properties.examples(100)) == (30, properties.FAST_FLOOR)
