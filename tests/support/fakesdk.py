"""A provider SDK of the tests' own, in the generated layout, for the offline engine's lazy loading
(rke_aws_offline.engine.lazy_sdk and lazy_classes; tests/tooling/test_lazy_sdk.py, test_lazy_classes.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rke_aws_offline.engine import lazy_classes, lazy_sdk


def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> Iterator[Path]:
    """`files` (relative path -> text) written under `tmp_path`, importable, their root the only lazy one; every
    module of it forgotten afterwards. For a fixture to `yield from`."""
    root = next(iter(files)).split("/")[0]
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(lazy_sdk, "ROOTS", (root,))
    monkeypatch.setattr(sys, "meta_path", [lazy_sdk._FINDER, *sys.meta_path])
    monkeypatch.setattr(lazy_sdk, "FALLBACKS", [])
    yield tmp_path
    for name in [m for m in sys.modules if m == root or m.startswith(root + ".")]:
        del sys.modules[name]
        lazy_sdk._STATES.pop(name, None)
        lazy_classes._INDEXES.pop(name, None)
