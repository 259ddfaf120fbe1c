"""Which test modules go over stacks/, as this session's own collection found them: tests/conftest.py records
every module it collected and those holding a test it marked `reads_stacks` (before `-m`, `-k` or `--deselect`
drop any); tests/tooling/test_user_stacks.py runs those modules against its copy of stacks/, and every test module
this session did not collect (its `--ignore=tests/unit`, a run of one file), so nothing goes unseen."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Collected:
    modules: frozenset[Path]  # every module a test of this session was collected from
    reading: frozenset[Path]  # those holding a test marked reads_stacks


COLLECTED = pytest.StashKey[Collected]()


def test_modules(tests: Path) -> set[Path]:
    """The modules pytest collects under `tests` (its default python_files: test_*.py, *_test.py)."""
    return {p.resolve() for pattern in ("test_*.py", "*_test.py") for p in tests.rglob(pattern)}


def modules_to_run(collected: Collected, tests: Path) -> list[Path]:
    """The modules a run of the tests over stacks/ must collect: those this session found holding one, and every
    one it never looked into (what they hold is unknown here)."""
    return sorted(collected.reading | (test_modules(tests) - collected.modules))
