"""The golden plans' check (tests/support/golden.py, syrupy) can fail: a stored plan one byte off fails with a
diff, `--snapshot-update` writes it back byte for byte, and a plan no test asserts any more is reported and, on
update, deleted, as syrupy reports unused snapshots (syrupy/report.py, syrupy/session.py of the locked syrupy).

Each case runs a small pytest session (pytester) whose test asserts a stored plan, read as the current plan,
against a copy of tests/snapshots in a temporary directory: no stack is evaluated.
"""

from __future__ import annotations

import shutil

import pytest

from rke_aws_offline import snapshots
from tests.support import golden as _golden  # noqa: F401 - loaded once here, not again by each inner session

pytest_plugins = ("pytester",)

STACK = sorted(p.stem for p in snapshots.SNAPSHOT_DIR.glob("*.json"))[0]
TEST = "test_plan_matches_its_golden_snapshot"

INNER = '''
from pathlib import Path

import pytest

from tests.support.golden import GoldenPlan


class Here(GoldenPlan):
    directory = Path({golden!r})


@pytest.mark.parametrize("stack", [{stack!r}])
def {test}(stack, snapshot):
    current = Path({plans!r}, stack + ".json").read_text()  # the plan as this checkout renders it
    assert snapshot.with_defaults(extension_class=Here) == current
'''


@pytest.fixture
def inner(pytester, monkeypatch):
    """(run, golden directory, original text): `run(*args)` runs the inner session in this process."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # the inner session is no xdist worker
    golden = pytester.path / "golden"
    golden.mkdir()
    original = snapshots.snapshot_path(STACK).read_text()
    shutil.copy(snapshots.snapshot_path(STACK), golden / f"{STACK}.json")
    pytester.makepyfile(test_plans=INNER.format(golden=str(golden), stack=STACK, test=TEST,
                                                plans=str(snapshots.SNAPSHOT_DIR)))
    # Without hypothesis's plugin: its summary re-imports hypothesis in each inner session (2 s each).
    quiet = ("-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:hypothesispytest")
    return (lambda *args: pytester.runpytest_inprocess(*quiet, *args)), golden, original


def one_byte_off(text: str) -> str:
    at = text.index(f'"stack": "{STACK}"') + len('"stack": "')
    return text[:at] + ("X" if text[at] != "X" else "Y") + text[at + 1:]


def test_a_plan_one_byte_off_its_golden_file_fails_with_a_diff_and_update_writes_it_back(inner):
    run, golden, original = inner
    assert run().ret == 0, "the stored plan does not match itself"
    path = golden / f"{STACK}.json"
    path.write_text(one_byte_off(original))
    failed = run()
    failed.assert_outcomes(failed=1)
    out = failed.stdout.str()
    assert "1 snapshot failed." in out, out
    removed = [line for line in out.splitlines() if line.lstrip("E ").startswith("-") and '"stack"' in line]
    added = [line for line in out.splitlines() if line.lstrip("E ").startswith("+") and '"stack"' in line]
    assert removed and added and f'"stack": "{STACK}"' in added[0] and f'"stack": "{STACK}"' not in removed[0], out

    updated = run("--snapshot-update")
    assert updated.ret == 0 and "1 snapshot updated." in updated.stdout.str(), updated.stdout.str()
    assert path.read_bytes() == snapshots.snapshot_path(STACK).read_bytes(), "--snapshot-update changed other bytes"
    again = run()
    assert again.ret == 0 and "1 snapshot passed." in again.stdout.str()


def test_a_missing_golden_file_fails(inner):
    run, golden, _ = inner
    (golden / f"{STACK}.json").unlink()
    missing = run()
    missing.assert_outcomes(failed=1)
    assert "does not exist" in missing.stdout.str(), missing.stdout.str()


def test_a_golden_file_no_test_asserts_is_reported_and_deleted_on_update(inner):
    run, golden, original = inner
    (golden / "gone.json").write_text(original)
    unused = run("--snapshot-details")
    assert unused.ret != 0, "an unused golden plan passed"
    out = unused.stdout.str()
    assert "1 snapshot passed. 1 snapshot unused." in out and f"{TEST}[gone]" in out, out

    # Named on the command line, the test file alone does not own the folder (syrupy ties files to a named
    # module by its __snapshots__/<module> layout); naming the folder too does.
    assert "unused" not in run("test_plans.py").stdout.str()
    assert "1 snapshot unused." in run("test_plans.py", "golden").stdout.str()

    updated = run("--snapshot-update")
    assert updated.ret == 0 and f"Deleted {TEST}[gone]" in updated.stdout.str(), updated.stdout.str()
    assert sorted(p.name for p in golden.iterdir()) == [f"{STACK}.json"]
    assert (golden / f"{STACK}.json").read_text() == original
