"""The test tree: every test module sits in its tier (tests/unit, tests/program, tests/emulated, tests/tooling;
tests/conftest.py marks it by directory), and test code imports no other test module: what tests share lives
in tests/support, the only test code tests import (besides the fixtures pytest hands over from conftest.py)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
TIERS = ("unit", "program", "emulated", "tooling")
# A module named by a string (importlib.import_module, __import__) counts as an import too.
DYNAMIC = re.compile(r"""(?:import_module|__import__)\(\s*["'](tests(?:\.\w+)*)["']""")


def _python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "data" not in p.relative_to(TESTS).parts[:1])


def imported_test_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import of a module under tests/ other than tests.support, in `path`."""
    package = ".".join(("tests", *path.relative_to(TESTS).parent.parts))
    source = path.read_text()
    found = []
    for node in _statements(ast.parse(source, str(path)).body):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names = [f"{module}.{a.name}" for a in node.names] if module in ("tests", *_packages(TESTS)) else [module]
        else:
            continue
        found += [(node.lineno, n) for n in names if n == "tests" or n.startswith("tests.")]
    found += [(source[:m.start()].count("\n") + 1, m.group(1)) for m in DYNAMIC.finditer(source)]
    return [(line, m) for line, m in found if not (m == "tests.support" or m.startswith("tests.support."))]


def _statements(body: list[ast.stmt]):
    """Every statement, nested ones included: an import is a statement (Python's grammar), so the expressions, a
    tenth of the nodes ast.walk visits, need no visit."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            nested = getattr(node, field, None)
            if isinstance(nested, list):
                yield from _statements(nested)


@functools.cache
def _packages(tests: Path) -> tuple[str, ...]:
    """The test packages (once per tree: a walk of it for each `from x import y` cost ~10 s of CPU)."""
    return tuple(".".join(("tests", *p.parent.relative_to(tests).parts)) for p in tests.rglob("__init__.py"))


def test_no_test_module_imports_another():
    found = [f"{p.relative_to(TESTS.parent)}:{line} imports {m}" for p in _python_files()
             for line, m in imported_test_modules(p)]
    assert not found, "move what is shared into tests/support:\n" + "\n".join(found)


def test_every_test_module_sits_in_a_tier():
    misplaced = [str(p.relative_to(TESTS.parent)) for p in TESTS.rglob("test_*.py")
                 if p.relative_to(TESTS).parts[0] not in TIERS]
    assert not misplaced, f"test modules outside tests/{{{','.join(TIERS)}}}: {misplaced}"


def test_the_check_sees_what_it_must(tmp_path, monkeypatch):
    """The walk itself: a relative import of a sibling test module and a dynamic one are found; support is not."""
    monkeypatch.setitem(globals(), "TESTS", tmp_path)
    (tmp_path / "unit").mkdir()
    (tmp_path / "unit" / "__init__.py").write_text("")
    probe = tmp_path / "unit" / "test_probe.py"
    probe.write_text("from . import test_other\nfrom tests.support.runs import run\n"
                     "x = __im" "port__('tests.program.test_day2')\n")  # two literals: this file is checked too
    assert imported_test_modules(probe) == [(1, "tests.unit.test_other"), (3, "tests.program.test_day2")]


@pytest.mark.parametrize("tier", TIERS)
def test_each_tier_is_a_marker(tier, request):
    assert tier in {line.split(":")[0] for line in request.config.getini("markers")}


# Files and documents that no longer exist, as comments and docstrings used to name them: node_plan.py and
# network_plan.py (plan/nodes.py, plan/network.py), config_model.py (settings/model.py), bootstrap.py
# (node/scripts.py, node/cloud_init.py), and a reference folder outside the repository (tests/data/upstream).
STALE = re.compile(r"node_plan\.py|network_plan\.py|config_model(?:\.py\b|\._[A-Za-z])|\.\./shared\b|components/bootstrap\.py"
                   r"|\bbootstrap\.(?:RETRY_SECONDS|EtcdS3|USER_DATA_LIMIT|manifest_sync_script|encode_user_data)\b")
# The one kept on purpose: the header every node's user data carries (changing it changes every instance).
KEPT = 'GENERATOR = "components/bootstrap.py"'


def test_no_reference_to_files_that_are_gone():
    root = TESTS.parent
    found = []
    for folder in ("components", "offline", "bench", "policies", "tests"):
        for path in sorted((root / folder).rglob("*.py")):
            if path == Path(__file__).resolve():
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if STALE.search(line) and KEPT not in line:
                    found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)
