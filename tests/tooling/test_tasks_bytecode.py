"""`python3 -m offline.tasks` writes the bytecode of the repository's own packages before a task (offline/tasks.py
compile_sources): uv compiles the locked dependencies, never an editable install's sources, and Python's import
writes none where PYTHONDONTWRITEBYTECODE is set (CPython docs, "PYTHONDONTWRITEBYTECODE": "Python won't try to
write .pyc files on the import of source modules"; py_compile/compileall write regardless), so each plan and test
worker would compile every module again."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

from rke_aws_offline import tasks


def test_the_own_sources_get_bytecode_even_where_import_writes_none(monkeypatch):
    source = Path(tasks.ROOT) / "components" / "settings" / "tags.py"
    cached = Path(importlib.util.cache_from_source(str(source)))
    cached.unlink(missing_ok=True)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    tasks.compile_sources()
    assert cached.is_file()
    assert set(tasks.OWN_SOURCES) == {"components", "offline"}  # pyproject [tool.setuptools] package-dir


def test_every_task_in_the_venv_runs_after_the_sources_are_compiled(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(tasks, "find_uv", lambda: ["uv"])
    monkeypatch.setattr(tasks, "sync", lambda *a: calls.append("sync") or 0)
    monkeypatch.setattr(tasks, "compile_sources", lambda: calls.append("compile"))
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append(cmd[-2]) or subprocess.CompletedProcess(cmd, 0))
    assert tasks.run("plan", ["rke2-dev"]) == 0
    assert calls == ["sync", "compile", "plan"]


def test_the_tests_run_where_pytest_may_cache_its_rewritten_modules(monkeypatch):
    """pytest writes its assertion-rewritten modules only when `sys.dont_write_bytecode` is false (pytest
    src/_pytest/assertion/rewrite.py exec_module: `write = not sys.dont_write_bytecode`): the test task runs
    pytest without PYTHONDONTWRITEBYTECODE, so the rewrite is cached across runs and xdist workers."""
    envs: list[dict] = []
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setattr(tasks, "find_uv", lambda: ["uv"])
    monkeypatch.setattr(tasks, "sync", lambda *a: 0)
    monkeypatch.setattr(tasks, "install_node_tools", lambda *a: 0)
    monkeypatch.setattr(tasks, "compile_sources", lambda: None)
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: envs.append(kw["env"]) or subprocess.CompletedProcess(cmd, 0))
    assert tasks.run("test", ["--fast"]) == 0
    assert envs and all("PYTHONDONTWRITEBYTECODE" not in env for env in envs)
