"""tests/data/upstream/ holds upstream files unchanged: each matches the digest its README records,
and every file there is recorded (a stored fact nobody can trace is no fact)."""

from __future__ import annotations

import hashlib
import re

from tests.support import upstream


def recorded() -> dict[str, str]:
    text = (upstream.DATA / "README.md").read_text()
    return {path: digest for digest, path in re.findall(r"^([0-9a-f]{64})  (\S+)$", text, re.M)}


def test_every_stored_file_is_recorded_with_its_digest():
    stored = {str(p.relative_to(upstream.DATA)) for p in upstream.DATA.rglob("*") if p.is_file() and p.name != "README.md"}
    assert stored == set(recorded()), stored ^ set(recorded())
    for path, digest in recorded().items():
        assert hashlib.sha256((upstream.DATA / path).read_bytes()).hexdigest() == digest, f"{path} was edited"


def test_every_stored_file_names_its_source_and_licence():
    text = (upstream.DATA / "README.md").read_text()
    for path in recorded():
        row = next((line for line in text.splitlines() if line.startswith("|") and path.split("/")[-1] in line), None)
        assert row, f"{path}: no row in tests/data/upstream/README.md"
        assert re.search(r"[0-9a-f]{40}", row) or "not identified" in row, f"{path}: no commit"
        assert "Apache-2.0" in row or "GPL" in row, f"{path}: no licence"
