"""The boot scripts' fragments (components/node/scripts/*.sh) as files: shellcheck-clean on their own,
honest about what the header must set, all used, and read byte for byte (the golden plans' user-data
digests, tests/snapshots/, stay the same; tests/tooling/test_bootstrap.py runs the assembled scripts)."""

# split: this module mixes levels (issue 33 §7.2); the shellcheck run -> tests/tooling.

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from rke_aws.node import scripts

SCRIPTS = Path(scripts.__file__).parent / "scripts"
FILES = sorted(SCRIPTS.glob("*.sh"))


def test_there_are_fragments():
    assert {p.stem for p in FILES} == {"retry", "ssm", "rke2", "sync", "rke", "proxy",
                                       "s3", "os_prep", "airgap", "preinstalled", "registries", "identity",
                                       "s3_download", "rke1_docker"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_fragment_is_shellcheck_clean_as_a_file(path):
    exe = Path(sys.executable).parent / "shellcheck"
    proc = subprocess.run([str(exe), "--format=gcc", "--severity=style", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _declared(text: str) -> set[str]:
    head = text.partition(scripts.FRAGMENT_MARKER)[0]
    lines = head.split("which sets\n", 1)[1].split("\n# (", 1)[0]
    return set(re.findall(r"[A-Z][A-Z0-9_]+", lines))


def _used_from_header(body: str) -> set[str]:
    used = set(re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", body))
    assigned = set(re.findall(r"^\s*([A-Z][A-Z0-9_]*)=", body, re.M))
    for names in re.findall(r"^\s*read\s+(?:-r\s+)?([A-Z][A-Z0-9_ ]*)", body, re.M):  # `read -r AK SK ST`
        assigned |= set(names.split())
    return used - assigned


# Set by a fragment for the ones after it: ssm.sh's `credentials` reads the instance role's keys into
# AK SK ST, which s3.sh signs with.
SET_BY_FRAGMENTS = {"AK", "SK", "ST"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_fragment_names_what_the_header_sets(path):
    """Shellcheck takes upper-case names for the environment's, so it cannot see a misspelt one: the
    header comment lists them, and each must be one the script's header really sets."""
    text = path.read_text()
    body = scripts.fragment(path.stem)
    assert _declared(text) == _used_from_header(body) - SET_BY_FRAGMENTS, path.name


def test_every_declared_variable_is_set_by_some_header():
    """What the fragments read is what scripts.py writes into the headers (its settings' keys)."""
    source = Path(scripts.__file__).read_text()
    written = set(re.findall(r'"([A-Z][A-Z0-9_]*)":', source))
    for path in FILES:
        missing = _declared(path.read_text()) - written
        assert not missing, f"{path.name}: {sorted(missing)} are set by no header in scripts.py"


def test_fragment_is_the_text_below_the_marker(tmp_path, monkeypatch):
    assert scripts.fragment("retry").startswith("\nlog() {")
    assert scripts.FRAGMENT_MARKER not in scripts.fragment("rke2")


def test_every_fragment_is_used():
    source = Path(scripts.__file__).read_text()
    for path in FILES:
        assert f'fragment("{path.stem}")' in source, path.name
