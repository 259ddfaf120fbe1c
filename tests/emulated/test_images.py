"""The images the emulated account publishes match what the program asks for.

The engine may not import the product (pyproject's import-linter contract), so the account writes Canonical's
image names and owners out (offline/engine/emulated/provider_checks.py); these tests hold them to the program's
filters (rke_aws.settings.versions, rke_aws.node.os_images)."""

from __future__ import annotations

import fnmatch

from rke_aws.settings import versions
from rke_aws_offline.engine.emulated import provider_checks


def test_each_published_ubuntu_image_matches_the_programs_name_filter_for_its_architecture():
    assert set(provider_checks.UBUNTU_IMAGES) == set(versions.UBUNTU_AMI_NAMES)
    for arch, name in provider_checks.UBUNTU_IMAGES.items():
        assert fnmatch.fnmatchcase(name, versions.UBUNTU_AMI_NAMES[arch]), (arch, name)
        others = [a for a in versions.UBUNTU_AMI_NAMES if a != arch]
        assert not any(fnmatch.fnmatchcase(name, versions.UBUNTU_AMI_NAMES[a]) for a in others), (arch, name)


def test_canonicals_owner_per_partition_is_the_one_the_program_trusts():
    from rke_aws.settings import os_images

    for partition, owner in provider_checks.CANONICAL_OWNERS.items():
        for arch in provider_checks.UBUNTU_IMAGES:
            found = os_images.UBUNTU.image(partition, arch)
            assert found is not None and found[0] == (owner,), (partition, arch, found)
