"""`once_per_run` (tests/support/once.py), what the xdist workers share the emulated builds, the matrix's plans
and the wheel through: one process builds, the others read its result; a failed build stores nothing; a
holder killed mid-build leaves the lock free (a kernel flock, filelock's FileLock on Linux: filelock
docs/concepts.rst, "Works even if your process crashes")."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest
from filelock import FileLock

from tests.support.once import once_per_run, workers_dir


def _build(shared: str, seconds: float) -> int:
    with open(Path(shared) / "builds", "a") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(seconds)
    return os.getpid()


def _ask(shared: str, seconds: float = 0.3) -> int:
    return once_per_run(Path(shared), "thing", lambda: _build(shared, seconds))


def test_one_process_builds_and_the_others_read_its_result(tmp_path):
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        results = pool.starmap(_ask, [(str(tmp_path),)] * 3, chunksize=1)
    builders = (tmp_path / "builds").read_text().split()
    assert len(builders) == 1 and results == [int(builders[0])] * 3, (builders, results)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["builds", "thing.lock", "thing.pickle"]


def test_a_build_that_fails_stores_nothing_and_the_next_asker_builds(tmp_path):
    def broken() -> int:
        raise RuntimeError("no account")

    with pytest.raises(RuntimeError):
        once_per_run(tmp_path, "thing", broken)
    assert not (tmp_path / "thing.pickle").exists()
    assert once_per_run(tmp_path, "thing", lambda: 7) == 7
    assert once_per_run(tmp_path, "thing", lambda: 8) == 7, "the second asker built again"


def test_a_builder_killed_mid_build_leaves_the_lock_free(tmp_path):
    holder = multiprocessing.get_context("spawn").Process(target=_ask, args=(str(tmp_path), 60))
    holder.start()
    deadline = time.monotonic() + 30
    while not (tmp_path / "builds").exists():
        assert time.monotonic() < deadline and holder.is_alive(), "the holder never started its build"
        time.sleep(0.05)
    os.kill(holder.pid, signal.SIGKILL)
    holder.join()
    with FileLock(tmp_path / "thing.lock", timeout=5):  # filelock.Timeout if the dead holder still held it
        pass
    assert once_per_run(tmp_path, "thing", lambda: 7) == 7


class _Factory:
    def __init__(self, base: Path):
        self.base = base

    def getbasetemp(self) -> Path:
        return self.base


def test_only_an_xdist_workers_own_directory_is_shared(tmp_path, monkeypatch):
    """An xdist worker's base temporary directory is popen-<id> in the run's (pytest-xdist workermanage.py): its
    parent is the run's. A pytest a worker's test starts (tests/tooling/test_user_stacks.py) inherits
    PYTEST_XDIST_WORKER with a directory of its own, whose parent is pytest's root for every run: results other
    runs and checkouts left there must not be read as this run's."""
    run = tmp_path / "pytest-7"
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert workers_dir(_Factory(run / "popen-gw1")) == run
    assert workers_dir(_Factory(tmp_path / "pytest-8")) is None  # a nested run: one process
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert workers_dir(_Factory(run / "popen-gw1")) is None
