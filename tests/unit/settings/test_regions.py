"""Regions (issue 34.7): the list a region is checked against is the pinned provider's, and a typo gets the
nearest name of its own partition. pulumi_aws.Region is generated from terraform-provider-aws's region list,
the one the provider checks `region` against unless skip_region_validation is set (pulumi_aws/provider.py:
"Skip static validation of region name")."""

from __future__ import annotations

import pulumi_aws
import pytest

from rke_aws.settings import partitions
from rke_aws.settings.args import region_problems


def test_the_region_lists_are_the_providers():
    ours = [r for regions in partitions.REGIONS.values() for r in regions] + list(partitions.OTHER_PARTITION_REGIONS)
    assert len(ours) == len(set(ours))
    assert set(ours) == {r.value for r in pulumi_aws.Region}


def test_each_region_is_in_its_partition():
    for name, regions in partitions.REGIONS.items():
        assert {partitions.of_region(r).name for r in regions} == {name}, name


@pytest.mark.parametrize("typo, meant", [("eu-wset-1", "eu-west-1"), ("us-gov-wst-1", "us-gov-west-1"),
                                         ("cn-nrth-1", "cn-north-1"), ("us-wets-2", "us-west-2")])
def test_a_typo_gets_the_nearest_region(typo, meant):
    (d,) = region_problems(typo, required=True)
    assert (d.key, d.code) == ("aws:region", "config.region-unknown")
    assert d.fix == f"did you mean {meant}?", d.fix


@pytest.mark.parametrize("region", ["us-west-2", "us-gov-east-1", "cn-northwest-1", "us-iso-east-1"])
def test_known_regions_pass(region):
    assert region_problems(region, required=True) == []
