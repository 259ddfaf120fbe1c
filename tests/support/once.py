"""Build once per test run, read by every pytest-xdist worker: the first worker to need a result builds it while
holding a file lock in the workers' common directory and stores it there; the others wait on the lock and read it.

The lock is filelock's `FileLock`, which on Linux and macOS is its `UnixFileLock`: a kernel `flock` on the lock
file, released by the kernel when the holder exits, even if it crashes (filelock's docs, "Concepts",
https://py-filelock.readthedocs.io/en/latest/concepts.html; tox-dev/filelock docs/concepts.rst). Its
`SoftFileLock` only marks the lock by the file's existence and must judge a dead holder by the PID it
recorded, with overlap risks the docs list; it is for filesystems without a usable native lock, and the shared
directory is pytest's local temporary one, where flock works.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock

T = TypeVar("T")


def workers_dir(tmp_path_factory: Any) -> Path | None:
    """The directory every pytest-xdist worker of this run sees (the parent of each worker's base temporary
    directory, which pytest removes with the run's others), or None without xdist (one process: its own cache is
    enough). A worker's base temporary directory is `popen-<its id>` in the controller's (pytest-xdist
    workermanage.py, `option_dict["basetemp"]`); a pytest a worker's test starts inherits PYTEST_XDIST_WORKER but
    not that directory, and the parent of its own is pytest's root for every run of this user (stale results of
    other runs and checkouts there): it is one process."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    base = tmp_path_factory.getbasetemp()
    return base.parent if worker and base.name == f"popen-{worker}" else None


def once_per_run(shared: Path, name: str, build: Callable[[], T]) -> T:
    """`build()` in the first worker that asks for `name`; every other worker reads what it stored in `shared`
    (a directory all workers of the run see). A build that raises stores nothing: the next worker builds."""
    path = shared / f"{name}.pickle"
    with FileLock(shared / f"{name}.lock"):
        if path.exists():
            with open(path, "rb") as f:
                return pickle.load(f)  # noqa: S301 - written by this run's other worker
        built = build()
        tmp = shared / f"{name}.pickle.tmp"
        with open(tmp, "wb") as f:
            pickle.dump(built, f)
        os.replace(tmp, path)  # a reader never sees half a file, even one that skips the lock
        return built
