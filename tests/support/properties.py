"""How many examples a property test draws: its own count in the full suite (`python3 -m offline.tasks test`, and
pytest run directly), a tenth of it, at least 25, in the inner loop (`python3 -m offline.tasks test --fast` sets
FAST_ENV; offline/tasks.py). The inner loop is for the edit-test cycle; the full suite keeps every search as
thorough as its test asks. Hypothesis's own default (100 examples) counts as `examples(100)` through the
"fast" profile tests/unit/conftest.py loads."""

from __future__ import annotations

import os

FAST_ENV = "RKE_AWS_FAST_TESTS"  # offline/tasks.py FAST_TESTS_ENV
FAST_SHARE, FAST_FLOOR = 10, 25


def fast() -> bool:
    return bool(os.environ.get(FAST_ENV))


def examples(n: int) -> int:
    """`n` examples, or n / FAST_SHARE (at least FAST_FLOOR) in the inner loop."""
    return max(FAST_FLOOR, n // FAST_SHARE) if fast() else n
