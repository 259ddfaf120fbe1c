"""The stack program stays a short user of RkeCluster. (The examples of RkeCluster in a program of one's own
are in docs/getting-started.md; tests/tooling/test_docs.py runs every one of them.)"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_main_is_short():
    lines = (ROOT / "__main__.py").read_text().splitlines()
    assert len(lines) <= 40, f"__main__.py has {len(lines)} lines: the wiring belongs in components/rke_cluster.py"
