"""The release of rke-aws (SemVer): equal to pyproject.toml's [project].version and CHANGELOG.md's top entry."""

__version__ = "0.2.0"
