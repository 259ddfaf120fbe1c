"""The distribution (pyproject.toml): one version everywhere, and the package list setuptools builds is the
package directories there are (a new folder left out of the list would be missing from the wheel)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import rke_aws
from rke_aws import _version

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def test_one_version_in_pyproject_the_package_and_the_changelog():
    """Keep a Changelog: the top release heading is `## [X.Y.Z] - <date or Unreleased>`."""
    top = re.search(r"^## \[(\d+\.\d+\.\d+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert top, "CHANGELOG.md: no `## [X.Y.Z]` release heading"
    assert PYPROJECT["project"]["version"] == _version.__version__ == rke_aws.__version__ == top.group(1)


def test_every_release_says_what_breaks():
    """Each release section has a "Breaking changes" heading (its content may be "None")."""
    text = (ROOT / "CHANGELOG.md").read_text()
    releases = re.split(r"^## ", text, flags=re.M)[1:]
    unreleased_or_later = [r for r in releases if not r.startswith("[0.1.0]")]
    assert unreleased_or_later and all("### Breaking changes" in r for r in unreleased_or_later)


def _packages_on_disk() -> set[str]:
    found = set()
    for name, folder in SETUPTOOLS["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            if "__pycache__" not in rel:
                found.add(".".join((name, *rel)))
    return found


def test_the_package_list_is_the_package_directories():
    assert set(SETUPTOOLS["packages"]) == _packages_on_disk()


def test_package_data_is_there():
    """The boot scripts and py.typed, which the wheel carries as package data."""
    for package, patterns in SETUPTOOLS["package-data"].items():
        folder = ROOT / SETUPTOOLS["package-dir"][package.split(".")[0]] / Path(*package.split(".")[1:])
        for pattern in patterns:
            assert list(folder.glob(pattern)), f"{package}: nothing matches {pattern}"
