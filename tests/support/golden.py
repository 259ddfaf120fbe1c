"""The golden plans as syrupy snapshots: tests/snapshots/<stack>.json, one file per stack, exactly the text
`python3 -m offline.tasks snapshots` writes (offline/snapshots.py: the plan's JSON, keys sorted).

syrupy's single-file extension (syrupy/extensions/single_file.py, syrupy 7) stores one snapshot per file, under
<test dir>/__snapshots__/<test module>/<test name>.<ext>, and reads and writes text files as they are. This
extension keeps that and changes only where the files are and what they are called: in tests/snapshots, named
by the stack alone, as the project has always kept them. It has no serializer of its own (the plan's JSON is
already canonical text), so `pytest tests/emulated/test_snapshots.py --snapshot-update` leaves an unchanged plan's
file byte-identical and rewrites a changed one with the new text.

Each file holds the snapshot of one test, `TEST[<stack>]` (its pytest name), so syrupy's report names a
snapshot no test asserts any more (a stack removed or renamed) after the test it belonged to.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from syrupy.data import Snapshot, SnapshotCollection
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from rke_aws_offline import snapshots

if TYPE_CHECKING:
    from syrupy.location import PyTestLocation

# The one test that asserts the golden plans (tests/emulated/test_snapshots.py), parametrized by `stack`.
TEST = "test_plan_matches_its_golden_snapshot"


class GoldenPlan(SingleFileSnapshotExtension):
    file_extension = "json"
    _write_mode = WriteMode.TEXT
    directory: Path = snapshots.SNAPSHOT_DIR  # a test of the extension points a subclass elsewhere

    def serialize(self, data: Any, **_: Any) -> str:
        if not isinstance(data, str):
            raise TypeError(f"a golden plan is the plan's JSON text (plan_report.to_json), not {type(data).__name__}")
        return data

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(cls.directory)

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(cls.directory)

    @classmethod
    def get_file_basename(cls, *, test_location: PyTestLocation, index: Any) -> str:
        stack = _stack(test_location)
        if stack is None:
            raise ValueError(f"GoldenPlan stores the snapshots of {TEST}[<stack>] only, not of {test_location.nodeid}")
        return stack

    def read_snapshot_collection(self, *, snapshot_location: str) -> SnapshotCollection:
        collection = SnapshotCollection(location=snapshot_location)
        collection.add(Snapshot(name=f"{TEST}[{Path(snapshot_location).stem}]"))
        return collection

    @classmethod
    def matches_test_location(cls, *, test_location: PyTestLocation, snapshot_location: str) -> bool:
        stack = _stack(test_location)
        return stack is not None and Path(snapshot_location) == cls.directory / f"{stack}.{cls.file_extension}"


def _stack(test_location: PyTestLocation) -> str | None:
    """The stack a test location asserts the golden plan of (None: not the golden plans' test)."""
    params = getattr(getattr(test_location.item, "callspec", None), "params", {})
    return params.get("stack") if test_location.methodname == TEST else None
