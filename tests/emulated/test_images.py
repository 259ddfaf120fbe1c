"""The images the emulated account publishes match what the program asks for.

The engine may not import the product (pyproject's import-linter contract), so the account writes Canonical's
image names and owners out (offline/engine/emulated/provider_checks.py); these tests hold them to the program's
filters (rke_aws.settings.versions, rke_aws.node.os_images)."""

from __future__ import annotations

import fnmatch

import pytest

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


# The vendors' images the account publishes (issue 35), by the OS the program names them for.
VENDOR_OS = {"redhat": "rhel-9", "rocky": "rocky-9", "suse-sles": "sles-15", "suse-sle-micro": "sle-micro-6",
             "amazon": "al2023"}


def test_each_vendor_image_is_found_by_the_programs_owner_and_filter_and_nowhere_else():
    """Where the program looks a vendor's image up (owner, name pattern per partition and architecture), the
    account publishes exactly one; where the program says the vendor publishes none (Rocky and SUSE outside the
    commercial partition), the account has none either."""
    from rke_aws.settings import os_images

    for partition in ("aws", "aws-us-gov", "aws-cn"):
        published = provider_checks.vendor_images(partition)
        for vendor, os_name in VENDOR_OS.items():
            for arch in ("x86_64", "arm64"):
                wanted = os_images.OS_IMAGES[os_name].image(partition, arch)
                found = [(o, n) for v, o, a, n in published
                         if wanted and o in wanted[0] and fnmatch.fnmatchcase(n, wanted[1])]
                if wanted is None:
                    assert not [p for p in published if p[0] == vendor], (partition, vendor)
                else:
                    assert len(found) == 1, (partition, os_name, arch, found)
                    # and the other architecture's pattern does not take it
                    other = os_images.OS_IMAGES[os_name].image(partition, "arm64" if arch == "x86_64" else "x86_64")
                    assert other is None or not fnmatch.fnmatchcase(found[0][1], other[1]), (os_name, arch)


@pytest.mark.parametrize("region", ["us-west-2", "us-gov-west-1", "cn-north-1"])
def test_the_emulated_account_answers_each_vendors_look_up_and_refuses_where_none_is_published(region):
    from pulumi.runtime import MockCallArgs

    from rke_aws.settings import os_images
    from rke_aws_offline.engine.emulated_account import MotoMocks

    partition = provider_checks.partition_of(region)
    with MotoMocks(region) as account:
        for os_name in VENDOR_OS.values():
            for arch in ("x86_64", "arm64"):
                wanted = os_images.OS_IMAGES[os_name].image(partition, arch)
                # where the program asks nothing, ask the commercial partition's owner and name: nothing is there
                owners, name = wanted or os_images.OS_IMAGES[os_name].image("aws", arch) or ((), "")
                answer = account.call(MockCallArgs("aws:ec2/getAmi:getAmi", {
                    "mostRecent": True, "owners": list(owners),
                    "filters": [{"name": "name", "values": [name]}, {"name": "state", "values": ["available"]}]}, ""))
                if wanted:
                    assert isinstance(answer, dict), (region, os_name, arch, answer)
                    assert answer["architecture"] == arch and answer["ownerId"] in owners, (region, os_name, answer)
                else:
                    assert isinstance(answer, tuple) and "no results" in answer[1][0][1], (region, os_name, answer)
